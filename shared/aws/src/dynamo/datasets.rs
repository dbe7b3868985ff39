//! The datasets table, read ([`DatasetsTable`]): what every function but the list function's
//! text index reads of it (which is `catalog-search`'s).

use aws_sdk_dynamodb::Client;

use super::codec::download_projection_names;
use super::layout::{alias_pk, dataset_pk, key_of, Item, DATASET_SK};
use super::lists::Lists;
use super::requests::classify;
use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::input::DatasetRef;
use catalog::ports::{CatalogPager, DatasetReader};
use catalog::query::CatalogPage;
use catalog::query::ListQuery;
use catalog::records::DatasetRecord;

/// Reads the datasets table. `P` answers the listings: the lists by position with a scan for
/// the rest ([`Lists`]); the list function's text index (`catalog_search::listing::Listing`)
/// where [`Self::with_pager`] sets it.
#[derive(Clone, Debug)]
pub struct DatasetsTable<P = Lists> {
    client: Client,
    table: String,
    pager: P,
}

impl DatasetsTable {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        let table = table.into();
        Self {
            pager: Lists::new(client.clone(), table.clone()),
            client,
            table,
        }
    }
}

impl<P> DatasetsTable<P> {
    /// The same reads, with `pager` answering the listings.
    pub fn with_pager<Q>(self, pager: Q) -> DatasetsTable<Q> {
        DatasetsTable {
            client: self.client,
            table: self.table,
            pager,
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn name(&self) -> &str {
        &self.table
    }

    pub fn pager(&self) -> &P {
        &self.pager
    }

    /// The primary key of the item a request names: the dataset item for a slug, its alias
    /// for a UUID.
    pub(super) fn dataset_key(dataset: &DatasetRef) -> Item {
        let pk = match dataset {
            DatasetRef::Slug(slug) => dataset_pk(slug.as_str()),
            DatasetRef::Id(id) => alias_pk(id),
        };
        key_of(pk, DATASET_SK)
    }

    pub(super) async fn get_dataset_item(
        &self,
        dataset: &DatasetRef,
        projection: Option<&str>,
    ) -> Result<Option<Item>, StoreError> {
        // Strongly consistent: an activation, rollback or keyless change shows on the next request.
        let mut get = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(Self::dataset_key(dataset)))
            .consistent_read(true);
        if let Some(p) = projection {
            get = get
                .projection_expression(p)
                .set_expression_attribute_names(Some(download_projection_names()));
        }
        Ok(get.send().await.map_err(classify)?.item)
    }
}

impl<P: Send + Sync> DatasetReader for DatasetsTable<P> {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        let item = self.get_dataset_item(dataset, None).await?;
        item.as_ref().map(DatasetRecord::from_item).transpose()
    }
}

impl<P: CatalogPager> CatalogPager for DatasetsTable<P> {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        self.pager.page(query, offset, limit).await
    }
}
