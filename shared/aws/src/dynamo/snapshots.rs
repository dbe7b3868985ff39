//! The lists a function instance keeps for scans (several filters, `q`, other orders), each
//! valid while the catalog's `rev` is unchanged. Bounded twice: at most [`SNAPSHOTS`] lists,
//! and at most [`SNAPSHOT_BUDGET_BYTES`] in all, so that a large catalog cannot grow an
//! instance's memory past what its `MemorySize` allows (docs/performance.md, "List function
//! memory").
//!
//! The cache is quick_cache's, in one shard, weighed in bytes: a list weighs its estimated
//! bytes, and at least a [`SNAPSHOTS`]th of the budget, so that the one budget holds both
//! bounds. Until it is full every list is kept. Once it is, quick_cache admits by frequency, not
//! recency: a list read again while kept is promoted, and a new list takes the place of one read
//! only once (the lists read more than once stay). A list heavier than the budget's hot part
//! (97%) is used for its scan and not kept.

use std::sync::Arc;

use catalog::query::Indexed;
use quick_cache::unsync::Cache;
use quick_cache::Weighter;

/// How many lists an instance keeps.
pub const SNAPSHOTS: usize = 4;
/// How many bytes of lists an instance keeps (estimated by [`Indexed::approx_bytes`]). A list
/// larger than this is served from the store each time rather than kept. With the text index
/// and the kept orders built, the only lists read are filters' of at most 100 entries; larger
/// ones are read only by a catalog not reindexed since an upgrade. 128 MiB, so that every
/// cache of the list function full stays within 400 MB (docs/performance.md, "The read
/// budget at a million datasets").
pub const SNAPSHOT_BUDGET_BYTES: usize = 128 * 1024 * 1024;

#[derive(Debug, Clone)]
struct Snapshot {
    rev: u64,
    bytes: usize,
    items: Arc<Vec<Indexed>>,
}

/// A list weighs its bytes, and at least `floor` (a [`SNAPSHOTS`]th of the budget).
#[derive(Debug, Clone)]
struct Weight {
    floor: u64,
}

impl Weighter<String, Snapshot> for Weight {
    fn weight(&self, _list_pk: &String, snapshot: &Snapshot) -> u64 {
        (snapshot.bytes as u64).max(self.floor)
    }
}

/// The kept lists, by list key, each with the `rev` it was read at.
#[derive(Debug)]
pub struct SnapshotCache {
    lists: Cache<String, Snapshot, Weight>,
}

impl Default for SnapshotCache {
    fn default() -> Self {
        Self::with_budget(SNAPSHOT_BUDGET_BYTES)
    }
}

impl SnapshotCache {
    pub fn with_budget(budget: usize) -> Self {
        // Bounded so that quick_cache's sums of weights cannot overflow (`catalog-bench
        // cache-memory --unbounded` asks for `usize::MAX`).
        let budget = (budget as u64).clamp(SNAPSHOTS as u64, u64::MAX >> 4);
        let floor = budget / SNAPSHOTS as u64;
        Self {
            lists: Cache::with_weighter(SNAPSHOTS, budget, Weight { floor }),
        }
    }

    /// The list read at `rev`, if kept.
    pub fn get(&self, list_pk: &str, rev: u64) -> Option<Arc<Vec<Indexed>>> {
        // Looked at first, so that a list of another `rev` does not count as used.
        match self.lists.peek(list_pk) {
            Some(kept) if kept.rev == rev => self.lists.get(list_pk).map(|s| s.items.clone()),
            _ => None,
        }
    }

    /// Keeps a list just read, in the place of an older copy of it (or, in a full cache, of a
    /// list read only once); a list over the budget's hot part is not kept (nor its older copy).
    pub fn put(&mut self, list_pk: String, rev: u64, items: Arc<Vec<Indexed>>) {
        let bytes = items.iter().map(Indexed::approx_bytes).sum();
        self.lists.insert(list_pk, Snapshot { rev, bytes, items });
    }

    /// Bytes kept, as estimated.
    pub fn bytes(&self) -> usize {
        self.lists.iter().map(|(_, s)| s.bytes).sum()
    }

    /// The lists kept, by name.
    pub fn lists(&self) -> Vec<&str> {
        let mut lists: Vec<&str> = self.lists.iter().map(|(k, _)| k.as_str()).collect();
        lists.sort_unstable();
        lists
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::input::Slug;
    use catalog::records::{Card, DatasetSummary};

    fn list(n: usize) -> Arc<Vec<Indexed>> {
        Arc::new(
            (0..n)
                .map(|i| {
                    Indexed::new(DatasetSummary {
                        slug: Slug::parse(&format!("d-{i}")).unwrap(),
                        id: uuid::Uuid::nil(),
                        card: Card {
                            access_level: Default::default(),
                            name: format!("Dataset {i}"),
                            description: Some("x".repeat(100)),
                            category: "c".into(),
                            tags: vec!["t".into()],
                            license: "l".into(),
                        },
                        size: 1,
                        row_count: 1,
                        column_count: 1,
                        keyless_until: None,
                        updated_at: chrono::DateTime::UNIX_EPOCH,
                        keyless: false,
                        downloads: 0,
                        files: None,
                        seq: i as u64 + 1,
                    })
                })
                .collect(),
        )
    }

    #[test]
    fn at_most_four_lists_are_kept_and_a_new_one_takes_the_place_of_one_read_once() {
        let mut cache = SnapshotCache::default();
        for name in ["a", "b", "c", "d"] {
            cache.put(name.into(), 1, list(10));
        }
        assert_eq!(cache.lists(), ["a", "b", "c", "d"], "four fit");
        assert!(cache.get("a", 1).is_some(), "a is read again");
        assert!(
            cache.get("a", 2).is_none(),
            "another revision is another list"
        );
        // WHEN a fifth list comes THEN it takes the place of one read only once: the first
        // three filled the cache's hot part, d the cold part, and was not read again
        cache.put("e".into(), 1, list(10));
        assert_eq!(cache.lists(), ["a", "b", "c", "e"], "e in the place of d");
        assert!(cache.get("d", 1).is_none());
        assert!(cache.get("e", 1).is_some());
        // A list read again at another revision replaces its older copy
        cache.put("a".into(), 2, list(10));
        assert_eq!(cache.lists().len(), 4);
        assert!(cache.get("a", 2).is_some());
        assert!(cache.get("a", 1).is_none());
    }

    #[test]
    fn the_byte_budget_evicts_and_a_list_over_it_is_not_kept() {
        let one = list(100).iter().map(Indexed::approx_bytes).sum::<usize>();
        let mut cache = SnapshotCache::with_budget(one * 2 + one / 2);
        cache.put("a".into(), 1, list(100));
        cache.put("b".into(), 1, list(100));
        cache.put("c".into(), 1, list(100));
        assert_eq!(cache.lists(), ["b", "c"], "two fit the budget");
        assert!(cache.bytes() <= one * 2 + one / 2);
        cache.put("huge".into(), 1, list(300));
        assert!(cache.get("huge", 1).is_none(), "over the whole budget");
        assert_eq!(cache.lists(), ["b", "c"]);
    }
}
