//! Listings with words (`q`), several filters, or an order other than publication: the text
//! index finds the matches, a kept order ([`crate::order`]) sorts them, then the page is read
//! by position.
//!
//! 1. The listing's first read ([`Lists::counters`](catalog_aws::dynamo::lists::Lists::counters)) also reads the text index's
//!    manifest ([`Manifest`]) and, sorted by name, update or downloads, that order's manifest
//!    ([`OrderManifest`]).
//! 2. What the page needs, in one round trip (those this instance has not read yet: a blob's
//!    id names its content for good, so they are kept by id): the shards the words and the
//!    filters need and the delta (the index answers every match and its score); in a kept
//!    order, the chunks of positions that hold the page's ranks (no words or filters), or
//!    every chunk's (with them: 4 bytes a dataset).
//! 3. The page: only its entries (one BatchGetItem of `LIST` entries by position). In an
//!    order the catalog does not keep (before `reindex` built it), every match's entry when
//!    there are at most [`FETCH_MATCHES`] of them, in the same one read; past that, the
//!    smallest candidate list, as a scan reads it, filtered to the matches.
//!
//! Filters without words whose smallest list holds at most [`FETCH_MATCHES`] entries skip the
//! index: that list is one read.
//!
//! Each entry read is checked against the query again ([`ListQuery::matches`]): while a
//! take-down renumbers the list, before `reindex` rebuilds the index, a position may hold
//! another dataset for a moment, and that one is left out rather than shown. `total` is then
//! the index's count for that moment (only the page's entries are read).
//!
//! A catalog whose index was never built (listed before the index existed, until `reindex`)
//! answers from a scan, matching the words the same way, unranked, and tells operators; one
//! whose index was built before it held filters ([`crate::index::Layout::filters`]) answers
//! several filters from a scan, and words with filters by filtering the words' matches; one
//! without kept orders sorts its matches as a scan does.

use std::collections::HashMap;
use std::sync::Arc;

use catalog::error::StoreError;
use catalog::lock;
use catalog::query::{CatalogPage, Facet, ListQuery, Scores, SortField};
use catalog_aws::dynamo::layout::Item;

use super::cache::Ranked;
use catalog_aws::dynamo::lists::{find, Counted};

use super::Listing;
use crate::index::{facet_term, Shard};
use crate::order::{self, Sorted};
use crate::orders::{ChunkRef, OrderManifest, ORDER_PK};
use crate::text::{delta_from, Blob, Manifest, MANIFEST_SK, TEXT_PK};

mod page;

/// With filters or an order of their own, the matches' entries are read by key up to this
/// many (one BatchGetItem); more, and the candidate list is scanned.
pub const FETCH_MATCHES: usize = 100;
/// How many bytes a cold listing reads at most in its second round trip, from the text index
/// and the kept orders: with the first (the counters, the manifests and the facet summary,
/// under 0.5 MB) and its page (at most 100 entries), a listing reads at most 8 MB. Words past
/// it are left out, the most common first ([`crate::index::Layout::words_within`]).
pub const READ_BUDGET: u64 = 7_000_000;

impl Listing {
    pub(super) async fn search(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        let kept = Sorted::of(query.sort.field).filter(|_| !query.relevance);
        let mut extra = vec![Manifest::key()];
        extra.extend(kept.map(OrderManifest::key));
        let counted = self.lists.counters(query, extra).await?;
        let Some(source) = counted.smallest.clone() else {
            return Ok(counted.empty_page());
        };
        if counted.total == 0 {
            return Ok(counted.empty_page());
        }
        let order = match kept {
            Some(sort) => match find(&counted.items, ORDER_PK, sort.as_str()) {
                Some(item) => Some(OrderManifest::from_item(item)?),
                None => {
                    tracing::warn!(
                        sort = sort.as_str(),
                        "the catalog keeps no order for this sort yet (pages read a whole list): \
                         run `catalog-admin datasets reindex`"
                    );
                    catalog::metrics::record(catalog::metrics::Metric::IndexIncomplete);
                    None
                }
            },
            None => None,
        };
        let manifest = find(&counted.items, TEXT_PK, MANIFEST_SK)
            .map(Manifest::from_item)
            .transpose()?;
        let Some(budgeted) = manifest
            .as_ref()
            .map(|m| self.budgeted(query, m, order.as_ref()))
        else {
            return self
                .answer(query, counted, source, order, manifest, offset, limit)
                .await;
        };
        if budgeted.left_out.is_empty() {
            return self
                .answer(query, counted, source, order, manifest, offset, limit)
                .await;
        }
        tracing::info!(
            left_out = ?budgeted.left_out,
            words = budgeted.words.len(),
            bytes = budgeted.bytes,
            "words left out of a query: too common to read within its budget"
        );
        let reduced = ListQuery {
            relevance: query.relevance && !budgeted.words.is_empty(),
            words: budgeted.words,
            ..query.clone()
        };
        let page = self
            .answer(&reduced, counted, source, order, manifest, offset, limit)
            .await?;
        Ok(CatalogPage {
            ignored_words: budgeted.left_out,
            ..page
        })
    }

    /// The words of `query` its read budget takes ([`READ_BUDGET`]), with what else its second
    /// round trip reads: the delta, the filters' shards, and, sorted in a kept order, every
    /// chunk's positions.
    fn budgeted(
        &self,
        query: &ListQuery,
        manifest: &Manifest,
        order: Option<&OrderManifest>,
    ) -> crate::index::Budgeted {
        let filters_indexed = manifest.layout.filters;
        let facets: Vec<String> = match filters_indexed {
            true => query.facets.iter().map(Facet::key).collect(),
            false => Vec::new(),
        };
        let positions: u64 = match order {
            Some(order) if query.facets.is_empty() || filters_indexed => {
                order.chunks.iter().map(ChunkRef::seqs_bytes).sum()
            }
            _ => 0,
        };
        let full_shard = manifest.max_shard_bytes as u64;
        let sizes: Vec<u64> = manifest
            .shards
            .iter()
            .map(|b| b.read_cost(full_shard))
            .collect();
        let delta = manifest
            .delta
            .read_cost(u64::from(manifest.delta.parts) * crate::text::PART_BYTES as u64);
        let budget = self.read_budget.saturating_sub(delta + positions);
        manifest
            .layout
            .words_within(&query.words, &facets, &sizes, budget)
    }

    /// The page of `query` once the listing's first read is done.
    #[allow(clippy::too_many_arguments)]
    async fn answer(
        &self,
        query: &ListQuery,
        counted: Counted,
        source: String,
        order: Option<OrderManifest>,
        manifest: Option<Manifest>,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        if query.words.is_empty() && query.facets.is_empty() {
            // Every word was left out: the catalog in the query's order.
            if let Some(order) = &order {
                return self
                    .ordered_page(query, order, &counted, offset, limit)
                    .await;
            }
            if Sorted::of(query.sort.field).is_none() {
                let total = counted.total;
                let descending = query.sort.descending;
                let page: Vec<u64> = match offset.filter(|o| *o < total) {
                    Some(o) if descending => {
                        let first = total - o;
                        (first.saturating_sub(limit) + 1..=first).rev().collect()
                    }
                    Some(o) => (o + 1..=total.min(o + limit)).collect(),
                    None => Vec::new(),
                };
                return self.page_at(query, page, total, &counted).await;
            }
        }
        let filters_indexed = manifest.as_ref().is_some_and(|m| m.layout.filters);
        let unindexed = match &manifest {
            None => Some("q matches unranked, and several filters match, from a scan"),
            Some(_) if !filters_indexed && !query.facets.is_empty() => {
                Some("it holds no filters: several filters match from a scan")
            }
            Some(_) => None,
        };
        if let Some(consequence) = unindexed {
            tracing::warn!(
                "the catalog's text index is not built yet ({consequence}): run \
                 `catalog-admin datasets reindex`"
            );
            catalog::metrics::record(catalog::metrics::Metric::IndexIncomplete);
        }
        let small = counted.smallest_len <= FETCH_MATCHES as u64;
        let manifest = match manifest {
            // Without words, the index answers filters only (an order alone is not a query of
            // the index: a catalog without kept orders sorts its list).
            Some(m)
                if !query.words.is_empty()
                    || (filters_indexed && !small && !query.facets.is_empty()) =>
            {
                m
            }
            _ => {
                let candidates = self.lists.snapshot(source, counted.rev).await?;
                return Ok(CatalogPage {
                    facets: counted.facets,
                    ..query.select(candidates.iter(), None, offset, limit)
                });
            }
        };
        let facets: Vec<String> = match filters_indexed {
            true => query.facets.iter().map(Facet::key).collect(),
            false => Vec::new(),
        };
        let by_position = (query.facets.is_empty() || filters_indexed)
            && (query.relevance || query.sort.field == SortField::Created);
        // The order's positions are read with the index's parts, in the same request, whatever
        // the matches turn out to be, so that the page is the third round trip.
        // (Words whose matches the index cannot filter, an index from before filters, are
        // sorted with the filters applied, from the candidate list below.)
        let in_order = order
            .as_ref()
            .filter(|_| !by_position && (query.facets.is_empty() || filters_indexed));
        let prefetch = in_order.map_or_else(Vec::new, |o| self.uncached_chunks(&o.chunks));
        let (ranked, prefetched) = self
            .text_matches(manifest, &query.words, &facets, prefetch)
            .await?;
        let sequence = match in_order {
            Some(order) => Some(
                self.order_seqs(order, |lens| 0..lens.len(), &prefetched)
                    .await
                    .map(|(order, _, read)| (order, read))?,
            ),
            None => None,
        };
        if by_position || sequence.is_some() {
            // Positions past the list's end are left from a take-down not yet rebuilt.
            let found = ranked.iter().map(|(seq, _)| *seq);
            let seqs: Vec<u64> = match &sequence {
                Some((_, chunks)) => {
                    let matches: Vec<u64> = found.collect();
                    order::walk(chunks, query.sort.descending, &matches)
                }
                None => {
                    let mut seqs: Vec<u64> = found.collect();
                    if !query.relevance {
                        seqs.sort_unstable();
                        if query.sort.descending {
                            seqs.reverse();
                        }
                    }
                    seqs
                }
            };
            let seqs: Vec<u64> = seqs
                .into_iter()
                .filter(|seq| *seq <= counted.total)
                .collect();
            let total = seqs.len() as u64;
            let page: Vec<u64> = match offset {
                Some(o) => seqs
                    .into_iter()
                    .skip(usize::try_from(o).unwrap_or(usize::MAX))
                    .take(usize::try_from(limit).unwrap_or(usize::MAX))
                    .collect(),
                None => Vec::new(),
            };
            return self.page_at(query, page, total, &counted).await;
        }
        let scores: Scores = ranked.iter().copied().collect();
        let page = if scores.len() <= FETCH_MATCHES {
            let seqs: Vec<u64> = scores.keys().copied().collect();
            let entries = self.entries(&seqs, counted.rev).await?;
            query.select(entries.iter(), Some(&scores), offset, limit)
        } else {
            let candidates = self.lists.snapshot(source, counted.rev).await?;
            query.select(candidates.iter(), Some(&scores), offset, limit)
        };
        Ok(CatalogPage {
            facets: counted.facets,
            ..page
        })
    }
    /// Every dataset matching `words` in every facet of `facets` (keys), best first, with its
    /// score: from the shards they need and the delta, read unless this instance holds them;
    /// and the items `extra`, read in the same request. A blob deleted since the manifest was
    /// read (a writer moved it on) means reading the manifest again, once.
    async fn text_matches(
        &self,
        manifest: Manifest,
        words: &[String],
        facets: &[String],
        extra: Vec<Item>,
    ) -> Result<(Arc<Ranked>, Vec<Item>), StoreError> {
        // The same query on the same generation (its delta's id) finds the same.
        let asked: Vec<String> = words
            .iter()
            .cloned()
            .chain(facets.iter().map(|key| facet_term(key)))
            .collect();
        let kept = lock(&self.text).matches(&manifest.delta.id, &asked);
        if let Some(kept) = kept {
            let found = match extra.is_empty() {
                true => Vec::new(),
                false => self.batch_get_keys(extra).await?,
            };
            return Ok((kept, found));
        }
        let mut manifest = manifest;
        let mut extra = extra;
        let mut found = Vec::new();
        // A second attempt reads the same words under the new manifest, whose shards may cost
        // a little more than the budget counted under the first.
        for attempt in 0..2 {
            let (index, read) = self
                .load_index(&manifest, words, facets, std::mem::take(&mut extra))
                .await?;
            found.extend(read);
            if let Some(index) = index {
                let hits: Arc<Ranked> = Arc::new(
                    index
                        .find(words, facets)?
                        .into_iter()
                        .map(|h| (h.seq, h.score))
                        .collect(),
                );
                lock(&self.text).put_matches(manifest.delta.id.clone(), &asked, hits.clone());
                return Ok((hits, found));
            }
            if attempt == 0 {
                let item = catalog_aws::dynamo::requests::get_consistent(
                    self.lists.client(),
                    self.lists.datasets_table(),
                    Manifest::key(),
                )
                .await?
                .ok_or_else(|| StoreError::Corrupt("text index: the manifest is gone".into()))?;
                manifest = Manifest::from_item(&item)?;
            }
        }
        Err(StoreError::Unavailable(
            "the text index changed twice while it was read".into(),
        ))
    }

    /// The index with the shards `words` and `facets` need loaded (`None` when a blob is
    /// gone), and the items read: those blobs and `extra`, in one request.
    async fn load_index(
        &self,
        manifest: &Manifest,
        words: &[String],
        facets: &[String],
        extra: Vec<Item>,
    ) -> Result<(Option<crate::index::TextIndex>, Vec<Item>), StoreError> {
        let needed = manifest.layout.shards_for(words, facets);
        let (mut shards, mut delta) = {
            let cache = lock(&self.text);
            let shards: HashMap<usize, Shard> = needed
                .iter()
                .filter_map(|i| cache.shard(&manifest.shards[*i].id).map(|s| (*i, s)))
                .collect();
            (shards, cache.delta(&manifest.delta.id))
        };
        let mut missing: Vec<&Blob> = needed
            .iter()
            .filter(|i| !shards.contains_key(i))
            .map(|i| &manifest.shards[*i])
            .collect();
        if delta.is_none() {
            missing.push(&manifest.delta);
        }
        let mut keys: Vec<Item> = missing.iter().flat_map(|b| b.keys()).collect();
        keys.extend(extra);
        let found = match keys.is_empty() {
            true => Vec::new(),
            false => self.batch_get_keys(keys).await?,
        };
        for &i in &needed {
            if shards.contains_key(&i) {
                continue;
            }
            let blob = &manifest.shards[i];
            let Some(bytes) = blob.join(&found)? else {
                return Ok((None, found));
            };
            let shard = Shard::from_blob(&bytes)?;
            lock(&self.text).put_shard(blob.id.clone(), shard.clone());
            shards.insert(i, shard);
        }
        if delta.is_none() {
            let Some(bytes) = manifest.delta.join(&found)? else {
                return Ok((None, found));
            };
            let read = delta_from(&bytes)?;
            lock(&self.text).put_delta(manifest.delta.id.clone(), read.clone());
            delta = Some(read);
        }
        let delta = delta.ok_or_else(|| StoreError::Corrupt("text index: no delta".into()))?;
        let loaded = (0..manifest.shards.len())
            .map(|i| shards.remove(&i))
            .collect();
        Ok((Some(manifest.index(delta, loaded)), found))
    }
}
