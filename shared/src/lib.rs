//! The dataset catalog's library crate: everything the Lambda functions (list, metadata, data,
//! keys, and the sign-up trigger) share, and what the write side (`catalog-writer`) builds on.
//!
//! - [`slug`]: a dataset's slug, its public name.
//! - [`input`]: types for outside input (slug, page, format, version pin), parsed once.
//! - [`keys`]: API keys, from the presented secret to the stored record.
//! - [`accounts`]: accounts and the rules for the read keys they mint (the keys function).
//! - [`records`]: datasets as the store holds them.
//! - [`rows`]: the rows API's window, page and reader port (the reader is `catalog-rows`).
//! - [`policy`]: a dataset's access policy as stored and shown (keyless window, level, grants).
//! - [`grants`]: access requests and grants, from the request to its decisions.
//! - [`sharing`]: the Delta Sharing protocol's routes, bodies and answers (its handler is
//!   [`api::sharing()`]).
//! - [`linked`]: the metadata as Croissant and DCAT documents (and where they link to).
//! - [`access`]: who may read a dataset's data: the one rule every route applies.
//! - [`time`]: how times are written, in answers and stored items.
//! - [`query`]: list filters, words and sort order, and which access path serves them.
//! - [`order`]: the listings' kept orders (name, update, downloads), in chunks by key range.
//! - [`ports`]: one small trait per capability; [`dynamo`] and [`s3`] implement them.
//! - [`api`]: the endpoints' rules, on top of the ports.
//! - [`error`]: the one error type and its mapping to HTTP.
//! - [`metrics`]: the functions' CloudWatch metrics, as embedded-metric-format log lines.
//! - [`lambda`]: the Lambda entry point, with a guard against events lambda_http cannot convert.
//! - [`signup`]: who may sign up in the `domains` mode (the sign-up function).
//! - [`config`], [`aws`]: typed configuration and SDK setup, read once per cold start.

pub mod access;
pub mod accounts;
pub mod api;
pub mod audit;
pub mod aws;
pub mod cognito;
pub mod config;
pub mod dynamo;
pub mod error;
pub mod grants;
pub mod input;
pub mod keys;
pub mod lambda;
pub mod linked;
#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub mod metrics;
pub mod order;
pub mod policy;
pub mod ports;
pub mod query;
pub mod records;
pub mod rows;
pub mod s3;
#[cfg(feature = "search")]
pub mod search;
pub mod sharing;
pub mod signup;
pub mod slug;
#[cfg(any(test, feature = "memory"))]
pub mod testing;
pub mod time;

/// A mutex's guard, even if a panicking holder poisoned it (the data are caches, counters and
/// test doubles, valid at every step).
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
