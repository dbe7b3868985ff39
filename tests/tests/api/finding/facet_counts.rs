//! The facet counts (`facets=true`) after every kind of change: each time, what the list answers
//! equals counting the whole catalog in the test (`catalog_tests::facets`); a catalog from
//! before them gets them from `reindex`; a summary that cannot hold every value is left alone.

use std::collections::HashMap;

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_tests::facets::{assert_facet_counts_exact, assert_facet_lists_consistent};
use catalog_writer::Expected;
use serde_json::json;

/// The value's entry among the facet counts of `kind`, by value ignoring case.
fn entry(facets: &Value, kind: &str, value: &str) -> Option<Value> {
    facets[kind]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["value"].as_str().unwrap().eq_ignore_ascii_case(value))
        .cloned()
}

async fn facets(catalog: &catalog_search::listing::IndexedCatalog) -> Value {
    let (status, body) = list(catalog, "facets=true").await;
    assert_eq!(status, 200, "{body}");
    body["facets"].clone()
}

/// The facet summary item as stored.
async fn summary_item(stack: &Stack) -> Option<HashMap<String, AttributeValue>> {
    stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("CATALOG".into()))
        .key("sk", AttributeValue::S("FACETS".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

#[tokio::test]
async fn facet_counts_follow_publishing_republishing_edits_keyless_changes_and_rollbacks() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let catalog = stack.catalog();
    // An empty catalog has no values
    assert_eq!(
        facets(&catalog).await,
        json!({"category": [], "tag": [], "license": []})
    );

    // WHEN datasets are first published (new values, values shared, in several cases)
    let now = Utc::now() - Duration::hours(1);
    for i in 0..9 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    // THEN every value is counted over the whole catalog
    assert_facet_lists_consistent(&stack).await;
    assert_eq!(
        entry(&facets(&catalog).await, "category", "biology"),
        Some(json!({"value": "Biology", "count": 3}))
    );

    // WHEN a new dataset has a value others have, in another case
    let mut loud = spec(9);
    loud.category = "BIOLOGY".into();
    loud.tags = vec!["BIRDS".into(), "Wetlands".into()];
    publish(&writer, &loud, now + Duration::seconds(20)).await;
    // THEN the value keeps the form it was first published in, and a new value has its own
    let counted = facets(&catalog).await;
    assert_eq!(
        entry(&counted, "category", "biology"),
        Some(json!({"value": "Biology", "count": 4}))
    );
    assert_eq!(entry(&counted, "tag", "birds").unwrap()["value"], "birds");
    assert_eq!(
        entry(&counted, "tag", "wetlands"),
        Some(json!({"value": "Wetlands", "count": 1}))
    );
    assert_facet_counts_exact(&stack).await;

    // WHEN a dataset is re-published with another category, tags and license
    let mut moved = spec(3);
    moved.category = "Geology".into();
    moved.tags = vec!["Rocks".into(), "birds".into()];
    moved.license = "MIT".into();
    publish(&writer, &moved, now + Duration::minutes(1)).await;
    // THEN it leaves its old values and joins the new ones
    let counted = facets(&catalog).await;
    assert_eq!(entry(&counted, "category", "biology").unwrap()["count"], 3);
    assert_eq!(
        entry(&counted, "category", "geology"),
        Some(json!({"value": "Geology", "count": 1}))
    );
    assert_eq!(
        entry(&counted, "license", "mit"),
        Some(json!({"value": "MIT", "count": 1}))
    );
    assert_facet_lists_consistent(&stack).await;

    // WHEN the dataset first published with a value changes its case (an edit of its metadata)
    let mut recased = spec(0);
    recased.category = "bioLOGY".into();
    publish(&writer, &recased, now + Duration::minutes(2)).await;
    // THEN the value takes that form; a later dataset's new case does not change it
    assert_eq!(
        entry(&facets(&catalog).await, "category", "biology").unwrap()["value"],
        "bioLOGY"
    );
    let mut later = spec(6);
    later.category = "BIOLOGY".into();
    later.description = Some("an edited description".into());
    publish(&writer, &later, now + Duration::minutes(3)).await;
    assert_eq!(
        entry(&facets(&catalog).await, "category", "biology").unwrap()["value"],
        "bioLOGY"
    );
    assert_facet_counts_exact(&stack).await;

    // WHEN the only dataset with a value leaves it THEN the value is gone
    publish(&writer, &spec(3), now + Duration::minutes(4)).await;
    let counted = facets(&catalog).await;
    assert_eq!(entry(&counted, "category", "geology"), None);
    assert_eq!(entry(&counted, "license", "mit"), None);
    assert_facet_lists_consistent(&stack).await;

    // WHEN a keyless window opens, or a dataset is rolled back to a version with the same
    // metadata, THEN nothing changes
    let before = facets(&catalog).await;
    let slug = Slug::parse("ds-00").unwrap();
    writer
        .set_keyless(&slug, Some(Utc::now() + Duration::hours(1)), Utc::now())
        .await
        .unwrap();
    writer
        .activate(&slug, 1, Expected::Version(2), None, Utc::now())
        .await
        .unwrap();
    assert_eq!(facets(&catalog).await, before);
    assert_facet_lists_consistent(&stack).await;
}

#[tokio::test]
async fn a_catalog_from_before_facet_counts_gets_them_from_reindex() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let catalog = stack.catalog();
    for i in 0..6 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // GIVEN a catalog published before the facet summary existed
    stack
        .dynamo
        .delete_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("CATALOG".into()))
        .key("sk", AttributeValue::S("FACETS".into()))
        .send()
        .await
        .unwrap();
    // THEN the list answers without facets (and logs that reindex builds them)...
    let (status, body) = list(&catalog, "facets=true").await;
    assert_eq!(status, 200);
    assert!(body.get("facets").is_none(), "{body}");
    assert_eq!(body["total"], 6);
    // ...and a publish (a new dataset, and a move) does not pretend to have built them
    publish(&writer, &spec(6), Utc::now()).await;
    let mut moved = spec(1);
    moved.category = "Geology".into();
    publish(&writer, &moved, Utc::now()).await;
    let (_, body) = list(&catalog, "facets=true&category=geology").await;
    assert!(body.get("facets").is_none(), "{body}");
    assert_eq!(body["total"], 1);

    // WHEN the operator runs reindex THEN the counts are exact
    let done = writer.reindex().await.unwrap();
    assert!(done.summary_fits);
    let counted = facets(&catalog).await;
    let values = ["category", "tag", "license"]
        .iter()
        .map(|k| counted[k].as_array().unwrap().len())
        .sum::<usize>();
    assert_eq!(done.summary_values, values);
    assert_facet_lists_consistent(&stack).await;
    // AND the next changes keep them exact
    publish(&writer, &spec(1), Utc::now()).await;
    assert_facet_lists_consistent(&stack).await;
}

#[tokio::test]
async fn a_full_summary_is_left_alone_until_reindex_finds_that_the_values_fit() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let catalog = stack.catalog();
    for i in 0..4 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // GIVEN the summary marked full (as a write that would have passed its budget leaves it)
    stack
        .dynamo
        .update_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("CATALOG".into()))
        .key("sk", AttributeValue::S("FACETS".into()))
        .update_expression("SET #full = :true")
        .expression_attribute_names("#full", "full")
        .expression_attribute_values(":true", AttributeValue::Bool(true))
        .send()
        .await
        .unwrap();
    let marked = summary_item(&stack).await;
    // THEN the list answers without facets
    let (_, body) = list(&catalog, "facets=true").await;
    assert!(body.get("facets").is_none(), "{body}");
    // AND publishing goes on without touching it: new datasets, new values, moves
    let mut new = spec(4);
    new.tags = vec!["brand-new".into()];
    publish(&writer, &new, Utc::now()).await;
    let mut moved = spec(0);
    moved.category = "Geology".into();
    publish(&writer, &moved, Utc::now()).await;
    assert_eq!(summary_item(&stack).await, marked, "left alone");
    assert_eq!(
        all_pages(&catalog, "category=geology").await.1,
        ["ds-00"],
        "the filters themselves work"
    );

    // WHEN reindex finds that the catalog's values fit THEN the counts are back, exact
    let done = writer.reindex().await.unwrap();
    assert!(done.summary_fits, "{done:?}");
    let item = summary_item(&stack).await.unwrap();
    assert!(!item.contains_key("full"), "{item:?}");
    assert_facet_lists_consistent(&stack).await;
}

/// A write that would take the summary past its budget marks it full instead (here the summary
/// is padded with a value no dataset has, close to the budget, as a catalog with that many
/// values would fill it): that publish and the next ones succeed, the summary is left alone,
/// the filters keep working; `reindex` drops the stray value and builds it again.
#[tokio::test]
async fn past_its_budget_the_summary_is_marked_full_and_publishing_goes_on() {
    use catalog_writer::summary::BUDGET_BYTES;
    let stack = Stack::start().await;
    let writer = stack.writer();
    let catalog = stack.catalog();
    for i in 0..3 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // GIVEN a summary 500 bytes short of its budget
    let size = catalog_aws::dynamo::codec::item_size(&summary_item(&stack).await.unwrap());
    let name = "d#tag#padding";
    let padding = "x".repeat(BUDGET_BYTES - size - name.len() - 500);
    stack
        .dynamo
        .update_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("CATALOG".into()))
        .key("sk", AttributeValue::S("FACETS".into()))
        .update_expression("SET #pad = :pad")
        .expression_attribute_names("#pad", name)
        .expression_attribute_values(":pad", AttributeValue::S(padding))
        .send()
        .await
        .unwrap();
    assert_facet_counts_exact(&stack).await;

    // WHEN a new dataset brings values that would pass it
    let mut wide = spec(3);
    wide.tags = (0..8)
        .map(|t| format!("New-Tag-{t}-{}", "x".repeat(40)))
        .collect();
    publish(&writer, &wide, Utc::now()).await;
    // THEN the publish succeeded, the summary is marked full with none of its values added
    let item = summary_item(&stack).await.unwrap();
    assert_eq!(item.get("full"), Some(&AttributeValue::Bool(true)));
    assert!(
        !item.keys().any(|k| k.contains("new-tag")),
        "{:?}",
        item.keys()
    );
    // AND the list answers without facets; listing and the filters work
    let (_, body) = list(&catalog, "facets=true").await;
    assert!(body.get("facets").is_none(), "{body}");
    assert_eq!(body["total"], 4);
    let tag = format!("tag=new-tag-7-{}", "x".repeat(40));
    assert_eq!(all_pages(&catalog, &tag).await.1, ["ds-03"]);
    // AND later publishes leave the summary alone
    let mut moved = spec(0);
    moved.category = "Geology".into();
    publish(&writer, &moved, Utc::now()).await;
    publish(&writer, &spec(4), Utc::now()).await;
    assert_eq!(summary_item(&stack).await.unwrap(), item);

    // WHEN reindex runs THEN the value no dataset has is dropped, the rest fits, and the counts
    // are exact again
    let done = writer.reindex().await.unwrap();
    assert!(done.summary_fits, "{done:?}");
    assert!(done.summary_bytes < 5_000, "{done:?}");
    let item = summary_item(&stack).await.unwrap();
    assert!(!item.contains_key(name) && !item.contains_key("full"));
    assert_facet_lists_consistent(&stack).await;
}
