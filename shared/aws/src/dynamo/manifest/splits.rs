//! The statistics of each split of a many-file version: one item per split
//! (`M#<version>#T#<split>`, beside the manifest's chunks, so that deleting a version's manifest
//! deletes them too), holding the split's Column objects as the version item holds the
//! version's (`schema`, or `schema_z` deflated when large).

use catalog::error::StoreError;
use catalog::ports::SplitStatsReader;
use catalog::slug::Slug;
use serde_json::value::RawValue;

use crate::dynamo::codec::{schema_attributes, schema_from};
use crate::dynamo::layout::{dataset_pk, key_of, split_stats_sk, Item};
use crate::dynamo::requests::get_consistent;
use crate::dynamo::{DatasetsTable, DynamoCatalog};

/// The item holding split `split`'s statistics (`schema_json`, a JSON array of Column objects)
/// of version `version` of `slug`.
pub fn split_stats_item(slug: &Slug, version: u64, split: usize, schema_json: &str) -> Item {
    let mut item = key_of(dataset_pk(slug.as_str()), &split_stats_sk(version, split));
    for (name, value) in schema_attributes(schema_json) {
        item.insert(name.to_owned(), value);
    }
    item
}

impl<P: Send + Sync> SplitStatsReader for DatasetsTable<P> {
    async fn split_schema(
        &self,
        slug: &Slug,
        version: u64,
        split: usize,
    ) -> Result<Option<Box<RawValue>>, StoreError> {
        let key = key_of(dataset_pk(slug.as_str()), &split_stats_sk(version, split));
        match get_consistent(self.client(), self.name(), key).await? {
            Some(item) => schema_from(&item).map(Some),
            None => Ok(None),
        }
    }
}

impl<P: Send + Sync> SplitStatsReader for DynamoCatalog<P> {
    async fn split_schema(
        &self,
        slug: &Slug,
        version: u64,
        split: usize,
    ) -> Result<Option<Box<RawValue>>, StoreError> {
        self.datasets().split_schema(slug, version, split).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_splits_statistics_item_sits_beside_the_manifest_and_reads_back() {
        let slug = Slug::parse("sales").unwrap();
        let schema = r#"[{"name":"id","dtype":"int64","null_count":0}]"#;
        let item = split_stats_item(&slug, 3, 1, schema);
        assert_eq!(item["sk"].as_s().unwrap(), "M#0000000003#T#0001");
        assert!(item["sk"]
            .as_s()
            .unwrap()
            .starts_with(&crate::dynamo::layout::manifest_prefix(3)));
        assert_eq!(schema_from(&item).unwrap().get(), schema);
        let wide = format!("[{}]", vec![r#"{"name":"x"}"#; 5_000].join(","));
        let item = split_stats_item(&slug, 3, 0, &wide);
        assert_eq!(schema_from(&item).unwrap().get(), wide);
    }
}
