//! Activation: making a stored version the one the data endpoint serves.
//!
//! Three steps: [`DynamoWriter::activate`] reads what is stored (the dataset, the version, and
//! the list positions or counters the plan will need), [`Activation::plan`] decides every write
//! without any I/O, and the executor sends them as one transaction, then rewrites the facet
//! lists whose positions shift.

mod plan;

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{CancellationReason, TransactWriteItem};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::records::{ActiveVersion, DatasetMeta};
use catalog_aws::dynamo::attr::{get_u64, s};
use catalog_aws::dynamo::codec::{schema_from, SummaryChange};
use catalog_aws::dynamo::layout::name::TOTAL;
use catalog_aws::dynamo::layout::{
    counter_key, dataset_pk, facet_counter_pk, facet_summary_key, key_of, version_sk, COUNTER_PK,
};
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::patience::Patience;
use crate::publish::ACTIVATED_BY;
use crate::summary::StoredSummary;
use crate::tx::Expected;
use crate::tx::{settle, summary_update, Condition, Write};
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;

pub(crate) use plan::{Activation, Lists};

impl DynamoWriter {
    /// Makes `version` the active one, in one transaction over the dataset item, its alias, its
    /// list entry (created on first activation, with the catalog counter) and, if given, new
    /// descriptive metadata. Fails with `Conflict`, changing nothing, unless `expected` is still
    /// what is active. A first activation that lost only the race for the next list position
    /// (another dataset listed at the same moment) is retried.
    pub async fn activate(
        &self,
        slug: &Slug,
        version: u64,
        expected: Expected,
        meta: Option<&DatasetMeta>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        self.activate_as(slug, version, expected, meta, false, now)
            .await
    }

    /// [`Self::activate`], or, `restoring`, the listing again of an unpublished dataset's
    /// active version (as a first activation: at the end of the catalog and its facet lists).
    pub(crate) async fn activate_as(
        &self,
        slug: &Slug,
        version: u64,
        expected: Expected,
        meta: Option<&DatasetMeta>,
        restoring: bool,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut patience = Patience::new(self.shared_wait);
        loop {
            match self
                .activate_once(slug, version, expected, meta, restoring, now)
                .await
            {
                // Worth another try only while the expected version is still active.
                Err(WriteError::Conflict(_)) => {
                    let stored = self.stored_dataset(slug).await?;
                    if Expected::from(stored.current) != expected {
                        return Err(WriteError::Conflict(slug.to_string()));
                    }
                    patience
                        .wait(WriteError::Conflict(slug.to_string()))
                        .await?;
                }
                Err(e) => patience.wait(e).await?,
                Ok(()) => return Ok(()),
            }
        }
    }

    async fn activate_once(
        &self,
        slug: &Slug,
        version: u64,
        expected: Expected,
        meta: Option<&DatasetMeta>,
        restoring: bool,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let stored = self.stored_dataset(slug).await?;
        if stored.unpublished != restoring {
            return Err(match restoring {
                false => WriteError::Unpublished(slug.to_string()),
                true => WriteError::Invalid(format!("dataset '{slug}' is not unpublished")),
            });
        }
        if Expected::from(stored.current) != expected {
            return Err(WriteError::Conflict(slug.to_string()));
        }
        let version_item = self
            .get(key_of(dataset_pk(slug.as_str()), &version_sk(version)))
            .await?
            .ok_or_else(|| WriteError::NoSuchVersion(slug.to_string(), version))?;
        // A version item without its `active` map is a deleted version's withdrawn mark.
        let active = ActiveVersion::from_item(&version_item)?
            .ok_or_else(|| WriteError::NoSuchVersion(slug.to_string(), version))?;
        let schema = schema_from(&version_item)?;
        let activation = Activation {
            slug,
            stored: &stored,
            version: &active,
            schema: schema.get(),
            meta,
            restoring,
            now,
        };
        activation.check()?;
        let (private, leaves) = (activation.is_private(), activation.leaves_lists());
        let mut lists = Lists::default();
        for facet in activation.to_locate() {
            if let Some(pos) = self.facet_position(&facet, slug.as_str()).await? {
                lists.positions.insert(facet, pos);
            }
        }
        let to_count = activation.to_count();
        if stored.seq.is_none() && !private {
            lists.listed = self.counter_total(COUNTER_PK.to_owned()).await?;
            for facet in to_count {
                let total = self.counter_total(facet_counter_pk(&facet)).await?;
                lists.facet_totals.insert(facet, total);
            }
        }
        if !private {
            lists.summary = StoredSummary::new(self.get(facet_summary_key()).await?);
        }
        let mut plan = activation.plan(&lists);
        // The dataset item names this attempt, so that an attempt whose answer was lost can
        // tell its own write from another's.
        let attempt = crate::tx::token();
        for write in &mut plan.writes {
            if let Write::Set {
                condition: Condition::Dataset(_),
                set,
                ..
            } = write
            {
                set.push((ACTIVATED_BY, s(&attempt)));
            }
        }
        match self.transact(slug, &plan.writes, &plan.summary, now).await {
            Ok(()) => {}
            // A retry of a transaction whose answer was lost meets its own write.
            Err(WriteError::Conflict(_))
                if self
                    .stored_dataset(slug)
                    .await?
                    .shows_activation(version, &attempt) =>
            {
                tracing::info!(%slug, version, "the activation was committed by an earlier try");
            }
            Err(e) => return Err(e),
        }
        if leaves {
            // Out of the catalog list: the lists renumbered and rebuilt without it.
            return self
                .reindex()
                .await
                .map(|_| ())
                .map_err(crate::takedown::committed);
        }
        if private {
            // In no list: nothing follows.
            return Ok(());
        }
        let text = plan.terms_changed.then_some(slug);
        self.apply(plan.rewrites, text, slug, now).await
    }

    /// A counter's `total` (0 when it does not exist yet).
    async fn counter_total(&self, pk: String) -> Result<u64, StoreError> {
        match self.get(counter_key(pk)).await? {
            Some(item) => get_u64(&item, TOTAL),
            None => Ok(0),
        }
    }

    /// Sends `writes`, and the facet summary's `summary` changes if any, as one transaction,
    /// with a token of its own (an SDK retry of a transaction that was committed but whose
    /// answer was lost is then answered as the first was, not refused). A failed condition on
    /// the dataset's own item is a `Conflict`; on an item every writer shares, `Contended`.
    pub(crate) async fn transact(
        &self,
        slug: &Slug,
        writes: &[Write],
        summary: &[SummaryChange],
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut tx = self
            .client
            .transact_write_items()
            .client_request_token(crate::tx::token());
        // A list's mark is compared with the time of sending, not the operation's start: a mark
        // set (and left by a writer that died) after this operation began lapses for it too.
        let checked = Utc::now().max(now);
        for write in writes {
            tx = tx.transact_items(write.to_transact_item(&self.datasets_table, checked)?);
        }
        if !summary.is_empty() {
            let update = summary_update(&self.datasets_table, summary)?;
            tx = tx.transact_items(TransactWriteItem::builder().update(update).build());
        }
        let result = tx.send().await;
        if let Err(e) = &result {
            if let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
                e.as_service_error()
            {
                let reasons = cancelled.cancellation_reasons();
                if let Some(refused) = refused(reasons) {
                    return Err(refused);
                }
                let codes: Vec<Option<&str>> = reasons.iter().map(|r| r.code()).collect();
                if let Some(lost) = crate::tx::cancelled(slug, writes, &codes) {
                    return Err(lost);
                }
            }
        }
        settle(result, slug)
    }
}

/// A cancelled transaction that no retry can mend: DynamoDB refused one of its writes itself
/// (an item over 400 KB, say, which `check_fits` cannot see on a rollback to an older, wider
/// version). A failed condition or a conflict with another transaction is not that: it is a
/// race, reported as `Conflict` and retried.
fn refused(reasons: &[CancellationReason]) -> Option<WriteError> {
    reasons
        .iter()
        .find(|r| r.code() == Some("ValidationError"))
        .map(|r| {
            WriteError::TooLarge(format!(
                "DynamoDB refused the change: {}",
                r.message().unwrap_or("an item is invalid or over 400 KB")
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_write_is_reported_as_such_and_a_race_is_not() {
        let reason = |code: &str, message: Option<&str>| {
            CancellationReason::builder()
                .code(code)
                .set_message(message.map(str::to_owned))
                .build()
        };
        let none = reason("None", None);
        let race = [none.clone(), reason("ConditionalCheckFailed", None)];
        assert!(refused(&race).is_none());
        assert!(refused(&[reason("TransactionConflict", None)]).is_none());
        let too_big = [
            none,
            reason(
                "ValidationError",
                Some("Item size has exceeded the maximum allowed size"),
            ),
        ];
        match refused(&too_big) {
            Some(WriteError::TooLarge(why)) => assert!(why.contains("maximum allowed size")),
            other => panic!("{other:?}"),
        }
    }
}
