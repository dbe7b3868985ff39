//! Keyless windows: the dataset item, its alias, its list entry and its facet list entries
//! change together.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::dynamo::attr::{opt_time, time};
use catalog::dynamo::layout::name::{KEYLESS_UNTIL, UPDATED_AT};
use catalog::dynamo::layout::{
    alias_pk, dataset_pk, facet_list_pk, key_of, list_sk, DATASET_SK, LIST_PK,
};
use catalog::dynamo::retry::{Attempt, Backoff};
use catalog::input::Slug;
use catalog::query::Facet;
use chrono::{DateTime, Utc};

use crate::publish::StoredDataset;
use crate::tx::{Condition, Plan, Write};
use crate::{DynamoWriter, WriteError};

/// A keyless window opened until `until`, or closed (`None`).
#[derive(Debug, Clone)]
pub(crate) struct KeylessChange<'a> {
    pub slug: &'a Slug,
    pub stored: &'a StoredDataset,
    pub until: Option<DateTime<Utc>>,
    pub now: DateTime<Utc>,
}

impl KeylessChange<'_> {
    /// Facets whose list position the plan needs: all of a listed dataset's.
    pub fn to_locate(&self) -> Vec<Facet> {
        match self.stored.seq {
            Some(_) => self.stored.meta.card.facets(),
            None => Vec::new(),
        }
    }

    /// Every write, decided without I/O. A dataset missing from a facet list it belongs in is
    /// put back by a rewrite (with the new window).
    pub fn plan(&self, positions: &HashMap<Facet, u64>) -> Plan {
        // The dataset's answers change (keyless, access): it counts as an update.
        let set: Vec<(&'static str, AttributeValue)> = vec![
            (KEYLESS_UNTIL, opt_time(self.until.as_ref())),
            (UPDATED_AT, time(&self.now)),
        ];
        let mut writes = vec![
            Write::Set {
                key: key_of(dataset_pk(self.slug.as_str()), DATASET_SK),
                set: set.clone(),
                condition: Condition::Exists,
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
                set: set.clone(),
                condition: Condition::Exists,
            });
            for facet in self.to_locate() {
                match positions.get(&facet) {
                    Some(pos) => {
                        writes.push(Write::Set {
                            key: key_of(facet_list_pk(&facet), &list_sk(*pos)),
                            set: set.clone(),
                            condition: Condition::Holds(self.slug.clone()),
                        });
                        writes.push(Write::FacetUnmarked(facet));
                    }
                    None => rewrites.push((facet, seq)),
                }
            }
        }
        Plan { writes, rewrites }
    }
}

impl DynamoWriter {
    /// Opens a keyless window until `until`, or closes it (`None`). Retried, with backoff,
    /// when a concurrent write moved an entry or a facet list is being rebuilt.
    pub async fn set_keyless(
        &self,
        slug: &Slug,
        until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        Backoff::CONFLICT
            .run(
                (),
                |()| async {
                    match self.set_keyless_once(slug, until, now).await {
                        Err(WriteError::Conflict(_)) => Ok(Attempt::Retry(())),
                        other => other.map(Attempt::Done),
                    }
                },
                |()| WriteError::Conflict(slug.to_string()),
            )
            .await
    }

    async fn set_keyless_once(
        &self,
        slug: &Slug,
        until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let stored = self.stored_dataset(slug).await?;
        let change = KeylessChange {
            slug,
            stored: &stored,
            until,
            now,
        };
        let mut positions = HashMap::new();
        for facet in change.to_locate() {
            if let Some(pos) = self.facet_position(&facet, slug.as_str()).await? {
                positions.insert(facet, pos);
            }
        }
        let plan = change.plan(&positions);
        self.transact(slug, &plan.writes, now).await?;
        self.apply(plan.rewrites, now).await
    }
}
