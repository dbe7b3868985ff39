//! Changes to a published dataset's answers without a new version: its keyless window, its
//! access level and its card (the card's own checks are in [`crate::readme`]). The dataset
//! item, its alias, its list entry and its facet list entries change together, in one
//! transaction (facet entries whose position moved are put back by a rewrite).

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::input::Slug;
use catalog::policy::{AccessLevel, ApprovalPolicy};
use catalog::query::Facet;
use catalog_aws::dynamo::attr::{n, opt_s, opt_time, s, time};
use catalog_aws::dynamo::layout::name::{
    ACCESS_LEVEL, ACCESS_POLICY, DOWNLOADS, KEYLESS_UNTIL, README, REV, UPDATED_AT,
};
use catalog_aws::dynamo::layout::{
    alias_pk, dataset_pk, facet_list_pk, key_of, list_sk, DATASET_SK, LIST_PK,
};
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::patience::Patience;
use crate::publish::StoredDataset;
use crate::tx::{Condition, Plan, Write};
use crate::writer::DynamoWriter;

type Attributes = Vec<(&'static str, AttributeValue)>;

/// What changes: attributes of the dataset item and its alias, and those of its list entries.
/// The dataset's answers change, so `updated_at` is set on all of them (the download count aside).
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// A keyless window opened until then, or closed (`None`).
    Keyless(Option<DateTime<Utc>>),
    /// Who may read the data, and an `approval` dataset's policy.
    Access(AccessLevel, ApprovalPolicy),
    /// The dataset's card (its Markdown README), or none: on the dataset item and its alias
    /// only, never on its list entries (which get the new `updated_at`).
    Readme(Option<String>),
    /// The downloads over the last 30 days (the daily count): not a change to the dataset's
    /// answers, so `updated_at` stays.
    Downloads(u64),
}

impl Change {
    /// Whether the stored dataset already holds this change.
    pub(crate) fn shown_by(&self, stored: &StoredDataset) -> bool {
        match self {
            Self::Keyless(until) => stored.keyless_until == *until,
            Self::Downloads(count) => stored.downloads == *count,
            Self::Access(level, policy) => {
                stored.meta.card.access_level == *level && stored.meta.access == *policy
            }
            Self::Readme(readme) => stored.meta.readme == *readme,
        }
    }

    /// The dataset item's (and alias's) new attributes, then its list entries'.
    pub(crate) fn attributes(&self, now: DateTime<Utc>) -> (Attributes, Attributes) {
        let updated = (UPDATED_AT, time(&now));
        match self {
            Self::Keyless(until) => {
                let set = vec![(KEYLESS_UNTIL, opt_time(until.as_ref())), updated];
                (set.clone(), set)
            }
            Self::Downloads(count) => {
                let set = vec![(DOWNLOADS, n(*count))];
                (set.clone(), set)
            }
            Self::Access(level, policy) => {
                let level = (ACCESS_LEVEL, s(level.as_str()));
                // Plain enums, strings and numbers always serialize.
                let policy = serde_json::to_string(policy).unwrap_or_else(|_| "{}".into());
                (
                    vec![level.clone(), (ACCESS_POLICY, s(policy)), updated.clone()],
                    vec![level, updated],
                )
            }
            Self::Readme(readme) => (
                vec![(README, opt_s(readme.as_deref())), updated.clone()],
                vec![updated],
            ),
        }
    }
}

/// A change to one stored dataset, at `now`.
#[derive(Debug, Clone)]
pub(crate) struct Changing<'a> {
    pub slug: &'a Slug,
    pub stored: &'a StoredDataset,
    pub change: &'a Change,
    pub now: DateTime<Utc>,
}

impl Changing<'_> {
    /// Facets whose list position the plan needs: all of a listed dataset's.
    pub fn to_locate(&self) -> Vec<Facet> {
        match self.stored.seq {
            Some(_) => self.stored.meta.card.facets(),
            None => Vec::new(),
        }
    }

    /// Every write, decided without I/O. A dataset missing from a facet list it belongs in is
    /// put back by a rewrite (with the change).
    pub fn plan(&self, positions: &HashMap<Facet, u64>) -> Plan {
        let (mut set, entry) = self.change.attributes(self.now);
        set.push((REV, n(self.stored.rev + 1)));
        // Conditioned on the dataset as read: a first activation (which lists it, copying the
        // attributes) or another change in between makes this one start again.
        let mut writes = vec![
            Write::Set {
                key: key_of(dataset_pk(self.slug.as_str()), DATASET_SK),
                set: set.clone(),
                condition: Condition::Dataset(self.stored.guard(None)),
            },
            Write::Set {
                key: key_of(alias_pk(&self.stored.id), DATASET_SK),
                set: set.clone(),
                condition: Condition::Exists,
            },
        ];
        let mut rewrites = Vec::new();
        if let Some(seq) = self.stored.seq {
            writes.push(Write::Set {
                key: key_of(LIST_PK, &list_sk(seq)),
                set: entry.clone(),
                condition: Condition::Holds(self.slug.clone()),
            });
            writes.push(Write::ListUnmarked);
            for facet in self.to_locate() {
                match positions.get(&facet) {
                    Some(pos) => {
                        writes.push(Write::Set {
                            key: key_of(facet_list_pk(&facet), &list_sk(*pos)),
                            set: entry.clone(),
                            condition: Condition::Holds(self.slug.clone()),
                        });
                        writes.push(Write::FacetUnmarked(facet));
                    }
                    None => rewrites.push((facet, seq)),
                }
            }
        }
        // Neither the facets nor their forms change: the summary follows the rewrites alone.
        Plan {
            writes,
            summary: Vec::new(),
            rewrites,
            // Access levels and keyless windows are neither searched nor filtered on.
            terms_changed: false,
        }
    }
}

impl DynamoWriter {
    /// Opens a keyless window until `until`, or closes it (`None`).
    pub async fn set_keyless(
        &self,
        slug: &Slug,
        until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        self.change(slug, &Change::Keyless(until), now).await
    }

    /// Sets the dataset's 30-day downloads (the daily count), on its item, alias and entries.
    pub async fn set_downloads(
        &self,
        slug: &Slug,
        count: u64,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        self.change(slug, &Change::Downloads(count), now).await
    }

    /// Sets who may read the dataset's data (and an `approval` dataset's policy); the next
    /// data request follows it. A listed dataset made `private` leaves every list, and a
    /// private one made `registered` or `approval` is listed again ([`crate::private`]);
    /// `private` is refused on a catalog dataset and while a keyless window is open.
    pub async fn set_access(
        &self,
        slug: &Slug,
        level: AccessLevel,
        policy: &ApprovalPolicy,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        policy.check().map_err(WriteError::Invalid)?;
        self.set_level(slug, level, policy, now).await
    }

    /// Applies `change`. Tried again, with backoff, when a concurrent write changed the
    /// dataset first or moved an entry, or while another writer holds a facet list
    /// ([`crate::patience`]). Before a loss is reported, the dataset is read again: a change
    /// that it already shows (an earlier try committed it, its answer lost) is a success.
    pub(crate) async fn change(
        &self,
        slug: &Slug,
        change: &Change,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let lost = match self.change_once(slug, change, now).await {
                Err(e @ (WriteError::Conflict(_) | WriteError::Contended { .. })) => e,
                other => return other,
            };
            if let Err(report) = patience.wait(lost).await {
                let stored = self.stored_dataset(slug).await?;
                if change.shown_by(&stored) {
                    // An earlier try committed it: what follows a change still follows.
                    return self.apply(Vec::new(), None, slug, now).await;
                }
                return Err(report);
            }
        }
    }

    async fn change_once(
        &self,
        slug: &Slug,
        change: &Change,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let stored = self.stored_dataset(slug).await?;
        if let Change::Keyless(until) = change {
            crate::private::check_window(slug, &stored, *until, now)?;
        }
        let change = Changing {
            slug,
            stored: &stored,
            change,
            now,
        };
        let mut positions = HashMap::new();
        for facet in change.to_locate() {
            if let Some(pos) = self.facet_position(&facet, slug.as_str()).await? {
                positions.insert(facet, pos);
            }
        }
        let plan = change.plan(&positions);
        self.transact(slug, &plan.writes, &plan.summary, now)
            .await?;
        self.apply(plan.rewrites, None, slug, now).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tx::Guard;
    use catalog::records::{Card, DatasetMeta};
    use uuid::Uuid;

    fn stored(seq: Option<u64>, rev: u64) -> StoredDataset {
        StoredDataset {
            id: Uuid::nil(),
            current: Some(1),
            seq,
            meta: DatasetMeta {
                readme: None,
                access: Default::default(),
                card: Card {
                    access_level: Default::default(),
                    name: "River levels".into(),
                    description: None,
                    license: "CC0-1.0".into(),
                    category: "water".into(),
                    tags: vec![],
                },
                source: "Somewhere".into(),
                insights: String::new(),
                discussions: Vec::new(),
            },
            keyless_until: None,
            rev,
            unpublished: false,
            downloads: 0,
            served: Default::default(),
            activated_by: None,
        }
    }

    /// A keyless change planned on an unlisted dataset must not land after a first activation
    /// listed it (the entries the activation created would keep the old window): its write to
    /// the dataset item is conditioned on the revision it read, which the activation bumps.
    #[test]
    fn a_change_is_conditioned_on_the_dataset_as_read_and_bumps_its_revision() {
        let slug = Slug::parse("river-levels").unwrap();
        let change = Change::Keyless(None);
        let read = stored(None, 7);
        let plan = Changing {
            slug: &slug,
            stored: &read,
            change: &change,
            now: DateTime::UNIX_EPOCH,
        }
        .plan(&HashMap::new());
        let Write::Set { set, condition, .. } = &plan.writes[0] else {
            panic!("{:?}", plan.writes[0])
        };
        assert_eq!(
            condition,
            &Condition::Dataset(Guard {
                active: None,
                rev: 7,
                unpublished: false
            })
        );
        assert!(set.contains(&(REV, n(8))));
        assert_eq!(plan.writes.len(), 2, "unlisted: the item and its alias");

        // Listed: its catalog entry is written only while it holds this dataset and no
        // renumbering holds the list.
        let listed = stored(Some(4), 8);
        let plan = Changing {
            slug: &slug,
            stored: &listed,
            change: &change,
            now: DateTime::UNIX_EPOCH,
        }
        .plan(&HashMap::new());
        assert!(matches!(
            &plan.writes[2],
            Write::Set { condition: Condition::Holds(s), .. } if s == &slug
        ));
        assert_eq!(plan.writes[3], Write::ListUnmarked);
    }
}
