//! What an activation writes, decided without I/O: [`Activation::plan`] turns what was read
//! (the dataset, the version, the list positions and counters) into one transaction's writes
//! and the facet list rewrites that follow it.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::input::Slug;
use catalog::query::Facet;
use catalog::records::{ActiveVersion, DatasetMeta, DatasetSummary};
use catalog_aws::dynamo::attr::{n, s, time};
use catalog_aws::dynamo::codec::{
    schema_attributes, summary_count, summary_display, summary_entry, summary_mark, SummaryChange,
};
use catalog_aws::dynamo::layout::name::{
    ACTIVE, COMPLETE, PK, REV, SEQ, SERVED_VERSIONS, SK, UNPUBLISHED_AT, UPDATED_AT,
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

    /// The facet lists the dataset will be in.
    fn new_facets(&self) -> Vec<Facet> {
        self.effective_meta().card.facets()
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
mod tests {
    use super::*;
    use catalog::query::FacetKind;
    use catalog::records::Card;
    use catalog_aws::dynamo::layout::name::{CATEGORY, COLUMN_COUNT, ROW_COUNT};
    use uuid::Uuid;

    fn slug() -> Slug {
        Slug::parse("river-levels").unwrap()
    }

    fn meta(category: &str, tags: &[&str]) -> DatasetMeta {
        DatasetMeta {
            access: Default::default(),
            card: Card {
                access_level: Default::default(),
                name: "River levels".into(),
                description: None,
                license: "CC0-1.0".into(),
                category: category.into(),
                tags: tags.iter().map(|t| t.to_string()).collect(),
            },
            source: "Somewhere".into(),
            insights: String::new(),
            discussions: Vec::new(),
        }
    }

    fn stored(seq: Option<u64>, current: Option<u64>, meta: DatasetMeta) -> StoredDataset {
        StoredDataset {
            id: Uuid::nil(),
            current,
            seq,
            meta,
            keyless_until: None,
            rev: 3,
            unpublished: false,
            downloads: 0,
            served: Default::default(),
            activated_by: None,
        }
    }

    fn version(v: u64) -> ActiveVersion {
        ActiveVersion {
            version: v,
            s3_key: format!("datasets/river-levels/v{v}/x.parquet"),
            size: 1234,
            row_count: 10,
            columns: vec!["a".into(), "b".into()],
            sha256: "ab".repeat(32),
            published_at: DateTime::UNIX_EPOCH,
        }
    }

    fn facet(kind: FacetKind, value: &str) -> Facet {
        Facet::of(
            if kind == FacetKind::Category {
                value
            } else {
                ""
            },
            &if kind == FacetKind::Tag {
                vec![value.to_owned()]
            } else {
                vec![]
            },
            if kind == FacetKind::License {
                value
            } else {
                ""
            },
        )
        .remove(0)
    }

    fn keys(plan: &Plan) -> Vec<String> {
        plan.writes
            .iter()
            .map(|w| match w {
                Write::Set { key, condition, .. } => {
                    format!("set {} {} if {condition:?}", pk_sk(key).0, pk_sk(key).1)
                }
                Write::Create(item) => format!("create {} {}", pk_sk(item).0, pk_sk(item).1),
                Write::Delete { key, condition } => {
                    format!("delete {} {} if {condition:?}", pk_sk(key).0, pk_sk(key).1)
                }
                Write::CountListed { old } => format!("count LIST from {old}"),
                Write::CountInFacet { facet, old } => format!("count {} from {old}", facet.key()),
                Write::FacetUnmarked(facet) => format!("unmarked {}", facet.key()),
                Write::ListUnmarked => "unmarked LIST".into(),
            })
            .collect()
    }

    fn pk_sk(item: &Item) -> (String, String) {
        let get = |k: &str| match item.get(k) {
            Some(AttributeValue::S(v)) => v.clone(),
            _ => String::new(),
        };
        (get(PK), get(SK))
    }

    #[test]
    fn a_first_activation_appends_to_the_catalog_and_every_facet_list() {
        let stored = stored(None, None, meta("water", &["rivers"]));
        let v = version(1);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: None,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        assert!(activation.to_locate().is_empty());
        assert_eq!(activation.to_count().len(), 3, "category, tag, license");
        let lists = Lists {
            listed: 41,
            facet_totals: HashMap::from([(facet(FacetKind::Category, "water"), 6)]),
            ..Lists::default()
        };
        let plan = activation.plan(&lists);
        assert!(plan.rewrites.is_empty());
        assert_eq!(
            keys(&plan),
            [
                "create LIST#category#water SEQ#000000000007",
                "count category#water from 6",
                "create LIST#tag#rivers SEQ#000000000001",
                "count tag#rivers from 0",
                "create LIST#license#cc0-1.0 SEQ#000000000001",
                "count license#cc0-1.0 from 0",
                "create LIST SEQ#000000000042",
                "count LIST from 41",
                "unmarked LIST",
                "set DS#river-levels DATASET if Dataset(Guard { active: Some(Nothing), rev: 3, unpublished: false })",
                &format!("set ID#{} DATASET if Exists", Uuid::nil()),
            ]
        );
        // The facet entries carry their catalog position; the dataset item learns its own.
        let Write::Create(entry) = &plan.writes[0] else {
            panic!()
        };
        assert_eq!(entry.get(SEQ), Some(&n(42)));
        assert_eq!(entry.get(ROW_COUNT), Some(&n(10)));
        assert_eq!(entry.get(COLUMN_COUNT), Some(&n(2)));
        let Write::Set { set, .. } = &plan.writes[9] else {
            panic!()
        };
        assert!(set.contains(&(SEQ, n(42))));
        assert!(
            set.contains(&(REV, n(4))),
            "the dataset's revision is bumped"
        );
        assert!(set.iter().any(|(name, _)| *name == ACTIVE));
    }

    #[test]
    fn the_text_index_follows_a_first_listing_and_a_change_of_text_or_facets_only() {
        let v = version(2);
        let slug = slug();
        let activation = |stored, meta| Activation {
            slug: &slug,
            stored,
            version: &v,
            schema: "[]",
            meta,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        let lists = Lists {
            listed: 41,
            ..Lists::default()
        };
        // First listed
        let new = stored(None, None, meta("water", &["rivers"]));
        assert!(activation(&new, None).plan(&lists).terms_changed);
        // A new version with the same metadata: the index is left alone
        let listed = stored(Some(5), Some(1), meta("water", &["rivers"]));
        let same = meta("water", &["rivers"]);
        assert!(!activation(&listed, None).plan(&lists).terms_changed);
        assert!(!activation(&listed, Some(&same)).plan(&lists).terms_changed);
        // Another category (a facet), another tag (a word and a facet)
        let changed = [meta("transport", &["rivers"]), meta("water", &["lakes"])];
        for meta in &changed {
            assert!(
                activation(&listed, Some(meta)).plan(&lists).terms_changed,
                "{meta:?}"
            );
        }
    }

    #[test]
    fn a_new_version_updates_every_entry_in_place() {
        let stored = stored(Some(5), Some(2), meta("water", &["rivers"]));
        let v = version(3);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: None,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        assert_eq!(activation.to_locate().len(), 3);
        assert!(activation.to_count().is_empty());
        let positions = activation.to_locate().into_iter().zip([2, 9, 4]).collect();
        let plan = activation.plan(&Lists {
            positions,
            ..Lists::default()
        });
        assert!(plan.rewrites.is_empty());
        assert_eq!(
            keys(&plan),
            [
                "set LIST SEQ#000000000005 if Holds(Slug(\"river-levels\"))",
                "unmarked LIST",
                "set LIST#category#water SEQ#000000000002 if Holds(Slug(\"river-levels\"))",
                "unmarked category#water",
                "set LIST#tag#rivers SEQ#000000000009 if Holds(Slug(\"river-levels\"))",
                "unmarked tag#rivers",
                "set LIST#license#cc0-1.0 SEQ#000000000004 if Holds(Slug(\"river-levels\"))",
                "unmarked license#cc0-1.0",
                "set DS#river-levels DATASET if Dataset(Guard { active: Some(Version(2)), rev: 3, unpublished: false })",
                &format!("set ID#{} DATASET if Exists", Uuid::nil()),
            ]
        );
    }

    #[test]
    fn moving_category_rewrites_the_lists_it_leaves_and_joins() {
        let stored = stored(Some(5), Some(2), meta("water", &["rivers"]));
        let v = version(3);
        let new_meta = meta("climate", &["rivers"]);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: Some(&new_meta),
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        // The tag and license stay: their positions are needed; the category moves.
        assert_eq!(activation.to_locate().len(), 2);
        let positions = activation.to_locate().into_iter().map(|f| (f, 1)).collect();
        let plan = activation.plan(&Lists {
            positions,
            ..Lists::default()
        });
        assert_eq!(
            plan.rewrites,
            [
                (facet(FacetKind::Category, "climate"), 5),
                (facet(FacetKind::Category, "water"), 5)
            ]
        );
        // The new metadata goes to the dataset item and every entry.
        let Write::Set { set, .. } = &plan.writes[0] else {
            panic!()
        };
        assert!(set.contains(&(CATEGORY, s("climate"))));
    }

    /// The summary's changes as `set name = value` and `remove name`.
    fn summary(plan: &Plan) -> Vec<String> {
        plan.summary
            .iter()
            .map(|(name, value)| match value {
                Some(AttributeValue::N(v)) | Some(AttributeValue::S(v)) => {
                    format!("set {name} = {v}")
                }
                Some(AttributeValue::Bool(b)) => format!("set {name} = {b}"),
                Some(other) => format!("set {name} = {other:?}"),
                None => format!("remove {name}"),
            })
            .collect()
    }

    #[test]
    fn a_first_activation_sets_each_values_count_and_a_new_values_form_in_the_summary() {
        let stored = stored(None, None, meta("Water", &["rivers", "Rivers"]));
        let v = version(1);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: None,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        let lists = Lists {
            listed: 41,
            facet_totals: HashMap::from([(facet(FacetKind::Category, "water"), 6)]),
            ..Lists::default()
        };
        // Water has 6 datasets (its form is theirs); rivers and cc0-1.0 are new, in this
        // dataset's case.
        assert_eq!(
            summary(&activation.plan(&lists)),
            [
                "set n#category#water = 7",
                "set n#tag#rivers = 1",
                "remove d#tag#rivers",
                "set n#license#cc0-1.0 = 1",
                "set d#license#cc0-1.0 = CC0-1.0",
            ]
        );
        // A catalog's first listing makes the summary complete.
        let first = Lists {
            listed: 0,
            ..Lists::default()
        };
        let plan = activation.plan(&first);
        assert_eq!(summary(&plan).last().unwrap(), "set complete = true");
        assert_eq!(
            summary(&plan)[..2],
            ["set n#category#water = 1", "set d#category#water = Water"]
        );
    }

    #[test]
    fn a_new_case_sets_the_values_form_only_on_the_dataset_first_in_its_list() {
        let stored = stored(Some(5), Some(2), meta("water", &["rivers"]));
        let v = version(3);
        let recased = meta("Water", &["RIVERS"]);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: Some(&recased),
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        // First in the water list, third in the rivers list.
        let positions = HashMap::from([
            (facet(FacetKind::Category, "water"), 1),
            (facet(FacetKind::Tag, "rivers"), 3),
            (facet(FacetKind::License, "cc0-1.0"), 1),
        ]);
        let plan = activation.plan(&Lists {
            positions,
            ..Lists::default()
        });
        assert_eq!(summary(&plan), ["set d#category#water = Water"]);
        assert!(plan.rewrites.is_empty());

        // The same version again, nothing recased: the summary is not touched.
        let same = Activation {
            meta: None,
            ..activation
        };
        let positions = same.to_locate().into_iter().map(|f| (f, 1)).collect();
        let plan = same.plan(&Lists {
            positions,
            ..Lists::default()
        });
        assert!(plan.summary.is_empty());
    }

    #[test]
    fn a_full_summary_is_left_alone() {
        use catalog_aws::dynamo::codec::summary_mark;
        use catalog_aws::dynamo::layout::{facet_summary_key, name::FULL};
        let stored = stored(None, None, meta("water", &["rivers"]));
        let v = version(1);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: None,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        let mut item = facet_summary_key();
        catalog_aws::dynamo::codec::apply_summary_changes(&mut item, &[summary_mark(FULL, true)]);
        let plan = activation.plan(&Lists {
            listed: 3,
            summary: StoredSummary::new(Some(item)),
            ..Lists::default()
        });
        assert!(plan.summary.is_empty());
        assert_eq!(plan.writes.len(), 11, "the rest as ever");
    }

    /// The dataset item's `served_versions` as the plan sets it.
    fn served_after(plan: &Plan) -> AttributeValue {
        let dataset = plan.writes.iter().find_map(|w| match w {
            Write::Set { key, set, .. } if pk_sk(key).1 == DATASET_SK => Some(set),
            _ => None,
        });
        dataset
            .unwrap()
            .iter()
            .find(|(name, _)| *name == SERVED_VERSIONS)
            .map(|(_, value)| value.clone())
            .expect("every activation sets served_versions")
    }

    #[test]
    fn an_activation_serves_its_version_and_a_rollback_withdraws_those_above() {
        let served = |text: &str| catalog_aws::dynamo::codec::ServedVersions::parse(text).unwrap();
        let slug = slug();
        let plan = |stored: &StoredDataset, v: u64| {
            let v = version(v);
            let activation = Activation {
                slug: &slug,
                stored,
                version: &v,
                schema: "[]",
                meta: None,
                restoring: false,
                now: DateTime::UNIX_EPOCH,
            };
            let positions = activation.to_locate().into_iter().map(|f| (f, 1)).collect();
            served_after(&activation.plan(&Lists {
                positions,
                ..Lists::default()
            }))
        };
        // A first activation, then a new version (4 was recorded, never activated)
        let new = stored(None, None, meta("water", &[]));
        assert_eq!(plan(&new, 1), s("1"));
        let listed = StoredDataset {
            served: served("1-3"),
            ..stored(Some(5), Some(3), meta("water", &[]))
        };
        assert_eq!(plan(&listed, 5), s("1-3,5"));
        // A rollback to 1: 2 and 3 withdrawn, on the dataset item and its alias alike
        assert_eq!(plan(&listed, 1), s("1"));
    }

    #[test]
    fn an_entry_missing_from_a_facet_list_is_put_back_by_a_rewrite() {
        let stored = stored(Some(5), Some(2), meta("water", &[]));
        let v = version(3);
        let activation = Activation {
            slug: &slug(),
            stored: &stored,
            version: &v,
            schema: "[]",
            meta: None,
            restoring: false,
            now: DateTime::UNIX_EPOCH,
        };
        // Found in the license list only.
        let positions = HashMap::from([(facet(FacetKind::License, "cc0-1.0"), 3)]);
        let plan = activation.plan(&Lists {
            positions,
            ..Lists::default()
        });
        assert_eq!(plan.rewrites, [(facet(FacetKind::Category, "water"), 5)]);
    }
}
