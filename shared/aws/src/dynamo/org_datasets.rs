//! An organisation's datasets, private ones included, in one Query of the datasets table's
//! `by-org` index ([`DATASETS_BY_ORG_INDEX`]: `org`, then `slug`). Only the dataset item of an
//! organisation's dataset carries `org` (`DatasetItem::to_item`; not its alias, versions or
//! list entries), so the index holds each such dataset once. An index is eventually
//! consistent: a dataset created a moment ago may take up to a second to appear.

use catalog::error::StoreError;
use catalog::policy::AccessLevel;
use catalog::records::OrgDataset;
use catalog::slug::{OrgName, Slug};

use super::attr::{get_s, get_s_opt, get_time, get_time_opt, s};
use super::layout::name::{ACCESS_LEVEL, DESCRIPTION, NAME, ORG, SLUG, UNPUBLISHED_AT, UPDATED_AT};
use super::layout::{Item, DATASETS_BY_ORG_INDEX};
use super::requests::query_all;
use super::DatasetsTable;

/// The attributes the index projects besides the keys (template.yaml and
/// `catalog_writer::tables` declare the same).
pub const ORG_INDEX_PROJECTION: [&str; 5] =
    [NAME, DESCRIPTION, ACCESS_LEVEL, UPDATED_AT, UNPUBLISHED_AT];

impl<P> DatasetsTable<P> {
    /// The organisation's datasets, by slug: every one it has, at every level (`private`
    /// included), published or not yet, unpublished ones marked. One Query (paged past 1 MB).
    pub async fn org_datasets(&self, org: &OrgName) -> Result<Vec<OrgDataset>, StoreError> {
        let items = query_all(
            self.client()
                .query()
                .table_name(self.name())
                .index_name(DATASETS_BY_ORG_INDEX)
                .key_condition_expression("#org = :org")
                .expression_attribute_names("#org", ORG)
                .expression_attribute_values(":org", s(org.as_str())),
        )
        .await?;
        items.iter().map(org_dataset).collect()
    }
}

/// A short entry from an item of the index.
fn org_dataset(item: &Item) -> Result<OrgDataset, StoreError> {
    let slug = get_s(item, SLUG)?;
    let slug = Slug::parse(&slug)
        .map_err(|_| StoreError::Corrupt(format!("by-org: bad slug {slug:?}")))?;
    let access_level = match get_s_opt(item, ACCESS_LEVEL)? {
        None => AccessLevel::default(),
        Some(level) => AccessLevel::parse(&level)
            .ok_or_else(|| StoreError::Corrupt(format!("{slug}: bad access level {level:?}")))?,
    };
    Ok(OrgDataset {
        name: get_s(item, NAME)?,
        description: get_s_opt(item, DESCRIPTION)?,
        access_level,
        updated_at: get_time(item, UPDATED_AT)?,
        unpublished: get_time_opt(item, UNPUBLISHED_AT)?.is_some(),
        slug,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamo::codec::DatasetItem;
    use catalog::records::DatasetMeta;
    use chrono::{DateTime, Utc};
    use uuid::Uuid;

    fn item<'a>(slug: &'a Slug, meta: &'a DatasetMeta) -> DatasetItem<'a> {
        DatasetItem {
            slug,
            id: Uuid::nil(),
            meta,
            created_at: DateTime::<Utc>::UNIX_EPOCH,
            updated_at: DateTime::<Utc>::UNIX_EPOCH,
            keyless_until: None,
            latest_version: 1,
            seq: None,
            active: None,
        }
    }

    fn meta(level: &str) -> DatasetMeta {
        serde_json::from_value(serde_json::json!({
            "name": "Sales", "description": "Every sale", "category": "trade", "tags": [],
            "license": "CC0-1.0", "source": "tests", "insights": "", "discussions": [],
            "access_level": level,
        }))
        .expect("a dataset's metadata")
    }

    /// Only an organisation's dataset item carries `org`, so the index holds each once: not
    /// its alias, and no catalog dataset.
    #[test]
    fn only_an_organisations_dataset_item_is_in_its_index_and_reads_back_as_an_entry() {
        let private = meta("private");
        let slug = Slug::parse("acme~sales").unwrap();
        let new = item(&slug, &private);
        let dataset = new.to_item();
        assert_eq!(dataset.get(ORG), Some(&s("acme")));
        assert!(!new.alias().contains_key(ORG));
        let catalog = Slug::parse("sales").unwrap();
        assert!(!item(&catalog, &private).to_item().contains_key(ORG));

        let entry = org_dataset(&dataset).unwrap();
        assert_eq!(entry.slug, slug);
        assert_eq!(entry.name, "Sales");
        assert_eq!(entry.description.as_deref(), Some("Every sale"));
        assert_eq!(entry.access_level, AccessLevel::Private);
        assert!(!entry.unpublished);
        // An item written before levels reads as `registered`.
        let mut older = dataset.clone();
        older.remove(ACCESS_LEVEL);
        assert_eq!(
            org_dataset(&older).unwrap().access_level,
            AccessLevel::Registered
        );
    }
}
