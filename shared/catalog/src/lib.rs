//! The dataset catalog's domain and ports: what every other crate of the house builds on, with
//! no AWS SDK, no HTTP and no search engine in it (docs/architecture.md).
//!
//! - [`slug`]: a dataset's slug, its public name.
//! - [`input`]: types for outside input (slug, page, format, version pin), parsed once.
//! - [`keys`]: API keys, from the presented secret to the stored record.
//! - [`accounts`]: accounts and the rules for the read keys they mint (the keys function).
//! - [`records`]: datasets as the store holds them.
//! - [`readme`]: a dataset's card, the Markdown README its page shows.
//! - [`files`]: a version of many files: paths, splits, Hive partitions, per-file statistics,
//!   the manifest and its chunks.
//! - [`rows`]: the rows API's window, page and reader port (the reader is `catalog-preview`).
//! - [`orgs`]: organisations, their members' roles and limits (docs/organisations.md).
//! - [`policy`]: a dataset's access policy as stored and shown (keyless window, level, grants).
//! - [`grants`]: access requests and grants, from the request to its decisions.
//! - [`access`]: who may read a dataset's data: the one rule every route applies.
//! - [`audit`]: the download event every route writes, and reads back in the audit function.
//! - [`time`]: how times are written, in answers and stored items.
//! - [`query`]: list filters, words and sort order, and which access path serves them.
//! - [`ports`]: one small trait per capability; `catalog-aws` and `catalog-search` implement
//!   them, `catalog-http` answers requests on top of them.
//! - [`sharing`]: the one share and schema Delta Sharing shows, and that protocol's refusals.
//! - [`store`]: what a storage or signing adapter reports when it fails.
//! - [`error`]: what a request can end in, each domain's error wrapped whole (its HTTP side is
//!   `catalog-http`'s).
//! - [`metrics`]: the functions' CloudWatch metrics, as embedded-metric-format log lines
//!   (written by hand: a metrics library would add to every function's size).
//! - [`logging`]: the functions' log output.
//! - [`notices`]: the emails that tell people where their access requests stand (an outbox the
//!   mailer function sends from).
//! - [`versions`]: a dataset's history as its page shows it, and what changed between two
//!   versions.
//! - [`edits`]: what an organisation's editor changes of a dataset's description.
//! - [`signup`]: who may sign up in the `domains` mode (the sign-up function).

pub mod access;
pub mod accounts;
pub mod audit;
pub mod edits;
pub mod error;
pub mod files;
pub mod grants;
pub mod ingested;
pub mod input;
pub mod keys;
pub mod logging;
pub mod metrics;
pub mod notices;
pub mod orgs;
pub mod policy;
pub mod ports;
pub mod query;
pub mod readme;
pub mod records;
pub mod rows;
pub mod sharing;
pub mod signup;
pub mod slug;
pub mod store;
pub mod time;
pub mod uploads;
pub mod versions;

/// A mutex's guard, even if a panicking holder poisoned it (the data are caches, counters and
/// test doubles, valid at every step).
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
