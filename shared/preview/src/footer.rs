//! Each version's footer (its Parquet metadata with the offset index, and the Arrow schema),
//! read at most once per function instance and kept while it fits the cache's budget. A
//! version's object never changes (its key holds its number and digest), so nothing is ever
//! stale; the least recently used footers make room for new ones.

use std::sync::{Arc, Mutex};

use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use tokio::sync::OnceCell;

type Slot = Arc<OnceCell<ArrowReaderMetadata>>;

pub struct FooterCache {
    /// Most recently used last.
    entries: Mutex<Vec<(Arc<str>, Slot)>>,
    budget_bytes: usize,
}

impl FooterCache {
    pub fn new(budget_bytes: usize) -> Self {
        Self {
            entries: Mutex::new(Vec::new()),
            budget_bytes,
        }
    }

    /// The footer of `key`, loaded by `load` on its first use only: concurrent first uses wait
    /// for one load. A failed load is not kept.
    pub async fn get_or_load<F, E>(&self, key: &Arc<str>, load: F) -> Result<ArrowReaderMetadata, E>
    where
        F: std::future::Future<Output = Result<ArrowReaderMetadata, E>>,
    {
        let slot = self.slot(key);
        let footer = slot.get_or_try_init(|| load).await?.clone();
        self.evict(key);
        Ok(footer)
    }

    /// How many footers are kept, and the bytes they take.
    pub fn held(&self) -> (usize, usize) {
        let entries = catalog::lock(&self.entries);
        let bytes = entries.iter().map(|(_, slot)| size_of(slot)).sum();
        (entries.len(), bytes)
    }

    fn slot(&self, key: &Arc<str>) -> Slot {
        let mut entries = catalog::lock(&self.entries);
        let slot = match entries.iter().position(|(k, _)| k == key) {
            Some(at) => entries.remove(at).1,
            None => Arc::new(OnceCell::new()),
        };
        entries.push((key.clone(), slot.clone()));
        slot
    }

    /// Drops the least recently used footers (never `keep`) until the rest fit the budget.
    fn evict(&self, keep: &Arc<str>) {
        let mut entries = catalog::lock(&self.entries);
        let mut total: usize = entries.iter().map(|(_, slot)| size_of(slot)).sum();
        let mut at = 0;
        while total > self.budget_bytes && at < entries.len() {
            if &entries[at].0 == keep || !entries[at].1.initialized() {
                at += 1;
                continue;
            }
            total -= size_of(&entries[at].1);
            entries.remove(at);
        }
    }
}

fn size_of(slot: &Slot) -> usize {
    slot.get().map_or(0, |m| m.metadata().memory_size())
}
