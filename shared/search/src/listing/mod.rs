//! The list function's DynamoDB adapter ([`Listing`]): the catalog's pages. The catalog's own
//! order and one filter are read by position ([`catalog_aws::dynamo::lists`]); words, several
//! filters and the other orders from the text index and the kept orders ([`search`]), with what
//! this instance keeps of them ([`cache`]).

mod cache;
mod search;

use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::Client;
use catalog::error::StoreError;
use catalog::ports::CatalogPager;
use catalog::query::CatalogPage;
use catalog::query::{ListQuery, Plan};
use catalog_aws::dynamo::lists::Lists;
use catalog_aws::dynamo::DynamoCatalog;

pub use cache::TextCache;
pub use search::{FETCH_MATCHES, READ_BUDGET};

/// Reads the catalog's pages from the datasets table (the list function's one store).
#[derive(Clone, Debug)]
pub struct Listing {
    lists: Lists,
    /// The text index's blobs this instance has read.
    text: Arc<Mutex<TextCache>>,
    /// What a cold listing may read in its second round trip ([`READ_BUDGET`]).
    read_budget: u64,
}

impl Listing {
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        Self {
            lists: Lists::new(client, datasets_table),
            text: Arc::default(),
            read_budget: READ_BUDGET,
        }
    }

    /// The same store, with cold listings reading at most `bytes` in their second round trip
    /// rather than [`READ_BUDGET`] (words past it are left out).
    pub fn with_read_budget(self, bytes: u64) -> Self {
        Self {
            read_budget: bytes,
            ..self
        }
    }
}

/// The functions' reader with the text index answering its listings: one store for every
/// route, as the local server, the tests and the bench use it.
pub type IndexedCatalog = DynamoCatalog<Listing>;

/// `catalog` with the text index answering its listings.
pub fn indexed<P>(catalog: DynamoCatalog<P>) -> IndexedCatalog {
    let listing = Listing::new(catalog.client().clone(), catalog.datasets_table());
    catalog.with_pager(listing)
}

/// `catalog` with its cold listings reading at most `bytes` in their second round trip.
pub fn with_read_budget(catalog: IndexedCatalog, bytes: u64) -> IndexedCatalog {
    let listing = catalog.pager().clone().with_read_budget(bytes);
    catalog.with_pager(listing)
}

impl CatalogPager for Listing {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        match query.plan() {
            Plan::Search => self.search(query, offset, limit).await,
            _ => self.lists.page(query, offset, limit).await,
        }
    }
}
