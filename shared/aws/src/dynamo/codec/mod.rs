//! One codec per stored record: [`FromItem`] to read it, and (for what the writer stores)
//! a function that builds its attributes. Attributes are named through [`name`]'s constants.
//! The keys table's records are in [`keys`]; the facet summary in [`summary`].

use std::collections::HashMap;
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

use super::attr::{
    corrupt, get_s, get_s_opt, get_strings, get_time, get_time_opt, get_u64, get_uuid, n, opt_s,
    opt_time, s, strings, time,
};
pub mod files;
pub mod ingested;
mod keys;
mod served;
mod summary;

pub use keys::{purge_at, AccessRecordItem, NewKeyItem};
pub use served::ServedVersions;
pub use summary::{
    apply_summary_changes, is_marked, summary_count, summary_display, summary_entry, summary_mark,
    FacetSummary, SummaryChange,
};

use super::layout::{
    alias_pk, dataset_pk, key_of, name, position_of, version_sk, Item, DATASET_SK,
};
use catalog::error::StoreError;
use catalog::files::FilesBrief;
use catalog::input::Slug;
use catalog::policy::{AccessLevel, ApprovalPolicy};
use catalog::ports::DatasetAccess;
use catalog::records::{
    ActiveVersion, Card, DatasetMeta, DatasetRecord, DatasetSummary, Discussion, DownloadTarget,
};

/// A list of attributes to write, by name.
pub type Attributes = Vec<(&'static str, AttributeValue)>;

/// A record read from its stored item (a trait: the records are `catalog`'s, how they are stored
/// this crate's).
pub trait FromItem: Sized {
    fn from_item(item: &Item) -> Result<Self, StoreError>;
}

/// The codec's traits, for the modules that read and write records: `use codec::prelude::*`.
pub mod prelude {
    pub use super::{
        AccessRecordItem, ActiveVersionItem, CardItem, FromItem, MetaItem, NewKeyItem, SummaryItem,
    };
}

/// The `slug` attribute, parsed.
fn get_slug(item: &Item) -> Result<Slug, StoreError> {
    Slug::parse(&get_s(item, name::SLUG)?).map_err(|_| corrupt(name::SLUG))
}

use super::layout::name::{
    ACTIVE, COLUMNS, COLUMN_COUNT, PUBLISHED_AT, ROW_COUNT, S3_KEY, SCHEMA, SCHEMA_Z, SHA256, SIZE,
    VERSION,
};

/// How an `ActiveVersion` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait ActiveVersionItem: Sized {
    /// The `active` map of a dataset or version item; `None` when the dataset has none yet.
    fn from_item(item: &Item) -> Result<Option<Self>, StoreError>;
    /// The `active` map.
    fn to_value(&self) -> AttributeValue;
}

impl ActiveVersionItem for ActiveVersion {
    fn from_item(item: &Item) -> Result<Option<Self>, StoreError> {
        let m = match item.get(ACTIVE) {
            None | Some(AttributeValue::Null(_)) => return Ok(None),
            Some(AttributeValue::M(m)) => m,
            _ => return Err(corrupt(ACTIVE)),
        };
        Ok(Some(Self {
            version: get_u64(m, VERSION)?,
            s3_key: get_s(m, S3_KEY)?,
            size: get_u64(m, SIZE)?,
            row_count: get_u64(m, ROW_COUNT)?,
            columns: get_strings(m, COLUMNS)?,
            sha256: get_s(m, SHA256)?,
            published_at: get_time(m, PUBLISHED_AT)?,
            files: files::summary_from(m)?.map(Arc::new),
            ingested: ingested::ingested_from(m)?.map(Arc::new),
        }))
    }

    /// The `active` map; a version of many files carries its summary in it (`files`), so that
    /// activation copies it onto the dataset item with the rest, and a version of one file
    /// replaces it with nothing.
    fn to_value(&self) -> AttributeValue {
        let mut m = HashMap::from([
            (VERSION.to_owned(), n(self.version)),
            (S3_KEY.to_owned(), s(&self.s3_key)),
            (SIZE.to_owned(), n(self.size)),
            (ROW_COUNT.to_owned(), n(self.row_count)),
            (COLUMN_COUNT.to_owned(), n(self.columns.len() as u64)),
            (COLUMNS.to_owned(), strings(&self.columns)),
            (SHA256.to_owned(), s(&self.sha256)),
            (PUBLISHED_AT.to_owned(), time(&self.published_at)),
        ]);
        if let Some(files) = &self.files {
            m.insert(name::FILES.to_owned(), files::summary_value(files));
        }
        if let Some(ingested) = &self.ingested {
            m.insert(
                ingested::INGESTED.to_owned(),
                ingested::ingested_value(ingested),
            );
        }
        AttributeValue::M(m)
    }
}

impl FromItem for Card {
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            name: get_s(item, name::NAME)?,
            description: get_s_opt(item, name::DESCRIPTION)?,
            category: get_s(item, name::CATEGORY)?,
            tags: get_strings(item, name::TAGS)?,
            license: get_s(item, name::LICENSE)?,
            access_level: get_level(item)?,
        })
    }
}

/// A dataset's (or list entry's) access level: `registered` when the item predates levels.
fn get_level(item: &Item) -> Result<AccessLevel, StoreError> {
    match get_s_opt(item, name::ACCESS_LEVEL)? {
        None => Ok(AccessLevel::Registered),
        Some(raw) => AccessLevel::parse(&raw).ok_or_else(|| corrupt(name::ACCESS_LEVEL)),
    }
}

/// How a `Card` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait CardItem {
    /// The attributes a list entry and a dataset item hold for it.
    fn to_attributes(&self) -> Attributes;
}

impl CardItem for Card {
    fn to_attributes(&self) -> Attributes {
        vec![
            (name::NAME, s(&self.name)),
            (name::DESCRIPTION, opt_s(self.description.as_deref())),
            (name::CATEGORY, s(&self.category)),
            (name::TAGS, strings(&self.tags)),
            (name::LICENSE, s(&self.license)),
            (name::ACCESS_LEVEL, s(self.access_level.as_str())),
        ]
    }
}

/// The access routes' view of a dataset item: its id, level and policy (`slug` as asked).
pub fn dataset_access(item: &Item, slug: &Slug) -> Result<DatasetAccess, StoreError> {
    Ok(DatasetAccess {
        id: get_uuid(item, name::ID)?,
        slug: slug.clone(),
        level: get_level(item)?,
        policy: get_policy(item)?,
    })
}

/// A dataset item's approval policy (the default when it has none).
fn get_policy(item: &Item) -> Result<ApprovalPolicy, StoreError> {
    match get_s_opt(item, name::ACCESS_POLICY)? {
        Some(text) => serde_json::from_str(&text).map_err(|_| corrupt(name::ACCESS_POLICY)),
        None => Ok(ApprovalPolicy::default()),
    }
}

impl FromItem for DatasetMeta {
    /// The dataset item's descriptive attributes (`discussions` is stored as JSON text).
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            card: Card::from_item(item)?,
            source: get_s(item, name::SOURCE)?,
            insights: get_s(item, name::INSIGHTS)?,
            discussions: stored_discussions(&get_s(item, name::DISCUSSIONS)?)?,
            access: get_policy(item)?,
            readme: get_s_opt(item, name::README)?,
        })
    }
}

/// Discussions as stored: what publish wrote (the four fields of a discussion in
/// [docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)), read leniently, so
/// that a field added by a later writer never makes a dataset unreadable (publish input, by
/// contrast, refuses unknown fields).
fn stored_discussions(text: &str) -> Result<Vec<Discussion>, StoreError> {
    #[derive(serde::Deserialize)]
    struct Stored {
        id: String,
        title: String,
        slug: String,
        path: String,
    }
    let stored: Vec<Stored> = serde_json::from_str(text).map_err(|_| corrupt(name::DISCUSSIONS))?;
    Ok(stored
        .into_iter()
        .map(|d| Discussion {
            id: d.id,
            title: d.title,
            slug: d.slug,
            path: d.path,
        })
        .collect())
}

/// How a `DatasetMeta` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait MetaItem {
    /// The attributes a dataset item holds for it.
    fn to_attributes(&self) -> Attributes;
}

impl MetaItem for DatasetMeta {
    fn to_attributes(&self) -> Attributes {
        let mut attributes = self.card.to_attributes();
        // A Vec of plain string structs always serializes.
        let discussions = serde_json::to_string(&self.discussions).unwrap_or_else(|_| "[]".into());
        attributes.extend([
            (name::SOURCE, s(&self.source)),
            (name::INSIGHTS, s(&self.insights)),
            (name::DISCUSSIONS, s(discussions)),
        ]);
        // Plain enums, strings and numbers always serialize.
        let policy = serde_json::to_string(&self.access).unwrap_or_else(|_| "{}".into());
        attributes.push((name::ACCESS_POLICY, s(policy)));
        // NULL when there is none, so that an update clears a card it no longer has.
        attributes.push((name::README, opt_s(self.readme.as_deref())));
        attributes
    }
}

impl FromItem for DatasetRecord {
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_uuid(item, name::ID)?,
            slug: get_slug(item)?,
            meta: DatasetMeta::from_item(item)?,
            schema: schema_from(item)?,
            keyless_until: get_time_opt(item, name::KEYLESS_UNTIL)?,
            created_at: get_time(item, name::CREATED_AT)?,
            updated_at: get_time(item, name::UPDATED_AT)?,
            active: ActiveVersion::from_item(item)?,
            unpublished_at: get_time_opt(item, name::UNPUBLISHED_AT)?,
            downloads: downloads(item)?,
        })
    }
}

/// Whether a list entry is marked `withdrawn`: its dataset left the catalog, and the
/// renumbering that removes the entry has not run yet. No listing shows it.
pub fn is_withdrawn(item: &Item) -> bool {
    matches!(item.get(name::WITHDRAWN), Some(AttributeValue::Bool(true)))
}

/// The 30-day downloads a dataset item or list entry holds (0 when none were counted).
pub fn downloads(item: &Item) -> Result<u64, StoreError> {
    match item.get(name::DOWNLOADS) {
        None | Some(AttributeValue::Null(_)) => Ok(0),
        Some(_) => get_u64(item, name::DOWNLOADS),
    }
}

/// A schema (the JSON array of Column objects) is stored as text up to this size, and
/// deflate-compressed above it, so that wide tables fit DynamoDB's 400 KB item.
pub const SCHEMA_INLINE_BYTES: usize = 32 * 1024;
/// The largest schema text a stored schema may expand to (a metadata answer must fit Lambda's
/// 6 MB response).
pub const SCHEMA_MAX_BYTES: usize = 6 * 1024 * 1024;

/// The two attributes that hold a schema: the text, or its compressed form, the other NULL
/// (so that an activation replaces whichever a previous version used).
pub fn schema_attributes(json: &str) -> [(&'static str, AttributeValue); 2] {
    if json.len() <= SCHEMA_INLINE_BYTES {
        [(SCHEMA, s(json)), (SCHEMA_Z, AttributeValue::Null(true))]
    } else {
        let compressed = miniz_oxide::deflate::compress_to_vec(json.as_bytes(), 9);
        [
            (SCHEMA, AttributeValue::Null(true)),
            (SCHEMA_Z, AttributeValue::B(compressed.into())),
        ]
    }
}

/// The schema of a dataset or version item, as JSON text (`[]` when none is stored yet).
pub fn schema_from(item: &Item) -> Result<Box<RawValue>, StoreError> {
    let text = match (item.get(SCHEMA_Z), item.get(SCHEMA)) {
        (Some(AttributeValue::B(blob)), _) => {
            let bytes =
                miniz_oxide::inflate::decompress_to_vec_with_limit(blob.as_ref(), SCHEMA_MAX_BYTES)
                    .map_err(|_| corrupt(SCHEMA_Z))?;
            String::from_utf8(bytes).map_err(|_| corrupt(SCHEMA_Z))?
        }
        (_, Some(AttributeValue::S(text))) => text.clone(),
        (_, None | Some(AttributeValue::Null(_))) => "[]".to_owned(),
        _ => return Err(corrupt(SCHEMA)),
    };
    RawValue::from_string(text).map_err(|_| corrupt(SCHEMA))
}

/// DynamoDB's limit on one item, attribute names included.
pub const ITEM_LIMIT_BYTES: usize = 400 * 1024;

/// An item's size as DynamoDB counts it against [`ITEM_LIMIT_BYTES`] (names and values; numbers
/// counted at their largest, so the estimate never falls short).
pub fn item_size(item: &Item) -> usize {
    item.iter()
        .map(|(name, value)| name.len() + value_size(value))
        .sum()
}

fn value_size(value: &AttributeValue) -> usize {
    match value {
        AttributeValue::S(v) => v.len(),
        AttributeValue::N(v) => v.len().div_ceil(2) + 1,
        AttributeValue::B(v) => v.as_ref().len(),
        AttributeValue::Bool(_) | AttributeValue::Null(_) => 1,
        AttributeValue::L(values) => 3 + values.iter().map(|v| 1 + value_size(v)).sum::<usize>(),
        AttributeValue::M(map) => {
            3 + map
                .iter()
                .map(|(k, v)| 1 + k.len() + value_size(v))
                .sum::<usize>()
        }
        AttributeValue::Ss(values) => values.iter().map(String::len).sum(),
        AttributeValue::Ns(values) => values.iter().map(|v| v.len().div_ceil(2) + 1).sum(),
        AttributeValue::Bs(values) => values.iter().map(|v| v.as_ref().len()).sum(),
        _ => 0,
    }
}

/// What the data endpoint reads of a dataset item: every attribute [`DownloadTarget`] needs,
/// and nothing else (the schema may be large).
pub const DOWNLOAD_PROJECTION: &str = "#slug, #id, #level, #until, #active, #unpublished";

/// The names behind [`DOWNLOAD_PROJECTION`].
pub fn download_projection_names() -> HashMap<String, String> {
    HashMap::from([
        ("#slug".to_owned(), name::SLUG.to_owned()),
        ("#id".to_owned(), name::ID.to_owned()),
        ("#level".to_owned(), name::ACCESS_LEVEL.to_owned()),
        ("#until".to_owned(), name::KEYLESS_UNTIL.to_owned()),
        ("#active".to_owned(), ACTIVE.to_owned()),
        ("#unpublished".to_owned(), name::UNPUBLISHED_AT.to_owned()),
    ])
}

impl FromItem for DownloadTarget {
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            slug: get_slug(item)?,
            id: get_uuid(item, name::ID)?,
            level: get_level(item)?,
            keyless_until: get_time_opt(item, name::KEYLESS_UNTIL)?,
            active: ActiveVersion::from_item(item)?,
            unpublished: get_time_opt(item, name::UNPUBLISHED_AT)?.is_some(),
        })
    }
}

impl FromItem for DatasetSummary {
    /// A list entry (`LIST`) or a facet list entry.
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            slug: get_slug(item)?,
            id: get_uuid(item, name::ID)?,
            card: Card::from_item(item)?,
            size: get_u64(item, name::SIZE)?,
            row_count: get_u64(item, name::ROW_COUNT)?,
            column_count: get_u64(item, name::COLUMN_COUNT)?,
            keyless_until: get_time_opt(item, name::KEYLESS_UNTIL)?,
            updated_at: get_time(item, name::UPDATED_AT)?,
            keyless: false,
            downloads: downloads(item)?,
            files: files_brief(item)?,
            // Facet entries carry their `LIST` position; a `LIST` entry's is its own.
            seq: match item.get(name::SEQ) {
                Some(_) => get_u64(item, name::SEQ)?,
                None => position_of(item)?,
            },
        })
    }
}

/// A list entry's `files_brief`: `None` when absent or NULL (a version of one file).
fn files_brief(item: &Item) -> Result<Option<Box<FilesBrief>>, StoreError> {
    match item.get(name::FILES_BRIEF) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::S(text)) => serde_json::from_str(text)
            .map(Some)
            .map_err(|_| corrupt(name::FILES_BRIEF)),
        Some(_) => Err(corrupt(name::FILES_BRIEF)),
    }
}

/// How a `DatasetSummary` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait SummaryItem {
    /// What an activation refreshes in a list entry: the card, the version's figures and
    /// `updated_at` (not the keyless window, which a concurrent change may be writing).
    fn listing_attributes(&self) -> Attributes;
    /// Every attribute of a new list entry but its key (and, in a facet list, its `seq`).
    fn to_attributes(&self) -> Attributes;
}

impl SummaryItem for DatasetSummary {
    fn listing_attributes(&self) -> Attributes {
        let mut attributes = self.card.to_attributes();
        attributes.extend([
            (name::SIZE, n(self.size)),
            (name::ROW_COUNT, n(self.row_count)),
            (name::COLUMN_COUNT, n(self.column_count)),
            (name::UPDATED_AT, time(&self.updated_at)),
            // Set, or cleared when a version of one file follows one of many.
            (
                name::FILES_BRIEF,
                match &self.files {
                    Some(brief) => s(serde_json::to_string(brief).unwrap_or_default()),
                    None => AttributeValue::Null(true),
                },
            ),
        ]);
        attributes
    }

    fn to_attributes(&self) -> Attributes {
        let mut attributes = vec![
            (name::SLUG, s(self.slug.as_str())),
            (name::ID, s(self.id.to_string())),
            (name::KEYLESS_UNTIL, opt_time(self.keyless_until.as_ref())),
            (name::DOWNLOADS, n(self.downloads)),
        ];
        attributes.extend(self.listing_attributes());
        attributes
    }
}

/// A dataset's item, built in one place: what a new dataset is created with, and what
/// the writer's `check_fits` measures before a publish (the same item, its fields at their
/// widest). Its UUID alias ([`Self::alias`]) holds the same attributes.
#[derive(Debug, Clone)]
pub struct DatasetItem<'a> {
    pub slug: &'a Slug,
    pub id: Uuid,
    pub meta: &'a DatasetMeta,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub keyless_until: Option<DateTime<Utc>>,
    /// The last version number reserved.
    pub latest_version: u64,
    /// Its position in the catalog list, once listed.
    pub seq: Option<u64>,
    /// The active version and its schema (JSON text), once one is active; without one, the
    /// item holds an empty schema.
    pub active: Option<(&'a ActiveVersion, &'a str)>,
}

impl DatasetItem<'_> {
    /// The item under `DS#<slug>`.
    pub fn to_item(&self) -> Item {
        let mut item = key_of(dataset_pk(self.slug.as_str()), DATASET_SK);
        let mut attributes: Attributes = vec![
            (name::SLUG, s(self.slug.as_str())),
            (name::ID, s(self.id.to_string())),
            (name::CREATED_AT, time(&self.created_at)),
            (name::UPDATED_AT, time(&self.updated_at)),
            (name::KEYLESS_UNTIL, opt_time(self.keyless_until.as_ref())),
            (name::LATEST_VERSION, n(self.latest_version)),
        ];
        if let Some(seq) = self.seq {
            attributes.push((name::SEQ, n(seq)));
        }
        // An organisation's dataset is in its organisation's index (`by-org`); the alias is
        // not (see `alias`).
        if let Some(org) = self.slug.org() {
            attributes.push((name::ORG, s(org.as_str())));
        }
        match self.active {
            Some((version, schema)) => {
                attributes.push((ACTIVE, version.to_value()));
                attributes.extend(schema_attributes(schema));
            }
            None => attributes.push((SCHEMA, s("[]"))),
        }
        attributes.extend(self.meta.to_attributes());
        item.extend(attributes.into_iter().map(|(k, v)| (k.to_owned(), v)));
        item
    }

    /// The same item under its UUID alias, `ID#<uuid>`, without `org`: the organisation's
    /// index holds each dataset once, by its dataset item.
    pub fn alias(&self) -> Item {
        let mut item = self.to_item();
        item.insert(name::PK.to_owned(), s(alias_pk(&self.id)));
        item.remove(name::ORG);
        item
    }
}

/// A version's item (`DS#<slug>`, `V#<version>`): the version, and its schema (compressed when
/// large). Versions are immutable.
pub fn version_item(slug: &Slug, version: &ActiveVersion, schema: &str) -> Item {
    let mut item = key_of(dataset_pk(slug.as_str()), &version_sk(version.version));
    item.insert(ACTIVE.to_owned(), version.to_value());
    for (name, value) in schema_attributes(schema) {
        item.insert(name.to_owned(), value);
    }
    item
}

#[cfg(test)]
mod tests;
