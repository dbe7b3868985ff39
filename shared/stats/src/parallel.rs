//! Work over many files on as many threads as there are cores, the results in file order.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::StatsError;

/// Threads for work over `items` independent items: `per_core` threads a core (more than one
/// for work that waits on the network), at most `items`.
pub(super) fn threads_per_core_for(items: usize, per_core: usize) -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .saturating_mul(per_core.max(1))
        .min(items)
        .max(1)
}

/// `work(i)` for every `i` in `0..n`, on [`threads_per_core_for`]`(n, 1)` threads each taking the next index
/// in turn; the results in index order. Each thread holds one item's work at a time.
pub(super) fn map_indices<R: Send>(
    n: usize,
    work: impl Fn(usize) -> R + Sync,
) -> Result<Vec<R>, StatsError> {
    map_indices_per_core(n, 1, work)
}

/// [`map_indices`] on [`threads_per_core_for`]`(n, per_core)` threads.
pub(super) fn map_indices_per_core<R: Send>(
    n: usize,
    per_core: usize,
    work: impl Fn(usize) -> R + Sync,
) -> Result<Vec<R>, StatsError> {
    let next = AtomicUsize::new(0);
    let (next, work) = (&next, &work);
    let done: Vec<Vec<(usize, R)>> = std::thread::scope(|scope| {
        let jobs: Vec<_> = (0..threads_per_core_for(n, per_core))
            .map(|_| {
                scope.spawn(move || {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= n {
                            return done;
                        }
                        done.push((i, work(i)));
                    }
                })
            })
            .collect();
        jobs.into_iter()
            .map(|job| job.join().map_err(|_| StatsError::Panicked))
            .collect::<Result<_, _>>()
    })?;
    let mut all: Vec<(usize, R)> = done.into_iter().flatten().collect();
    all.sort_unstable_by_key(|(i, _)| *i);
    Ok(all.into_iter().map(|(_, r)| r).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_index_order() {
        let squares = map_indices(1000, |i| i * i).unwrap();
        assert_eq!(squares, (0..1000).map(|i| i * i).collect::<Vec<_>>());
        assert!(map_indices(0, |i| i).unwrap().is_empty());
    }
}
