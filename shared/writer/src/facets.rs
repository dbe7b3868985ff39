//! Facet lists (one per category, tag and license value): the rewrites that move a dataset
//! into or out of a list, under the list's mark, and `reindex`, which rebuilds them all from
//! the catalog list. Each rewrite sets its value in the facet summary with its counter
//! ([`crate::summary`]); `reindex` builds the summary too.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update, WriteRequest};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::query::Facet;
use catalog::records::Card;
use catalog_aws::dynamo::attr::{get_s, get_strings, get_u64, n, s};
use catalog_aws::dynamo::codec::{is_marked, summary_entry, SummaryChange};
use catalog_aws::dynamo::layout::name::{
    CATEGORY, FULL, LICENSE, PK, REBUILD_UNTIL, REV, SEQ, SK, SLUG, TAGS, TOTAL,
};
use catalog_aws::dynamo::layout::{
    counter_key, facet_counter_pk, facet_list_pk, facet_summary_key, key_of, list_sk, position_of,
    Item, COUNTER_PK, LIST_PK,
};
use catalog_aws::dynamo::requests::{classify, query_all, query_partition};
use catalog_aws::dynamo::retry::{Attempt, Backoff};
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::patience::Patience;
use crate::tx::{
    delete_request, is_condition_failure, other, put_request, summary_update, SummaryExpression,
};
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;
mod mark;
mod reindex;

pub(crate) use mark::MARK_OWNER;
pub use reindex::Reindexed;

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
