//! The functions' DynamoDB readers, one adapter per table: [`DatasetsTable`] and [`KeysTable`],
//! and [`DynamoCatalog`], the two together for the reads that take one BatchGetItem across them
//! (a dataset with a presented key). A function without the keys table (the list function) is
//! built with the datasets table's adapter alone, and cannot read keys. The catalog's lists by
//! position are [`lists`]'.
//!
//! Beside them, what the write side shares with them: the table layout ([`layout`]), one codec
//! per record ([`codec`]), attribute helpers ([`attr`]), paged and retried requests
//! ([`requests`], [`retry`]). Writing lives in the `catalog-writer` crate, which the request
//! path's functions never link.

pub mod access;
pub mod accounts;
pub mod attr;
pub mod codec;
mod datasets;
mod keys;
pub mod layout;
pub mod lists;
pub use lists::facets_indexed;
pub mod manifest;
pub mod org_datasets;
pub mod orgs;
pub mod requests;
pub mod retry;
mod sharing;
pub mod snapshots;
mod tx;
pub mod uploads;

pub use datasets::DatasetsTable;
pub use keys::KeysTable;

use std::collections::HashMap;

use aws_sdk_dynamodb::types::KeysAndAttributes;
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use catalog::input::DatasetRef;

use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::keys::{KeyHash, KeyRecord, Owner};
use catalog::policy::Grant;
use catalog::ports::{
    CatalogPager, DatasetReader, DownloadReader, GrantReader, KeyUsage, MetadataReader,
};
use catalog::query::CatalogPage;
use catalog::query::ListQuery;
use catalog::records::{DatasetRecord, DownloadTarget};
use codec::{download_projection_names, DOWNLOAD_PROJECTION};
use layout::{api_key_key, Item};
use requests::batch_get_all;

// ---------------------------------------------------------------------------------------------
// Readers: one adapter per table, and the two together

/// Both tables: the reads that take one BatchGetItem across them (a dataset with a presented
/// key), and every read of each table ([`DatasetsTable`], [`KeysTable`]). The functions that
/// verify keys use it: metadata, data, rows, sharing. The list function reads the datasets
/// table alone.
#[derive(Clone, Debug)]
pub struct DynamoCatalog<P = lists::Lists> {
    datasets: DatasetsTable<P>,
    keys: KeysTable,
}

impl DynamoCatalog {
    pub fn new(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            keys: KeysTable::new(client.clone(), keys_table),
            datasets: DatasetsTable::new(client, datasets_table),
        }
    }
}

impl<P> DynamoCatalog<P> {
    /// The same reads, with `pager` answering the listings.
    pub fn with_pager<Q>(self, pager: Q) -> DynamoCatalog<Q> {
        DynamoCatalog {
            datasets: self.datasets.with_pager(pager),
            keys: self.keys,
        }
    }

    pub fn datasets(&self) -> &DatasetsTable<P> {
        &self.datasets
    }

    pub fn keys(&self) -> &KeysTable {
        &self.keys
    }

    pub fn client(&self) -> &Client {
        self.datasets.client()
    }

    pub fn pager(&self) -> &P {
        self.datasets.pager()
    }

    pub fn datasets_table(&self) -> &str {
        self.datasets.name()
    }

    /// Dataset item (what a download needs, or the whole item with `whole`) and key item in
    /// one BatchGetItem.
    async fn batch_get(
        &self,
        dataset: &DatasetRef,
        hash: &KeyHash,
        whole: bool,
    ) -> Result<(Option<Item>, Option<Item>), StoreError> {
        let keys_table = self.keys.name().to_owned();
        let mut item = KeysAndAttributes::builder()
            .keys(DatasetsTable::<P>::dataset_key(dataset))
            .consistent_read(true);
        if !whole {
            item = item
                .projection_expression(DOWNLOAD_PROJECTION)
                .set_expression_attribute_names(Some(download_projection_names()));
        }
        let request: HashMap<String, KeysAndAttributes> = HashMap::from([
            (
                self.datasets.name().to_owned(),
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
        let mut found = batch_get_all(self.client(), request).await?;
        let mut first = |table: &str| found.remove(table).and_then(|mut items| items.pop());
        Ok((first(self.datasets.name()), first(&keys_table)))
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
                self.datasets
                    .get_dataset_item(dataset, Some(DOWNLOAD_PROJECTION))
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

// Each table's reads, through the pair.

impl<P: Send + Sync> DatasetReader for DynamoCatalog<P> {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        self.datasets.get_dataset(dataset).await
    }
}

impl<P: CatalogPager> CatalogPager for DynamoCatalog<P> {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        self.datasets.page(query, offset, limit).await
    }
}

impl<P: Send + Sync> GrantReader for DynamoCatalog<P> {
    async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
        self.keys.grant(owner, dataset).await
    }

    async fn standing(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        org: &catalog::orgs::OrgName,
    ) -> Result<catalog::ports::Standing, StoreError> {
        self.keys.standing(owner, dataset, org).await
    }
}

impl<P: Send + Sync> KeyUsage for DynamoCatalog<P> {
    async fn record_use(&self, key: &KeyHash, now: DateTime<Utc>) -> Result<(), StoreError> {
        self.keys.record_use(key, now).await
    }
}
