//! The filter lists through the CLI: `datasets reindex` repairs gaps and strays, and a publish
//! whose list rewrite cannot follow exits 1 asking for it.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_tests::facets::{assert_facet_lists_consistent, Stored};
use catalog_tests::faults::{start_proxy, Fault};

/// Publishes `slug` through the CLI with this category (tag `cli`, license CC0-1.0).
fn publish_in(
    stack: &Stack,
    file: &str,
    slug: &str,
    category: &str,
    env: &[(&str, &str)],
) -> Output {
    admin(
        stack,
        &[
            "publish",
            sample(file).to_str().unwrap(),
            "--slug",
            slug,
            "--name",
            "Published through the CLI",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            category,
            "--tag",
            "cli",
        ],
        env,
    )
}

/// The slugs a listing answers, every page, newest first.
async fn listed(stack: &Stack, query: &str) -> (u16, Vec<String>) {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?{query}&page_size=100"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    let status = resp.status().as_u16();
    let body = json_body(&resp);
    let slugs = body["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i["slug"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default();
    (status, slugs)
}

async fn get_item(
    stack: &Stack,
    pk: &str,
    sk: &str,
) -> std::collections::HashMap<String, AttributeValue> {
    stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S(pk.into()))
        .key("sk", AttributeValue::S(sk.into()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap_or_else(|| panic!("no item {pk} {sk}"))
}

async fn put_item(stack: &Stack, item: std::collections::HashMap<String, AttributeValue>) {
    stack
        .dynamo
        .put_item()
        .table_name(&stack.target.datasets_table)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn datasets_reindex_repairs_gaps_and_strays_in_the_filter_lists() {
    let stack = Stack::start().await;
    let files = [
        "river-levels",
        "city-bikes",
        "bird-sightings",
        "air-quality-hourly",
    ];
    for (i, file) in files.iter().enumerate() {
        ok(&publish_in(
            &stack,
            file,
            &format!("ds-{i}"),
            "testing",
            &[],
        ));
    }
    assert_facet_lists_consistent(&stack).await;
    let before = Stored::read(&stack).await.slugs();
    assert_eq!(before["category#testing"], ["ds-0", "ds-1", "ds-2", "ds-3"]);

    // GIVEN a gap in category#testing (its second entry deleted)...
    let seq = |n: u64| format!("SEQ#{n:012}");
    stack
        .dynamo
        .delete_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("LIST#category#testing".into()))
        .key("sk", AttributeValue::S(seq(2)))
        .send()
        .await
        .unwrap();
    // ... a stray past the end of tag#cli (a second copy of its first entry at 5)...
    let mut stray = get_item(&stack, "LIST#tag#cli", &seq(1)).await;
    stray.insert("sk".into(), AttributeValue::S(seq(5)));
    put_item(&stack, stray.clone()).await;
    // ... and a list, with its counter, for a tag no dataset has
    stray.insert("pk".into(), AttributeValue::S("LIST#tag#ghost".into()));
    stray.insert("sk".into(), AttributeValue::S(seq(1)));
    put_item(&stack, stray).await;
    let mut counter = get_item(&stack, "CATALOG#tag#cli", "COUNTER").await;
    counter.insert("pk".into(), AttributeValue::S("CATALOG#tag#ghost".into()));
    counter.insert("total".into(), AttributeValue::N("1".into()));
    put_item(&stack, counter).await;
    // THEN the listings show the damage
    assert_eq!(
        listed(&stack, "category=testing").await.1,
        ["ds-3", "ds-2", "ds-0"]
    );
    assert_eq!(listed(&stack, "tag=ghost").await.1, ["ds-0"]);

    // WHEN the operator runs `datasets reindex`
    let out = ok(&admin(&stack, &["datasets", "reindex"], &[]));
    // THEN every list is exact again: the gap closed, the strays gone, the ghost list empty
    assert!(out.starts_with("reindexed "), "{out}");
    assert_facet_lists_consistent(&stack).await;
    let after = Stored::read(&stack).await;
    for (key, slugs) in &before {
        assert_eq!(&after.slugs()[key], slugs, "{key}");
    }
    assert_eq!(after.counters.get("tag#ghost"), Some(&(0, false)));
    assert!(!after.lists.contains_key("tag#ghost"), "{:?}", after.lists);
    assert_eq!(
        listed(&stack, "category=testing").await.1,
        ["ds-3", "ds-2", "ds-1", "ds-0"]
    );
    assert_eq!(listed(&stack, "tag=ghost").await, (200, vec![]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_publish_whose_filter_list_rewrite_fails_exits_1_asking_for_reindex() {
    let stack = Stack::start().await;
    ok(&publish_in(&stack, "river-levels", "first", "testing", &[]));
    ok(&publish_in(&stack, "city-bikes", "second", "testing", &[]));
    // GIVEN DynamoDB refusing the mark that the rewrite of category#moved needs (and only it)
    let proxy = start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for_requests(
        "UpdateItem",
        &["CATALOG#category#moved", "SET #mark"],
        Fault::InternalServerError,
    );

    // WHEN `first` moves to category moved, through the proxy
    let out = publish_in(
        &stack,
        "bird-sightings",
        "first",
        "moved",
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );

    // THEN the CLI exits 1 and says what to run
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("category#moved")
            && stderr.contains("run `catalog-admin datasets reindex`"),
        "{stderr}"
    );
    // AND the change itself is published, the other list followed, only the one list lags
    assert_eq!(
        json_body(&metadata(&stack, "first").await)["category"],
        "moved"
    );
    assert_eq!(listed(&stack, "category=testing").await.1, ["second"]);
    // (the new category's list is not there yet: its value answers an empty page)
    assert_eq!(
        listed(&stack, "category=moved").await,
        (200, Vec::<String>::new())
    );

    // WHEN the operator runs the reindex it asked for THEN every list is exact
    ok(&admin(&stack, &["datasets", "reindex"], &[]));
    assert_facet_lists_consistent(&stack).await;
    assert_eq!(listed(&stack, "category=moved").await.1, ["first"]);
}
