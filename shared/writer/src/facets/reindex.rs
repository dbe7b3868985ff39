//! `reindex`: every facet list and the facet summary rebuilt from the catalog list (with the
//! text index and the kept orders), under the catalog list's mark.

use std::collections::{BTreeMap, BTreeSet};

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::query::Facet;
use catalog::records::Card;
use catalog_aws::dynamo::attr::{get_s, get_u64, n, s};
use catalog_aws::dynamo::codec::{is_marked, summary_entry, summary_mark, SummaryChange};
use catalog_aws::dynamo::layout::name::{COMPLETE, FACETS_INDEXED, FULL, PK, REV, SEQ, SK};
use catalog_aws::dynamo::layout::{
    counter_key, facet_list_pk, facet_summary_key, position_of, summary_attribute_of, Item,
    COUNTER_PK, COUNTER_SK, LIST_PK,
};
use catalog_aws::dynamo::requests::{classify, query_partition, scan_all};
use catalog_search::index::TextDoc;
use chrono::Utc;

use crate::error::WriteError;
use crate::summary::{StoredSummary, BUDGET_BYTES};
use crate::tx::list_mark_key;
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;

use super::{facets_of_item, with_seq, Rewrite};

impl DynamoWriter {
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
