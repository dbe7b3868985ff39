//! Facet lists (one per category, tag and license value): the rewrites that move a dataset
//! into or out of a list, under the list's mark, and `reindex`, which rebuilds them all from
//! the catalog list.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{AttributeValue, DeleteRequest, PutRequest, WriteRequest};
use catalog::dynamo::attr::{get_s, get_strings, get_u64, n, s, time};
use catalog::dynamo::layout::name::{
    CATEGORY, FACETS_INDEXED, LICENSE, PK, REBUILD_UNTIL, REV, SEQ, SK, SLUG, TAGS, TOTAL,
};
use catalog::dynamo::layout::{
    counter_key, facet_counter_pk, facet_list_pk, key_of, list_sk, position_of, Item, COUNTER_PK,
    COUNTER_SK, LIST_PK,
};
use catalog::dynamo::requests::{classify, query_all, query_partition, scan_all};
use catalog::dynamo::retry::{Attempt, Backoff};
use catalog::error::StoreError;
use catalog::query::Facet;
use chrono::{DateTime, Utc};

use crate::tx::{is_condition_failure, other, UNMARKED};
use crate::{DynamoWriter, WriteError};

/// How long a facet list rewrite may hold its list before another writer may take over.
const MARK_SECONDS: i64 = 600;

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
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        // Every list is attempted; the change itself is already committed, so a failure here
        // must not read as "nothing changed" (a blind retry would skip the lists it missed).
        let mut failed = Vec::new();
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
        self.mark_facet(facet, now).await?;
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
        self.write_facet(facet, &existing, members, Rewrite::Moved(refresh))
            .await?;
        Ok(())
    }

    /// Marks a facet list as being rewritten, for at most `MARK_SECONDS`: appends and
    /// in-place updates of its entries are refused (and retried by `activate`) until
    /// `write_facet` clears the mark. A second rewrite of the same list waits for it, up to
    /// about a minute (`Backoff::LIST_MARK`): a rewrite holds a list for seconds at most.
    pub(crate) async fn mark_facet(
        &self,
        facet: &Facet,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        Backoff::LIST_MARK
            .run(
                (),
                |()| async {
                    let at = Utc::now().max(now);
                    let marked = self
                        .client
                        .update_item()
                        .table_name(&self.datasets_table)
                        .set_key(Some(counter_key(facet_counter_pk(facet))))
                        .update_expression("SET #mark = :until")
                        .condition_expression(UNMARKED)
                        .expression_attribute_names("#mark", REBUILD_UNTIL)
                        .expression_attribute_values(":now", time(&at))
                        .expression_attribute_values(
                            ":until",
                            time(&(at + chrono::Duration::seconds(MARK_SECONDS))),
                        )
                        .send()
                        .await;
                    match marked {
                        Ok(_) => Ok(Attempt::Done(())),
                        Err(e) if is_condition_failure(e.code()) => Ok(Attempt::Retry(())),
                        Err(e) => Err(WriteError::from(classify(e))),
                    }
                },
                |()| WriteError::Busy(facet.key()),
            )
            .await
    }

    /// Rewrites a facet list so that it holds exactly `members` at positions 1..=n in
    /// publication order: only positions whose dataset changes are written, positions past the
    /// end are deleted, then the counter is set.
    async fn write_facet(
        &self,
        facet: &Facet,
        existing: &[Item],
        mut members: Vec<Item>,
        rewrite: Rewrite,
    ) -> Result<usize, StoreError> {
        let seq_of = |item: &Item| get_u64(item, SEQ).unwrap_or(u64::MAX);
        members.sort_by_key(seq_of);
        // One entry per dataset, whatever a failed rewrite left behind.
        members.dedup_by_key(|m| seq_of(m));
        let list_pk = facet_list_pk(facet);
        // What sits at each position now (a list may have gaps or strays after a failure).
        let mut at: BTreeMap<u64, Option<AttributeValue>> = BTreeMap::new();
        for item in existing {
            if let Ok(pos) = position_of(item) {
                at.insert(pos, item.get(SLUG).cloned());
            }
        }
        let mut requests = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let current = at.get(&(i as u64 + 1)).cloned().flatten();
            let slug = member.get(SLUG).cloned();
            let write = match &rewrite {
                Rewrite::All => true,
                // Its summary may be newer than the copy in place.
                Rewrite::Moved(refresh) => current != slug || (slug.is_some() && *refresh == slug),
            };
            if write {
                let mut item = member.clone();
                item.insert(PK.to_owned(), s(&list_pk));
                item.insert(SK.to_owned(), s(list_sk(i as u64 + 1)));
                requests.push(
                    WriteRequest::builder()
                        .put_request(
                            PutRequest::builder()
                                .set_item(Some(item))
                                .build()
                                .map_err(other)?,
                        )
                        .build(),
                );
            }
        }
        for pos in at.keys().filter(|p| **p > members.len() as u64) {
            requests.push(
                WriteRequest::builder()
                    .delete_request(
                        DeleteRequest::builder()
                            .set_key(Some(key_of(list_pk.clone(), &list_sk(*pos))))
                            .build()
                            .map_err(other)?,
                    )
                    .build(),
            );
        }
        let written = requests.len();
        self.batch_write(requests).await?;
        // The new total, and the rebuild mark cleared, in one write.
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(counter_key(facet_counter_pk(facet))))
            .update_expression("SET #total = :total REMOVE #mark")
            .expression_attribute_names("#total", TOTAL)
            .expression_attribute_names("#mark", REBUILD_UNTIL)
            .expression_attribute_values(":total", n(members.len() as u64))
            .send()
            .await
            .map_err(classify)?;
        Ok(written)
    }

    /// Every request, 25 at a time, each batch's unprocessed items retried
    /// (`Backoff::BATCH_WRITE`).
    async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
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

    /// Rebuilds every facet list from the catalog list: after an upgrade from a version
    /// without facet lists, or to repair an interrupted rebuild. Returns how many facet lists
    /// there are and how many entries were written or deleted.
    pub async fn reindex(&self) -> Result<(usize, usize), WriteError> {
        let mut wanted: BTreeMap<Facet, Vec<Item>> = BTreeMap::new();
        let mut last_seen = 0;
        for entry in query_partition(&self.client, &self.datasets_table, LIST_PK).await? {
            let seq = position_of(&entry)?;
            last_seen = last_seen.max(seq);
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
        let mut written = 0;
        let facets = wanted.len();
        for (facet, mut members) in wanted {
            // Under the facet's mark, like any rebuild: appends wait, and a running rebuild
            // finishes first.
            self.mark_facet(&facet, Utc::now()).await?;
            let existing =
                query_partition(&self.client, &self.datasets_table, &facet_list_pk(&facet)).await?;
            // Datasets first listed after the catalog list was read are kept as their
            // activation wrote them.
            for item in &existing {
                if get_u64(item, SEQ).is_ok_and(|seq| seq > last_seen) {
                    members.push(item.clone());
                }
            }
            // Every entry is rewritten: its summary may be stale, not only its position.
            written += self
                .write_facet(&facet, &existing, members, Rewrite::All)
                .await?;
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
        Ok((facets, written))
    }
}

/// Which entries `write_facet` writes.
#[derive(Debug, Clone, PartialEq)]
enum Rewrite {
    /// Positions whose dataset changes, and the dataset with this slug wherever it lands (the
    /// others are up to date).
    Moved(Option<AttributeValue>),
    /// All of them.
    All,
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
