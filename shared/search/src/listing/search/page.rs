//! A listing's page read by position: in a kept order, the chunks of positions that hold its
//! ranks; then its `LIST` entries. What this instance read is kept (`TextCache`): order chunks
//! by blob id, entries by the catalog's `rev`.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use aws_sdk_dynamodb::types::AttributeValue;

use catalog::error::StoreError;
use catalog::lock;
use catalog::query::CatalogPage;
use catalog::query::{Indexed, ListQuery};
use catalog::records::DatasetSummary;
use catalog_aws::dynamo::layout::{key_of, list_sk, Item, LIST_PK};
use catalog_aws::dynamo::lists::Counted;

use crate::listing::Listing;
use crate::order;
use crate::orders::{order_error, ChunkRef, OrderManifest, ORDER_PK};
use catalog_aws::dynamo::codec::prelude::*;

impl Listing {
    /// A page of the whole catalog in a kept order: the chunks holding its ranks, then its
    /// entries.
    pub(super) async fn ordered_page(
        &self,
        query: &ListQuery,
        order: &OrderManifest,
        counted: &Counted,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        let descending = query.sort.descending;
        let page = match offset {
            Some(offset) => {
                let wanted = |lens: &[u32]| order::covering(lens, descending, offset, limit);
                let (order, range, read) = self.order_seqs(order, wanted, &[]).await?;
                order::page(&order.lens(), range, &read, descending, offset, limit)
            }
            None => Vec::new(),
        };
        let page: Vec<u64> = page.into_iter().filter(|s| *s <= counted.total).collect();
        let total = counted.total;
        self.page_at(query, page, total, counted).await
    }

    /// The page of entries at these positions, in this order (those that no longer match, or
    /// are gone, left out), with the catalog's facet counts.
    pub(super) async fn page_at(
        &self,
        query: &ListQuery,
        page: Vec<u64>,
        total: u64,
        counted: &Counted,
    ) -> Result<CatalogPage, StoreError> {
        let mut entries = self.entries(&page, counted.rev).await?;
        entries.retain(|e| query.matches(e));
        let mut by_seq: HashMap<u64, Indexed> =
            entries.into_iter().map(|e| (e.summary.seq, e)).collect();
        let items = page
            .iter()
            .filter_map(|seq| by_seq.remove(seq))
            .map(|e| e.summary)
            .collect();
        Ok(CatalogPage {
            total,
            items,
            facets: counted.facets.clone(),
            ignored_words: Vec::new(),
        })
    }

    /// The positions of the chunks `wanted` names (from the chunks' lengths), in order, read
    /// unless this instance holds them; with the manifest they were read under and the range.
    /// A blob deleted since the manifest was read (a writer moved the order on) means reading
    /// the manifest again, once, and the range again from it.
    pub(super) async fn order_seqs(
        &self,
        order: &OrderManifest,
        wanted: impl Fn(&[u32]) -> std::ops::Range<usize>,
        prefetched: &[Item],
    ) -> Result<(OrderManifest, std::ops::Range<usize>, Vec<Arc<[u32]>>), StoreError> {
        let mut order = order.clone();
        for attempt in 0..2 {
            let range = wanted(&order.lens());
            let chunks = order.chunks.get(range.clone()).unwrap_or_default();
            let prefetched = if attempt == 0 { prefetched } else { &[] };
            if let Some(read) = self.load_chunks(chunks, prefetched).await? {
                return Ok((order, range, read));
            }
            if attempt == 0 {
                let item = catalog_aws::dynamo::requests::get_consistent(
                    self.lists.client(),
                    self.lists.datasets_table(),
                    OrderManifest::key(order.sort),
                )
                .await?
                .ok_or_else(|| StoreError::Corrupt("order: the manifest is gone".into()))?;
                order = OrderManifest::from_item(&item)?;
            }
        }
        Err(StoreError::Unavailable(
            "a kept order changed twice while it was read".into(),
        ))
    }

    /// The keys of these chunks' positions that this instance does not hold.
    pub(super) fn uncached_chunks(&self, chunks: &[ChunkRef]) -> Vec<Item> {
        let cache = lock(&self.text);
        chunks
            .iter()
            .filter(|c| cache.order(&c.seqs.id).is_none())
            .flat_map(|c| c.seqs.keys_in(ORDER_PK))
            .collect()
    }

    /// These chunks' positions, from this instance's cache, then the items `prefetched`, then
    /// read; `None` when a blob is gone.
    async fn load_chunks(
        &self,
        chunks: &[ChunkRef],
        prefetched: &[Item],
    ) -> Result<Option<Vec<Arc<[u32]>>>, StoreError> {
        let mut held: Vec<Option<Arc<[u32]>>> = {
            let cache = lock(&self.text);
            chunks.iter().map(|c| cache.order(&c.seqs.id)).collect()
        };
        let keys: Vec<Item> = chunks
            .iter()
            .zip(&held)
            .filter(|(c, h)| {
                h.is_none() && matches!(c.seqs.join_in(ORDER_PK, prefetched), Ok(None))
            })
            .flat_map(|(c, _)| c.seqs.keys_in(ORDER_PK))
            .collect();
        if !keys.is_empty() || !prefetched.is_empty() {
            let mut found = match keys.is_empty() {
                true => Vec::new(),
                false => self.batch_get_keys(keys).await?,
            };
            found.extend_from_slice(prefetched);
            for (chunk, slot) in chunks.iter().zip(held.iter_mut()) {
                if slot.is_some() {
                    continue;
                }
                let Some(bytes) = chunk.seqs.join_in(ORDER_PK, &found)? else {
                    return Ok(None);
                };
                let seqs: Arc<[u32]> =
                    order::seqs_from(&bytes, chunk.bounds.len as usize, chunk.bits)
                        .map_err(order_error)?
                        .into();
                lock(&self.text).put_order(chunk.seqs.id.clone(), seqs.clone());
                *slot = Some(seqs);
            }
        }
        Ok(Some(held.into_iter().flatten().collect()))
    }

    /// The `LIST` entries at these positions (those that exist and are not withdrawn): those
    /// this instance read at the same `rev`, and the others in one BatchGetItem per hundred.
    pub(super) async fn entries(&self, seqs: &[u64], rev: u64) -> Result<Vec<Indexed>, StoreError> {
        let unique: HashSet<u64> = seqs.iter().copied().collect();
        let mut entries = Vec::with_capacity(unique.len());
        let mut missing = Vec::new();
        {
            let cache = lock(&self.text);
            for seq in unique {
                match cache.entry(rev, seq) {
                    Some(entry) => entries.push(entry),
                    None => missing.push(key_of(LIST_PK, &list_sk(seq))),
                }
            }
        }
        if missing.is_empty() {
            return Ok(entries);
        }
        let read: Vec<Indexed> = self
            .batch_get_keys(missing)
            .await?
            .iter()
            .filter(|item| {
                !matches!(
                    item.get(catalog_aws::dynamo::layout::name::WITHDRAWN),
                    Some(AttributeValue::Bool(true))
                )
            })
            .map(|item| DatasetSummary::from_item(item).map(Indexed::new))
            .collect::<Result<_, _>>()?;
        lock(&self.text).put_entries(rev, &read);
        entries.extend(read);
        Ok(entries)
    }

    /// Items by key, a BatchGetItem per hundred keys, sent together.
    pub(super) async fn batch_get_keys(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let batches = keys
            .chunks(100)
            .map(|chunk| self.lists.batch_get_datasets(chunk.to_vec()));
        let found = futures_util::future::try_join_all(batches).await?;
        Ok(found.into_iter().flatten().collect())
    }
}
