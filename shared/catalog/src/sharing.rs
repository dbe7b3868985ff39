//! The catalog as Delta Sharing shows it: one share, [`SHARE`], holding one schema, [`SCHEMA`],
//! whose tables are the listed datasets; and what that protocol's requests can be refused for
//! ([`SharingError`]). The protocol itself (routes, bodies, answers) is `catalog-http`'s
//! `sharing` module; the HTTP status of each refusal is `catalog_http::error`'s, the one place
//! errors are mapped.

use std::fmt;

use crate::slug::Slug;

/// The one share.
pub const SHARE: &str = "catalog";
/// The one schema in it.
pub const SCHEMA: &str = "datasets";

/// A Delta Sharing request this server does not answer with a table.
#[derive(Debug, thiserror::Error)]
pub enum SharingError {
    /// A share other than [`SHARE`] (as the path named it, echoed).
    #[error("share '{0}' does not exist: this server shares one, '{SHARE}'")]
    UnknownShare(String),
    /// A schema other than [`SCHEMA`] (as the path named it, echoed).
    #[error("schema '{0}' does not exist in share '{SHARE}': its one schema is '{SCHEMA}'")]
    UnknownSchema(String),
    /// The protocol has no 410: an unpublished table is one that does not exist, saying why.
    #[error("dataset '{0}' was unpublished by the catalog's operators")]
    Unpublished(Slug),
    /// A query body that is not what the protocol describes.
    #[error("the query body {0}")]
    MalformedQuery(Malformed),
    /// A feature of the protocol this server does not have.
    #[error("{0}")]
    Unsupported(Unsupported),
    /// Time travel to a version that does not exist, is newer than the active one, was never
    /// activated or was withdrawn by a rollback: one answer for all, as a pinned version the
    /// data endpoint does not serve.
    #[error("version {requested} of '{slug}' cannot be read: this server shares the active version, {active}, and the earlier versions that were active and not withdrawn by a rollback")]
    VersionUnavailable {
        slug: Slug,
        requested: u64,
        active: u64,
    },
}

/// What is wrong with a query body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Malformed {
    /// Not JSON: the parser's message.
    NotJson(String),
    NotAnObject,
    PredicateHintsNotStrings,
    JsonPredicateHintsNotAString,
    LimitHintOutOfRange,
}

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotJson(e) => write!(f, "is not JSON: {e}"),
            Self::NotAnObject => f.write_str("must be a JSON object"),
            Self::PredicateHintsNotStrings => {
                f.write_str("has predicateHints that are not strings")
            }
            Self::JsonPredicateHintsNotAString => {
                f.write_str("has jsonPredicateHints that are not a string")
            }
            Self::LimitHintOutOfRange => {
                f.write_str("has a limitHint that is not a whole number from 0 to 2147483647")
            }
        }
    }
}

/// A feature of the protocol this server does not have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsupported {
    /// The `/changes` route.
    ChangeDataFeed,
    /// A query body field asking for time travel by timestamp or for changes.
    QueryField(&'static str),
    /// The version route's `startingTimestamp`.
    StartingTimestamp,
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ChangeDataFeed => f.write_str(
                "the change data feed is not supported: read a table as of a version with \
                 the query route's 'version'",
            ),
            Self::QueryField(field) => write!(
                f,
                "'{field}' is not supported: this server reads a table as of a version \
                 ('version'), and has no change data feed"
            ),
            Self::StartingTimestamp => f.write_str(
                "'startingTimestamp' is not supported: this server reads a table as of a version",
            ),
        }
    }
}

impl SharingError {
    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownShare(_) | Self::UnknownSchema(_) | Self::Unpublished(_) => "not_found",
            Self::MalformedQuery(_) => "malformed_request",
            Self::Unsupported(_) => "unsupported",
            Self::VersionUnavailable { .. } => "version_unavailable",
        }
    }
}
