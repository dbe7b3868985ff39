//! The dataset catalog's library crate: everything the three Lambda functions share.
//!
//! - [`accounts`]: accounts and the read keys they mint (the keys function).
//! - [`domain`]: types for outside input (slug, page, API key), parsed once.
//! - [`model`]: stored records and response bodies.
//! - [`query`]: list filters, words and sort order, and which access path serves them.
//! - [`ports`]: one small trait per capability; [`dynamo`] and [`s3`] implement them.
//! - [`api`]: the endpoints' rules, on top of the ports.
//! - [`error`]: the one error type and its mapping to HTTP.
//! - [`lambda`]: the Lambda entry point, with a guard against events lambda_http cannot convert.
//! - [`config`], [`aws`]: typed configuration and SDK setup, read once per cold start.

pub mod accounts;
pub mod api;
pub mod aws;
pub mod config;
pub mod domain;
pub mod dynamo;
pub mod error;
pub mod lambda;
#[cfg(any(test, feature = "memory"))]
pub mod memory;
pub mod model;
pub mod ports;
pub mod query;
pub mod s3;
#[cfg(any(test, feature = "memory"))]
pub mod testing;

/// A mutex's guard, even if a panicking holder poisoned it (the data are caches, counters and
/// test doubles, valid at every step).
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
