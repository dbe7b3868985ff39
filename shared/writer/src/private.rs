//! Private datasets (docs/organisations.md): an organisation's dataset at the level `private`
//! is in no public list. Its dataset item and alias are written as any dataset's (members read
//! it by its slug), but it has no catalog list entry, no facet list entries, no place in the
//! facet counts and summary, the text index or the kept orders.
//!
//! - A first activation of a private dataset writes its item and alias only; later
//!   activations of it do not list it either ([`crate::activate::Activation`]).
//! - A listed dataset made private (by `set_access`, or by an activation whose metadata makes
//!   it private) leaves the lists as an unpublished one does: one transaction marks its catalog
//!   entry `withdrawn` and clears its `seq`, then `reindex` renumbers the catalog list and
//!   rebuilds the facet lists, the summary, the text index and the kept orders from it. It is
//!   not marked unpublished: it keeps being served (to its members). Running the same command
//!   again, or `reindex`, completes an interrupted run.
//! - A private dataset made `registered` or `approval` is listed again as `datasets restore`
//!   lists one: its level is changed first (unlisted), then its active version is activated
//!   again, which lists it at the end of the catalog and of its facet lists. An interrupted run
//!   leaves it at its new level, unlisted, and the same command again lists it.
//!
//! A publish that leaves the access as it found it keeps the level stored when it activates
//! ([`keeping_access`]): an `access level` change made while it uploaded stands.
//!
//! Refused, naming the rule: `private` on a catalog dataset (a slug without `org~`: no
//! organisation has members who could read it), and a keyless window on a private dataset
//! (opening one, or making private a dataset whose window is open).

use catalog::input::Slug;
use catalog::policy::{is_keyless, AccessLevel, ApprovalPolicy};
use catalog::records::DatasetMeta;
use chrono::{DateTime, Utc};

use crate::change::Change;
use crate::error::WriteError;
use crate::patience::Patience;
use crate::publish::StoredDataset;
use crate::takedown::committed;
use crate::tx::{Condition, Expected, Write};
use crate::writer::DynamoWriter;

/// Refuses `level` for `slug` when it is `private` and `slug` names a catalog dataset.
pub fn check_level(slug: &Slug, level: AccessLevel) -> Result<(), WriteError> {
    if level == AccessLevel::Private && slug.org().is_none() {
        return Err(WriteError::Invalid(format!(
            "dataset '{slug}' cannot be private: only an organisation's dataset (a slug \
             'org~name') may be, since a catalog dataset has no members who could read it"
        )));
    }
    Ok(())
}

/// Refuses a private dataset with a keyless window open at `now`: private datasets take none
/// (a window would let anyone read what only members may).
pub fn check_keyless(
    slug: &Slug,
    level: AccessLevel,
    keyless_until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), WriteError> {
    match keyless_until {
        Some(until) if level == AccessLevel::Private && is_keyless(keyless_until, now) => {
            Err(WriteError::Invalid(format!(
                "dataset '{slug}' cannot be private with a keyless window open (until {}): a \
                 private dataset takes no keyless window; close it first (catalog-admin \
                 keyless clear {slug})",
                until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )))
        }
        _ => Ok(()),
    }
}

/// Refuses opening a keyless window on a private dataset.
pub(crate) fn check_window(
    slug: &Slug,
    stored: &StoredDataset,
    until: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Result<(), WriteError> {
    if stored.meta.card.access_level == AccessLevel::Private && is_keyless(until, now) {
        return Err(WriteError::Invalid(format!(
            "dataset '{slug}' is private: a private dataset takes no keyless window (it would \
             let anyone read what only its organisation's members may)"
        )));
    }
    Ok(())
}

/// What `set_access` does to a dataset as read, decided without I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Move {
    /// The level (and policy) change on the dataset where it is: its item, alias and, when
    /// listed, its list entries.
    InPlace,
    /// A listed dataset made private: it leaves the lists, then `reindex`.
    Leave,
    /// A private dataset, unpublished or never activated, that stays unlisted: item and alias,
    /// then `reindex` (which completes an earlier run interrupted after it left).
    StayUnlisted,
    /// A dataset that should be listed and is not (made public from private, or an earlier
    /// such run interrupted between its two steps): its level first if it changes, then its
    /// active version activated again, which lists it.
    List,
}

impl Move {
    pub(crate) fn of(stored: &StoredDataset, level: AccessLevel) -> Self {
        let private = level == AccessLevel::Private;
        match (stored.seq, private) {
            (Some(_), true) => Self::Leave,
            (None, true) => Self::StayUnlisted,
            (None, false) if stored.current.is_some() && !stored.unpublished => Self::List,
            _ => Self::InPlace,
        }
    }
}

/// The writes of the transaction that takes a listed dataset out of the lists as it becomes
/// private (as [`crate::takedown::leaving_writes`] for an unpublish, without `unpublished_at`:
/// it keeps being served): its item and alias get the new level and policy and lose their
/// `seq`, its catalog entry is marked `withdrawn`; conditioned on the dataset as read (its
/// active version and revision) and on no renumbering holding the list.
pub(crate) fn leaving_writes(
    slug: &Slug,
    stored: &StoredDataset,
    change: &Change,
    now: DateTime<Utc>,
) -> Vec<Write> {
    use aws_sdk_dynamodb::types::AttributeValue;
    use catalog_aws::dynamo::attr::n;
    use catalog_aws::dynamo::layout::name::{REV, SEQ, WITHDRAWN};
    use catalog_aws::dynamo::layout::{alias_pk, dataset_pk, key_of, list_sk, DATASET_SK, LIST_PK};

    let (mut set, _) = change.attributes(now);
    set.push((SEQ, AttributeValue::Null(true)));
    set.push((REV, n(stored.rev + 1)));
    let mut writes = vec![
        Write::Set {
            key: key_of(dataset_pk(slug.as_str()), DATASET_SK),
            set: set.clone(),
            condition: Condition::Dataset(stored.guard(Some(Expected::from(stored.current)))),
        },
        Write::Set {
            key: key_of(alias_pk(&stored.id), DATASET_SK),
            set,
            condition: Condition::Exists,
        },
    ];
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

/// The metadata a publish activates with: `meta`, unless the publish left the access as it was
/// at its reservation (`reserved`) and an `access level` change has landed since (`now`, read
/// just before the activation): then the level and policy stored now, so that a long upload
/// does not undo it (a dataset made private meanwhile would be listed again).
pub(crate) fn keeping_access(
    meta: &DatasetMeta,
    reserved: &DatasetMeta,
    now: Option<&DatasetMeta>,
) -> DatasetMeta {
    let mut kept = meta.clone();
    let untouched =
        meta.card.access_level == reserved.card.access_level && meta.access == reserved.access;
    if let Some(now) = now.filter(|_| untouched) {
        kept.card.access_level = now.card.access_level;
        kept.access = now.access.clone();
    }
    kept
}

impl DynamoWriter {
    /// The metadata a publish reserved with `reserved` activates with: [`keeping_access`].
    pub(crate) async fn publish_meta(
        &self,
        slug: &Slug,
        meta: &DatasetMeta,
        reserved: &DatasetMeta,
    ) -> Result<DatasetMeta, WriteError> {
        let now = self.dataset_meta(slug).await?;
        Ok(keeping_access(meta, reserved, now.as_ref()))
    }

    /// `set_access`: see the module's documentation. `policy` is checked by the caller.
    pub(crate) async fn set_level(
        &self,
        slug: &Slug,
        level: AccessLevel,
        policy: &ApprovalPolicy,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        check_level(slug, level)?;
        let change = Change::Access(level, policy.clone());
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let stored = self.stored_dataset(slug).await?;
            check_keyless(slug, level, stored.keyless_until, now)?;
            let result = match Move::of(&stored, level) {
                Move::InPlace => return self.change(slug, &change, now).await,
                Move::StayUnlisted => {
                    self.change(slug, &change, now).await?;
                    if stored.current.is_none() {
                        // Never activated, so never listed: no list to put in order.
                        return Ok(());
                    }
                    // An earlier run interrupted after it left the catalog list is completed.
                    return self.reindex().await.map(|_| ()).map_err(committed);
                }
                Move::Leave => {
                    let writes = leaving_writes(slug, &stored, &change, now);
                    match self.transact(slug, &writes, &[], now).await {
                        Ok(()) => return self.reindex().await.map(|_| ()).map_err(committed),
                        Err(e) => Err(e),
                    }
                }
                Move::List => self.list_again(slug, &stored, &change, now).await,
            };
            match result {
                // Another write changed the dataset first, or a renumbering holds the list:
                // read it again and decide again.
                Err(e @ (WriteError::Conflict(_) | WriteError::Contended { .. })) => {
                    patience.wait(e).await?
                }
                other => return other,
            }
        }
    }

    /// Lists a dataset that has an active version and is neither unpublished nor private
    /// (after `change`, if it does not show it yet), as `datasets restore` does: its active
    /// version activated again, at the end of the catalog and of its facet lists.
    async fn list_again(
        &self,
        slug: &Slug,
        stored: &StoredDataset,
        change: &Change,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        if !change.shown_by(stored) {
            self.change(slug, change, now).await?;
        }
        let Some(version) = stored.current else {
            return Ok(());
        };
        // Conditioned on that version still being active: a publish that activated another
        // one meanwhile listed it already (a `Conflict` here reads the dataset again).
        self.activate_as(slug, version, Expected::Version(version), None, false, now)
            .await
    }
}

#[cfg(test)]
mod tests;
