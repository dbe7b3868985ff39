//! What a query's body asks beyond its version ([`super::QueryRequest`]): the predicate hints,
//! `limitHint`, and the protocol's paging of query results (`maxFiles`, `pageToken`).
//!
//! **Page tokens** are opaque to clients: `f<version>.<next file>.<rows>.<hints>`, where the
//! version is the one the first page read (each later page reads the same version, as time
//! travel does, so a publish between pages changes nothing), the next file is its index in
//! manifest order, the rows are those that certainly passed in the files already handed out
//! (for `limitHint`), and the last part is a digest of the hints, so that a token is refused
//! with other hints than its first page's ([`Hints::check_token`], on a version of many files;
//! a one-file table's answer is its one file, whatever the token).

use serde_json::Value;

use super::files::{Paging, Position};
use super::predicate::{from_json, from_sql, Expr};
use crate::error::ApiError;
use catalog::input::echo;

/// The most files one page holds, whatever `maxFiles` asks (the answer's byte bound may stop
/// it sooner).
pub const MAX_PAGE_FILES: u64 = 10_000;

/// A query's hints and paging.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Hints {
    /// Every hint, parsed; AND-ed.
    pub predicates: Vec<Expr>,
    pub limit: Option<u64>,
    /// `maxFiles` (capped at [`MAX_PAGE_FILES`]) when the query pages.
    pub max_files: Option<u64>,
    pub token: Option<PageToken>,
    /// The digest of the hints, which a page token carries.
    pub digest: u64,
}

/// A decoded `pageToken`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageToken {
    pub version: u64,
    pub from: Position,
    pub digest: u64,
}

impl PageToken {
    pub fn encode(version: u64, from: Position, digest: u64) -> String {
        format!("f{version}.{}.{}.{digest:016x}", from.file, from.rows)
    }

    fn decode(raw: &str) -> Option<Self> {
        let mut parts = raw.strip_prefix('f')?.split('.');
        let mut number = || -> Option<u64> {
            let p = parts.next()?;
            if p.is_empty() || p.len() > 19 || !p.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            p.parse().ok()
        };
        let (version, file, rows) = (number()?, number()?, number()?);
        let digest = parts.next().filter(|d| d.len() == 16)?;
        let digest = u64::from_str_radix(digest, 16).ok()?;
        if parts.next().is_some() {
            return None;
        }
        Some(Self {
            version,
            from: Position { file, rows },
            digest,
        })
    }
}

fn bad(what: String) -> ApiError {
    ApiError::BadRequest(what)
}

impl Hints {
    /// The body's hints (its fields' types already checked by [`super::QueryRequest::parse`]).
    pub fn parse(body: &[u8]) -> Result<Self, ApiError> {
        let Ok(Value::Object(fields)) = serde_json::from_slice::<Value>(body) else {
            return Ok(Self::default());
        };
        let mut predicates = Vec::new();
        let mut digest = Fnv::new();
        if let Some(Value::Array(items)) = fields.get("predicateHints") {
            for sql in items.iter().filter_map(Value::as_str) {
                digest.add(b"s");
                digest.add(sql.as_bytes());
                predicates.push(from_sql(sql));
            }
        }
        if let Some(Value::String(json)) = fields.get("jsonPredicateHints") {
            digest.add(b"j");
            digest.add(json.as_bytes());
            predicates.push(from_json(json));
        }
        let limit = fields.get("limitHint").and_then(Value::as_u64);
        if let Some(limit) = limit {
            digest.add(b"l");
            digest.add(&limit.to_be_bytes());
        }
        let max_files = match fields.get("maxFiles") {
            None | Some(Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .filter(|n| (1..=i32::MAX as u64).contains(n))
                    .ok_or_else(|| {
                        bad(format!(
                            "maxFiles must be a whole number from 1 to 2147483647 (at most \
                             {MAX_PAGE_FILES} are returned a page), got {}",
                            echo(&v.to_string())
                        ))
                    })?
                    .min(MAX_PAGE_FILES),
            ),
        };
        let token = match fields.get("pageToken") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(PageToken::decode(s).ok_or_else(|| {
                bad(format!(
                    "invalid pageToken '{}': pass the nextPageToken of the previous answer",
                    echo(s)
                ))
            })?),
            Some(v) => {
                return Err(bad(format!(
                    "pageToken must be a string, got {}",
                    echo(&v.to_string())
                )))
            }
        };
        let digest = digest.0;
        Ok(Self {
            predicates,
            limit,
            max_files,
            token,
            digest,
        })
    }

    /// Whether `token` may continue this query on `version`: it was given for the same version
    /// and the same hints (a version of many files; a one-file table's answer is its one file,
    /// whatever the token).
    pub fn check_token(&self, version: u64) -> Result<(), ApiError> {
        let Some(token) = &self.token else {
            return Ok(());
        };
        if token.version != version {
            return Err(bad(format!(
                "this pageToken reads version {}, not the version {version} asked for",
                token.version
            )));
        }
        if token.digest != self.digest {
            return Err(bad(
                "this pageToken was given for other predicateHints, jsonPredicateHints or \
                 limitHint: send the first page's hints with each of its pages"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Whether the query pages: `maxFiles` or a `pageToken` (then `maxFiles` defaults to
    /// [`MAX_PAGE_FILES`]).
    pub fn paging(&self) -> Option<Paging> {
        if self.max_files.is_none() && self.token.is_none() {
            return None;
        }
        Some(Paging {
            max_files: self.max_files.unwrap_or(MAX_PAGE_FILES),
            from: self.token.map(|t| t.from).unwrap_or_default(),
        })
    }
}

/// FNV-1a, 64 bits: a digest stable across builds (a token outlives a deployment).
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn add(&mut self, bytes: &[u8]) {
        for b in bytes.iter().chain(&[0xff]) {
            self.0 ^= u64::from(*b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
