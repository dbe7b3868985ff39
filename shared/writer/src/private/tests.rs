use super::*;
use crate::activate::{Activation, Lists};
use crate::tx::Guard;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog::records::{ActiveVersion, Card, DatasetMeta};
use catalog_aws::dynamo::layout::name::{ACCESS_LEVEL, SEQ, WITHDRAWN};
use catalog_aws::dynamo::layout::{key_of, list_sk, LIST_PK};
use chrono::Duration;
use uuid::Uuid;

fn meta(level: AccessLevel) -> DatasetMeta {
    let mut meta: DatasetMeta = serde_json::from_value(serde_json::json!({
        "name": "Secret", "description": null, "category": "water", "tags": ["rivers"],
        "license": "CC0-1.0", "source": "tests", "insights": "", "discussions": [],
    }))
    .expect("a dataset's metadata");
    meta.card = Card {
        access_level: level,
        ..meta.card
    };
    meta
}

fn stored(seq: Option<u64>, current: Option<u64>, level: AccessLevel) -> StoredDataset {
    StoredDataset {
        id: Uuid::nil(),
        current,
        seq,
        meta: meta(level),
        keyless_until: None,
        rev: 5,
        unpublished: false,
        downloads: 0,
        served: Default::default(),
        activated_by: None,
    }
}

fn version(v: u64) -> ActiveVersion {
    ActiveVersion {
        version: v,
        s3_key: format!("datasets/acme~secret/v{v}/x.parquet"),
        size: 10,
        row_count: 1,
        columns: vec!["a".into()],
        sha256: "ab".repeat(32),
        published_at: DateTime::UNIX_EPOCH,
        files: None,
        ingested: None,
    }
}

fn org_slug() -> Slug {
    Slug::parse("acme~secret").unwrap()
}

fn message(result: Result<(), WriteError>) -> String {
    match result {
        Err(WriteError::Invalid(why)) => why,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn only_an_organisations_dataset_may_be_private() {
    let catalog = Slug::parse("river-levels").unwrap();
    let why = message(check_level(&catalog, AccessLevel::Private));
    assert!(why.contains("'river-levels' cannot be private"), "{why}");
    assert!(why.contains("org~name"), "{why}");
    assert!(check_level(&catalog, AccessLevel::Approval).is_ok());
    assert!(check_level(&org_slug(), AccessLevel::Private).is_ok());
}

#[test]
fn a_private_dataset_takes_no_keyless_window() {
    let now = DateTime::UNIX_EPOCH + Duration::days(10);
    let slug = org_slug();
    // Private while a window is open: refused, naming the window and how to close it.
    let open = Some(now + Duration::hours(1));
    let why = message(check_keyless(&slug, AccessLevel::Private, open, now));
    assert!(why.contains("keyless window open"), "{why}");
    assert!(why.contains("keyless clear acme~secret"), "{why}");
    // A window that has ended, or none, or another level: allowed.
    let ended = Some(now - Duration::hours(1));
    assert!(check_keyless(&slug, AccessLevel::Private, ended, now).is_ok());
    assert!(check_keyless(&slug, AccessLevel::Private, None, now).is_ok());
    assert!(check_keyless(&slug, AccessLevel::Approval, open, now).is_ok());
    // Opening one on a private dataset: refused; closing one, or opening one on another
    // level, is not.
    let private = stored(None, Some(1), AccessLevel::Private);
    let why = message(check_window(&slug, &private, open, now));
    assert!(why.contains("'acme~secret' is private"), "{why}");
    assert!(check_window(&slug, &private, None, now).is_ok());
    let registered = stored(Some(2), Some(1), AccessLevel::Registered);
    assert!(check_window(&slug, &registered, open, now).is_ok());
}

#[test]
fn a_level_change_moves_a_dataset_in_or_out_of_the_lists_by_where_it_is() {
    use AccessLevel::*;
    let listed = stored(Some(4), Some(1), Registered);
    assert_eq!(Move::of(&listed, Private), Move::Leave);
    assert_eq!(Move::of(&listed, Approval), Move::InPlace);
    let private = stored(None, Some(1), Private);
    assert_eq!(Move::of(&private, Registered), Move::List);
    assert_eq!(Move::of(&private, Approval), Move::List);
    assert_eq!(Move::of(&private, Private), Move::StayUnlisted);
    // Made public but not listed (an interrupted run): listed by the same command again.
    let stranded = stored(None, Some(1), Registered);
    assert_eq!(Move::of(&stranded, Registered), Move::List);
    // Never activated, or unpublished: nothing to list.
    let new = stored(None, None, Private);
    assert_eq!(Move::of(&new, Registered), Move::InPlace);
    let mut unpublished = stored(None, Some(1), Private);
    unpublished.unpublished = true;
    assert_eq!(Move::of(&unpublished, Registered), Move::InPlace);
    assert_eq!(Move::of(&unpublished, Private), Move::StayUnlisted);
}

/// Made private, a listed dataset leaves as an unpublished one does: its entry marked
/// `withdrawn` while it still holds it and no renumbering holds the list, its item's `seq`
/// cleared under the condition that it is as read (its version and revision); not unpublished.
#[test]
fn a_listed_dataset_made_private_leaves_the_catalog_list_under_the_writes_conditions() {
    let slug = org_slug();
    let listed = stored(Some(4), Some(2), AccessLevel::Registered);
    let change = Change::Access(AccessLevel::Private, Default::default());
    let writes = leaving_writes(&slug, &listed, &change, DateTime::UNIX_EPOCH);
    assert_eq!(writes.len(), 4, "{writes:?}");
    let Write::Set { set, condition, .. } = &writes[0] else {
        panic!("{:?}", writes[0])
    };
    assert_eq!(
        condition,
        &Condition::Dataset(Guard {
            active: Some(Expected::Version(2)),
            rev: 5,
            unpublished: false
        })
    );
    assert!(set.contains(&(ACCESS_LEVEL, AttributeValue::S("private".into()))));
    assert!(set.contains(&(SEQ, AttributeValue::Null(true))));
    assert!(!set.iter().any(|(name, _)| *name == "unpublished_at"));
    assert_eq!(
        writes[2],
        Write::Set {
            key: key_of(LIST_PK, &list_sk(4)),
            set: vec![(WITHDRAWN, AttributeValue::Bool(true))],
            condition: Condition::Holds(slug.clone()),
        }
    );
    assert_eq!(writes[3], Write::ListUnmarked);
}

fn activation<'a>(
    slug: &'a Slug,
    stored: &'a StoredDataset,
    version: &'a ActiveVersion,
    meta: Option<&'a DatasetMeta>,
) -> Activation<'a> {
    Activation {
        slug,
        stored,
        version,
        schema: "[]",
        meta,
        restoring: false,
        now: DateTime::UNIX_EPOCH,
    }
}

/// Writes that touch any list: entries, counters, the summary, rewrites afterwards.
fn list_writes(plan: &crate::tx::Plan) -> Vec<String> {
    plan.writes
        .iter()
        .filter_map(|w| match w {
            Write::Set { key, .. } | Write::Delete { key, .. } => {
                let pk = key.get("pk").and_then(|v| v.as_s().ok()).unwrap();
                pk.starts_with("LIST").then(|| format!("{w:?}"))
            }
            Write::Create(_) | Write::CountListed { .. } | Write::CountInFacet { .. } => {
                Some(format!("{w:?}"))
            }
            Write::FacetUnmarked(_) | Write::ListUnmarked => None,
        })
        .chain(plan.summary.iter().map(|c| format!("{c:?}")))
        .chain(plan.rewrites.iter().map(|r| format!("{r:?}")))
        .collect()
}

#[test]
fn a_private_datasets_activations_write_its_item_and_alias_and_no_list() {
    let slug = org_slug();
    let v = version(1);
    // First activation: the item and alias, no entry, counter, facet entry or summary change.
    let new = stored(None, None, AccessLevel::Private);
    let first = activation(&slug, &new, &v, None);
    assert!(first.is_private() && !first.leaves_lists());
    assert!(first.to_locate().is_empty() && first.to_count().is_empty());
    let plan = first.plan(&Lists::default());
    assert_eq!(plan.writes.len(), 2, "{:?}", plan.writes);
    assert!(list_writes(&plan).is_empty(), "{:?}", list_writes(&plan));
    assert!(!plan.terms_changed);
    let Write::Set { set, .. } = &plan.writes[0] else {
        panic!()
    };
    assert!(!set.iter().any(|(name, _)| *name == SEQ), "no position");

    // A later version, or new metadata that keeps it private: still no list.
    let v2 = version(2);
    let active = stored(None, Some(1), AccessLevel::Private);
    let renamed = meta(AccessLevel::Private);
    let plan = activation(&slug, &active, &v2, Some(&renamed)).plan(&Lists::default());
    assert!(list_writes(&plan).is_empty(), "{:?}", list_writes(&plan));

    // A catalog dataset at `private`, or one with a keyless window open, is refused.
    let catalog = Slug::parse("river-levels").unwrap();
    assert!(activation(&catalog, &new, &v, None).check().is_err());
    let mut windowed = stored(None, Some(1), AccessLevel::Private);
    windowed.keyless_until = Some(DateTime::UNIX_EPOCH + Duration::hours(1));
    assert!(activation(&slug, &windowed, &v2, None).check().is_err());
    assert!(activation(&slug, &active, &v2, None).check().is_ok());
}

#[test]
fn an_activation_that_makes_a_listed_dataset_private_takes_it_out_of_the_catalog_list() {
    let slug = org_slug();
    let listed = stored(Some(7), Some(1), AccessLevel::Registered);
    let v2 = version(2);
    let private = meta(AccessLevel::Private);
    let activation = activation(&slug, &listed, &v2, Some(&private));
    assert!(activation.leaves_lists());
    let plan = activation.plan(&Lists::default());
    assert_eq!(list_writes(&plan).len(), 1, "{:?}", list_writes(&plan));
    assert!(plan.writes.contains(&Write::Set {
        key: key_of(LIST_PK, &list_sk(7)),
        set: vec![(WITHDRAWN, AttributeValue::Bool(true))],
        condition: Condition::Holds(slug.clone()),
    }));
    assert!(plan.writes.contains(&Write::ListUnmarked));
    let item = plan
        .writes
        .iter()
        .find(|w| {
            matches!(
                w,
                Write::Set {
                    condition: Condition::Dataset(_),
                    ..
                }
            )
        })
        .unwrap();
    let Write::Set { set, condition, .. } = item else {
        panic!()
    };
    assert!(set.contains(&(SEQ, AttributeValue::Null(true))));
    assert_eq!(
        condition,
        &Condition::Dataset(Guard {
            active: Some(Expected::Version(1)),
            rev: 5,
            unpublished: false
        })
    );
}

/// A publish that did not touch the access keeps a level change made while it uploaded; one
/// that set another level applies its own.
#[test]
fn a_publish_keeps_an_access_change_made_while_it_uploaded_unless_it_changes_access_itself() {
    let registered = meta(AccessLevel::Registered);
    let private = meta(AccessLevel::Private);
    let mut renamed = registered.clone();
    renamed.card.name = "Renamed".into();
    // Made private while the publish (which found it registered) uploaded: it stays private,
    // with the publish's other metadata.
    let kept = keeping_access(&renamed, &registered, Some(&private));
    assert_eq!(kept.card.access_level, AccessLevel::Private);
    assert_eq!(kept.card.name, "Renamed");
    // Nothing changed meanwhile: the publish's own.
    assert_eq!(
        keeping_access(&renamed, &registered, Some(&registered)),
        renamed
    );
    // The publish itself makes it private (or public): its own level wins.
    let approval = meta(AccessLevel::Approval);
    assert_eq!(
        keeping_access(&private, &registered, Some(&approval))
            .card
            .access_level,
        AccessLevel::Private
    );
    assert_eq!(keeping_access(&renamed, &registered, None), renamed);
}
