//! Unit tests of the statistics' parts; `many`: statistics over many files.

mod many;

use super::sketch::{median, mixed_hash, HyperLogLog};
use super::values::*;
use super::*;
use arrow_schema::TimeUnit;
use serde_json::json;

#[test]
fn float_keys_order_numerically() {
    let mut values = [3.5, -1.0, 0.0, -0.0, -7.25, 1e300, f64::NEG_INFINITY];
    let mut keys: Vec<Key> = values.iter().map(|v| float_key(*v)).collect();
    keys.sort();
    values.sort_by(f64::total_cmp);
    let back: Vec<f64> = keys
        .iter()
        .map(|k| match k {
            Key::Float(b) => float_of(*b),
            _ => unreachable!(),
        })
        .collect();
    assert_eq!(back, [f64::NEG_INFINITY, -7.25, -1.0, 0.0, 0.0, 3.5, 1e300]);
    assert_eq!(float_key(0.0), float_key(-0.0));
}

#[test]
fn long_text_is_cut_on_a_character_boundary() {
    let long = "é".repeat(300);
    let cut = shown(&long);
    assert_eq!(cut.chars().count(), SHOWN_CHARS + 1);
    assert!(cut.ends_with('…'));
    assert_eq!(shown("short"), "short");
}

#[test]
fn the_median_of_counted_values_is_the_median_of_every_copy() {
    use super::sketch::weighted_median;
    let mut seed = 7u64;
    for case in 0..200 {
        let mut counted = Vec::new();
        let mut copies = Vec::new();
        for _ in 0..(case % 9) {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let value = ((seed >> 33) % 50) as f64 - 20.5;
            let n = (seed >> 20) % 4;
            counted.push((value, n));
            copies.extend(std::iter::repeat_n(value, n as usize));
        }
        let expected = (!copies.is_empty()).then(|| median(&mut copies));
        assert_eq!(weighted_median(counted.clone()), expected, "{counted:?}");
    }
}

#[test]
fn median_of_odd_and_even_counts() {
    assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    assert_eq!(median(&mut [5.0]), 5.0);
}

#[test]
fn hyperloglog_is_within_two_percent_on_a_million() {
    let mut hll = HyperLogLog::new();
    for i in 0..1_000_000u64 {
        hll.add(mixed_hash(&i128::from(i)));
    }
    let e = hll.estimate() as f64;
    assert!((e - 1e6).abs() / 1e6 < 0.02, "{e}");
}

#[test]
fn timestamps_and_dates_render_as_iso_8601() {
    assert_eq!(date_json(0), json!("1970-01-01"));
    assert_eq!(date_json(19_783), json!("2024-03-01"));
    assert_eq!(
        timestamp_json(1_709_251_200_000_000, &TimeUnit::Microsecond, true),
        json!("2024-03-01T00:00:00Z")
    );
    assert_eq!(
        timestamp_json(1_500, &TimeUnit::Millisecond, false),
        json!("1970-01-01T00:00:01.500")
    );
}
