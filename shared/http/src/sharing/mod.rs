//! The Delta Sharing protocol (delta-io/delta-sharing `PROTOCOL.md`), as this catalog speaks it:
//! its routes, the request bodies it reads, and the answers' shapes. The handler is
//! [`crate::api::sharing()`]; who may read a table is [`catalog::access::authorize`], as on every
//! other route.
//!
//! **The mapping.** The catalog is one share, [`SHARE`], holding one schema, [`SCHEMA`]; each
//! listed dataset is a table named by its slug (`catalog.datasets.city-bikes`), whose `id` is the
//! dataset's UUID. A table's version is the dataset's version. A version of one file has that
//! Parquet object as its one file, identified by its SHA-256; a version of many files has one
//! `file` line per file ([`files`]: its URL, its SHA-256 as `id`, its partition values, size and
//! statistics), its partition columns in the metadata line, and skips files with the query's
//! hints ([`predicate`], [`hints`]). A query with `version` reads that version
//! ("time travel"): the active one, or an older one that was active and has not been withdrawn
//! by a rollback since, so a client pinned to a version keeps reading it while a newer one is
//! published; any other number is answered as one that does not exist. Everything is answered in the protocol's
//! `parquet` response format, whatever the client's `delta-sharing-capabilities` asks for.
//!
//! **Not supported**, answered 400 `UNSUPPORTED_OPERATION` with a message saying so: the change
//! data feed (`/changes`, `startingVersion`), and time travel by timestamp (`timestamp`,
//! `startingTimestamp`). A one-file table ignores `predicateHints`, `jsonPredicateHints` and
//! `limitHint`, as the protocol allows (its one file is the answer).

pub mod files;
pub mod hints;
pub mod predicate;
pub mod types;

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use crate::error::ToHttp;
use crate::error::{ApiError, SharingError};
use catalog::input::echo;
use catalog::sharing::{Malformed, Unsupported};

/// Where the protocol's routes are, below the API's base.
pub const PREFIX: &str = "/api/v1/delta-sharing";
pub use catalog::sharing::{SCHEMA, SHARE};
/// The most tables one list answer holds (`maxResults` above it is capped), and the default.
pub const MAX_RESULTS: u64 = 100;

/// A protocol route, from the path below [`PREFIX`] and the method.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharingRoute {
    ListShares,
    GetShare,
    ListSchemas,
    /// The tables of the schema; `all-tables` of the share is the same list.
    ListTables,
    TableVersion(String),
    TableMetadata(String),
    Query(String),
    Changes(String),
}

impl SharingRoute {
    /// The route a request names. A share, schema or table name is case-insensitive, as the
    /// protocol says; an unknown share or schema is a 404 naming what exists.
    pub fn parse(path: &str, method: &str) -> Result<Self, ApiError> {
        let not_found = || ApiError::RouteNotFound(echo(path));
        let rest = path.strip_prefix(PREFIX).ok_or_else(not_found)?;
        let segments: Vec<&str> = rest.strip_prefix('/').unwrap_or(rest).split('/').collect();
        let (route, allowed) = match segments.as_slice() {
            ["shares"] => (Self::ListShares, "GET"),
            ["shares", share] => {
                known_share(share)?;
                (Self::GetShare, "GET")
            }
            ["shares", share, "schemas"] => {
                known_share(share)?;
                (Self::ListSchemas, "GET")
            }
            ["shares", share, "all-tables"] => {
                known_share(share)?;
                (Self::ListTables, "GET")
            }
            ["shares", share, "schemas", schema, "tables"] => {
                known_schema(share, schema)?;
                (Self::ListTables, "GET")
            }
            // The protocol's first form of the version route: HEAD on the table.
            ["shares", share, "schemas", schema, "tables", table] => {
                known_schema(share, schema)?;
                (Self::TableVersion(table.to_ascii_lowercase()), "HEAD")
            }
            ["shares", share, "schemas", schema, "tables", table, action] => {
                known_schema(share, schema)?;
                let table = table.to_ascii_lowercase();
                match *action {
                    "version" => (Self::TableVersion(table), "GET"),
                    "metadata" => (Self::TableMetadata(table), "GET"),
                    "query" => (Self::Query(table), "POST"),
                    "changes" => (Self::Changes(table), "GET"),
                    _ => return Err(not_found()),
                }
            }
            _ => return Err(not_found()),
        };
        let head_for_get = method == "HEAD" && allowed == "GET";
        if method != allowed && !head_for_get {
            return Err(ApiError::MethodNotAllowed {
                method: echo(method),
                allowed: match allowed {
                    "POST" => crate::error::Allowed::SharingPost,
                    "HEAD" => crate::error::Allowed::SharingHead,
                    _ => crate::error::Allowed::SharingGet,
                },
            });
        }
        Ok(route)
    }
}

fn known_share(share: &str) -> Result<(), ApiError> {
    if share.eq_ignore_ascii_case(SHARE) {
        Ok(())
    } else {
        Err(SharingError::UnknownShare(echo(share)).into())
    }
}

fn known_schema(share: &str, schema: &str) -> Result<(), ApiError> {
    known_share(share)?;
    if schema.eq_ignore_ascii_case(SCHEMA) {
        Ok(())
    } else {
        Err(SharingError::UnknownSchema(echo(schema)).into())
    }
}

/// A recipient's profile file, as Delta Sharing providers hand it out: the server's endpoint
/// (the API's base URL, `.../api/v1`, followed by `/delta-sharing`), the key as bearer token,
/// and the key's expiry when it has one.
pub fn profile(api_base_url: &str, key: &str, expires_at: Option<DateTime<Utc>>) -> Value {
    let mut profile = serde_json::json!({
        "shareCredentialsVersion": 1,
        "endpoint": format!("{}/delta-sharing", api_base_url.trim_end_matches('/')),
        "bearerToken": key,
    });
    if let Some(t) = expires_at {
        profile["expirationTime"] = Value::String(catalog::time::format_time(&t));
    }
    profile
}

/// A list request's `maxResults` (0 to any number, capped at [`MAX_RESULTS`]; 0 answers no table
/// and the token of the same position, as the protocol allows) and `pageToken` (the position of
/// the next table, as the previous answer gave it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListWindow {
    pub offset: u64,
    pub limit: u64,
}

impl ListWindow {
    pub fn parse(max_results: Option<&str>, page_token: Option<&str>) -> Result<Self, ApiError> {
        let limit = match max_results {
            None => MAX_RESULTS,
            Some(raw) => raw
                .parse::<u64>()
                .ok()
                .filter(|n| *n <= i32::MAX as u64)
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "maxResults must be a whole number from 0 to 2147483647 (at most \
                         {MAX_RESULTS} are returned), got '{}'",
                        echo(raw)
                    ))
                })?
                .min(MAX_RESULTS),
        };
        let offset = match page_token {
            None | Some("") => 0,
            Some(raw) => decode_token(raw).ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "invalid pageToken '{}': pass the nextPageToken of the previous answer",
                    echo(raw)
                ))
            })?,
        };
        Ok(Self { offset, limit })
    }
}

/// Page tokens are opaque to clients: `p` and the position of the next table.
pub fn encode_token(offset: u64) -> String {
    format!("p{offset}")
}

fn decode_token(raw: &str) -> Option<u64> {
    let digits = raw.strip_prefix('p')?;
    if digits.is_empty() || digits.len() > 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// What a query's body asks for. Every field is optional; an empty body is `{}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct QueryRequest {
    /// Time travel to this version.
    pub version: Option<u64>,
}

impl QueryRequest {
    pub fn parse(body: &[u8]) -> Result<Self, ApiError> {
        if body.iter().all(u8::is_ascii_whitespace) {
            return Ok(Self::default());
        }
        let malformed = |why: Malformed| ApiError::from(SharingError::MalformedQuery(why));
        let value: Value = serde_json::from_slice(body)
            .map_err(|e| malformed(Malformed::NotJson(e.to_string())))?;
        let Value::Object(fields) = value else {
            return Err(malformed(Malformed::NotAnObject));
        };
        for unsupported in [
            "timestamp",
            "startingVersion",
            "endingVersion",
            "startingTimestamp",
            "endingTimestamp",
        ] {
            if fields.get(unsupported).is_some_and(|v| !v.is_null()) {
                return Err(SharingError::Unsupported(Unsupported::QueryField(unsupported)).into());
            }
        }
        let version = match fields.get("version") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().ok_or_else(|| {
                ApiError::BadRequest(format!(
                    "version must be a non-negative whole number, got {}",
                    echo(&v.to_string())
                ))
            })?),
        };
        // The hints are best effort: checked for their type, then ignored.
        match fields.get("predicateHints") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {}
            Some(_) => return Err(malformed(Malformed::PredicateHintsNotStrings)),
        }
        match fields.get("jsonPredicateHints") {
            None | Some(Value::Null | Value::String(_)) => {}
            Some(_) => return Err(malformed(Malformed::JsonPredicateHintsNotAString)),
        }
        match fields.get("limitHint") {
            None | Some(Value::Null) => {}
            Some(v) if v.as_u64().is_some_and(|n| n <= i32::MAX as u64) => {}
            Some(_) => return Err(malformed(Malformed::LimitHintOutOfRange)),
        }
        Ok(Self { version })
    }
}

/// A share, as lists and `GET /shares/{share}` show it.
#[derive(Debug, Serialize)]
pub struct Share {
    pub name: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Schema {
    pub name: &'static str,
    pub share: &'static str,
}

#[derive(Debug, Serialize)]
pub struct Table {
    pub name: String,
    pub schema: &'static str,
    pub share: &'static str,
    pub id: String,
}

impl Table {
    pub fn of(slug: &str, id: &uuid::Uuid) -> Self {
        Self {
            name: slug.to_owned(),
            schema: SCHEMA,
            share: SHARE,
            id: id.to_string(),
        }
    }
}

/// A list answer: `items`, and `nextPageToken` unless it is the last page.
#[derive(Debug, Serialize)]
pub struct Page<T> {
    pub items: Vec<T>,
    #[serde(rename = "nextPageToken", skip_serializing_if = "Option::is_none")]
    pub next_page_token: Option<String>,
}

/// The table's metadata line, `{"metaData": …}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata<'a> {
    pub id: String,
    pub name: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'a str>,
    pub format: Format,
    pub schema_string: String,
    pub partition_columns: Vec<&'a str>,
    pub configuration: serde_json::Map<String, Value>,
    pub version: u64,
    pub size: u64,
    pub num_files: u64,
}

#[derive(Debug, Serialize)]
pub struct Format {
    pub provider: &'static str,
}

impl Format {
    pub const PARQUET: Self = Self {
        provider: "parquet",
    };
}

/// A file line, `{"file": …}`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct File<'a> {
    pub url: &'a str,
    pub id: &'a str,
    pub partition_values: serde_json::Map<String, Value>,
    pub size: u64,
    /// `{"numRecords": …}`, as text.
    pub stats: String,
    /// With time travel: the version read, and when it was published (unix milliseconds).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<i64>,
    pub expiration_timestamp: i64,
}

/// Unix milliseconds, as the protocol writes times.
pub fn millis(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

/// The protocol's name for an error, from its status and this catalog's own code.
pub fn error_code(error: &ApiError) -> &'static str {
    match error {
        ApiError::Sharing(SharingError::MalformedQuery(_)) => "MALFORMED_REQUEST",
        ApiError::Sharing(SharingError::Unsupported(_)) => "UNSUPPORTED_OPERATION",
        _ => match error.status().as_u16() {
            400 => "INVALID_PARAMETER_VALUE",
            401 => "UNAUTHENTICATED",
            403 => "PERMISSION_DENIED",
            404 => "RESOURCE_DOES_NOT_EXIST",
            405 => "METHOD_NOT_ALLOWED",
            429 => "TOO_MANY_REQUESTS",
            503 => "TEMPORARILY_UNAVAILABLE",
            _ => "INTERNAL_ERROR",
        },
    }
}

#[cfg(test)]
mod files_tests;
#[cfg(test)]
mod tests;
