//! The lists a function instance keeps for scans (several filters, `q`, other orders), each
//! valid while the catalog's `rev` is unchanged. Bounded twice: at most [`SNAPSHOTS`] lists,
//! and at most [`SNAPSHOT_BUDGET_BYTES`] in all, so that a large catalog cannot grow an
//! instance's memory past what its `MemorySize` allows (docs/performance.md, "List function
//! memory").

use std::collections::VecDeque;
use std::sync::Arc;

use catalog::query::Indexed;

/// How many lists an instance keeps.
pub const SNAPSHOTS: usize = 4;
/// How many bytes of lists an instance keeps (estimated by [`Indexed::approx_bytes`]). A list
/// larger than this is served from the store each time rather than kept. With the text index
/// and the kept orders built, the only lists read are filters' of at most 100 entries; larger
/// ones are read only by a catalog not reindexed since an upgrade. 128 MiB, so that every
/// cache of the list function full stays within 400 MB (docs/performance.md, "The read
/// budget at a million datasets").
pub const SNAPSHOT_BUDGET_BYTES: usize = 128 * 1024 * 1024;

#[derive(Debug)]
struct Snapshot {
    list_pk: String,
    rev: u64,
    bytes: usize,
    items: Arc<Vec<Indexed>>,
}

/// The kept lists, oldest first.
#[derive(Debug)]
pub struct SnapshotCache {
    entries: VecDeque<Snapshot>,
    budget: usize,
}

impl Default for SnapshotCache {
    fn default() -> Self {
        Self::with_budget(SNAPSHOT_BUDGET_BYTES)
    }
}

impl SnapshotCache {
    pub fn with_budget(budget: usize) -> Self {
        Self {
            entries: VecDeque::new(),
            budget,
        }
    }

    /// The list read at `rev`, if kept.
    pub fn get(&self, list_pk: &str, rev: u64) -> Option<Arc<Vec<Indexed>>> {
        self.entries
            .iter()
            .find(|s| s.list_pk == list_pk && s.rev == rev)
            .map(|s| s.items.clone())
    }

    /// Keeps a list just read (replacing an older copy of it), evicting the oldest lists until
    /// both bounds hold; a list over the whole budget is not kept.
    pub fn put(&mut self, list_pk: String, rev: u64, items: Arc<Vec<Indexed>>) {
        self.entries.retain(|s| s.list_pk != list_pk);
        let bytes = items.iter().map(Indexed::approx_bytes).sum();
        if bytes > self.budget {
            return;
        }
        while self.entries.len() >= SNAPSHOTS || self.bytes() + bytes > self.budget {
            self.entries.pop_front();
        }
        self.entries.push_back(Snapshot {
            list_pk,
            rev,
            bytes,
            items,
        });
    }

    /// Bytes kept, as estimated.
    pub fn bytes(&self) -> usize {
        self.entries.iter().map(|s| s.bytes).sum()
    }

    /// The lists kept, oldest first.
    pub fn lists(&self) -> Vec<&str> {
        self.entries.iter().map(|s| s.list_pk.as_str()).collect()
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
                        seq: i as u64 + 1,
                    })
                })
                .collect(),
        )
    }

    #[test]
    fn at_most_four_lists_are_kept_the_oldest_leaving_first() {
        let mut cache = SnapshotCache::default();
        for name in ["a", "b", "c", "d", "e"] {
            cache.put(name.into(), 1, list(10));
        }
        assert_eq!(cache.lists(), ["b", "c", "d", "e"]);
        assert!(cache.get("a", 1).is_none());
        assert!(cache.get("e", 1).is_some());
        assert!(
            cache.get("e", 2).is_none(),
            "another revision is another list"
        );
        // A list read again replaces its older copy.
        cache.put("c".into(), 2, list(10));
        assert_eq!(cache.lists(), ["b", "d", "e", "c"]);
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
