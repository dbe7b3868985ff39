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
pub mod requests;
pub mod retry;
#[cfg(feature = "search")]
mod search;
#[cfg(feature = "search")]
pub use search::{FETCH_MATCHES, READ_BUDGET};
#[cfg(feature = "search")]
pub mod orders;
mod sharing;
pub mod snapshots;
#[cfg(feature = "search")]
pub mod text;
mod tx;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use aws_sdk_dynamodb::Client;
use uuid::Uuid;

use crate::input::DatasetRef;

use crate::error::StoreError;
use crate::keys::{KeyHash, KeyRecord, Owner};
use crate::lock;
use crate::policy::Grant;
use crate::ports::{
    CatalogPager, DatasetReader, DownloadReader, GrantReader, KeyUsage, MetadataReader,
};
use crate::query::{Facet, Indexed, ListQuery, Plan};
use crate::records::{CatalogPage, DatasetRecord, DatasetSummary, DownloadTarget};
use attr::{get_u64, s};
use codec::{download_projection_names, FacetSummary, DOWNLOAD_PROJECTION};
use layout::name::{FACETS_INDEXED, KEY_HASH, LAST_USED_AT, PK, REV, SK, TOTAL};
use layout::{
    alias_pk, api_key_key, counter_key, dataset_pk, facet_counter_pk, facet_list_pk,
    facet_summary_key, grant_key, key_of, list_sk, Item, COUNTER_PK, COUNTER_SK, DATASET_SK,
    FACETS_SK, LIST_PK,
};
use requests::{batch_get_all, classify, for_each_in_partition, query_all};
use snapshots::SnapshotCache;

// ---------------------------------------------------------------------------------------------
// Readers

/// Reads the datasets table (and, for downloads, the keys table).
#[derive(Clone, Debug)]
pub struct DynamoCatalog {
    client: Client,
    datasets_table: String,
    keys_table: Option<String>,
    snapshots: Arc<Mutex<SnapshotCache>>,
    /// The text index's blobs this instance has read.
    #[cfg(feature = "search")]
    text: Arc<Mutex<search::TextCache>>,
    /// What a cold listing may read in its second round trip ([`search::READ_BUDGET`]).
    #[cfg(feature = "search")]
    read_budget: u64,
}

impl DynamoCatalog {
    /// For the list function, which never reads keys.
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: None,
            snapshots: Arc::default(),
            #[cfg(feature = "search")]
            text: Arc::default(),
            #[cfg(feature = "search")]
            read_budget: search::READ_BUDGET,
        }
    }

    /// For the functions that read keys: data, rows, sharing, and metadata (a key sent for an
    /// `approval` dataset's statistics).
    pub fn with_keys(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: Some(keys_table.into()),
            snapshots: Arc::default(),
            #[cfg(feature = "search")]
            text: Arc::default(),
            #[cfg(feature = "search")]
            read_budget: search::READ_BUDGET,
        }
    }

    /// The same store, with cold listings reading at most `bytes` in their second round trip
    /// rather than [`search::READ_BUDGET`] (words past it are left out).
    #[cfg(feature = "search")]
    pub fn with_read_budget(self, bytes: u64) -> Self {
        Self {
            read_budget: bytes,
            ..self
        }
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

impl DatasetReader for DynamoCatalog {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        let item = self.get_dataset_item(dataset, None).await?;
        item.as_ref().map(DatasetRecord::try_from).transpose()
    }
}

impl MetadataReader for DynamoCatalog {
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
                .map(DatasetRecord::try_from)
                .transpose()?,
            key_item.as_ref().map(KeyRecord::try_from).transpose()?,
        ))
    }
}

impl DownloadReader for DynamoCatalog {
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
                .map(DownloadTarget::try_from)
                .transpose()?,
            key_item.as_ref().map(KeyRecord::try_from).transpose()?,
        ))
    }
}

impl GrantReader for DynamoCatalog {
    /// One strongly consistent GetItem: a revocation shows on the next request.
    async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
        let key = grant_key(owner.as_str(), dataset);
        requests::get_consistent(&self.client, self.keys_table()?, key)
            .await?
            .as_ref()
            .map(Grant::try_from)
            .transpose()
    }
}

impl KeyUsage for DynamoCatalog {
    /// One conditional UpdateItem of `last_used_at` alone (the data function's IAM policy allows
    /// no other attribute), written only if the stored value is older than the granularity: a
    /// concurrent instance that wrote it first makes this a no-op.
    async fn record_use(
        &self,
        key: &KeyHash,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), StoreError> {
        let cutoff = now - crate::keys::LAST_USED_GRANULARITY;
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

impl DynamoCatalog {
    async fn get_counter(&self, pk: String) -> Result<Option<Item>, StoreError> {
        Ok(self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(counter_key(pk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?
            .item)
    }

    /// One page of a positional list (`LIST` or a facet's): its counter, then one range query
    /// over at most `limit` positions. With `counts`, the counter is read with the catalog
    /// counter and the facet summary, in one BatchGetItem.
    async fn positional(
        &self,
        list: Positional<'_>,
        offset: Option<u64>,
        limit: u64,
        descending: bool,
        counts: bool,
    ) -> Result<CatalogPage, StoreError> {
        let Positional {
            list_pk,
            counter_pk,
            facet,
        } = list;
        let (counter, facets) = if counts {
            let mut keys = vec![counter_key(COUNTER_PK), facet_summary_key()];
            if facet.is_some() {
                keys.push(counter_key(counter_pk.clone()));
            }
            let first = self.batch_get_datasets(keys).await?;
            let catalog = find(&first, COUNTER_PK, COUNTER_SK);
            let counter = find(&first, &counter_pk, COUNTER_SK);
            if let (Some(facet), None) = (facet, counter) {
                warn_if_unindexed(catalog, facet);
            }
            let facets = facet_counts(find(&first, COUNTER_PK, FACETS_SK), catalog)?;
            (counter.cloned(), facets)
        } else {
            let counter = self.get_counter(counter_pk).await?;
            if let (Some(facet), None) = (facet, &counter) {
                // A value no dataset has had: an empty result, as for one nobody has now.
                // The catalog counter (one more read, only here) tells operators whether
                // the filters were ever indexed.
                let catalog = self.get_counter(COUNTER_PK.to_owned()).await?;
                warn_if_unindexed(catalog.as_ref(), facet);
            }
            (counter, None)
        };
        let total = match counter {
            Some(item) => get_u64(&item, TOTAL)?,
            None => 0,
        };
        // `limit` 0 reads no entry: its range would end before it starts, which DynamoDB
        // refuses.
        let Some(offset) = offset.filter(|o| *o < total && limit > 0) else {
            return Ok(CatalogPage {
                total,
                items: Vec::new(),
                facets,
                ignored_words: Vec::new(),
            });
        };
        // Newest first: position `offset` is seq `total - offset`; oldest first, `offset + 1`.
        let (low, high) = if descending {
            let high = total - offset;
            (high.saturating_sub(limit.saturating_sub(1)).max(1), high)
        } else {
            (offset + 1, offset.saturating_add(limit).min(total))
        };
        let query = self
            .client
            .query()
            .table_name(&self.datasets_table)
            .key_condition_expression(format!("{PK} = :pk AND {SK} BETWEEN :low AND :high"))
            .expression_attribute_values(":pk", s(&list_pk))
            .expression_attribute_values(":low", s(list_sk(low)))
            .expression_attribute_values(":high", s(list_sk(high)))
            .scan_index_forward(!descending)
            .consistent_read(true);
        // An entry whose dataset left the catalog is not shown while the renumbering that
        // removes it has not run.
        let items = query_all(query)
            .await?
            .iter()
            .filter(|item| !codec::is_withdrawn(item))
            .map(DatasetSummary::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CatalogPage {
            total,
            items,
            facets,
            ignored_words: Vec::new(),
        })
    }

    /// Words, combined filters or another order, in a build without the text index: the
    /// catalog's `rev` and the facets' counters (and the facet summary, when asked) in one read,
    /// then the smallest candidate list (from this instance's snapshots while `rev` is
    /// unchanged), filtered and sorted in memory.
    #[cfg(not(feature = "search"))]
    async fn scan(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        let counted = self.counters(query, Vec::new()).await?;
        let Some(source) = counted.smallest else {
            return Ok(counted.empty_page());
        };
        let candidates = self.snapshot(source, counted.rev).await?;
        Ok(CatalogPage {
            facets: counted.facets,
            ..query.select(candidates.iter(), None, offset, limit)
        })
    }

    /// The listing's first read: the catalog counter (its `rev`), each filter's counter, the
    /// facet summary when asked, and `extra` items, in one BatchGetItem.
    async fn counters(&self, query: &ListQuery, extra: Vec<Item>) -> Result<Counted, StoreError> {
        let mut keys = vec![counter_key(COUNTER_PK.to_owned())];
        keys.extend(
            query
                .facets
                .iter()
                .map(|f| counter_key(facet_counter_pk(f))),
        );
        if query.facet_counts {
            keys.push(facet_summary_key());
        }
        keys.extend(extra);
        let items = self.batch_get_datasets(keys).await?;
        let by_pk = |pk: &str| find(&items, pk, COUNTER_SK);
        let facets = match query.facet_counts {
            true => facet_counts(find(&items, COUNTER_PK, FACETS_SK), by_pk(COUNTER_PK))?,
            false => None,
        };
        let (rev, total) = match by_pk(COUNTER_PK) {
            Some(item) if item.contains_key(REV) => (get_u64(item, REV)?, get_u64(item, TOTAL)?),
            Some(item) => (0, get_u64(item, TOTAL)?),
            None => (0, 0),
        };
        let mut smallest = Some((LIST_PK.to_owned(), u64::MAX));
        for facet in &query.facets {
            let Some(item) = by_pk(&facet_counter_pk(facet)) else {
                // No dataset has ever had this value: nothing can match.
                warn_if_unindexed(by_pk(COUNTER_PK), facet);
                smallest = None;
                break;
            };
            let total = get_u64(item, TOTAL)?;
            if let Some((_, least)) = &smallest {
                if total < *least {
                    smallest = Some((facet_list_pk(facet), total));
                }
            }
        }
        Ok(Counted {
            facets,
            rev,
            total,
            smallest_len: smallest.as_ref().map_or(0, |(_, n)| (*n).min(total)),
            smallest: smallest.map(|(pk, _)| pk),
            items,
        })
    }

    /// A whole list, from this instance's snapshots when it was read at the same `rev`.
    async fn snapshot(&self, list_pk: String, rev: u64) -> Result<Arc<Vec<Indexed>>, StoreError> {
        if let Some(hit) = lock(&self.snapshots).get(&list_pk, rev) {
            return Ok(hit);
        }
        // Page by page: raw items are converted as they arrive, never all held at once.
        let mut items = Vec::new();
        for_each_in_partition(&self.client, &self.datasets_table, &list_pk, |page| {
            for item in page.iter().filter(|item| !codec::is_withdrawn(item)) {
                items.push(Indexed::new(DatasetSummary::try_from(item)?));
            }
            Ok(())
        })
        .await?;
        let items = Arc::new(items);
        lock(&self.snapshots).put(list_pk, rev, items.clone());
        Ok(items)
    }

    /// Items of the datasets table by key, in one BatchGetItem (retrying unprocessed keys).
    async fn batch_get_datasets(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let request = HashMap::from([(
            self.datasets_table.clone(),
            KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .consistent_read(true)
                .build()
                .map_err(|e| StoreError::Other(Box::new(e)))?,
        )]);
        let mut found = batch_get_all(&self.client, request).await?;
        Ok(found.remove(&self.datasets_table).unwrap_or_default())
    }
}

/// What a listing's first read found.
struct Counted {
    /// The facet counts, when asked (and complete).
    facets: Option<crate::query::FacetCounts>,
    /// The catalog's revision, and how many datasets it lists.
    rev: u64,
    #[cfg_attr(not(feature = "search"), allow(dead_code))]
    total: u64,
    /// The smallest list holding every candidate: `LIST`, or a filter's; `None` when a filter
    /// has a value no dataset has.
    smallest: Option<String>,
    /// How many entries that list holds.
    #[cfg_attr(not(feature = "search"), allow(dead_code))]
    smallest_len: u64,
    /// Every item read.
    #[cfg_attr(not(feature = "search"), allow(dead_code))]
    items: Vec<Item>,
}

impl Counted {
    fn empty_page(self) -> CatalogPage {
        CatalogPage {
            total: 0,
            items: Vec::new(),
            facets: self.facets,
            ignored_words: Vec::new(),
        }
    }
}

/// A list read by position: the catalog's, or one facet value's.
struct Positional<'a> {
    list_pk: String,
    counter_pk: String,
    /// The facet value, for a facet's list.
    facet: Option<&'a Facet>,
}

/// The item with this key among items read together.
fn find<'a>(items: &'a [Item], pk: &str, sk: &str) -> Option<&'a Item> {
    let is = |item: &Item, name: &str, want: &str| matches!(item.get(name), Some(AttributeValue::S(v)) if v == want);
    items
        .iter()
        .find(|item| is(item, PK, pk) && is(item, SK, sk))
}

/// The facet counts the summary holds; `None`, with a warning to operators, when it does not
/// hold them all (a catalog from before the summary, until `reindex`; or one with more values
/// than it holds).
fn facet_counts(
    summary: Option<&Item>,
    catalog_counter: Option<&Item>,
) -> Result<Option<crate::query::FacetCounts>, StoreError> {
    Ok(match FacetSummary::read(summary, catalog_counter)? {
        FacetSummary::Counts(counts) => Some(counts),
        FacetSummary::NotBuilt => {
            tracing::warn!(
                "the catalog's facet counts are not built yet: run `catalog-admin datasets reindex`"
            );
            crate::metrics::record(crate::metrics::Metric::IndexIncomplete);
            None
        }
        FacetSummary::Full => {
            tracing::warn!(
                "the catalog has more facet values than its facet summary holds: facets=true \
                 answers without facets (docs/data-model.md, known limits)"
            );
            crate::metrics::record(crate::metrics::Metric::IndexIncomplete);
            None
        }
    })
}

/// Whether the catalog's facet lists were ever built: `catalog-writer` marks the catalog counter
/// when a catalog's first dataset is listed and when `reindex` runs. A catalog from before
/// filters has no mark until `reindex`.
pub fn facets_indexed(catalog_counter: Option<&Item>) -> bool {
    catalog_counter.is_none_or(|item| item.contains_key(FACETS_INDEXED))
}

/// A filter value with no list answers an empty page; in a catalog whose filters were never
/// indexed, operators are told why, in the log.
fn warn_if_unindexed(catalog_counter: Option<&Item>, facet: &Facet) {
    if !facets_indexed(catalog_counter) {
        tracing::warn!(
            facet = %facet.key(),
            "the catalog's filters are not indexed yet: run `catalog-admin datasets reindex`"
        );
        crate::metrics::record(crate::metrics::Metric::IndexIncomplete);
    }
}

impl CatalogPager for DynamoCatalog {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        match query.plan() {
            Plan::Listing { descending } => {
                let list = Positional {
                    list_pk: LIST_PK.to_owned(),
                    counter_pk: COUNTER_PK.to_owned(),
                    facet: None,
                };
                self.positional(list, offset, limit, descending, query.facet_counts)
                    .await
            }
            Plan::Facet { facet, descending } => {
                let list = Positional {
                    list_pk: facet_list_pk(facet),
                    counter_pk: facet_counter_pk(facet),
                    facet: Some(facet),
                };
                self.positional(list, offset, limit, descending, query.facet_counts)
                    .await
            }
            #[cfg(feature = "search")]
            Plan::Search => self.search(query, offset, limit).await,
            #[cfg(not(feature = "search"))]
            Plan::Search => self.scan(query, offset, limit).await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[tokio::test]
    async fn a_filter_on_a_catalog_never_indexed_is_counted_for_operators() {
        use crate::metrics::{capture::metrics_of, Metric};
        use crate::query::{Facet, FacetKind};
        let facet = Facet::new(FacetKind::Tag, "birds").unwrap();
        let mut unmarked = counter_key(COUNTER_PK);
        unmarked.insert(TOTAL.into(), attr::n(3));
        let ((), got) = metrics_of(async { warn_if_unindexed(Some(&unmarked), &facet) }).await;
        assert_eq!(got, [Metric::IndexIncomplete]);
        let mut marked = unmarked.clone();
        marked.insert(FACETS_INDEXED.into(), AttributeValue::Bool(true));
        let ((), got) = metrics_of(async { warn_if_unindexed(Some(&marked), &facet) }).await;
        assert_eq!(got, []);
    }
}
