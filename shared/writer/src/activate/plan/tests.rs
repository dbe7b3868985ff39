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
        readme: None,
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
        files: None,
        ingested: None,
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
