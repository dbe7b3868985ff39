//! What an activation writes, decided without I/O: [`Activation::plan`] turns what was read
//! (the dataset, the version, the list positions and counters) into one transaction's writes
//! and the facet list rewrites that follow it.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::input::Slug;
use catalog::policy::AccessLevel;
use catalog::query::Facet;
use catalog::records::{ActiveVersion, DatasetMeta, DatasetSummary};
use catalog_aws::dynamo::attr::{n, s, time};
use catalog_aws::dynamo::codec::{
    schema_attributes, summary_count, summary_display, summary_entry, summary_mark, SummaryChange,
};
use catalog_aws::dynamo::layout::name::{
    ACTIVE, COMPLETE, PK, REV, SEQ, SERVED_VERSIONS, SK, UNPUBLISHED_AT, UPDATED_AT, WITHDRAWN,
};
use catalog_aws::dynamo::layout::{
    alias_pk, dataset_pk, facet_list_pk, key_of, list_sk, Item, DATASET_SK, LIST_PK,
};
use catalog_search::index::TextDoc;
use chrono::{DateTime, Utc};

use crate::publish::StoredDataset;
use crate::summary::StoredSummary;
use crate::tx::{Condition, Plan, Write};
use crate::Expected;
use catalog_aws::dynamo::codec::prelude::*;

/// Everything an activation decides on, read beforehand.
#[derive(Debug, Clone)]
pub(crate) struct Activation<'a> {
    pub slug: &'a Slug,
    pub stored: &'a StoredDataset,
    pub version: &'a ActiveVersion,
    /// The version's schema, as stored JSON text.
    pub schema: &'a str,
    /// New descriptive metadata, if any (else the stored metadata stays).
    pub meta: Option<&'a DatasetMeta>,
    /// An unpublished dataset listed again (`datasets restore`).
    pub restoring: bool,
    pub now: DateTime<Utc>,
}

/// What the plan needs to know about the lists, read by the executor.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Lists {
    /// Where the dataset sits in the facet lists it stays in (absent: not found there).
    pub positions: HashMap<Facet, u64>,
    /// How many datasets are listed (for a first activation).
    pub listed: u64,
    /// How many datasets each facet list holds (for a first activation).
    pub facet_totals: HashMap<Facet, u64>,
    /// The facet summary.
    pub summary: StoredSummary,
}

impl Activation<'_> {
    fn effective_meta(&self) -> &DatasetMeta {
        self.meta.unwrap_or(&self.stored.meta)
    }

    /// The facet lists the dataset will be in (none for a private dataset).
    fn new_facets(&self) -> Vec<Facet> {
        match self.is_private() {
            true => Vec::new(),
            false => self.effective_meta().card.facets(),
        }
    }

    /// Whether the dataset is private once activated: then it is in no list
    /// ([`crate::private`]).
    pub fn is_private(&self) -> bool {
        self.effective_meta().card.access_level == AccessLevel::Private
    }

    /// Whether the activation takes a listed dataset out of the lists (its metadata makes it
    /// private): `reindex` follows its transaction.
    pub fn leaves_lists(&self) -> bool {
        self.is_private() && self.stored.seq.is_some()
    }

    /// What a private dataset's activation refuses: a catalog dataset, or a keyless window
    /// open.
    pub fn check(&self) -> Result<(), crate::WriteError> {
        if self.is_private() {
            crate::private::check_level(self.slug, AccessLevel::Private)?;
            crate::private::check_keyless(
                self.slug,
                AccessLevel::Private,
                self.stored.keyless_until,
                self.now,
            )?;
        }
        Ok(())
    }

    /// The facet lists the dataset is in now (none before its first activation).
    fn listed_facets(&self) -> Vec<Facet> {
        match self.stored.seq {
            Some(_) => self.stored.meta.card.facets(),
            None => Vec::new(),
        }
    }

    /// Facets whose list position the plan needs: those the dataset stays in.
    pub fn to_locate(&self) -> Vec<Facet> {
        if self.is_private() {
            return Vec::new();
        }
        let listed = self.listed_facets();
        self.new_facets()
            .into_iter()
            .filter(|f| listed.contains(f))
            .collect()
    }

    /// Facets whose counters the plan needs: on a first activation, all it joins.
    pub fn to_count(&self) -> Vec<Facet> {
        match self.stored.seq {
            Some(_) => Vec::new(),
            None => self.new_facets(),
        }
    }

    /// Every write, decided without I/O.
    pub fn plan(&self, lists: &Lists) -> Plan {
        let now = self.now;
        let mut set: Vec<(&'static str, AttributeValue)> = vec![
            (ACTIVE, self.version.to_value()),
            (UPDATED_AT, time(&now)),
            (REV, n(self.stored.rev + 1)),
        ];
        if self.restoring {
            set.push((UNPUBLISHED_AT, AttributeValue::Null(true)));
        }
        // The version may be read by number from now on; a rollback withdraws those above it.
        let served = self.stored.served.activated(self.version.version);
        set.push((SERVED_VERSIONS, served.to_attribute()));
        set.extend(schema_attributes(self.schema));
        if let Some(meta) = self.meta {
            set.extend(meta.to_attributes());
        }
        if self.is_private() {
            return self.plan_unlisted(set);
        }
        // The list entry shows the new version's figures and the (possibly new) metadata.
        let mut entry = DatasetSummary::of(
            self.slug.clone(),
            self.stored.id,
            self.effective_meta().card.clone(),
            self.version,
            self.stored.keyless_until,
            now,
            self.stored.seq.unwrap_or(lists.listed + 1),
        );
        // A restored dataset's entry shows the downloads its item holds.
        entry.downloads = self.stored.downloads;
        let summary = entry.listing_attributes();
        let entry_attributes = entry.to_attributes();

        let mut writes = Vec::new();
        let mut rewrites = Vec::new();
        let new_facets = self.new_facets();
        match self.stored.seq {
            Some(seq) => {
                writes.push(Write::Set {
                    key: key_of(LIST_PK, &list_sk(seq)),
                    set: summary.clone(),
                    condition: Condition::Holds(self.slug.clone()),
                });
                writes.push(Write::ListUnmarked);
                // Entries in facet lists it stays in change with it; joining or leaving a
                // facet list shifts positions, done afterwards.
                let listed = self.listed_facets();
                for facet in &new_facets {
                    match lists.positions.get(facet) {
                        Some(pos) if listed.contains(facet) => {
                            writes.push(Write::Set {
                                key: key_of(facet_list_pk(facet), &list_sk(*pos)),
                                set: summary.clone(),
                                condition: Condition::Holds(self.slug.clone()),
                            });
                            writes.push(Write::FacetUnmarked(facet.clone()));
                        }
                        _ => rewrites.push((facet.clone(), seq)),
                    }
                }
                for facet in listed.iter().filter(|f| !new_facets.contains(f)) {
                    rewrites.push((facet.clone(), seq));
                }
            }
            None => {
                // First activation: listed at the next position, and at the end of each of its
                // facet lists.
                let seq = lists.listed + 1;
                set.push((SEQ, n(seq)));
                let mut entry: Item = key_of(LIST_PK, &list_sk(seq));
                for (name, value) in entry_attributes {
                    entry.insert(name.to_owned(), value);
                }
                for facet in &new_facets {
                    let old = lists.facet_totals.get(facet).copied().unwrap_or(0);
                    let mut facet_entry = entry.clone();
                    facet_entry.insert(PK.to_owned(), s(facet_list_pk(facet)));
                    facet_entry.insert(SK.to_owned(), s(list_sk(old + 1)));
                    facet_entry.insert(SEQ.to_owned(), n(seq));
                    writes.push(Write::Create(facet_entry));
                    writes.push(Write::CountInFacet {
                        facet: facet.clone(),
                        old,
                    });
                }
                writes.push(Write::Create(entry));
                writes.push(Write::CountListed { old: lists.listed });
                writes.push(Write::ListUnmarked);
            }
        }
        writes.push(Write::Set {
            key: key_of(dataset_pk(self.slug.as_str()), DATASET_SK),
            set: set.clone(),
            condition: Condition::Dataset(
                self.stored.guard(Some(Expected::from(self.stored.current))),
            ),
        });
        writes.push(Write::Set {
            key: key_of(alias_pk(&self.stored.id), DATASET_SK),
            set,
            condition: Condition::Exists,
        });
        let (summary, joining) = self.summary_changes(lists, &rewrites);
        let terms_changed = self.stored.seq.is_none()
            || !TextDoc::same_terms(&self.effective_meta().card, &self.stored.meta.card);
        Plan {
            writes,
            summary: lists.summary.guard(summary, &joining),
            rewrites,
            terms_changed,
        }
    }

    /// A private dataset's activation: its item and alias, no list entry. A listed one leaves
    /// the catalog list as an unpublished one does (its entry marked `withdrawn`, its `seq`
    /// cleared, under the list's unmarked condition), for `reindex` to renumber the lists.
    fn plan_unlisted(&self, mut set: Vec<(&'static str, AttributeValue)>) -> Plan {
        let mut writes = Vec::new();
        if let Some(seq) = self.stored.seq {
            set.push((SEQ, AttributeValue::Null(true)));
            writes.push(Write::Set {
                key: key_of(LIST_PK, &list_sk(seq)),
                set: vec![(WITHDRAWN, AttributeValue::Bool(true))],
                condition: Condition::Holds(self.slug.clone()),
            });
            writes.push(Write::ListUnmarked);
        }
        writes.push(Write::Set {
            key: key_of(dataset_pk(self.slug.as_str()), DATASET_SK),
            set: set.clone(),
            condition: Condition::Dataset(
                self.stored.guard(Some(Expected::from(self.stored.current))),
            ),
        });
        writes.push(Write::Set {
            key: key_of(alias_pk(&self.stored.id), DATASET_SK),
            set,
            condition: Condition::Exists,
        });
        Plan {
            writes,
            summary: Vec::new(),
            rewrites: Vec::new(),
            terms_changed: false,
        }
    }

    /// The facet summary's changes in the transaction: on a first activation, each value's new
    /// total (under its counter's condition on the old one), a new value's display form, and
    /// the complete mark with the catalog's first listing; later, the new form of a value whose
    /// case changed on the dataset first in its list (its form is the value's). Second, for the
    /// budget only, the values the rewrites after it will set.
    fn summary_changes(
        &self,
        lists: &Lists,
        rewrites: &[(Facet, u64)],
    ) -> (Vec<SummaryChange>, Vec<SummaryChange>) {
        let card = &self.effective_meta().card;
        let form = |facet: &Facet| card.display_of(facet).unwrap_or(facet.value()).to_owned();
        let mut changes = Vec::new();
        match self.stored.seq {
            None => {
                for facet in self.new_facets() {
                    match lists.facet_totals.get(&facet).copied().unwrap_or(0) {
                        0 => changes.extend(summary_entry(&facet, &form(&facet), 1)),
                        old => changes.push(summary_count(&facet, old + 1)),
                    }
                }
                if lists.listed == 0 {
                    changes.push(summary_mark(COMPLETE, true));
                }
            }
            Some(_) => {
                let before = &self.stored.meta.card;
                for facet in self.to_locate() {
                    let recased = card.display_of(&facet) != before.display_of(&facet);
                    if recased && lists.positions.get(&facet) == Some(&1) {
                        changes.push(summary_display(&facet, &form(&facet)));
                    }
                }
            }
        }
        let new_facets = self.new_facets();
        let joining = rewrites
            .iter()
            .filter(|(facet, _)| new_facets.contains(facet))
            .flat_map(|(facet, _)| summary_entry(facet, &form(facet), 1))
            .collect();
        (changes, joining)
    }
}
#[cfg(test)]
mod tests;
