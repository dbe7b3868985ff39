//! Medians, percentiles and formatting for the figures.

use std::time::Duration;

pub fn median(mut values: Vec<Duration>) -> Duration {
    values.sort();
    percentile(&values, 50.0)
}

/// The nearest-rank percentile of sorted values.
pub fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

pub fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let v: Vec<Duration> = (1..=10).map(Duration::from_millis).collect();
        assert_eq!(percentile(&v, 50.0), Duration::from_millis(5));
        assert_eq!(percentile(&v, 99.0), Duration::from_millis(10));
        assert_eq!(percentile(&v, 0.0), Duration::from_millis(1));
        assert_eq!(
            median(vec![
                Duration::from_millis(3),
                Duration::from_millis(1),
                Duration::from_millis(2)
            ]),
            Duration::from_millis(2)
        );
    }
}
