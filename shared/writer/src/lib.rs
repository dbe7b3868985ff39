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
//! - [`readme`]: a dataset's card, set or removed through [`change`], measured first.
//! - [`facets`]: rewrites of the per-category, per-tag and per-license lists, and `reindex`.
//! - [`summary`]: the facet summary (every value's count and display form), and its budget.
//! - [`private`]: private datasets, in no public list, and their moves in and out of them.
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
//! - `writer` and `error`: the [`DynamoWriter`] every write is a method of, and [`WriteError`].

pub mod activate;
pub mod change;
pub mod downloads;
pub mod editor;
mod error;
pub mod facets;
pub mod ingest;
pub mod keys;
pub mod manifest;
pub mod orders;
mod patience;
pub mod private;
pub mod publish;
pub mod readme;
pub mod summary;
pub mod tables;
pub mod takedown;
pub mod text;
mod tx;
mod writer;

pub use error::WriteError;
pub use facets::Reindexed;
pub use keys::{generate_key, KeyInfo, NewKey};
pub use publish::{
    check_fits, Expected, Fit, NewVersion, Publication, Reserved, Staged, VersionInfo,
};
pub use tables::create_tables;
pub use writer::DynamoWriter;
