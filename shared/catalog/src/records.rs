//! Datasets as the store holds them: a dataset's record and metadata, its active version, and
//! the list entry. The API's answers are built from these in [`catalog_http::api`].

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use uuid::Uuid;

use std::sync::Arc;

use crate::files::{FilesBrief, Summary};
use crate::policy::{AccessLevel, ApprovalPolicy, Freshness};
use crate::slug::Slug;

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
    /// A version of many files ([`crate::files`]): their summary, which says which manifest
    /// chunk holds any page, row offset or partition; its `s3_key` is then the files' prefix
    /// (a file's key is the prefix and its path), `sha256` the manifest hash and `size` and
    /// `row_count` the sums. `None` for a version of one file.
    pub files: Option<Arc<Summary>>,
    /// A version converted from CSV, TSV or JSON Lines ([`crate::ingested`]): the inputs'
    /// formats, the rows skipped, the originals kept. `None` for a version published as Parquet.
    pub ingested: Option<Arc<crate::ingested::Ingested>>,
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
    /// Who may read the data outside keyless windows: lists badge it.
    #[serde(default)]
    pub access_level: AccessLevel,
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
    /// At the `approval` level: how requests are decided, the form and the terms.
    #[serde(default)]
    pub access: ApprovalPolicy,
    /// The dataset's card: Markdown ([`crate::readme::Readme`], at most 32 KiB), shown by the
    /// metadata endpoint and rendered on the dataset page; `None`: no card. Never in a list
    /// entry (it is not part of the [`Card`]) nor in the text index.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub readme: Option<String>,
}

/// A discussion ([API reference: Discussion](../../docs/api.md#discussion)).
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
    /// JSON array of Column objects ([docs/api.md, Metadata](../../docs/api.md#metadata-get-datasetsslug))
    /// of the active version, kept as stored text.
    pub schema: Box<RawValue>,
    pub keyless_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub active: Option<ActiveVersion>,
    /// When an operator unpublished it (every route answers 410 until it is restored).
    pub unpublished_at: Option<DateTime<Utc>>,
    /// Downloads over the last 30 days (counted once a day).
    pub downloads: u64,
}

/// The part of a dataset the data endpoint needs.
#[derive(Debug, Clone, PartialEq)]
pub struct DownloadTarget {
    pub slug: Slug,
    pub id: Uuid,
    pub level: AccessLevel,
    pub keyless_until: Option<DateTime<Utc>>,
    pub active: Option<ActiveVersion>,
    pub unpublished: bool,
}

impl DatasetRecord {
    /// When its answers change ([`Freshness`]).
    pub fn freshness(&self) -> Freshness {
        Freshness::new(self.updated_at, self.keyless_until)
    }

    /// What the gate judges of this dataset.
    pub fn target(&self) -> DownloadTarget {
        DownloadTarget {
            slug: self.slug.clone(),
            id: self.id,
            level: self.meta.card.access_level,
            keyless_until: self.keyless_until,
            active: self.active.clone(),
            unpublished: self.unpublished_at.is_some(),
        }
    }
}

/// A published version as its own item keeps it: the version and its schema (the
/// Column objects of that version, as stored text).
#[derive(Debug, Clone)]
pub struct StoredVersion {
    pub version: ActiveVersion,
    pub schema: Box<RawValue>,
}

/// What a Delta Sharing table request reads, in one round trip: the dataset, the version asked
/// for (when one was), and the presented key's record.
#[derive(Debug, Clone, Default)]
pub struct TableRead {
    pub dataset: Option<DatasetRecord>,
    /// The version asked for, if it exists and may be read by number: it was activated, and no
    /// rollback withdrew it since (the dataset item's `served_versions`).
    pub version: Option<StoredVersion>,
    pub key: Option<crate::keys::KeyRecord>,
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
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub keyless_until: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// Filled in at request time from `keyless_until`.
    pub keyless: bool,
    /// Downloads over the last 30 days (counted once a day).
    pub downloads: u64,
    /// A version of many files, in brief (absent, and not shown, for a version of one file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<Box<FilesBrief>>,
    /// Publication position (1 = first published); orders `sort=created`. Not serialized.
    #[serde(skip)]
    pub seq: u64,
}

impl DatasetSummary {
    /// When its answers change ([`Freshness`]), as its dataset's.
    pub fn freshness(&self) -> Freshness {
        Freshness::new(self.updated_at, self.keyless_until)
    }

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
            downloads: 0,
            files: active.files.as_deref().map(|f| Box::new(FilesBrief::of(f))),
            seq,
        }
    }
}

/// An organisation's dataset as its organisation's list shows it (the datasets table's
/// `by-org` index, which holds private datasets too): what identifies it and a line about it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrgDataset {
    pub slug: Slug,
    pub name: String,
    pub description: Option<String>,
    pub access_level: AccessLevel,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub updated_at: DateTime<Utc>,
    /// Whether an operator unpublished it.
    pub unpublished: bool,
}
