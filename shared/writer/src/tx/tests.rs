use super::*;
use catalog_aws::dynamo::layout::{dataset_pk, facet_list_pk, list_sk, DATASET_SK, LIST_PK};

/// A first activation's transaction, as its plan lays it out: the dataset item, the
/// catalog counter, the list's next position, a facet's count, the catalog list's mark.
fn first_activation(slug: &Slug) -> Vec<Write> {
    let facet = Facet::from_key("category#biology").expect("a facet key");
    vec![
        Write::Set {
            key: key_of(dataset_pk(slug.as_str()), DATASET_SK),
            set: vec![(REV, n(2))],
            condition: Condition::Dataset(Guard {
                active: Some(Expected::Nothing),
                rev: 1,
                unpublished: false,
            }),
        },
        Write::CountListed { old: 4 },
        Write::Create(key_of(LIST_PK, &list_sk(5))),
        Write::CountInFacet {
            facet: facet.clone(),
            old: 2,
        },
        Write::Create(key_of(facet_list_pk(&facet), &list_sk(3))),
        Write::ListUnmarked,
    ]
}

#[test]
fn a_lost_condition_on_a_shared_item_is_contended_naming_it_not_a_conflict_on_the_dataset() {
    let slug = Slug::parse("par-2").unwrap();
    let writes = first_activation(&slug);
    let failed_at = |i: usize, code: &'static str| {
        let mut codes = vec![Some("None"); writes.len()];
        codes[i] = Some(code);
        cancelled(&slug, &writes, &codes)
    };
    let contended = |e: Option<WriteError>| match e {
        Some(WriteError::Contended { what, .. }) => what,
        other => panic!("{other:?}"),
    };
    assert_eq!(
        contended(failed_at(1, "ConditionalCheckFailed")),
        "the catalog's count of listed datasets"
    );
    assert_eq!(
        contended(failed_at(2, "ConditionalCheckFailed")),
        "the next position of a list"
    );
    assert!(contended(failed_at(3, "TransactionConflict")).contains("category#biology"));
    assert_eq!(
        contended(failed_at(5, "ConditionalCheckFailed")),
        "the catalog list (a renumbering's mark)"
    );
    // Past the writes: the facet summary's update, sent last
    let mut codes = vec![Some("None"); writes.len() + 1];
    codes[writes.len()] = Some("TransactionConflict");
    assert_eq!(
        contended(cancelled(&slug, &writes, &codes)),
        "the facet summary"
    );
    // The dataset's own item: a conflict on the dataset, whatever else failed
    let mut codes = vec![Some("None"); writes.len()];
    codes[0] = Some("ConditionalCheckFailed");
    codes[1] = Some("ConditionalCheckFailed");
    assert!(matches!(
        cancelled(&slug, &writes, &codes),
        Some(WriteError::Conflict(s)) if s == "par-2"
    ));
    // No lost condition named: nothing to tell
    assert!(cancelled(&slug, &writes, &[Some("None"); 6]).is_none());
    assert!(failed_at(2, "ValidationError").is_none());
    // A throttled item is waited for, not a conflict on the dataset
    assert_eq!(
        contended(failed_at(0, "ThrottlingError")),
        "DynamoDB's capacity (the request was throttled)"
    );
}
