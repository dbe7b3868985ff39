//! Accounts and the read keys they mint for themselves: who the caller is (from the claims API
//! Gateway's JWT authorizer verified) and what a key request may ask for. The keys themselves are
//! [`crate::keys`]; storage is behind [`crate::ports::AccountKeyStore`].

use std::collections::HashMap;

use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;

use crate::input::{echo, Slug};
use crate::keys::{NewKey, Owner, Scope, MAX_DATASETS};

mod error;

pub use error::{AccountError, IdempotencyConflict};

/// Active (neither revoked nor expired) keys an account may hold at once.
pub const MAX_ACTIVE_KEYS: usize = 10;
/// Keys an account may create in a UTC day, whatever it revokes: a create–revoke loop cannot
/// grow the keys table (or the account's list) without bound.
pub const MAX_KEYS_PER_DAY: u32 = 50;

/// The UTC day a creation counts against (`2026-11-25`).
pub fn creation_day(now: DateTime<Utc>) -> String {
    now.format("%Y-%m-%d").to_string()
}

/// Seconds from `now` to the next UTC midnight, when the day's count starts again (at least 1).
pub fn seconds_to_next_day(now: DateTime<Utc>) -> u64 {
    let next = (now.date_naive() + Duration::days(1))
        .and_hms_opt(0, 0, 0)
        .map(|t| t.and_utc());
    next.map_or(86_400, |next| (next - now).num_seconds().max(1) as u64)
}

/// How long a creation's `Idempotency-Key` is remembered.
pub const IDEMPOTENCY_WINDOW: Duration = Duration::hours(24);

/// A client's `Idempotency-Key` on `POST /account/keys` (1 to 255 visible ASCII characters),
/// with the request it was first sent with: a retry with the same key and body gets the same key
/// back rather than a second one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replay {
    /// The SHA-256 of the header's value (the value itself is stored nowhere).
    pub key_hash: String,
    /// The SHA-256 of the request's label, expiry and datasets.
    pub fingerprint: String,
}

impl Replay {
    pub fn new(header: &str, request: &KeyRequest) -> Result<Self, FieldError> {
        let ok = (1..=255).contains(&header.len()) && header.bytes().all(|b| b.is_ascii_graphic());
        if !ok {
            return Err(FieldError::new(
                Field::IdempotencyKey,
                "Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID, say)",
            ));
        }
        let datasets: Vec<&str> = request
            .datasets
            .iter()
            .flatten()
            .map(Slug::as_str)
            .collect();
        let canonical = serde_json::json!([request.label, request.expires_in_days, datasets]);
        Ok(Self {
            key_hash: crate::keys::KeyHash::of(header).as_str().to_owned(),
            fingerprint: crate::keys::KeyHash::of(&canonical.to_string())
                .as_str()
                .to_owned(),
        })
    }
}

/// A label's length, in characters.
pub const LABEL_MAX_CHARS: usize = 64;
/// A key's lifetime, in days: every account key expires.
pub const MIN_EXPIRY_DAYS: i64 = 1;
pub const MAX_EXPIRY_DAYS: i64 = 365;
pub const DEFAULT_EXPIRY_DAYS: i64 = 90;

/// Why the claims of a request do not name a caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ClaimsError {
    #[error("no verified token: the route is not behind the JWT authorizer")]
    Missing,
    #[error("the token is not an access token")]
    NotAccessToken,
    #[error("the token names no valid subject")]
    NoSubject,
}

/// The caller of an account route, from the claims of an access token the authorizer verified.
/// Only the claims are trusted: never a header.
pub fn caller(claims: Option<&HashMap<String, String>>) -> Result<Owner, ClaimsError> {
    let claims = claims.ok_or(ClaimsError::Missing)?;
    // An ID token is signed by the same pool, for the same client: only its `token_use` tells
    // it apart, and only access tokens open the API.
    if claims.get("token_use").map(String::as_str) != Some("access") {
        return Err(ClaimsError::NotAccessToken);
    }
    claims
        .get("sub")
        .and_then(|sub| Owner::parse(sub))
        .ok_or(ClaimsError::NoSubject)
}

/// A field of a request body (an account's key request, access request or the operators'
/// decision), as a refusal names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Label,
    ExpiresInDays,
    Datasets,
    Dataset,
    IdempotencyKey,
    Answers,
    AcceptTerms,
    Decision,
    Reason,
    ExpiresAt,
    Rev,
    Status,
    /// An organisation's name (a parameter of the operators' list).
    Org,
    /// The body itself, when it is not the JSON object asked for.
    Body,
}

impl Field {
    /// Its name in the body.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Label => "label",
            Self::ExpiresInDays => "expires_in_days",
            Self::Datasets => "datasets",
            Self::Dataset => "dataset",
            Self::IdempotencyKey => "idempotency_key",
            Self::Answers => "answers",
            Self::AcceptTerms => "accept_terms",
            Self::Decision => "decision",
            Self::Reason => "reason",
            Self::ExpiresAt => "expires_at",
            Self::Org => "org",
            Self::Rev => "rev",
            Self::Status => "status",
            Self::Body => "body",
        }
    }

    /// The stable error code of a refusal of it (docs/api.md).
    pub fn code(self) -> &'static str {
        match self {
            Self::Label => "invalid_label",
            Self::ExpiresInDays => "invalid_expiry",
            Self::Datasets => "invalid_datasets",
            Self::Dataset => "invalid_dataset",
            Self::IdempotencyKey => "invalid_idempotency_key",
            Self::Answers => "invalid_answers",
            Self::AcceptTerms => "terms_not_accepted",
            Self::Decision | Self::Reason | Self::ExpiresAt | Self::Rev => "invalid_decision",
            Self::Status => "invalid_status",
            Self::Org => "invalid_org",
            Self::Body => "invalid_body",
        }
    }
}

/// A field is named by its name in the body.
impl PartialEq<&str> for Field {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

/// A refused request body: the field it names and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct FieldError {
    /// The field at fault ([`Field::Body`] when the body itself is not a JSON object).
    pub field: Field,
    pub message: String,
}

impl FieldError {
    pub fn new(field: Field, message: impl Into<String>) -> Self {
        Self {
            field,
            message: message.into(),
        }
    }
}

/// What `POST /account/keys` asks for, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRequest {
    pub label: String,
    pub expires_in_days: i64,
    /// The only datasets the key reads (absent or null: not limited).
    pub datasets: Option<Vec<Slug>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKeyRequest {
    label: Option<serde_json::Value>,
    expires_in_days: Option<serde_json::Value>,
    datasets: Option<serde_json::Value>,
}

impl KeyRequest {
    /// Parses a request body: a JSON object with `label` (required), `expires_in_days`
    /// (optional: absent or null is 90) and `datasets` (optional: 1 to [`MAX_DATASETS`] slugs
    /// the key is limited to), nothing else.
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let raw: RawKeyRequest = serde_json::from_slice(body).map_err(|e| {
            let text = e.to_string();
            match text.strip_prefix("unknown field ") {
                Some(rest) => FieldError::new(
                    Field::Body,
                    format!(
                        "unknown field {}; a key request has 'label', 'expires_in_days' and 'datasets'",
                        echo(rest.split(',').next().unwrap_or(rest))
                    ),
                ),
                None => FieldError::new(
                    Field::Body,
                    "the body must be a JSON object such as {\"label\": \"laptop\", \"expires_in_days\": 90}",
                ),
            }
        })?;
        let label = match raw.label {
            Some(serde_json::Value::String(label)) => Self::check_label(label)?,
            Some(_) => return Err(FieldError::new(Field::Label, "label must be a string")),
            None => return Err(FieldError::new(Field::Label, "label is required")),
        };
        let expires_in_days = match raw.expires_in_days {
            None => DEFAULT_EXPIRY_DAYS,
            // JSON has one number type: 90.0 is the whole number 90, as JSON Schema says.
            Some(value) => value
                .as_i64()
                .or_else(|| {
                    value
                        .as_f64()
                        .filter(|f| f.fract() == 0.0 && f.abs() < 1e6)
                        .map(|f| f as i64)
                })
                .filter(|d| (MIN_EXPIRY_DAYS..=MAX_EXPIRY_DAYS).contains(d))
                .ok_or_else(|| {
                    FieldError::new(
                        Field::ExpiresInDays,
                        format!(
                            "expires_in_days must be a whole number of days from \
                             {MIN_EXPIRY_DAYS} to {MAX_EXPIRY_DAYS}"
                        ),
                    )
                })?,
        };
        let datasets = match raw.datasets {
            None | Some(serde_json::Value::Null) => None,
            Some(value) => Some(Self::check_datasets(value)?),
        };
        Ok(Self {
            label,
            expires_in_days,
            datasets,
        })
    }

    /// The read key this request asks for, minted for `owner` at `now` with `secret`.
    pub fn key_for(&self, secret: &str, owner: Owner, now: DateTime<Utc>) -> NewKey {
        NewKey {
            owner: Some(owner),
            datasets: self.datasets.clone(),
            ..NewKey::for_secret(
                secret,
                vec![Scope::Read],
                &self.label,
                now,
                Some(now + Duration::days(self.expires_in_days)),
            )
        }
    }

    fn check_datasets(value: serde_json::Value) -> Result<Vec<Slug>, FieldError> {
        let bad = || {
            FieldError::new(
                Field::Datasets,
                format!("datasets must be a list of 1 to {MAX_DATASETS} dataset slugs"),
            )
        };
        let serde_json::Value::Array(items) = value else {
            return Err(bad());
        };
        if items.is_empty() || items.len() > MAX_DATASETS {
            return Err(bad());
        }
        let mut slugs: Vec<Slug> = Vec::new();
        for item in items {
            let slug = item
                .as_str()
                .and_then(|s| Slug::parse(s).ok())
                .ok_or_else(bad)?;
            if !slugs.contains(&slug) {
                slugs.push(slug);
            }
        }
        Ok(slugs)
    }

    fn check_label(label: String) -> Result<String, FieldError> {
        let chars = label.chars().count();
        if chars == 0 || chars > LABEL_MAX_CHARS || label.trim().is_empty() {
            return Err(FieldError::new(
                Field::Label,
                format!("label must be 1 to {LABEL_MAX_CHARS} characters, not only spaces"),
            ));
        }
        if label.chars().any(unprintable) {
            return Err(FieldError::new(
                Field::Label,
                "label must be printable: no control, line-separator, invisible or \
                 text-direction characters",
            ));
        }
        Ok(label)
    }
}

/// Characters a label may not hold: controls (C0, C1), line and paragraph separators, and the
/// invisible formatting characters (zero-width, text direction, word joiners, BOM) that would let
/// a label look like another.
fn unprintable(c: char) -> bool {
    c.is_control()
        || matches!(c,
            '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{2028}'..='\u{202E}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

#[cfg(test)]
mod tests;
