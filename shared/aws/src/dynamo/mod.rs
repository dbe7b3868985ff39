//! The functions' DynamoDB adapter ([`DynamoCatalog`]) and what the write side shares with it:
//! the table layout ([`layout`]), one codec per record ([`codec`]), attribute helpers ([`attr`]),
//! paged and retried requests ([`requests`], [`retry`]). Writing lives in the `catalog-writer`
//! crate, which the functions never link.
//!
//! Listed datasets are numbered 1..=total in publication order with no gaps, so the dataset at
//! position `i` of the newest-first order has `seq = total - i`: any page is one consistent
//! read of the counter plus one range query over `page_size` list entries, whatever the page.
//!
//! Each facet value (`category#biology`, `tag#birds`, `license#cc0-1.0`; lowercase) has its own
//! list, numbered 1..=total the same way in the same publication order, so a single-facet
//! listing costs what the plain listing costs. Combined filters, words and other sort orders
//! read a whole list (the smallest facet list involved, else `LIST`) and filter it in memory;
//! each function instance keeps the last few such lists, keyed by `rev`, so until the catalog
//! changes they cost one read of the counters.
//!
//! Facet counts (`facets=true`) come from one more item, the facet summary, read with the
//! counters in the listing's first request: a BatchGetItem instead of a GetItem.

pub mod access;
pub mod accounts;
pub mod attr;
pub mod codec;
pub mod layout;
pub mod lists;
pub mod requests;
pub mod retry;
mod sharing;
pub mod snapshots;
mod tx;

use std::collections::HashMap;

use aws_sdk_dynamodb::types::KeysAndAttributes;
use aws_sdk_dynamodb::Client;
use uuid::Uuid;

use catalog::input::DatasetRef;

use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::keys::{KeyHash, KeyRecord, Owner};
use catalog::policy::Grant;
use catalog::ports::{
    CatalogPager, DatasetReader, DownloadReader, GrantReader, KeyUsage, MetadataReader,
};
use catalog::query::ListQuery;
use catalog::records::{CatalogPage, DatasetRecord, DownloadTarget};
use codec::{download_projection_names, DOWNLOAD_PROJECTION};
use layout::name::{FACETS_INDEXED, KEY_HASH, LAST_USED_AT};
use layout::{alias_pk, api_key_key, dataset_pk, grant_key, key_of, Item, DATASET_SK};
use requests::{batch_get_all, classify};

// ---------------------------------------------------------------------------------------------
// Readers

/// Reads the datasets table (and, for downloads, the keys table).
#[derive(Clone, Debug)]
pub struct DynamoCatalog<P = lists::Lists> {
    client: Client,
    datasets_table: String,
    keys_table: Option<String>,
    /// What answers the listings: the lists by position, with a scan for the rest; the list
    /// function's text index (`catalog_search::listing::Listing`) where [`Self::with_pager`]
    /// sets it.
    pager: P,
}

impl DynamoCatalog {
    /// For the list function, which never reads keys.
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        let datasets_table = datasets_table.into();
        Self {
            pager: lists::Lists::new(client.clone(), datasets_table.clone()),
            client,
            datasets_table,
            keys_table: None,
        }
    }

    /// For the functions that read keys: data, rows, sharing, and metadata (a key sent for an
    /// `approval` dataset's statistics).
    pub fn with_keys(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        let datasets_table = datasets_table.into();
        Self {
            pager: lists::Lists::new(client.clone(), datasets_table.clone()),
            client,
            datasets_table,
            keys_table: Some(keys_table.into()),
        }
    }
}

impl<P> DynamoCatalog<P> {
    /// The same reads, with `pager` answering the listings.
    pub fn with_pager<Q>(self, pager: Q) -> DynamoCatalog<Q> {
        DynamoCatalog {
            client: self.client,
            datasets_table: self.datasets_table,
            keys_table: self.keys_table,
            pager,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn pager(&self) -> &P {
        &self.pager
    }

    pub fn datasets_table(&self) -> &str {
        &self.datasets_table
    }

    fn keys_table(&self) -> Result<&str, StoreError> {
        self.keys_table
            .as_deref()
            .ok_or_else(|| StoreError::Other("keys table not configured".into()))
    }

    /// The primary key of the item a request names: the dataset item for a slug, its alias
    /// for a UUID.
    fn dataset_key(dataset: &DatasetRef) -> Item {
        let pk = match dataset {
            DatasetRef::Slug(slug) => dataset_pk(slug.as_str()),
            DatasetRef::Id(id) => alias_pk(id),
        };
        key_of(pk, DATASET_SK)
    }

    async fn get_dataset_item(
        &self,
        dataset: &DatasetRef,
        projection: Option<&str>,
    ) -> Result<Option<Item>, StoreError> {
        // Strongly consistent: an activation, rollback or keyless change shows on the next request.
        let mut get = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(Self::dataset_key(dataset)))
            .consistent_read(true);
        if let Some(p) = projection {
            get = get
                .projection_expression(p)
                .set_expression_attribute_names(Some(download_projection_names()));
        }
        Ok(get.send().await.map_err(classify)?.item)
    }

    /// Dataset item (what a download needs, or the whole item with `whole`) and key item in
    /// one BatchGetItem.
    async fn batch_get(
        &self,
        dataset: &DatasetRef,
        hash: &KeyHash,
        whole: bool,
    ) -> Result<(Option<Item>, Option<Item>), StoreError> {
        let keys_table = self.keys_table()?.to_owned();
        let mut item = KeysAndAttributes::builder()
            .keys(Self::dataset_key(dataset))
            .consistent_read(true);
        if !whole {
            item = item
                .projection_expression(DOWNLOAD_PROJECTION)
                .set_expression_attribute_names(Some(download_projection_names()));
        }
        let request: HashMap<String, KeysAndAttributes> = HashMap::from([
            (
                self.datasets_table.clone(),
                item.build().map_err(|e| StoreError::Other(Box::new(e)))?,
            ),
            (
                keys_table.clone(),
                KeysAndAttributes::builder()
                    .keys(api_key_key(hash.as_str()))
                    .consistent_read(true)
                    .build()
                    .map_err(|e| StoreError::Other(Box::new(e)))?,
            ),
        ]);
        let mut found = batch_get_all(&self.client, request).await?;
        let mut first = |table: &str| found.remove(table).and_then(|mut items| items.pop());
        Ok((first(&self.datasets_table), first(&keys_table)))
    }
}

impl<P: CatalogPager> CatalogPager for DynamoCatalog<P> {
    /// The catalog's lists by position, and a scan of the smallest for words, several filters
    /// or another order (the list function reads those from the text index instead).
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        self.pager.page(query, offset, limit).await
    }
}

impl<P: Send + Sync> DatasetReader for DynamoCatalog<P> {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        let item = self.get_dataset_item(dataset, None).await?;
        item.as_ref().map(DatasetRecord::from_item).transpose()
    }
}

impl<P: Send + Sync> MetadataReader for DynamoCatalog<P> {
    /// One BatchGetItem, strongly consistent: the whole dataset item and the key's.
    async fn get_dataset_and_key(
        &self,
        dataset: &DatasetRef,
        key: &KeyHash,
    ) -> Result<(Option<DatasetRecord>, Option<KeyRecord>), StoreError> {
        let (dataset_item, key_item) = self.batch_get(dataset, key, true).await?;
        Ok((
            dataset_item
                .as_ref()
                .map(DatasetRecord::from_item)
                .transpose()?,
            key_item.as_ref().map(KeyRecord::from_item).transpose()?,
        ))
    }
}

impl<P: Send + Sync> DownloadReader for DynamoCatalog<P> {
    async fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError> {
        let (dataset_item, key_item) = match key {
            None => (
                self.get_dataset_item(dataset, Some(DOWNLOAD_PROJECTION))
                    .await?,
                None,
            ),
            Some(hash) => self.batch_get(dataset, hash, false).await?,
        };
        Ok((
            dataset_item
                .as_ref()
                .map(DownloadTarget::from_item)
                .transpose()?,
            key_item.as_ref().map(KeyRecord::from_item).transpose()?,
        ))
    }
}

impl<P: Send + Sync> GrantReader for DynamoCatalog<P> {
    /// One strongly consistent GetItem: a revocation shows on the next request.
    async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
        let key = grant_key(owner.as_str(), dataset);
        requests::get_consistent(&self.client, self.keys_table()?, key)
            .await?
            .as_ref()
            .map(Grant::from_item)
            .transpose()
    }
}

impl<P: Send + Sync> KeyUsage for DynamoCatalog<P> {
    /// One conditional UpdateItem of `last_used_at` alone (the data function's IAM policy allows
    /// no other attribute), written only if the stored value is older than the granularity: a
    /// concurrent instance that wrote it first makes this a no-op.
    async fn record_use(
        &self,
        key: &KeyHash,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError> {
        let cutoff = now - catalog::keys::LAST_USED_GRANULARITY;
        let result = self
            .client
            .update_item()
            .table_name(self.keys_table()?)
            .set_key(Some(api_key_key(key.as_str())))
            .update_expression(format!("SET {LAST_USED_AT} = :now"))
            .condition_expression(format!(
                "attribute_exists({KEY_HASH}) AND \
                 (attribute_not_exists({LAST_USED_AT}) OR {LAST_USED_AT} <= :cutoff)"
            ))
            .expression_attribute_values(":now", attr::time(&now))
            .expression_attribute_values(":cutoff", attr::time(&cutoff))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(classify(e)),
        }
    }
}

/// Whether the catalog's facet lists were ever built: `catalog-writer` marks the catalog counter
/// when a catalog's first dataset is listed and when `reindex` runs. A catalog from before
/// filters has no mark until `reindex`.
pub fn facets_indexed(catalog_counter: Option<&Item>) -> bool {
    catalog_counter.is_none_or(|item| item.contains_key(FACETS_INDEXED))
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_dynamodb::types::AttributeValue;
    use layout::counter_key;
    use layout::name::TOTAL;
    use layout::COUNTER_PK;

    #[test]
    fn only_a_catalog_listed_before_filters_and_never_reindexed_lacks_the_mark() {
        let counter = |marked: bool| {
            let mut item = counter_key(COUNTER_PK);
            item.insert(TOTAL.into(), attr::n(3));
            if marked {
                item.insert(FACETS_INDEXED.into(), AttributeValue::Bool(true));
            }
            item
        };
        assert!(
            facets_indexed(None),
            "an empty catalog has nothing to index"
        );
        assert!(facets_indexed(Some(&counter(true))));
        assert!(!facets_indexed(Some(&counter(false))));
    }
}
