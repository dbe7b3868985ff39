//! Taking data down: unpublishing a dataset (and restoring it), deleting one, deleting a
//! version.
//!
//! A dataset leaves the catalog in one transaction: its item (and alias) is marked unpublished,
//! or deleted, and its catalog list entry is marked `withdrawn`, under the conditions that
//! nothing changed it since it was read and that no renumbering holds the list. From that
//! moment every route answers 410 (unpublished) or 404 (deleted). Then `reindex` puts the
//! lists in order, under the catalog list's mark: the catalog list is renumbered (the entries
//! after it move down by one, so positions stay 1..=total), and the facet lists follow, written
//! only where they differ. It repairs whatever an interrupted run left, so running the command
//! again, or `reindex`, completes it.
//!
//! Restoring lists the dataset again as a first activation does: at the end of the catalog
//! and of its facet lists. Deleting a version ([`version`]) withdraws its record in a
//! transaction that checks it is not the active one, then deletes its manifest items; the
//! caller then deletes every object under its prefix (never the other way round, so no record
//! points at a missing object).

use std::collections::BTreeSet;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog::input::Slug;
use catalog_aws::dynamo::attr::{get_s, get_uuid, n, s, time};
use catalog_aws::dynamo::layout::name::{
    ACTIVE, ID, PK, REBUILD_UNTIL, REV, S3_KEY, SEQ, SK, SLUG, TOTAL, UNPUBLISHED_AT, UPDATED_AT,
    WITHDRAWN,
};
use catalog_aws::dynamo::layout::{
    alias_pk, counter_key, dataset_pk, key_of, list_sk, position_of, Item, COUNTER_PK, DATASET_SK,
    LIST_PK,
};
use catalog_aws::dynamo::requests::{classify, query_all, query_partition};
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::facets::Reindexed;
use crate::patience::Patience;
use crate::publish::StoredDataset;
use crate::tx::Expected;
use crate::tx::{
    delete_request, is_condition_failure, list_mark_key, put_request, Condition, Write,
};
use crate::writer::DynamoWriter;

mod version;

pub use version::{version_prefix, WithdrawnVersion};

/// How a dataset leaves the catalog.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leaving {
    /// Hidden, versions kept: its item stays, marked.
    Unpublish,
    /// Its item and alias are deleted (its versions next).
    Delete,
}

/// The writes of the transaction that takes a dataset out of the catalog, decided without I/O.
pub(crate) fn leaving_writes(
    slug: &Slug,
    stored: &StoredDataset,
    how: Leaving,
    now: DateTime<Utc>,
) -> Vec<Write> {
    let guard = Condition::Dataset(stored.guard(Some(Expected::from(stored.current))));
    let dataset = key_of(dataset_pk(slug.as_str()), DATASET_SK);
    let alias = key_of(alias_pk(&stored.id), DATASET_SK);
    let mut writes = match how {
        Leaving::Unpublish => {
            let set = vec![
                (UNPUBLISHED_AT, time(&now)),
                (UPDATED_AT, time(&now)),
                (SEQ, AttributeValue::Null(true)),
                (REV, n(stored.rev + 1)),
            ];
            vec![
                Write::Set {
                    key: dataset,
                    set: set.clone(),
                    condition: guard,
                },
                Write::Set {
                    key: alias,
                    set,
                    condition: Condition::Exists,
                },
            ]
        }
        Leaving::Delete => vec![
            Write::Delete {
                key: dataset,
                condition: guard,
            },
            Write::Delete {
                key: alias,
                condition: Condition::Exists,
            },
        ],
    };
    if let Some(seq) = stored.seq {
        writes.push(Write::Set {
            key: key_of(LIST_PK, &list_sk(seq)),
            set: vec![(WITHDRAWN, AttributeValue::Bool(true))],
            condition: Condition::Holds(slug.clone()),
        });
        writes.push(Write::ListUnmarked);
    }
    writes
}

/// What deleting a dataset removed.
#[derive(Debug, Clone, PartialEq)]
pub struct Deleted {
    /// The S3 keys of the versions whose records were deleted (the caller deletes the objects,
    /// and should also sweep the dataset's prefix, `datasets/<slug>/`).
    pub objects: Vec<String>,
    /// What putting the lists in order did.
    pub lists: Reindexed,
}

impl DynamoWriter {
    /// Hides a dataset from every route and protocol (410 `unpublished`) and takes it out of
    /// the catalog and facet lists, keeping its item and versions so that [`Self::restore`]
    /// brings it back. Already unpublished: only puts the lists in order (completing an
    /// interrupted run).
    pub async fn unpublish(
        &self,
        slug: &Slug,
        now: DateTime<Utc>,
    ) -> Result<Reindexed, WriteError> {
        self.leave(slug, Leaving::Unpublish, now).await?;
        self.reindex().await.map_err(committed)
    }

    /// Lists an unpublished dataset again, with its active version, as a first activation
    /// lists a new one: at the end of the catalog (newest) and of its facet lists.
    pub async fn restore(&self, slug: &Slug, now: DateTime<Utc>) -> Result<(), WriteError> {
        let stored = self.stored_dataset(slug).await?;
        if !stored.unpublished {
            return Err(WriteError::Invalid(format!(
                "dataset '{slug}' is not unpublished"
            )));
        }
        match stored.current {
            Some(version) => {
                self.activate_as(slug, version, Expected::Version(version), None, true, now)
                    .await
            }
            // Never activated: nothing to list, only the mark to lift.
            None => {
                let set = vec![
                    (UNPUBLISHED_AT, AttributeValue::Null(true)),
                    (UPDATED_AT, time(&now)),
                    (REV, n(stored.rev + 1)),
                ];
                let writes = [
                    Write::Set {
                        key: key_of(dataset_pk(slug.as_str()), DATASET_SK),
                        set: set.clone(),
                        condition: Condition::Dataset(stored.guard(Some(Expected::Nothing))),
                    },
                    Write::Set {
                        key: key_of(alias_pk(&stored.id), DATASET_SK),
                        set,
                        condition: Condition::Exists,
                    },
                ];
                self.transact(slug, &writes, &[], now).await
            }
        }
    }

    /// Deletes a dataset: its item and alias, its list entries (the lists renumbered), then
    /// every version's record. Returns the versions' S3 keys, for the caller to delete the
    /// objects. A dataset whose item is already gone (an interrupted delete) has its remaining
    /// version records deleted.
    pub async fn delete_dataset(
        &self,
        slug: &Slug,
        now: DateTime<Utc>,
    ) -> Result<Deleted, WriteError> {
        let existed = match self.leave(slug, Leaving::Delete, now).await {
            Ok(()) => true,
            Err(WriteError::NoSuchDataset(_)) => false,
            Err(e) => return Err(e),
        };
        // From here on the dataset is gone from every route: what fails leaves work that
        // running the delete again finishes (it handles an item already gone).
        let unfinished = |e: WriteError| WriteError::DeleteUnfinished {
            slug: slug.to_string(),
            reason: e.to_string(),
        };
        let lists = self.reindex().await.map_err(unfinished)?;
        // Every item of the partition (versions, withdrawn marks, manifest parts), its keys and
        // a version's object only: a manifest part holds up to 350 KB that nothing here reads.
        let versions = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression("#pk = :pk")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#sk", SK)
                .expression_attribute_names("#active", ACTIVE)
                .expression_attribute_names("#key", S3_KEY)
                .expression_attribute_values(":pk", s(dataset_pk(slug.as_str())))
                .projection_expression("#pk, #sk, #active.#key")
                .consistent_read(true),
        )
        .await
        .map_err(|e| unfinished(e.into()))?;
        if !existed && versions.is_empty() {
            return Err(WriteError::NoSuchDataset(slug.to_string()));
        }
        let mut objects = Vec::new();
        let mut requests = Vec::new();
        for item in &versions {
            if let Some(AttributeValue::M(version)) = item.get(ACTIVE) {
                if let Ok(key) = get_s(version, S3_KEY) {
                    objects.push(key);
                }
            }
            requests.push(delete_request(key_of(get_s(item, PK)?, &get_s(item, SK)?))?);
        }
        self.batch_write(requests)
            .await
            .map_err(|e| unfinished(e.into()))?;
        Ok(Deleted { objects, lists })
    }

    /// The transaction that takes `slug` out of the catalog, retried (with what it reads)
    /// when another write changed the dataset first or a renumbering holds the list. An
    /// unpublish of a dataset already unpublished changes nothing.
    async fn leave(&self, slug: &Slug, how: Leaving, now: DateTime<Utc>) -> Result<(), WriteError> {
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let stored = self.stored_dataset(slug).await?;
            if how == Leaving::Unpublish && stored.unpublished {
                return Ok(());
            }
            let writes = leaving_writes(slug, &stored, how, now);
            match self.transact(slug, &writes, &[], now).await {
                Err(e @ (WriteError::Conflict(_) | WriteError::Contended { .. })) => {
                    patience.wait(e).await?
                }
                other => return other,
            }
        }
    }

    /// Renumbers the catalog list 1..=n in publication order (the caller holds its mark, as
    /// `reindex` does): entries marked
    /// `withdrawn`, and second copies of a dataset (an interrupted renumbering), leave; the
    /// entries after them move down, each dataset's item and alias learning its new `seq`
    /// first (so that a run interrupted between the two is completed by the next). Then the
    /// counter's `total`, and the mark lifted. Returns how many entries moved or left.
    pub(crate) async fn renumber_held(&self) -> Result<usize, WriteError> {
        let entries = query_partition(&self.client, &self.datasets_table, LIST_PK).await?;
        let mut seen = BTreeSet::new();
        let mut kept = Vec::new();
        let mut occupied = BTreeSet::new();
        for entry in entries {
            let position = position_of(&entry)?;
            occupied.insert(position);
            let withdrawn = matches!(entry.get(WITHDRAWN), Some(AttributeValue::Bool(true)));
            if withdrawn || !seen.insert(get_s(&entry, SLUG)?) {
                continue;
            }
            kept.push((position, entry));
        }
        let mut requests = Vec::new();
        let mut moved = 0;
        for (i, (position, entry)) in kept.iter().enumerate() {
            let want = i as u64 + 1;
            if *position == want {
                continue;
            }
            moved += 1;
            self.set_seq(entry, want).await?;
            let mut item = entry.clone();
            item.insert(SK.to_owned(), s(list_sk(want)));
            requests.push(put_request(item)?);
        }
        let total = kept.len() as u64;
        let past: Vec<u64> = occupied.into_iter().filter(|p| *p > total).collect();
        for position in &past {
            requests.push(delete_request(key_of(LIST_PK, &list_sk(*position)))?);
        }
        let changed = moved + past.len();
        self.batch_write(requests).await?;
        if changed > 0 {
            self.client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(counter_key(COUNTER_PK)))
                .update_expression("SET #total = :total, #rev = if_not_exists(#rev, :zero) + :one")
                .expression_attribute_names("#total", TOTAL)
                .expression_attribute_names("#rev", REV)
                .expression_attribute_values(":total", n(total))
                .expression_attribute_values(":zero", n(0))
                .expression_attribute_values(":one", n(1))
                .send()
                .await
                .map_err(classify)?;
        }
        Ok(changed)
    }

    /// Lifts the catalog list's mark.
    pub(crate) async fn lift_list_mark(&self) -> Result<(), WriteError> {
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(list_mark_key()))
            .update_expression("REMOVE #mark, #owner")
            .expression_attribute_names("#mark", REBUILD_UNTIL)
            .expression_attribute_names("#owner", crate::facets::MARK_OWNER)
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// A listed dataset's new position, on its item and alias (each bumping its revision, so
    /// that a write planned on the old position starts again). An entry whose dataset item is
    /// gone is left to the renumbering alone.
    async fn set_seq(&self, entry: &Item, seq: u64) -> Result<(), WriteError> {
        let slug = get_s(entry, SLUG)?;
        let id = get_uuid(entry, ID)?;
        for pk in [dataset_pk(&slug), alias_pk(&id)] {
            let sent = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key_of(pk, DATASET_SK)))
                .update_expression("SET #seq = :seq, #rev = if_not_exists(#rev, :zero) + :one")
                .condition_expression(format!("attribute_exists({PK})"))
                .expression_attribute_names("#seq", SEQ)
                .expression_attribute_names("#rev", REV)
                .expression_attribute_values(":seq", n(seq))
                .expression_attribute_values(":zero", n(0))
                .expression_attribute_values(":one", n(1))
                .send()
                .await;
            match sent {
                Ok(_) => {}
                Err(e) if is_condition_failure(e.code()) => {}
                Err(e) => return Err(classify(e).into()),
            }
        }
        Ok(())
    }
}

/// An error after the dataset left the catalog (served as gone already): the lists lag until
/// `reindex` (or the same command again) completes them.
pub(crate) fn committed(e: WriteError) -> WriteError {
    match e {
        WriteError::FacetLists(_) => e,
        e => WriteError::FacetLists(format!("the catalog list ({e})")),
    }
}
