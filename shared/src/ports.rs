//! Small traits, one per capability, so each function links only what it uses and the logic can
//! be tested against in-memory adapters.

use std::future::Future;

use chrono::{DateTime, Utc};

use uuid::Uuid;

use crate::error::StoreError;
use crate::input::DatasetRef;
use crate::keys::{KeyHash, KeyInfo, KeyRecord, NewKey, Owner};
use crate::policy::Grant;
use crate::query::ListQuery;
use crate::records::{CatalogPage, DatasetRecord, DownloadTarget};

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

/// Reads an account's grant for a dataset, strongly consistent (a revocation shows on the next
/// request).
pub trait GrantReader: Send + Sync {
    fn grant(
        &self,
        owner: &Owner,
        dataset: &Uuid,
    ) -> impl Future<Output = Result<Option<Grant>, StoreError>> + Send;
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

/// Records that a key opened a download. Called at most once per key per
/// [`crate::keys::LAST_USED_GRANULARITY`]; a failure is logged, never the request's.
pub trait KeyUsage: Send + Sync {
    fn record_use(
        &self,
        key: &KeyHash,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// What a key creation came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Created {
    Created,
    /// The account already holds [`crate::accounts::MAX_ACTIVE_KEYS`] active keys.
    LimitReached,
    /// An operator disabled the account.
    AccountDisabled,
}

/// An account's own keys: the keys function's storage.
pub trait AccountKeyStore: Send + Sync {
    /// Stores the key unless its owner already holds the maximum of active keys; concurrent
    /// creations never take an account past it.
    fn create_key(
        &self,
        key: &NewKey,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<Created, StoreError>> + Send;

    /// The owner's keys, revoked and expired ones included, newest first.
    fn list_keys(
        &self,
        owner: &Owner,
    ) -> impl Future<Output = Result<Vec<KeyInfo>, StoreError>> + Send;

    /// Revokes the owner's key `id` as of `at` (a revoked key stays revoked, with its first
    /// time). `false`: the owner has no key with that id.
    fn revoke_key(
        &self,
        owner: &Owner,
        id: &str,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;
}
