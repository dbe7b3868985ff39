//! Each object's footer (its Parquet metadata with the offset index, and the Arrow schema),
//! read at most once per function instance and kept while it fits the cache's budget, keyed by
//! the object's key: a version of one file has one, each file of a version of many files its
//! own (`datasets/<slug>/v<n>/files/<path>`). An object never changes (its key holds the
//! version's number, and a one-file version's digest), so nothing is ever stale.
//!
//! The cache is quick_cache's, weighed in bytes of decoded metadata (each footer weighed once,
//! when it is loaded), in one shard: the budget is one pool, not split per CPU. Until the budget
//! is full every footer is kept. Once it is, quick_cache admits by frequency (a hot/cold clock
//! that remembers the keys it recently turned away): a footer seen for the first time is used
//! for its read and not kept, and from its second load on it is kept in the place of one read
//! less often. So a scan of many versions read once does not push out the footers in use; a
//! version read again costs one more footer read. A footer heavier than the budget's hot part
//! (97%) is used for its read and never kept.

use std::sync::Arc;

use parquet::arrow::arrow_reader::ArrowReaderMetadata;
use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{DefaultHashBuilder, OptionsBuilder, Weighter};

/// Footers a function instance is expected to hold (quick_cache sizes its bookkeeping of
/// recently evicted keys by it; within an order of magnitude is enough).
const ESTIMATED_FOOTERS: usize = 256;

/// A footer and the bytes its decoded metadata takes.
#[derive(Clone)]
struct Footer {
    metadata: ArrowReaderMetadata,
    bytes: u64,
}

/// A footer weighs the bytes of its decoded metadata.
#[derive(Clone)]
struct ByBytes;

impl Weighter<Arc<str>, Footer> for ByBytes {
    fn weight(&self, _key: &Arc<str>, footer: &Footer) -> u64 {
        footer.bytes
    }
}

pub struct FooterCache {
    footers: Cache<Arc<str>, Footer, ByBytes>,
}

impl FooterCache {
    pub fn new(budget_bytes: usize) -> Self {
        let mut options = OptionsBuilder::new();
        options
            .shards(1)
            .estimated_items_capacity(ESTIMATED_FOOTERS)
            .weight_capacity(budget_bytes as u64);
        let footers = match options.build() {
            Ok(options) => Cache::with_options(
                options,
                ByBytes,
                DefaultHashBuilder::default(),
                DefaultLifecycle::default(),
            ),
            // Not reached: both capacities are set above, the only options `build` requires.
            Err(_) => Cache::with_weighter(ESTIMATED_FOOTERS, budget_bytes as u64, ByBytes),
        };
        Self { footers }
    }

    /// The footer of `key`, loaded by `load` on its first use only: concurrent first uses wait
    /// for one load. A failed load is not kept.
    pub async fn get_or_load<F, E>(&self, key: &Arc<str>, load: F) -> Result<ArrowReaderMetadata, E>
    where
        F: std::future::Future<Output = Result<ArrowReaderMetadata, E>>,
    {
        let footer = self
            .footers
            .get_or_insert_async(key, async {
                let metadata = load.await?;
                let bytes = metadata.metadata().memory_size() as u64;
                Ok(Footer { metadata, bytes })
            })
            .await?;
        Ok(footer.metadata)
    }

    /// How many footers are kept, and the bytes they take.
    pub fn held(&self) -> (usize, usize) {
        (self.footers.len(), self.footers.weight() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::arrow_reader::ArrowReaderOptions;
    use parquet::arrow::ArrowWriter;
    use parquet::file::properties::WriterProperties;
    use std::convert::Infallible;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The footer of a file of one int64 column in `groups` row groups: more groups, a heavier
    /// footer.
    fn footer(groups: usize) -> ArrowReaderMetadata {
        let values: Vec<i64> = (0..groups as i64 * 10).collect();
        let batch =
            RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(values)) as ArrayRef)])
                .unwrap();
        let properties = WriterProperties::builder()
            .set_max_row_group_size(10)
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        ArrowReaderMetadata::load(&bytes::Bytes::from(bytes), ArrowReaderOptions::new()).unwrap()
    }

    fn weight(footer: &ArrowReaderMetadata) -> usize {
        footer.metadata().memory_size()
    }

    /// A load that counts its calls.
    async fn counted(
        calls: &AtomicUsize,
        footer: &ArrowReaderMetadata,
    ) -> Result<ArrowReaderMetadata, Infallible> {
        calls.fetch_add(1, Ordering::SeqCst);
        tokio::task::yield_now().await;
        Ok(footer.clone())
    }

    #[tokio::test]
    async fn footers_are_kept_within_the_budget_and_a_new_one_from_its_second_load() {
        let one = footer(8);
        let w = weight(&one);
        // Room for two footers and a half.
        let cache = FooterCache::new(w * 5 / 2);
        let calls = AtomicUsize::new(0);
        for key in ["a", "b"] {
            cache
                .get_or_load(&Arc::from(key), counted(&calls, &one))
                .await
                .unwrap();
        }
        assert_eq!(cache.held(), (2, 2 * w));
        // WHEN a third footer comes to the full cache, THEN it is used and not kept: the two
        // that were there stay
        let c: Arc<str> = Arc::from("c");
        cache.get_or_load(&c, counted(&calls, &one)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        assert_eq!(cache.held(), (2, 2 * w));
        // WHEN it is asked for again, THEN it is loaded again and kept, in the place of one of
        // the others, and the next use finds it
        cache.get_or_load(&c, counted(&calls, &one)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4);
        assert_eq!(cache.held(), (2, 2 * w));
        cache.get_or_load(&c, counted(&calls, &one)).await.unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 4, "kept from its second load");
    }

    #[tokio::test]
    async fn concurrent_first_uses_load_once_and_a_failed_load_is_not_kept() {
        let one = footer(2);
        let cache = FooterCache::new(64 << 20);
        let calls = AtomicUsize::new(0);
        let key: Arc<str> = Arc::from("datasets/a/v1.parquet");
        let (first, second) = tokio::join!(
            cache.get_or_load(&key, counted(&calls, &one)),
            cache.get_or_load(&key, counted(&calls, &one)),
        );
        assert_eq!(calls.load(Ordering::SeqCst), 1, "one load for both");
        assert_eq!(weight(&first.unwrap()), weight(&second.unwrap()));
        assert_eq!(cache.held(), (1, weight(&one)));

        let other: Arc<str> = Arc::from("datasets/b/v1.parquet");
        let failed = cache
            .get_or_load(&other, async {
                Err::<ArrowReaderMetadata, _>("S3 is down")
            })
            .await;
        assert_eq!(failed.unwrap_err(), "S3 is down");
        assert_eq!(cache.held(), (1, weight(&one)), "the failure is not kept");
        cache
            .get_or_load(&other, counted(&calls, &one))
            .await
            .unwrap();
        assert_eq!(calls.load(Ordering::SeqCst), 2, "the next use loads it");
        assert_eq!(cache.held(), (2, 2 * weight(&one)));
    }

    #[tokio::test]
    async fn a_footer_heavier_than_the_budget_is_used_but_not_kept() {
        let heavy = footer(50);
        let cache = FooterCache::new(weight(&heavy) / 2);
        let calls = AtomicUsize::new(0);
        let key: Arc<str> = Arc::from("datasets/wide/v1.parquet");
        for round in 1..=2 {
            let got = cache
                .get_or_load(&key, counted(&calls, &heavy))
                .await
                .unwrap();
            assert_eq!(weight(&got), weight(&heavy));
            assert_eq!(calls.load(Ordering::SeqCst), round);
            assert_eq!(cache.held(), (0, 0));
        }
    }
}
