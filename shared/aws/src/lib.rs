//! The catalog's AWS adapters (docs/architecture.md): they implement `catalog`'s ports.
//!
//! - [`dynamo`]: the functions' DynamoDB readers, and what the write side shares with them (the
//!   table layout, the codecs, paged and retried requests).
//! - [`s3`]: presigned GET URLs.
//! - [`cognito`]: the accounts function's Cognito client (GetUser with a person's own token),
//!   written by hand on the SDK's HTTP client: the Cognito SDK would double the function's size.
//! - `mailer` (feature `ses`, the mailer function only): SES v2 and what a mailer run needs.
//! - [`config`], [`aws`]: typed configuration and SDK setup, read once per cold start.

pub mod aws;
pub mod cognito;
pub mod config;
pub mod dynamo;
#[cfg(feature = "ses")]
pub mod mailer;
pub mod s3;
pub mod uploads;
