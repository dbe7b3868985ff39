//! One codec per stored record: `TryFrom<&Item>` to read it, and (for what the writer stores)
//! a function that builds its attributes. The attribute names live here and nowhere else.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use serde_json::value::RawValue;

use super::attr::{
    corrupt, get_json, get_s, get_s_opt, get_strings, get_time, get_time_opt, get_u64, get_uuid, n,
    s, strings, time,
};
use super::layout::{position_of, Item};
use crate::domain::Scope;
use crate::error::StoreError;
use crate::model::{ActiveVersion, DatasetRecord, DatasetSummary, DownloadTarget, KeyRecord};

/// The attribute that holds a dataset's (or a version item's) version, as a map.
pub const ACTIVE: &str = "active";

impl ActiveVersion {
    /// The `active` map of a dataset or version item; `None` when the dataset has none yet.
    pub fn from_item(item: &Item) -> Result<Option<Self>, StoreError> {
        let m = match item.get(ACTIVE) {
            None | Some(AttributeValue::Null(_)) => return Ok(None),
            Some(AttributeValue::M(m)) => m,
            _ => return Err(corrupt(ACTIVE)),
        };
        Ok(Some(Self {
            version: get_u64(m, "version")?,
            s3_key: get_s(m, "s3_key")?,
            size: get_u64(m, "size")?,
            row_count: get_u64(m, "row_count")?,
            columns: get_strings(m, "columns")?,
            sha256: get_s(m, "sha256")?,
            published_at: get_time(m, "published_at")?,
        }))
    }

    /// The `active` map.
    pub fn to_value(&self) -> AttributeValue {
        AttributeValue::M(HashMap::from([
            ("version".to_owned(), n(self.version)),
            ("s3_key".to_owned(), s(&self.s3_key)),
            ("size".to_owned(), n(self.size)),
            ("row_count".to_owned(), n(self.row_count)),
            ("column_count".to_owned(), n(self.columns.len() as u64)),
            ("columns".to_owned(), strings(&self.columns)),
            ("sha256".to_owned(), s(&self.sha256)),
            ("published_at".to_owned(), time(&self.published_at)),
        ]))
    }
}

impl TryFrom<&Item> for DatasetRecord {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_uuid(item, "id")?,
            slug: get_s(item, "slug")?,
            name: get_s(item, "name")?,
            description: get_s_opt(item, "description")?,
            license: get_s(item, "license")?,
            source: get_s(item, "source")?,
            category: get_s(item, "category")?,
            tags: get_strings(item, "tags")?,
            insights: get_s(item, "insights")?,
            discussions: get_json(item, "discussions")?,
            schema: match item.get("schema") {
                None => RawValue::from_string("[]".to_owned()).map_err(|_| corrupt("schema"))?,
                Some(_) => get_json(item, "schema")?,
            },
            keyless_until: get_time_opt(item, "keyless_until")?,
            created_at: get_time(item, "created_at")?,
            updated_at: get_time(item, "updated_at")?,
            active: ActiveVersion::from_item(item)?,
        })
    }
}

/// What the data endpoint reads of a dataset item: every attribute [`DownloadTarget`] needs,
/// and nothing else (the schema may be large).
pub const DOWNLOAD_PROJECTION: &str = "#slug, #until, #active";

/// The names behind [`DOWNLOAD_PROJECTION`].
pub fn download_projection_names() -> HashMap<String, String> {
    HashMap::from([
        ("#slug".to_owned(), "slug".to_owned()),
        ("#until".to_owned(), "keyless_until".to_owned()),
        ("#active".to_owned(), ACTIVE.to_owned()),
    ])
}

impl TryFrom<&Item> for DownloadTarget {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            slug: get_s(item, "slug")?,
            keyless_until: get_time_opt(item, "keyless_until")?,
            active: ActiveVersion::from_item(item)?,
        })
    }
}

impl TryFrom<&Item> for DatasetSummary {
    type Error = StoreError;

    /// A list entry (`LIST`) or a facet list entry.
    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            slug: get_s(item, "slug")?,
            id: get_uuid(item, "id")?,
            name: get_s(item, "name")?,
            description: get_s_opt(item, "description")?,
            category: get_s(item, "category")?,
            tags: get_strings(item, "tags")?,
            license: get_s(item, "license")?,
            size: get_u64(item, "size")?,
            row_count: get_u64(item, "row_count")?,
            column_count: get_u64(item, "column_count")?,
            keyless_until: get_time_opt(item, "keyless_until")?,
            updated_at: get_time(item, "updated_at")?,
            keyless: false,
            // Facet entries carry their `LIST` position; a `LIST` entry's is its own.
            seq: match item.get("seq") {
                Some(_) => get_u64(item, "seq")?,
                None => position_of(item)?,
            },
        })
    }
}

impl TryFrom<&Item> for KeyRecord {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_s(item, "id")?,
            scopes: get_strings(item, "scopes")?
                .iter()
                .map(|s| Scope::parse(s))
                .collect(),
            expires_at: get_time_opt(item, "expires_at")?,
            revoked_at: get_time_opt(item, "revoked_at")?,
        })
    }
}
