//! What the store holds and what the API returns.

use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::domain::{Scope, Slug};

/// The version of a dataset that the data endpoint serves, with everything the download
/// descriptor needs. It is stored inside the dataset record, so one read yields a consistent
/// view: a response can never mix the URL of one version with the row count of another.
#[derive(Debug, Clone, PartialEq)]
pub struct ActiveVersion {
    pub version: u64,
    pub s3_key: String,
    pub size: u64,
    pub row_count: u64,
    pub columns: Vec<String>,
    pub sha256: String,
    pub published_at: DateTime<Utc>,
}

/// What a list entry shows of a dataset's description: the fields listing, filtering and
/// searching use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    pub name: String,
    pub description: Option<String>,
    pub category: String,
    pub tags: Vec<String>,
    pub license: String,
}

/// A dataset's descriptive metadata, as an operator gives it and the metadata endpoint shows
/// it: the list entry's [`Card`], plus where the data comes from, notes and discussions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DatasetMeta {
    #[serde(flatten)]
    pub card: Card,
    pub source: String,
    pub insights: String,
    pub discussions: Vec<Discussion>,
}

/// Spec 2.3.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Discussion {
    pub id: String,
    pub title: String,
    pub slug: String,
    pub path: String,
}

/// A dataset as the metadata endpoint reads it.
#[derive(Debug, Clone)]
pub struct DatasetRecord {
    pub id: Uuid,
    pub slug: Slug,
    pub meta: DatasetMeta,
    /// JSON array of Column objects (spec 2.2) of the active version, kept as stored text.
    pub schema: Box<RawValue>,
    pub keyless_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub active: Option<ActiveVersion>,
}

/// The part of a dataset the data endpoint needs.
#[derive(Debug, Clone, PartialEq)]
pub struct DownloadTarget {
    pub slug: Slug,
    pub keyless_until: Option<DateTime<Utc>>,
    pub active: Option<ActiveVersion>,
}

/// One entry of the list endpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DatasetSummary {
    pub slug: Slug,
    pub id: Uuid,
    #[serde(flatten)]
    pub card: Card,
    pub size: u64,
    pub row_count: u64,
    pub column_count: u64,
    #[serde(serialize_with = "rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    #[serde(serialize_with = "rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// Filled in at request time from `keyless_until`.
    pub keyless: bool,
    /// Publication position (1 = first published); orders `sort=created`. Not serialized.
    #[serde(skip)]
    pub seq: u64,
}

impl DatasetSummary {
    /// The list entry of a dataset serving `active`, at publication position `seq`.
    pub fn of(
        slug: Slug,
        id: Uuid,
        card: Card,
        active: &ActiveVersion,
        keyless_until: Option<DateTime<Utc>>,
        updated_at: DateTime<Utc>,
        seq: u64,
    ) -> Self {
        Self {
            slug,
            id,
            card,
            size: active.size,
            row_count: active.row_count,
            column_count: active.columns.len() as u64,
            keyless_until,
            updated_at,
            keyless: false,
            seq,
        }
    }
}

/// A page of the catalog as the store returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogPage {
    pub total: u64,
    pub items: Vec<DatasetSummary>,
}

/// An API key's stored record (the key itself is never stored, only its hash).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    pub id: String,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it last opened a download, to [`crate::accounts::LAST_USED_GRANULARITY`].
    pub last_used_at: Option<DateTime<Utc>>,
}

impl KeyRecord {
    /// Whether a use at `now` should be written: never recorded, or last recorded at least
    /// [`crate::accounts::LAST_USED_GRANULARITY`] ago.
    pub fn use_worth_recording(&self, now: DateTime<Utc>) -> bool {
        self.last_used_at
            .is_none_or(|t| now - t >= crate::accounts::LAST_USED_GRANULARITY)
    }

    /// A key works until it expires, and not at all once revoked: `revoked_at` records when,
    /// by the revoker's clock, and is never compared with this one.
    pub fn is_usable_at(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|t| now < t)
    }

    pub fn has_scope(&self, scope: &Scope) -> bool {
        self.scopes.contains(scope)
    }
}

/// A dataset is keyless while the current time is before the end of its window.
pub fn is_keyless(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> bool {
    keyless_until.is_some_and(|until| now < until)
}

/// Whether the data endpoint needs a key: serialized as `keyless` or `key_required`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessMode {
    Keyless,
    KeyRequired,
}

/// What the data endpoint requires right now (a presented key is verified in either mode).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Access {
    pub mode: AccessMode,
    #[serde(serialize_with = "rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    /// The scope a key needs; `null` while no key is needed.
    pub required_scope: Option<Scope>,
}

impl Access {
    pub fn at(keyless_until: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Self {
        if is_keyless(keyless_until, now) {
            Self {
                mode: AccessMode::Keyless,
                keyless_until,
                required_scope: None,
            }
        } else {
            Self {
                mode: AccessMode::KeyRequired,
                keyless_until,
                required_scope: Some(Scope::Read),
            }
        }
    }
}

/// Spec 2.1, plus `id`, the active version (`version`, `sha256`, `published_at`) and `access`.
#[derive(Debug, Serialize)]
pub struct DatasetResponse<'a> {
    pub slug: &'a Slug,
    pub id: Uuid,
    pub name: &'a str,
    pub description: Option<&'a str>,
    pub license: &'a str,
    pub source: &'a str,
    pub category: &'a str,
    pub tags: &'a [String],
    pub size: u64,
    pub row_count: u64,
    pub column_count: u64,
    pub schema: &'a RawValue,
    pub keyless: bool,
    #[serde(serialize_with = "rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    pub insights: &'a str,
    pub discussions: &'a [Discussion],
    #[serde(serialize_with = "rfc3339")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// The active version's number: pass it as `?version=` to the data endpoint to pin it.
    pub version: u64,
    pub sha256: &'a str,
    #[serde(serialize_with = "rfc3339")]
    pub published_at: DateTime<Utc>,
    pub access: Access,
}

/// Spec 2.4, plus the version the URL serves: its number, the file's SHA-256 and size, and when
/// it was published.
#[derive(Debug, Serialize)]
pub struct DownloadDescriptor<'a> {
    pub slug: &'a Slug,
    pub format: &'static str,
    pub url: &'a str,
    #[serde(serialize_with = "rfc3339")]
    pub expires_at: DateTime<Utc>,
    pub row_count: u64,
    pub columns: &'a [String],
    pub version: u64,
    pub sha256: &'a str,
    pub size_bytes: u64,
    #[serde(serialize_with = "rfc3339")]
    pub published_at: DateTime<Utc>,
}

/// Spec 2.6.
#[derive(Debug, Serialize)]
pub struct PageResponse<'a> {
    pub items: &'a [DatasetSummary],
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
}

/// Timestamps go out as RFC 3339 in UTC with a `Z` and whole seconds.
pub fn format_time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn rfc3339<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(t))
}

fn rfc3339_opt<S: Serializer>(t: &Option<DateTime<Utc>>, s: S) -> Result<S::Ok, S::Error> {
    match t {
        Some(t) => s.serialize_str(&format_time(t)),
        None => s.serialize_none(),
    }
}
