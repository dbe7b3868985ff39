//! The catalog's write side: publishing versions, activating them, facet lists, keyless
//! windows, API keys and table creation. Used by the operators' CLI, the local stack, the
//! tests and the bench; never by the Lambda functions, which link only the `catalog` crate
//! (a test checks their dependency trees).
//!
//! Publishing is one operation, [`DynamoWriter::publish`], of four steps, each safe to fail:
//! reserve a version number (creating the dataset, unlisted and without an active version, if it
//! is new); upload the object (the caller's step, passed in); write the version record; activate
//! it with a transaction conditioned on the version that was active before. Until activation
//! succeeds, the previous version keeps serving.
//!
//! - [`publish`]: the publish sequence, what it checks first, and reading what is stored.
//! - [`activate`]: activation, planned without I/O ([`activate::Activation::plan`]), then sent.
//! - [`change`]: keyless windows and access levels, planned the same way.
//! - [`facets`]: rewrites of the per-category, per-tag and per-license lists, and `reindex`.
//! - [`summary`]: the facet summary (every value's count and display form), and its budget.
//! - [`takedown`]: unpublishing, restoring and deleting datasets, and deleting versions.
//! - [`text`]: the listings' text index, kept with every change to a dataset's searched text,
//!   and rebuilt by `reindex`.
//! - [`orders`]: the listings' orders by name, update and downloads, kept with every change
//!   to a listed dataset, and rebuilt by `reindex`.
//! - [`downloads`]: the download log and the daily download counts, in their own table.
//! - [`ingest`]: the audit function's events (log batches, the daily schedule).
//! - [`keys`]: API keys.
//! - [`manifest`]: a many-file version's manifest items, written before the version is
//!   recorded and deleted with it.
//! - [`tables`]: creating the tables.
//! - `tx`: writes as data, and their DynamoDB transaction items.

pub mod activate;
pub mod change;
pub mod downloads;
pub mod facets;
pub mod ingest;
pub mod keys;
pub mod manifest;
pub mod orders;
mod patience;
pub mod publish;
pub mod summary;
pub mod tables;
pub mod takedown;
pub mod text;
mod tx;

use aws_sdk_dynamodb::Client;
use catalog::error::StoreError;
use catalog_aws::dynamo::layout::Item;
use catalog_aws::dynamo::requests::get_consistent;

pub use facets::Reindexed;
pub use keys::{generate_key, KeyInfo, NewKey};
pub use publish::{
    check_fits, Expected, Fit, NewVersion, Publication, Reserved, Staged, VersionInfo,
};
pub use tables::create_tables;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("dataset '{0}' does not exist")]
    NoSuchDataset(String),
    #[error("dataset '{0}' has no version {1}")]
    NoSuchVersion(String, u64),
    /// Another write changed this dataset first (its item's condition failed).
    #[error("another write changed dataset '{0}' first; nothing was changed")]
    Conflict(String),
    /// Other writers kept changing an item every write shares (a counter, a list's next
    /// position, a list's mark) for as long as the write waited: nothing was changed.
    #[error(
        "other writers kept changing {what} for {seconds} s; nothing was changed, and running it again is safe"
    )]
    Contended { what: String, seconds: u64 },
    /// Other writers kept moving a list that follows committed changes (the text index, the
    /// kept orders) for as long as this writer tried.
    #[error("other writers kept moving {0} at every attempt")]
    Raced(String),
    #[error("no API key with id '{0}'")]
    NoSuchKey(String),
    #[error("slug '{0}' is already taken by a published dataset")]
    SlugTaken(String),
    #[error("dataset '{0}' is unpublished: restore it first (catalog-admin datasets restore {0})")]
    Unpublished(String),
    /// Another writer held a list for longer than a write waits (its mark is renewed while it
    /// works, and lapses within 90 seconds when it stops).
    #[error("the list {0} was held by another writer for longer than a write waits (15 minutes)")]
    Busy(String),
    /// The change is committed and served, but some filter lists (or the text index) could
    /// not follow it.
    #[error(
        "the change is published, but these lists could not be updated: {0}; run `catalog-admin datasets reindex`"
    )]
    FacetLists(String),
    /// A delete whose dataset is gone from every route, but whose lists, version records or
    /// files are not all put in order or removed: running the delete again finishes it.
    #[error(
        "dataset '{slug}' is gone from every route, but its delete did not finish ({reason}); run `catalog-admin datasets delete {slug} --yes` again to finish it"
    )]
    DeleteUnfinished { slug: String, reason: String },
    /// The dataset cannot be stored or served as given (checked before anything is written).
    #[error("dataset too large to publish: {0}")]
    TooLarge(String),
    /// Input the writer refuses (the message names what is wrong).
    #[error("{0}")]
    Invalid(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Writes datasets, versions and keys.
#[derive(Clone, Debug)]
pub struct DynamoWriter {
    client: Client,
    datasets_table: String,
    keys_table: String,
    /// How long a write waits for items other writers share ([`patience`]).
    shared_wait: std::time::Duration,
}

impl DynamoWriter {
    pub fn new(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: keys_table.into(),
            shared_wait: patience::SHARED_WAIT,
        }
    }

    /// Waits at most `limit` for items other writers share (15 minutes by default, longer
    /// than a renumbering of a million datasets holds the catalog list): a function whose
    /// timeout is shorter gives up with a named error inside it, rather than being cut off.
    pub fn with_shared_wait(mut self, limit: std::time::Duration) -> Self {
        self.shared_wait = limit;
        self
    }

    /// One item of the datasets table, read consistently.
    async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        get_consistent(&self.client, &self.datasets_table, key).await
    }
}
