//! What the Delta Sharing routes read ([`catalog_http::api::sharing()`]): a key
//! alone, a table with its key (and a pinned version) in one BatchGetItem, a limited key's
//! datasets in one BatchGetItem, and an account's grants in one Query of the owner index.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::KeysAndAttributes;
use uuid::Uuid;

use super::access::{owner_items_query, owner_records_query};
use super::attr::get_uuid;
use super::attr::{corrupt, get_s};
use super::codec::{download_projection_names, schema_from, ServedVersions, DOWNLOAD_PROJECTION};
use super::layout::name::{DATASET, SK};
use super::layout::name::{ORG, ROLE};
use super::layout::MEMBERSHIP_ID_PREFIX;
use super::layout::{api_key_key, dataset_pk, key_of, version_sk, Item, DATASET_SK};
use super::requests::{batch_get_all, get_consistent, query_all};
use super::{DatasetsTable, DynamoCatalog, KeysTable};
use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::keys::{KeyHash, KeyRecord, Owner};
use catalog::orgs::{OrgName, Role};
use catalog::policy::Grant;
use catalog::ports::{GrantLister, KeyReader, TableReader, TargetsReader};
use catalog::records::{ActiveVersion, DatasetRecord, DownloadTarget, StoredVersion, TableRead};
use catalog::slug::Slug;

fn keys(items: Vec<Item>) -> Result<KeysAndAttributes, StoreError> {
    KeysAndAttributes::builder()
        .set_keys(Some(items))
        .consistent_read(true)
        .build()
        .map_err(|e| StoreError::Other(Box::new(e)))
}

fn sk_of(item: &Item) -> Option<&str> {
    item.get(SK).and_then(|v| v.as_s().ok()).map(String::as_str)
}

impl KeyReader for KeysTable {
    /// One strongly consistent GetItem: a revocation shows on the next request.
    async fn read_key(&self, key: &KeyHash) -> Result<Option<KeyRecord>, StoreError> {
        get_consistent(self.client(), self.name(), api_key_key(key.as_str()))
            .await?
            .as_ref()
            .map(KeyRecord::from_item)
            .transpose()
    }
}

impl<P: Send + Sync> TableReader for DynamoCatalog<P> {
    /// One BatchGetItem over both tables, strongly consistent: the dataset item (all of it: the
    /// metadata line needs its name, description and schema), the version item when a version
    /// is asked for, and the key. The version is kept only if the dataset item's
    /// `served_versions` names it ([`ServedVersions`]): one withdrawn by a rollback, or recorded
    /// by a publish that was never activated, reads as one that does not exist.
    async fn read_table(
        &self,
        slug: &Slug,
        version: Option<u64>,
        key: &KeyHash,
    ) -> Result<TableRead, StoreError> {
        let keys_table = self.keys().name().to_owned();
        let pk = dataset_pk(slug.as_str());
        let mut wanted = vec![key_of(pk.clone(), DATASET_SK)];
        if let Some(v) = version {
            wanted.push(key_of(pk, &version_sk(v)));
        }
        let request: HashMap<String, KeysAndAttributes> = HashMap::from([
            (self.datasets_table().to_owned(), keys(wanted)?),
            (keys_table.clone(), keys(vec![api_key_key(key.as_str())])?),
        ]);
        let mut found = batch_get_all(self.client(), request).await?;
        let mut read = TableRead::default();
        let mut served = ServedVersions::default();
        for item in found.remove(self.datasets_table()).unwrap_or_default() {
            if sk_of(&item) == Some(DATASET_SK) {
                read.dataset = Some(DatasetRecord::from_item(&item)?);
                served = ServedVersions::of_item(&item)?;
            } else if let Some(stored) = ActiveVersion::from_item(&item)? {
                read.version = Some(StoredVersion {
                    version: stored,
                    schema: schema_from(&item)?,
                });
            }
        }
        read.version = read
            .version
            .filter(|stored| served.contains(stored.version.version));
        if let Some(item) = found.remove(&keys_table).and_then(|mut items| items.pop()) {
            read.key = Some(KeyRecord::from_item(&item)?);
        }
        Ok(read)
    }
}

impl<P: Send + Sync> TargetsReader for DatasetsTable<P> {
    /// One BatchGetItem of the datasets' items (what the gate judges of each).
    async fn read_targets(&self, slugs: &[Slug]) -> Result<Vec<DownloadTarget>, StoreError> {
        if slugs.is_empty() {
            return Ok(Vec::new());
        }
        let wanted = slugs
            .iter()
            .map(|slug| key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .collect();
        let attributes = KeysAndAttributes::builder()
            .set_keys(Some(wanted))
            .consistent_read(true)
            .projection_expression(DOWNLOAD_PROJECTION)
            .set_expression_attribute_names(Some(download_projection_names()))
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let request = HashMap::from([(self.name().to_owned(), attributes)]);
        let mut found = batch_get_all(self.client(), request).await?;
        found
            .remove(self.name())
            .unwrap_or_default()
            .iter()
            .map(DownloadTarget::from_item)
            .collect()
    }
}

impl GrantLister for KeysTable {
    /// One Query of the owner index: the account's access records, as grants by dataset.
    async fn grants_of(&self, owner: &Owner) -> Result<Vec<(Uuid, Grant)>, StoreError> {
        let items = query_all(owner_records_query(self.client(), self.name(), owner)).await?;
        items
            .iter()
            .map(|item| Ok((get_uuid(item, DATASET)?, Grant::from_item(item)?)))
            .collect()
    }

    /// One Query of the owner index (the account's `org#` items).
    async fn roles_of(&self, owner: &Owner) -> Result<Vec<(OrgName, Role)>, StoreError> {
        let items = query_all(owner_items_query(
            self.client(),
            self.name(),
            owner,
            MEMBERSHIP_ID_PREFIX,
        ))
        .await?;
        items
            .iter()
            .map(|item| {
                let org = OrgName::parse(&get_s(item, ORG)?).map_err(|_| corrupt(ORG))?;
                let role = Role::parse(&get_s(item, ROLE)?).ok_or_else(|| corrupt(ROLE))?;
                Ok((org, role))
            })
            .collect()
    }
}

// The pair answers for each table.

impl<P: Send + Sync> KeyReader for DynamoCatalog<P> {
    async fn read_key(&self, key: &KeyHash) -> Result<Option<KeyRecord>, StoreError> {
        self.keys().read_key(key).await
    }
}

impl<P: Send + Sync> TargetsReader for DynamoCatalog<P> {
    async fn read_targets(&self, slugs: &[Slug]) -> Result<Vec<DownloadTarget>, StoreError> {
        self.datasets().read_targets(slugs).await
    }
}

impl<P: Send + Sync> GrantLister for DynamoCatalog<P> {
    async fn grants_of(&self, owner: &Owner) -> Result<Vec<(Uuid, Grant)>, StoreError> {
        self.keys().grants_of(owner).await
    }

    async fn roles_of(&self, owner: &Owner) -> Result<Vec<(OrgName, Role)>, StoreError> {
        self.keys().roles_of(owner).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamo::layout::name::PK;
    use aws_sdk_dynamodb::types::AttributeValue;

    #[test]
    fn a_version_item_is_told_from_the_dataset_item_by_its_sort_key() {
        let item: Item = [
            (PK.to_owned(), AttributeValue::S("DS#a".into())),
            (SK.to_owned(), AttributeValue::S(version_sk(3))),
        ]
        .into_iter()
        .collect();
        assert_eq!(sk_of(&item), Some("V#0000000003"));
        assert_ne!(sk_of(&item), Some(DATASET_SK));
    }
}
