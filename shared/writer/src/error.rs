//! What a write can end in other than success.

use catalog::error::StoreError;

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
