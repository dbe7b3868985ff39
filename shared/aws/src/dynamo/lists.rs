//! The catalog's positional lists, read from the datasets table: `LIST` and one list per facet
//! value, each numbered 1..=total in publication order with no gaps, so that the dataset at
//! position `i` of the newest-first order has `seq = total - i`: any page is one consistent read
//! of the counter plus one range query over `page_size` list entries, whatever the page.
//!
//! [`Lists`] answers the listings that need nothing else (the catalog's own order, one filter),
//! and, by a scan of the smallest candidate list, the others: the Delta Sharing function's
//! store. The list function's adapter (`catalog_search::listing::Listing`) answers those from the
//! text index and the kept orders instead, with [`Lists`] for the rest. Each instance keeps the
//! last few lists it scanned, keyed by the catalog's `rev` ([`super::snapshots`]).
//!
//! Facet counts (`facets=true`) come from one more item, the facet summary, read with the
//! counters in the listing's first request: a BatchGetItem instead of a GetItem.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use aws_sdk_dynamodb::Client;
use catalog::error::StoreError;
use catalog::lock;
use catalog::ports::CatalogPager;
use catalog::query::CatalogPage;
use catalog::query::{Facet, Indexed, ListQuery, Plan};
use catalog::records::DatasetSummary;

use super::attr::{get_u64, s};
use super::codec::prelude::*;
use super::codec::{self, FacetSummary};
use super::layout::name::{FACETS_INDEXED, PK, REV, SK, TOTAL};
use super::layout::{
    counter_key, facet_counter_pk, facet_list_pk, facet_summary_key, list_sk, Item, COUNTER_PK,
    COUNTER_SK, FACETS_SK, LIST_PK,
};
use super::requests::{batch_get_all, classify, for_each_in_partition, query_all};
use super::snapshots::SnapshotCache;

/// Reads the catalog's lists from the datasets table.
#[derive(Clone, Debug)]
pub struct Lists {
    client: Client,
    datasets_table: String,
    snapshots: Arc<Mutex<SnapshotCache>>,
}

impl Lists {
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            snapshots: Arc::default(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn datasets_table(&self) -> &str {
        &self.datasets_table
    }
}

impl Lists {
    pub async fn get_counter(&self, pk: String) -> Result<Option<Item>, StoreError> {
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
    pub async fn positional(
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
            .map(DatasetSummary::from_item)
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
    pub async fn scan(
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
    pub async fn counters(
        &self,
        query: &ListQuery,
        extra: Vec<Item>,
    ) -> Result<Counted, StoreError> {
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
    pub async fn snapshot(
        &self,
        list_pk: String,
        rev: u64,
    ) -> Result<Arc<Vec<Indexed>>, StoreError> {
        if let Some(hit) = lock(&self.snapshots).get(&list_pk, rev) {
            return Ok(hit);
        }
        // Page by page: raw items are converted as they arrive, never all held at once.
        let mut items = Vec::new();
        for_each_in_partition(&self.client, &self.datasets_table, &list_pk, |page| {
            for item in page.iter().filter(|item| !codec::is_withdrawn(item)) {
                items.push(Indexed::new(DatasetSummary::from_item(item)?));
            }
            Ok(())
        })
        .await?;
        let items = Arc::new(items);
        lock(&self.snapshots).put(list_pk, rev, items.clone());
        Ok(items)
    }

    /// Items of the datasets table by key, in one BatchGetItem (retrying unprocessed keys).
    pub async fn batch_get_datasets(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
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
pub struct Counted {
    /// The facet counts, when asked (and complete).
    pub facets: Option<catalog::query::FacetCounts>,
    /// The catalog's revision, and how many datasets it lists.
    pub rev: u64,
    pub total: u64,
    /// The smallest list holding every candidate: `LIST`, or a filter's; `None` when a filter
    /// has a value no dataset has.
    pub smallest: Option<String>,
    /// How many entries that list holds.
    pub smallest_len: u64,
    /// Every item read.
    pub items: Vec<Item>,
}

impl Counted {
    pub fn empty_page(self) -> CatalogPage {
        CatalogPage {
            total: 0,
            items: Vec::new(),
            facets: self.facets,
            ignored_words: Vec::new(),
        }
    }
}

/// A list read by position: the catalog's, or one facet value's.
pub struct Positional<'a> {
    list_pk: String,
    counter_pk: String,
    /// The facet value, for a facet's list.
    facet: Option<&'a Facet>,
}

/// The item with this key among items read together.
pub fn find<'a>(items: &'a [Item], pk: &str, sk: &str) -> Option<&'a Item> {
    let is = |item: &Item, name: &str, want: &str| matches!(item.get(name), Some(AttributeValue::S(v)) if v == want);
    items
        .iter()
        .find(|item| is(item, PK, pk) && is(item, SK, sk))
}

/// The facet counts the summary holds; `None`, with a warning to operators, when it does not
/// hold them all (a catalog from before the summary, until `reindex`; or one with more values
/// than it holds).
pub fn facet_counts(
    summary: Option<&Item>,
    catalog_counter: Option<&Item>,
) -> Result<Option<catalog::query::FacetCounts>, StoreError> {
    Ok(match FacetSummary::read(summary, catalog_counter)? {
        FacetSummary::Counts(counts) => Some(counts),
        FacetSummary::NotBuilt => {
            tracing::warn!(
                "the catalog's facet counts are not built yet: run `catalog-admin datasets reindex`"
            );
            catalog::metrics::record(catalog::metrics::Metric::IndexIncomplete);
            None
        }
        FacetSummary::Full => {
            tracing::warn!(
                "the catalog has more facet values than its facet summary holds: facets=true \
                 answers without facets (docs/data-model.md, known limits)"
            );
            catalog::metrics::record(catalog::metrics::Metric::IndexIncomplete);
            None
        }
    })
}

/// A filter value with no list answers an empty page; in a catalog whose filters were never
/// indexed, operators are told why, in the log.
pub fn warn_if_unindexed(catalog_counter: Option<&Item>, facet: &Facet) {
    if !facets_indexed(catalog_counter) {
        tracing::warn!(
            facet = %facet.key(),
            "the catalog's filters are not indexed yet: run `catalog-admin datasets reindex`"
        );
        catalog::metrics::record(catalog::metrics::Metric::IndexIncomplete);
    }
}

impl CatalogPager for Lists {
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
            Plan::Search => self.scan(query, offset, limit).await,
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
    use super::super::attr;
    use super::*;

    #[tokio::test]
    async fn a_filter_on_a_catalog_never_indexed_is_counted_for_operators() {
        use catalog::metrics::{capture::metrics_of, Metric};
        use catalog::query::{Facet, FacetKind};
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

    #[test]
    fn only_a_catalog_listed_before_filters_and_never_reindexed_lacks_the_mark() {
        let counter = |marked: bool| {
            let mut item = super::super::layout::counter_key(super::super::layout::COUNTER_PK);
            item.insert(
                super::super::layout::name::TOTAL.into(),
                super::super::attr::n(3),
            );
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
