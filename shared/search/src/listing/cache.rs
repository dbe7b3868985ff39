//! What a list function instance keeps of the text index and the kept orders it has read.

use std::collections::HashMap;
use std::sync::Arc;

use catalog::query::Indexed;
use quick_cache::unsync::Cache;
use quick_cache::Weighter;

use crate::index::{Delta, Shard, TextIndex};
use crate::order::MAX_CHUNK;

/// How many bytes of shards an instance keeps (as stored; in memory they take about as much).
pub const TEXT_CACHE_BYTES: usize = 96 * 1024 * 1024;
/// How many bytes of kept orders' positions an instance keeps (every order of a million
/// datasets: 12 MB).
pub const ORDER_CACHE_BYTES: usize = 32 * 1024 * 1024;

/// The text index's blobs an instance has read, by id: shards up to [`TEXT_CACHE_BYTES`]
/// (quick_cache's, admitting by frequency), and the newest delta. Beside them, the list entries read
/// for pages of matches, while the catalog's `rev` is unchanged (at most [`ENTRIES_KEPT`]),
/// and the last queries' matches on the current generation (at most [`MATCHES_KEPT`] queries
/// and [`MATCHES_BYTES`]), so
/// that a warm repeat neither loads nor scores.
#[derive(Debug)]
pub struct TextCache {
    shards: Kept<Shard, TEXT_CACHE_BYTES>,
    delta: Option<(String, Delta)>,
    entries_rev: u64,
    entries: HashMap<u64, Indexed>,
    /// The last queries' matches, by generation (its delta's id) and words, newest last.
    matches: Vec<(String, Vec<String>, Arc<Ranked>)>,
    /// Kept orders' chunks of positions, by blob id, up to [`ORDER_CACHE_BYTES`].
    orders: Kept<Arc<[u32]>, ORDER_CACHE_BYTES>,
}

/// Values by id, weighed by their bytes, up to `BUDGET` bytes: quick_cache's, in one shard.
/// Until the budget is full every value is kept; then it admits by frequency, not recency (a
/// value read again while kept is promoted, and a new one takes the place of one not read since
/// it came), and a value heavier than the budget's hot part (97%) is not kept.
struct Kept<V, const BUDGET: usize> {
    held: Cache<String, Weighed<V>, ByBytes>,
}

/// A value and its bytes.
#[derive(Clone)]
struct Weighed<V> {
    value: V,
    bytes: u64,
}

/// A value weighs its bytes (at least 1: quick_cache never evicts what weighs nothing).
#[derive(Clone)]
struct ByBytes;

impl<V> Weighter<String, Weighed<V>> for ByBytes {
    fn weight(&self, _id: &String, held: &Weighed<V>) -> u64 {
        held.bytes.max(1)
    }
}

impl<V, const BUDGET: usize> std::fmt::Debug for Kept<V, BUDGET> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept")
            .field("values", &self.held.len())
            .field("bytes", &self.held.weight())
            .finish()
    }
}

impl<V, const BUDGET: usize> Kept<V, BUDGET> {
    /// A budget of values of about `typical` bytes each (quick_cache sizes its memory of the
    /// ids it recently put out by how many values it expects).
    fn new(typical: usize) -> Self {
        Self {
            held: Cache::with_weighter((BUDGET / typical).max(1), BUDGET as u64, ByBytes),
        }
    }
}

impl<V: Clone, const BUDGET: usize> Kept<V, BUDGET> {
    fn get(&self, id: &str) -> Option<V> {
        self.held.get(id).map(|held| held.value.clone())
    }

    fn put(&mut self, id: String, value: V, bytes: usize) {
        self.held.insert(
            id,
            Weighed {
                value,
                bytes: bytes as u64,
            },
        );
    }

    /// The bytes held.
    #[cfg(test)]
    fn bytes(&self) -> u64 {
        self.held.iter().map(|(_, held)| held.bytes).sum()
    }
}

impl Default for TextCache {
    fn default() -> Self {
        Self {
            shards: Kept::new(TextIndex::MAX_SHARD_BYTES),
            delta: None,
            entries_rev: 0,
            entries: HashMap::new(),
            matches: Vec::new(),
            orders: Kept::new(MAX_CHUNK * 4),
        }
    }
}

/// Matches by position with their scores, best first.
pub(super) type Ranked = Vec<(u64, f32)>;

/// How many queries' matches an instance keeps.
pub const MATCHES_KEPT: usize = 8;
/// How many bytes of matches an instance keeps (16 bytes a match: a word in every dataset of a
/// million takes 16 MB).
pub const MATCHES_BYTES: usize = 32 * 1024 * 1024;

/// How many list entries an instance keeps for pages of matches.
pub const ENTRIES_KEPT: usize = 10_000;

impl TextCache {
    pub(super) fn matches(&self, generation: &str, words: &[String]) -> Option<Arc<Ranked>> {
        self.matches
            .iter()
            .find(|(g, w, _)| g == generation && w == words)
            .map(|(_, _, hits)| hits.clone())
    }

    /// Keeps a query's matches, the oldest out past [`MATCHES_KEPT`] queries or
    /// [`MATCHES_BYTES`]; matches over the whole budget are not kept.
    pub(super) fn put_matches(&mut self, generation: String, words: &[String], hits: Arc<Ranked>) {
        let size = |hits: &Ranked| hits.len() * std::mem::size_of::<(u64, f32)>();
        self.matches.retain(|(g, _, _)| *g == generation);
        if size(&hits) > MATCHES_BYTES {
            return;
        }
        self.matches.push((generation, words.to_vec(), hits));
        while self.matches.len() > MATCHES_KEPT
            || self.matches.iter().map(|(_, _, h)| size(h)).sum::<usize>() > MATCHES_BYTES
        {
            self.matches.remove(0);
        }
    }
    pub(super) fn entry(&self, rev: u64, seq: u64) -> Option<Indexed> {
        (self.entries_rev == rev)
            .then(|| self.entries.get(&seq).cloned())
            .flatten()
    }

    pub(super) fn put_entries(&mut self, rev: u64, read: &[Indexed]) {
        if self.entries_rev != rev || self.entries.len() + read.len() > ENTRIES_KEPT {
            self.entries.clear();
            self.entries_rev = rev;
        }
        for entry in read.iter().take(ENTRIES_KEPT) {
            self.entries.insert(entry.summary.seq, entry.clone());
        }
    }

    pub(super) fn order(&self, id: &str) -> Option<Arc<[u32]>> {
        self.orders.get(id)
    }

    pub(super) fn put_order(&mut self, id: String, seqs: Arc<[u32]>) {
        let bytes = seqs.len() * 4;
        self.orders.put(id, seqs, bytes);
    }

    pub(super) fn shard(&self, id: &str) -> Option<Shard> {
        self.shards.get(id)
    }

    pub(super) fn put_shard(&mut self, id: String, shard: Shard) {
        let bytes = shard.bytes();
        self.shards.put(id, shard, bytes);
    }

    pub(super) fn delta(&self, id: &str) -> Option<Delta> {
        self.delta
            .as_ref()
            .filter(|(held, _)| held == id)
            .map(|(_, d)| d.clone())
    }

    pub(super) fn put_delta(&mut self, id: String, delta: Delta) {
        self.delta = Some((id, delta));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_blobs_stay_within_the_budget_a_blob_read_again_staying() {
        let mut kept: Kept<u8, 100> = Kept::new(40);
        kept.put("a".into(), 1, 40);
        kept.put("b".into(), 2, 40);
        assert_eq!(kept.get("a"), Some(1), "a is read again");
        // WHEN a third comes to the full cache THEN it takes the place of one not read again
        kept.put("c".into(), 3, 40);
        assert_eq!(kept.get("b"), None, "b, not read again, left");
        assert_eq!((kept.get("a"), kept.get("c")), (Some(1), Some(3)));
        assert_eq!(kept.bytes(), 80);
        kept.put("d".into(), 4, 40);
        assert_eq!(kept.get("c"), None, "c, read once since it came, left");
        assert_eq!((kept.get("a"), kept.get("d")), (Some(1), Some(4)));
        kept.put("a".into(), 5, 10);
        assert_eq!(kept.bytes(), 50, "a replaced, its bytes with it");
        kept.put("big".into(), 6, 101);
        assert_eq!(kept.get("big"), None, "one over the budget is not kept");
        assert_eq!(kept.bytes(), 50, "and puts nothing out");
    }

    #[test]
    fn kept_matches_are_for_the_same_generation_and_words_only() {
        let mut cache = TextCache::default();
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        cache.put_matches(
            "D1".into(),
            &words(&["rain"]),
            Arc::new(vec![(3, 1.5), (1, 0.5)]),
        );
        assert_eq!(
            cache.matches("D1", &words(&["rain"])).as_deref(),
            Some(&vec![(3, 1.5), (1, 0.5)])
        );
        assert_eq!(cache.matches("D1", &words(&["snow"])), None);
        assert_eq!(cache.matches("D2", &words(&["rain"])), None);
        // A newer generation drops every older one's matches
        cache.put_matches("D2".into(), &words(&["snow"]), Arc::new(vec![(2, 1.0)]));
        assert_eq!(cache.matches("D1", &words(&["rain"])), None);
        for i in 0..=MATCHES_KEPT {
            cache.put_matches("D2".into(), &words(&[&format!("w{i}")]), Arc::default());
        }
        assert_eq!(cache.matches.len(), MATCHES_KEPT);
        assert_eq!(
            cache.matches("D2", &words(&["snow"])),
            None,
            "the oldest out"
        );
    }

    #[test]
    fn kept_matches_stay_within_their_bytes() {
        let mut cache = TextCache::default();
        let words = |w: &str| vec![w.to_owned()];
        // A third of the budget each: the fourth puts the first out
        let third = MATCHES_BYTES / 16 / 3;
        for w in ["a", "b", "c", "d"] {
            cache.put_matches("D".into(), &words(w), Arc::new(vec![(1, 1.0); third]));
        }
        assert!(cache.matches("D", &words("a")).is_none(), "the oldest out");
        for w in ["b", "c", "d"] {
            assert!(cache.matches("D", &words(w)).is_some(), "{w}");
        }
        // Matches over the whole budget are answered, not kept
        let all = MATCHES_BYTES / 16 + 1;
        cache.put_matches("D".into(), &words("e"), Arc::new(vec![(1, 1.0); all]));
        assert!(cache.matches("D", &words("e")).is_none());
        assert!(
            cache.matches("D", &words("d")).is_some(),
            "nothing put out for it"
        );
    }
}
