//! In-memory adapters for fast logic tests. Not a substitute for the integration tests, which
//! run the DynamoDB and S3 adapters against servers speaking the real protocols.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

use crate::domain::{DatasetRef, KeyHash};
use crate::error::StoreError;
use crate::lock;
use crate::model::{CatalogPage, DatasetRecord, DatasetSummary, DownloadTarget, KeyRecord};
use crate::ports::{CatalogPager, DatasetReader, DownloadReader, SignedUrl, UrlSigner};
use crate::query::{Indexed, ListQuery};

/// A catalog held in memory. Datasets are listed newest first, in insertion order.
#[derive(Default)]
pub struct MemoryCatalog {
    datasets: Mutex<Vec<DatasetRecord>>,
    keys: Mutex<HashMap<KeyHash, KeyRecord>>,
    /// Set to make every read fail as the store would when throttled.
    pub unavailable: std::sync::atomic::AtomicBool,
    /// Set to make every read fail as it would on a malformed record.
    pub corrupt: std::sync::atomic::AtomicBool,
}

impl MemoryCatalog {
    pub fn insert_dataset(&self, record: DatasetRecord) {
        lock(&self.datasets).push(record);
    }

    pub fn insert_key(&self, hash: KeyHash, record: KeyRecord) {
        lock(&self.keys).insert(hash, record);
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.unavailable.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Throttled("throttled (in-memory)".into()));
        }
        if self.corrupt.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Corrupt(
                "attribute 'secret-internal-detail' missing".into(),
            ));
        }
        Ok(())
    }

    fn find(&self, dataset: &DatasetRef) -> Option<DatasetRecord> {
        lock(&self.datasets)
            .iter()
            .find(|d| match dataset {
                DatasetRef::Slug(s) => d.slug == *s,
                DatasetRef::Id(id) => d.id == *id,
            })
            .cloned()
    }
}

impl CatalogPager for MemoryCatalog {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        self.check()?;
        let datasets = lock(&self.datasets);
        let all: Vec<Indexed> = datasets
            .iter()
            .filter(|d| d.active.is_some())
            .enumerate()
            .filter_map(|(i, d)| summary(d, i as u64 + 1))
            .map(Indexed::new)
            .collect();
        Ok(query.select(all.iter(), offset, limit))
    }
}

fn summary(d: &DatasetRecord, seq: u64) -> Option<DatasetSummary> {
    let active = d.active.as_ref()?;
    Some(DatasetSummary::of(
        d.slug.clone(),
        d.id,
        d.meta.card.clone(),
        active,
        d.keyless_until,
        d.updated_at,
        seq,
    ))
}

impl DatasetReader for MemoryCatalog {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        self.check()?;
        Ok(self.find(dataset))
    }
}

impl DownloadReader for MemoryCatalog {
    async fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError> {
        self.check()?;
        let target = self.find(dataset).map(|d| DownloadTarget {
            slug: d.slug,
            keyless_until: d.keyless_until,
            active: d.active,
        });
        let key = key.and_then(|h| lock(&self.keys).get(h).cloned());
        Ok((target, key))
    }
}

/// Signs nothing: returns a recognisable fake URL valid for `ttl`.
pub struct FakeSigner {
    pub ttl: Duration,
}

impl UrlSigner for FakeSigner {
    async fn sign(&self, object_key: &str, now: DateTime<Utc>) -> Result<SignedUrl, StoreError> {
        Ok(SignedUrl {
            url: format!("https://signed.invalid/{object_key}?sig=fake"),
            expires_at: now + self.ttl,
        })
    }
}
