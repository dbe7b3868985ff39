//! Small traits, one per capability, so each function links only what it uses and the logic can
//! be tested against in-memory adapters.

use std::future::Future;

use chrono::{DateTime, Utc};

use crate::domain::{DatasetRef, KeyHash};
use crate::error::StoreError;
use crate::model::{CatalogPage, DatasetRecord, DownloadTarget, KeyRecord};
use crate::query::ListQuery;

/// Reads one page of the catalog, or of the datasets matching a query, in the query's order.
pub trait CatalogPager: Send + Sync {
    /// `offset` is the zero-based position of the first item; `None` means past any end.
    /// `total` counts every match; a facet value no dataset has is simply no match.
    fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> impl Future<Output = Result<CatalogPage, StoreError>> + Send;
}

/// Reads one dataset's full metadata.
pub trait DatasetReader: Send + Sync {
    fn get_dataset(
        &self,
        dataset: &DatasetRef,
    ) -> impl Future<Output = Result<Option<DatasetRecord>, StoreError>> + Send;
}

/// Reads what the data endpoint needs: the dataset's active version and, when a key was
/// presented, the key's record, together (one round trip where the store allows it).
pub trait DownloadReader: Send + Sync {
    fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> impl Future<Output = Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError>> + Send;
}

/// A URL that grants a GET of one object until `expires_at`.
#[derive(Debug, Clone, PartialEq)]
pub struct SignedUrl {
    pub url: String,
    pub expires_at: DateTime<Utc>,
}

/// Signs download URLs. Signing is local: no network call.
pub trait UrlSigner: Send + Sync {
    fn sign(
        &self,
        object_key: &str,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<SignedUrl, StoreError>> + Send;
}
