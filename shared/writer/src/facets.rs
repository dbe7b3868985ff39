//! Facet lists (one per category, tag and license value): the rewrites that move a dataset
//! into or out of a list, under the list's mark, and `reindex`, which rebuilds them all from
//! the catalog list. Each rewrite sets its value in the facet summary with its counter
//! ([`crate::summary`]); `reindex` builds the summary too.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update, WriteRequest};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::query::Facet;
use catalog::records::Card;
use catalog_aws::dynamo::attr::{get_s, get_strings, get_u64, n, s, time};
use catalog_aws::dynamo::codec::{is_marked, summary_entry, summary_mark, SummaryChange};
use catalog_aws::dynamo::layout::name::{
    CATEGORY, COMPLETE, FACETS_INDEXED, FULL, LICENSE, PK, REBUILD_UNTIL, REV, SEQ, SK, SLUG, TAGS,
    TOTAL,
};
use catalog_aws::dynamo::layout::{
    counter_key, facet_counter_pk, facet_list_pk, facet_summary_key, key_of, list_sk, position_of,
    summary_attribute_of, Item, COUNTER_PK, COUNTER_SK, LIST_PK,
};
use catalog_aws::dynamo::requests::{classify, query_all, query_partition, scan_all};
use catalog_aws::dynamo::retry::{Attempt, Backoff};
use catalog_search::index::TextDoc;
use chrono::{DateTime, Utc};

use crate::patience::Patience;
use crate::summary::{StoredSummary, BUDGET_BYTES};
use crate::tx::{
    delete_request, is_condition_failure, list_mark_key, other, put_request, summary_update,
    SummaryExpression, UNMARKED,
};
use crate::{DynamoWriter, WriteError};
use catalog_aws::dynamo::codec::prelude::*;

/// How long a list's mark holds without being renewed: a writer that stops holding a list
/// (or dies) lets other writers take it after at most this long. With renewals every
/// `RENEW_SECONDS`, writers' clocks may differ by up to 75 seconds.
const MARK_SECONDS: i64 = 90;

/// How often a writer renews the mark of a list it holds (each renewal given at most as long).
const RENEW_SECONDS: u64 = 15;

/// The attribute beside a mark naming the writer that holds it (a token of its own).
pub(crate) const MARK_OWNER: &str = "mark_owner";

/// A list held by this writer: its mark is renewed until this is dropped (the writer clears
/// the mark itself when it is done; if it cannot, the mark lapses).
#[derive(Debug)]
pub(crate) struct Held(tokio::task::JoinHandle<()>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl DynamoWriter {
    /// After a transaction that changed list entries: the facet list changes that shift
    /// positions, then the catalog's `rev` (for the functions' cached lists), bumped whether or
    /// not the rebuilds succeed, since a failed one may have written part of its change. `rev`
    /// is bumped here, outside the transaction, so that writes to different datasets do not
    /// conflict on the counter; a reader in between caches data newer than its `rev`, which
    /// the bump then retires.
    pub(crate) async fn apply(
        &self,
        rebuilds: Vec<(Facet, u64)>,
        text: Option<&Slug>,
        moved: &Slug,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        // Every list is attempted; the change itself is already committed, so a failure here
        // must not read as "nothing changed" (a blind retry would skip the lists it missed).
        let mut failed = Vec::new();
        if let Some(slug) = text {
            if let Err(e) = self.index_text(slug).await {
                failed.push(format!("the text index ({e})"));
            }
        }
        if let Err(e) = self.index_orders(moved).await {
            failed.push(format!("the kept orders ({e})"));
        }
        for (facet, seq) in rebuilds {
            if let Err(e) = self.rebuild_facet(&facet, seq, now).await {
                failed.push(format!("{} ({e})", facet.key()));
            }
        }
        if let Err(e) = self.bump_rev().await {
            failed.push(format!(
                "the catalog revision, so cached listings may lag ({e})"
            ));
        }
        if !failed.is_empty() {
            return Err(WriteError::FacetLists(failed.join(", ")));
        }
        Ok(())
    }

    /// Where a dataset sits in a facet list (a filtered read of that list; operators only).
    pub(crate) async fn facet_position(
        &self,
        facet: &Facet,
        slug: &str,
    ) -> Result<Option<u64>, StoreError> {
        let found = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk"))
                .filter_expression("#slug = :slug")
                .projection_expression(format!("{PK}, {SK}"))
                .expression_attribute_names("#slug", SLUG)
                .expression_attribute_values(":pk", s(facet_list_pk(facet)))
                .expression_attribute_values(":slug", s(slug))
                .consistent_read(true),
        )
        .await?;
        found.first().map(position_of).transpose()
    }

    /// Brings one dataset's place in a facet list in line with its catalog list entry, as it
    /// is when the rebuild runs (not as it was when the rebuild was queued, so rebuilds queued
    /// by successive changes may run in any order): in the list, with its current summary, if
    /// the entry has the facet; out of it otherwise. Positions stay gap-free and in publication
    /// order: the entries after it move by one. Not atomic: a reader paging the list meanwhile
    /// may see one dataset twice or miss one; `reindex` repairs an interrupted rebuild.
    async fn rebuild_facet(
        &self,
        facet: &Facet,
        seq: u64,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let _held = self.mark_facet(facet, now).await?;
        let entry = self
            .get(key_of(LIST_PK.to_owned(), &list_sk(seq)))
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("no list entry at {seq}")))?;
        let existing =
            query_partition(&self.client, &self.datasets_table, &facet_list_pk(facet)).await?;
        let mut members = existing.clone();
        members
            .retain(|m| !matches!(m.get(SEQ), Some(AttributeValue::N(v)) if v.parse() == Ok(seq)));
        let refresh = entry.get(SLUG).cloned();
        if facets_of_item(&entry)?.contains(facet) {
            members.push(with_seq(entry, seq));
        }
        let summary = !self.summary_is_full().await?;
        self.write_facet(facet, &existing, members, Rewrite::Moved(refresh), summary)
            .await?;
        Ok(())
    }

    /// Applies `changes` to the facet summary, alone (outside a transaction: `reindex` only),
    /// 100 at a time (an update expression holds at most 4 KB).
    async fn update_summary(&self, changes: &[SummaryChange]) -> Result<(), StoreError> {
        for chunk in changes.chunks(100) {
            let expression = SummaryExpression::of(chunk);
            self.client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(facet_summary_key()))
                .update_expression(expression.text)
                .set_expression_attribute_names(Some(expression.names))
                .set_expression_attribute_values(expression.values)
                .send()
                .await
                .map_err(classify)?;
        }
        Ok(())
    }

    /// Whether the facet summary is marked full (writers then leave it alone): one small read.
    async fn summary_is_full(&self) -> Result<bool, StoreError> {
        let found = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(facet_summary_key()))
            .projection_expression("#full")
            .expression_attribute_names("#full", FULL)
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?
            .item;
        Ok(found.is_some_and(|item| is_marked(&item, FULL)))
    }

    /// Marks a facet list as being rewritten ([`Self::hold`]): appends and in-place updates of
    /// its entries are refused (and tried again by `activate`) until `write_facet` clears the
    /// mark. A second rewrite of the same list waits for it.
    pub(crate) async fn mark_facet(
        &self,
        facet: &Facet,
        now: DateTime<Utc>,
    ) -> Result<Held, WriteError> {
        self.hold(counter_key(facet_counter_pk(facet)), &facet.key(), now)
            .await
    }

    /// Sets the rebuild mark on the item `key` (a facet counter, or the catalog list's mark
    /// item) for `MARK_SECONDS`, under a token of this writer's, and renews it every
    /// `RENEW_SECONDS` for as long as the returned [`Held`] lives: a live writer keeps its
    /// list however long its work takes, and a writer that stops (or dies) lets it lapse within
    /// a minute. Waits for another writer's mark to be cleared or to lapse, for as long as a
    /// write waits for shared items ([`crate::patience::SHARED_WAIT`]); then `Busy`, naming
    /// `list`.
    pub(crate) async fn hold(
        &self,
        key: Item,
        list: &str,
        now: DateTime<Utc>,
    ) -> Result<Held, WriteError> {
        let token = crate::tx::token();
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let at = Utc::now().max(now);
            let marked = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key.clone()))
                .update_expression("SET #mark = :until, #owner = :token")
                .condition_expression(UNMARKED)
                .expression_attribute_names("#mark", REBUILD_UNTIL)
                .expression_attribute_names("#owner", MARK_OWNER)
                .expression_attribute_values(":now", time(&at))
                .expression_attribute_values(
                    ":until",
                    time(&(at + chrono::Duration::seconds(MARK_SECONDS))),
                )
                .expression_attribute_values(":token", s(&token))
                .send()
                .await;
            match marked {
                Ok(_) => return Ok(self.renew(key, token)),
                Err(e) if is_condition_failure(e.code()) => {
                    let held = WriteError::Contended {
                        what: list.to_owned(),
                        seconds: 0,
                    };
                    if patience.wait(held).await.is_err() {
                        return Err(WriteError::Busy(list.to_owned()));
                    }
                }
                Err(e) => return Err(WriteError::from(classify(e))),
            }
        }
    }

    /// Renews the mark on `key` while it is still this writer's (`token`) and not cleared,
    /// every `RENEW_SECONDS`, until the returned guard is dropped.
    fn renew(&self, key: Item, token: String) -> Held {
        let (client, table) = (self.client.clone(), self.datasets_table.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(RENEW_SECONDS)).await;
                let until = Utc::now() + chrono::Duration::seconds(MARK_SECONDS);
                let renewing = client
                    .update_item()
                    .table_name(&table)
                    .set_key(Some(key.clone()))
                    .update_expression("SET #mark = :until")
                    .condition_expression("attribute_exists(#mark) AND #owner = :token")
                    .expression_attribute_names("#mark", REBUILD_UNTIL)
                    .expression_attribute_names("#owner", MARK_OWNER)
                    .expression_attribute_values(":until", time(&until))
                    .expression_attribute_values(":token", s(&token))
                    .send();
                let wait = std::time::Duration::from_secs(RENEW_SECONDS);
                let Ok(renewed) = tokio::time::timeout(wait, renewing).await else {
                    tracing::warn!("a list's mark was not renewed in time");
                    continue;
                };
                match renewed {
                    Ok(_) => {}
                    // Cleared, or taken over after it lapsed: nothing left to renew.
                    Err(e) if is_condition_failure(e.code()) => return,
                    Err(e) => tracing::warn!(error = %classify(e), "a list's mark was not renewed"),
                }
            }
        });
        Held(task)
    }

    /// Rewrites a facet list so that it holds exactly `members` at positions 1..=n in
    /// publication order: only positions whose dataset changes are written, positions past the
    /// end are deleted, then the counter is set, with (if `summary`) the value's count and its
    /// first member's form in the facet summary, in one transaction.
    async fn write_facet(
        &self,
        facet: &Facet,
        existing: &[Item],
        mut members: Vec<Item>,
        rewrite: Rewrite,
        summary: bool,
    ) -> Result<usize, StoreError> {
        let seq_of = |item: &Item| get_u64(item, SEQ).unwrap_or(u64::MAX);
        members.sort_by_key(seq_of);
        // One entry per dataset, whatever a failed rewrite left behind.
        members.dedup_by_key(|m| seq_of(m));
        let list_pk = facet_list_pk(facet);
        // What sits at each position now (a list may have gaps or strays after a failure).
        let mut at: BTreeMap<u64, &Item> = BTreeMap::new();
        for item in existing {
            if let Ok(pos) = position_of(item) {
                at.insert(pos, item);
            }
        }
        let mut requests = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let current = at.get(&(i as u64 + 1)).copied();
            let mut item = member.clone();
            item.insert(PK.to_owned(), s(&list_pk));
            item.insert(SK.to_owned(), s(list_sk(i as u64 + 1)));
            let write = match &rewrite {
                Rewrite::Differing => current != Some(&item),
                // Its summary may be newer than the copy in place.
                Rewrite::Moved(refresh) => {
                    let slug = member.get(SLUG);
                    current.and_then(|c| c.get(SLUG)) != slug
                        || (slug.is_some() && refresh.as_ref() == slug)
                }
            };
            if write {
                requests.push(put_request(item)?);
            }
        }
        for pos in at.keys().filter(|p| **p > members.len() as u64) {
            requests.push(delete_request(key_of(list_pk.clone(), &list_sk(*pos)))?);
        }
        let written = requests.len();
        self.batch_write(requests).await?;
        // The new total, and the rebuild mark cleared, in one write.
        let total = members.len() as u64;
        if !summary {
            self.client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(counter_key(facet_counter_pk(facet))))
                .update_expression("SET #total = :total REMOVE #mark, #owner")
                .expression_attribute_names("#total", TOTAL)
                .expression_attribute_names("#mark", REBUILD_UNTIL)
                .expression_attribute_names("#owner", MARK_OWNER)
                .expression_attribute_values(":total", n(total))
                .send()
                .await
                .map_err(classify)?;
            return Ok(written);
        }
        let first = members.first().map(Card::from_item).transpose()?;
        let form = first
            .as_ref()
            .and_then(|card| card.display_of(facet))
            .unwrap_or(facet.value());
        let counter = Update::builder()
            .table_name(&self.datasets_table)
            .set_key(Some(counter_key(facet_counter_pk(facet))))
            .update_expression("SET #total = :total REMOVE #mark, #owner")
            .expression_attribute_names("#total", TOTAL)
            .expression_attribute_names("#mark", REBUILD_UNTIL)
            .expression_attribute_names("#owner", MARK_OWNER)
            .expression_attribute_values(":total", n(total))
            .build()
            .map_err(other)?;
        let changes = summary_entry(facet, form, total);
        self.counter_with_summary(counter, &changes).await?;
        Ok(written)
    }

    /// A counter's update and the facet summary's changes in one transaction, tried again
    /// while it meets other transactions on the summary (which every first activation
    /// updates), as long as a write waits for shared items ([`Patience`]).
    async fn counter_with_summary(
        &self,
        counter: Update,
        changes: &[SummaryChange],
    ) -> Result<(), StoreError> {
        let summary = summary_update(&self.datasets_table, changes)?;
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let sent = self
                .client
                .transact_write_items()
                .client_request_token(crate::tx::token())
                .transact_items(TransactWriteItem::builder().update(counter.clone()).build())
                .transact_items(TransactWriteItem::builder().update(summary.clone()).build())
                .send()
                .await;
            match sent {
                Ok(_) => return Ok(()),
                Err(e) if is_condition_failure(e.code()) => {
                    let busy = WriteError::Contended {
                        what: "the facet summary".into(),
                        seconds: 0,
                    };
                    if let Err(gave_up) = patience.wait(busy).await {
                        return Err(StoreError::Unavailable(gave_up.to_string().into()));
                    }
                }
                Err(e) => return Err(classify(e)),
            }
        }
    }

    /// Every request, 25 at a time, each batch's unprocessed items retried
    /// (`Backoff::BATCH_WRITE`).
    pub(crate) async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
        for chunk in requests.chunks(25) {
            let pending = HashMap::from([(self.datasets_table.clone(), chunk.to_vec())]);
            Backoff::BATCH_WRITE
                .run(
                    pending,
                    |pending| async move {
                        let out = self
                            .client
                            .batch_write_item()
                            .set_request_items(Some(pending))
                            .send()
                            .await
                            .map_err(classify)?;
                        Ok(match out.unprocessed_items {
                            Some(rest) if !rest.is_empty() => Attempt::Retry(rest),
                            _ => Attempt::Done(()),
                        })
                    },
                    |_| {
                        StoreError::Unavailable(
                            "BatchWriteItem left items unprocessed after retries".into(),
                        )
                    },
                )
                .await?;
        }
        Ok(())
    }

    /// Marks the catalog changed, for the functions' cached lists.
    async fn bump_rev(&self) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(counter_key(COUNTER_PK)))
            .update_expression("SET #rev = if_not_exists(#rev, :zero) + :one")
            .expression_attribute_names("#rev", REV)
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":one", n(1))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// Rebuilds every facet list from the catalog list, and the facet summary: after an
    /// upgrade from a version without facet lists or without the summary, or to repair an
    /// interrupted rebuild. Says how many facet lists there are, how many entries were written
    /// or deleted, and what the summary holds.
    ///
    /// It holds the catalog list's mark throughout: the catalog list is renumbered first (what
    /// left it, or what an interrupted renumbering left), then every facet list is rebuilt
    /// from it, while no dataset joins or moves (a first activation meanwhile is refused, and
    /// retried).
    pub async fn reindex(&self) -> Result<Reindexed, WriteError> {
        let held = self.hold(list_mark_key(), LIST_PK, Utc::now()).await?;
        let done = self.reindex_held().await;
        // Lifted whatever happened (else it lapses within 90 seconds).
        let lifted = self.lift_list_mark().await;
        drop(held);
        let done = done?;
        lifted?;
        Ok(done)
    }

    async fn reindex_held(&self) -> Result<Reindexed, WriteError> {
        let renumbered = self.renumber_held().await?;
        let mut wanted: BTreeMap<Facet, Vec<Item>> = BTreeMap::new();
        let mut texts = Vec::new();
        let mut listed = Vec::new();
        for entry in query_partition(&self.client, &self.datasets_table, LIST_PK).await? {
            let seq = position_of(&entry)?;
            let mut summary = catalog::records::DatasetSummary::from_item(&entry)?;
            summary.seq = seq;
            texts.push(TextDoc::of(seq, &summary.card));
            listed.push(summary);
            for facet in facets_of_item(&entry)? {
                wanted
                    .entry(facet)
                    .or_default()
                    .push(with_seq(entry.clone(), seq));
            }
        }
        // Facets no dataset has any more keep their counter, at 0.
        let counters = scan_all(
            self.client
                .scan()
                .table_name(&self.datasets_table)
                .filter_expression(format!("begins_with({PK}, :p) AND {SK} = :c"))
                .expression_attribute_values(":p", s(format!("{COUNTER_PK}#")))
                .expression_attribute_values(":c", s(COUNTER_SK))
                .consistent_read(true),
        )
        .await?;
        for item in &counters {
            let pk = get_s(item, PK)?;
            if let Some(facet) = pk
                .strip_prefix(COUNTER_PK)
                .and_then(|k| k.strip_prefix('#'))
                .and_then(Facet::from_key)
            {
                wanted.entry(facet).or_default();
            }
        }
        let summary = self.prepare_summary(&wanted).await?;
        let mut written = 0;
        let facets = wanted.len();
        let known: BTreeSet<Facet> = wanted.keys().cloned().collect();
        for (facet, members) in wanted {
            // Under the facet's mark, like any rebuild: appends wait, and a running rebuild
            // finishes first.
            let _held = self.mark_facet(&facet, Utc::now()).await?;
            let existing =
                query_partition(&self.client, &self.datasets_table, &facet_list_pk(&facet)).await?;
            // Every entry that differs is rewritten: its summary may be stale, not only its
            // position.
            written += self
                .write_facet(&facet, &existing, members, Rewrite::Differing, summary.fits)
                .await?;
        }
        if summary.fits {
            // Every value is in: the summary is complete, less values no list has (the mark
            // last, once they are gone).
            let mut changes = summary.strays(&known);
            changes.push(summary_mark(COMPLETE, true));
            self.update_summary(&changes).await?;
        }
        // The lists are built: unknown filter values are now simply values no dataset has.
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(counter_key(COUNTER_PK)))
            .update_expression("SET #rev = if_not_exists(#rev, :zero) + :one, #indexed = :true")
            .expression_attribute_names("#rev", REV)
            .expression_attribute_names("#indexed", FACETS_INDEXED)
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":true", AttributeValue::Bool(true))
            .send()
            .await
            .map_err(classify)?;
        // The text index last, from the same list: its positions are the renumbered ones.
        let text = self.rebuild_text(&texts).await?;
        // A change committed before the list was held may move the orders while they are
        // built: the list is read again and they are built again.
        let mut tries = 0;
        let orders = loop {
            match self.rebuild_orders(&listed).await {
                Err(WriteError::Raced(what))
                    if what == crate::orders::MOVED_WHILE_BUILT && tries < 5 =>
                {
                    tries += 1;
                    listed = Vec::new();
                    for entry in
                        query_partition(&self.client, &self.datasets_table, LIST_PK).await?
                    {
                        let mut summary = catalog::records::DatasetSummary::from_item(&entry)?;
                        summary.seq = position_of(&entry)?;
                        listed.push(summary);
                    }
                }
                other => break other?,
            }
        };
        Ok(Reindexed {
            renumbered,
            text,
            orders,
            lists: facets,
            written,
            summary_values: summary.values,
            summary_bytes: summary.bytes,
            summary_fits: summary.fits,
        })
    }

    /// Before `reindex` rewrites the lists: measures the summary the catalog needs. If it fits,
    /// a full summary is unmarked (not complete either until every value is in), so that the
    /// rewrites write it; if not, it is replaced by the full mark alone, which they leave.
    async fn prepare_summary(
        &self,
        wanted: &BTreeMap<Facet, Vec<Item>>,
    ) -> Result<PreparedSummary, WriteError> {
        let mut needed = Vec::new();
        let mut values = 0;
        for (facet, members) in wanted {
            let Some(first) = members
                .iter()
                .min_by_key(|m| get_u64(m, SEQ).unwrap_or(u64::MAX))
            else {
                continue;
            };
            let card = Card::from_item(first)?;
            let form = card.display_of(facet).unwrap_or(facet.value());
            needed.extend(summary_entry(facet, form, members.len() as u64));
            values += 1;
        }
        needed.push(summary_mark(COMPLETE, true));
        let bytes = StoredSummary::default().size_with(&needed);
        let fits = bytes <= BUDGET_BYTES;
        let stored = self.get(facet_summary_key()).await?;
        let full = stored.as_ref().is_some_and(|item| is_marked(item, FULL));
        if !fits {
            let mut item = facet_summary_key();
            item.insert(FULL.to_owned(), AttributeValue::Bool(true));
            self.client
                .put_item()
                .table_name(&self.datasets_table)
                .set_item(Some(item))
                .send()
                .await
                .map_err(classify)?;
        } else if full {
            let changes = [summary_mark(FULL, false), summary_mark(COMPLETE, false)];
            self.update_summary(&changes).await?;
        }
        Ok(PreparedSummary {
            stored: stored.unwrap_or_default(),
            values,
            bytes,
            fits,
        })
    }
}

/// What `reindex` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reindexed {
    /// What building the text index did.
    pub text: crate::text::TextRebuilt,
    /// What building the kept orders did.
    pub orders: crate::orders::OrdersRebuilt,
    /// How many catalog list entries moved or left (datasets taken out of the catalog, or
    /// what an interrupted renumbering left).
    pub renumbered: usize,
    /// How many facet lists there are (values no dataset has any more included, at 0).
    pub lists: usize,
    /// How many facet list entries were written or deleted (0: nothing needed repair).
    pub written: usize,
    /// How many values the facet summary needs, and their size in bytes.
    pub summary_values: usize,
    pub summary_bytes: usize,
    /// Whether they fit its budget ([`BUDGET_BYTES`]): if so it holds them all, complete; if
    /// not it is marked full and the list answers `facets=true` without facets.
    pub summary_fits: bool,
}

/// The summary as `reindex` found it, and what the catalog needs of it.
struct PreparedSummary {
    stored: Item,
    values: usize,
    bytes: usize,
    fits: bool,
}

impl PreparedSummary {
    /// Removals of the values the stored summary holds that no facet list has.
    fn strays(&self, known: &BTreeSet<Facet>) -> Vec<SummaryChange> {
        self.stored
            .keys()
            .filter(|name| summary_attribute_of(name).is_some_and(|(_, f)| !known.contains(&f)))
            .map(|name| (name.clone(), None))
            .collect()
    }
}

/// Which entries `write_facet` writes.
#[derive(Debug, Clone, PartialEq)]
enum Rewrite {
    /// Positions whose dataset changes, and the dataset with this slug wherever it lands (the
    /// others are up to date).
    Moved(Option<AttributeValue>),
    /// Every entry that differs from what it should be.
    Differing,
}

/// The facets of a dataset item or list entry, as stored.
fn facets_of_item(item: &Item) -> Result<Vec<Facet>, StoreError> {
    Ok(Facet::of(
        &get_s(item, CATEGORY)?,
        &get_strings(item, TAGS)?,
        &get_s(item, LICENSE)?,
    ))
}

/// A `LIST` entry as a facet entry: the same summary, plus its `LIST` position.
fn with_seq(mut entry: Item, seq: u64) -> Item {
    entry.insert(SEQ.to_owned(), n(seq));
    entry
}
