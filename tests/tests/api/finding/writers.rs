//! Many writers at once, through the serialising proxy (DynamoDB applies each request
//! atomically; moto does not when requests arrive together): publishes of many datasets at
//! once all succeed; publishes of one dataset at once report what happened to each; a
//! take-down while others publish finishes by itself; an activation whose answer was lost is
//! not reported as a conflict. Afterwards every list, count, facet, order and the text index
//! agree with the datasets, and `reindex` finds nothing to repair.

use super::orders::{assert_every_sort, assert_orders_match_the_list};
use super::text::{serialized_writer, text_items};
use super::*;
use catalog_tests::facets::assert_facet_lists_consistent;

/// The ClientRequestToken of every TransactWriteItems attempt on dataset `one-0`'s item that a
/// client sends (each retry too).
#[derive(Debug, Clone, Default)]
struct Tokens(Arc<std::sync::Mutex<Vec<Option<String>>>>);

impl aws_smithy_runtime_api::client::interceptors::Intercept for Tokens {
    fn name(&self) -> &'static str {
        "Tokens"
    }

    fn read_before_transmit(
        &self,
        context: &aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef<'_>,
        _components: &aws_smithy_runtime_api::client::runtime_components::RuntimeComponents,
        _cfg: &mut aws_smithy_types::config_bag::ConfigBag,
    ) -> Result<(), aws_smithy_runtime_api::box_error::BoxError> {
        let body = context.request().body().bytes().unwrap_or_default();
        if let Ok(sent) = serde_json::from_slice::<Value>(body) {
            // The transactions on the dataset's own item (not the kept orders' that follow)
            if sent.get("TransactItems").is_some() && body.windows(8).any(|w| w == b"DS#one-0") {
                let token = sent["ClientRequestToken"].as_str().map(str::to_owned);
                catalog::lock(&self.0).push(token);
            }
        }
        Ok(())
    }
}

/// Dataset `i` of a burst: every one in category Biology with tag `birds`, so that all of them
/// meet on the same counters, facet lists, orders and text index.
fn burst(prefix: &str, i: usize) -> Spec {
    Spec {
        slug: format!("{prefix}-{i}"),
        name: format!("Simultaneous survey {i}"),
        description: Some(format!("Birds counted at station {i}")),
        category: "Biology".into(),
        tags: vec!["birds".into(), format!("{prefix}-tag-{}", i % 2)],
        license: ["CC-BY-4.0", "CC0-1.0"][i % 2].into(),
    }
}

/// Every list, count, facet list, kept order and the text index agree with the datasets, and
/// `reindex` finds nothing to repair (and changes no answer).
async fn assert_everything_agrees(stack: &Stack, writer: &DynamoWriter) {
    assert_facet_lists_consistent(stack).await;
    assert_orders_match_the_list(stack).await;
    let (stored, named) = text_items(stack).await;
    assert_eq!(
        stored, named,
        "the text index holds what its manifest names"
    );
    let catalog = stack.catalog();
    assert_every_sort(&catalog, "before reindex").await;
    let (total, listed) = all_pages(&catalog, "").await;
    let mut found = all_pages(&catalog, "q=simultaneous").await.1;
    found.sort();
    let mut surveys: Vec<String> = listed
        .iter()
        .filter(|s| s.starts_with("many-") || s.starts_with("one-"))
        .cloned()
        .collect();
    surveys.sort();
    assert_eq!(found, surveys, "the text index finds every survey");

    let repaired = writer.reindex().await.unwrap();
    assert_eq!(repaired.renumbered, 0, "{repaired:?}");
    assert_eq!(
        repaired.written, 0,
        "no facet entry to repair: {repaired:?}"
    );
    // (What it sweeps is the generation its own build replaced, not something left behind:
    // the stored index and orders were checked against the list above.)
    assert_eq!(repaired.text.datasets, total);
    assert_eq!(repaired.orders.datasets, total);
    let fresh = stack.catalog();
    assert_eq!(
        all_pages(&fresh, "").await.1,
        listed,
        "reindex changed no answer"
    );
    assert_every_sort(&fresh, "after reindex").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publishes_of_many_datasets_at_once_all_succeed_and_every_list_order_and_index_holds_them()
{
    let stack = Stack::start().await;
    let (writer, _proxy) = serialized_writer(&stack).await;
    for i in 0..3 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // WHEN eight new datasets in the same category and tag are published at the same moment
    let n = 8;
    let barrier = Arc::new(Barrier::new(n));
    let mut tasks = Vec::new();
    for i in 0..n {
        let (writer, barrier) = (writer.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let s = burst("many", i);
            barrier.wait().await;
            try_publish(&writer, &s, Utc::now()).await
        }));
    }
    // THEN every publish succeeds, as version 1
    for (i, task) in tasks.into_iter().enumerate() {
        let version = task.await.unwrap();
        assert!(
            matches!(version, Ok(1)),
            "many-{i}: {:?}",
            version.map_err(|e| e.to_string())
        );
    }
    // AND every list, count, facet, order and the index hold all eleven
    let (total, _) = all_pages(&stack.catalog(), "").await;
    assert_eq!(total, 3 + n as u64);
    let (birds, _) = all_pages(&stack.catalog(), "category=biology&tag=birds").await;
    assert_eq!(
        birds,
        n as u64 + 1,
        "the burst and the one sample in biology with birds"
    );
    assert_everything_agrees(&stack, &writer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn publishes_of_one_dataset_at_once_report_what_happened_to_each() {
    let stack = Stack::start().await;
    let (writer, _proxy) = serialized_writer(&stack).await;
    publish(&writer, &spec(0), Utc::now()).await;
    let s = burst("one", 0);
    publish(&writer, &s, Utc::now()).await;
    // WHEN six publishes of that dataset start at the same moment
    let n = 6;
    let barrier = Arc::new(Barrier::new(n));
    let mut tasks = Vec::new();
    for _ in 0..n {
        let (writer, barrier) = (writer.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let s = burst("one", 0);
            barrier.wait().await;
            try_publish(&writer, &s, Utc::now()).await
        }));
    }
    let mut succeeded = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Ok(version) => succeeded.push(version),
            // THEN each that lost says so, naming the dataset it lost on
            Err(WriteError::Conflict(slug)) => assert_eq!(slug, "one-0"),
            Err(e) => panic!("a publish failed otherwise: {e}"),
        }
    }
    // AND the version serving is the newest of those reported published: none that reported
    // a conflict serves
    let served = writer
        .list_versions(&Slug::parse("one-0").unwrap())
        .await
        .unwrap()
        .into_iter()
        .find(|v| v.active)
        .map(|v| v.version.version);
    assert!(!succeeded.is_empty(), "one publish at least wins");
    assert_eq!(served, succeeded.iter().max().copied(), "{succeeded:?}");
    assert_everything_agrees(&stack, &writer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_takedown_while_others_publish_finishes_by_itself_and_the_publishes_succeed() {
    let stack = Stack::start().await;
    let (writer, _proxy) = serialized_writer(&stack).await;
    for i in 0..3 {
        publish(&writer, &burst("many", 100 + i), Utc::now()).await;
    }
    // WHEN one of them is deleted while six others in its category are published
    let n = 6;
    let barrier = Arc::new(Barrier::new(n + 1));
    let mut tasks = Vec::new();
    for i in 0..n {
        let (writer, barrier) = (writer.clone(), barrier.clone());
        tasks.push(tokio::spawn(async move {
            let s = burst("many", i);
            barrier.wait().await;
            try_publish(&writer, &s, Utc::now()).await.map(|_| ())
        }));
    }
    let deleting = {
        let (writer, barrier) = (writer.clone(), barrier.clone());
        tokio::spawn(async move {
            barrier.wait().await;
            writer
                .delete_dataset(&Slug::parse("many-101").unwrap(), Utc::now())
                .await
                .map(|_| ())
        })
    };
    // THEN the delete and every publish succeed, with no step left to the operator
    deleting
        .await
        .unwrap()
        .unwrap_or_else(|e| panic!("the delete: {e}"));
    for (i, task) in tasks.into_iter().enumerate() {
        task.await
            .unwrap()
            .unwrap_or_else(|e| panic!("many-{i}: {e}"));
    }
    let (_, listed) = all_pages(&stack.catalog(), "").await;
    assert!(!listed.contains(&"many-101".to_owned()), "{listed:?}");
    assert_eq!(listed.len(), 2 + n);
    assert_everything_agrees(&stack, &writer).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activation_whose_answer_was_lost_is_reported_published_not_a_conflict() {
    // GIVEN version 1 serving, and a proxy that lets the activation of version 2 reach
    // DynamoDB but loses its answer once (the SDK sends it again)
    let stack = Stack::start().await;
    let s = burst("one", 0);
    publish(&stack.writer(), &s, Utc::now()).await;
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    let tokens = Tokens::default();
    let writer = DynamoWriter::new(
        aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
                .endpoint_url(&proxy.url)
                .interceptor(tokens.clone())
                .build(),
        ),
        &stack.target.datasets_table,
        &stack.target.keys_table,
    );
    proxy.set_for_requests(
        "TransactWriteItems",
        &["one-0"],
        catalog_tests::faults::Fault::LoseResponseOnce,
    );
    // WHEN version 2 is published
    let published = try_publish(&writer, &s, Utc::now()).await;
    // THEN the publish reports version 2 published, and version 2 serves
    assert!(
        matches!(published, Ok(2)),
        "{:?}",
        published.map_err(|e| e.to_string())
    );
    let versions = writer
        .list_versions(&Slug::parse("one-0").unwrap())
        .await
        .unwrap();
    assert_eq!(versions.len(), 2);
    assert!(versions[1].active, "{versions:?}");
    // AND the transaction was sent twice, with the same ClientRequestToken both times (so
    // that DynamoDB answers the retry as it answered the first)
    let sent = catalog::lock(&tokens.0).clone();
    assert_eq!(sent.len(), 2, "{sent:?}");
    assert!(sent[0].is_some(), "{sent:?}");
    assert_eq!(sent[0], sent[1]);
}

#[tokio::test]
async fn a_write_held_up_by_a_list_past_its_wait_names_that_list_and_changes_nothing() {
    let stack = Stack::start().await;
    publish(&stack.writer(), &burst("many", 0), Utc::now()).await;
    // GIVEN the filter list category=biology held by another writer (its mark renewed ahead)
    let facet = catalog::query::Facet::from_key("category#biology").expect("a facet key");
    let until = Utc::now() + Duration::hours(1);
    stack
        .dynamo
        .update_item()
        .table_name(&stack.target.datasets_table)
        .set_key(Some(catalog_aws::dynamo::layout::counter_key(
            catalog_aws::dynamo::layout::facet_counter_pk(&facet),
        )))
        .update_expression("SET rebuild_until = :until")
        .expression_attribute_values(":until", catalog_aws::dynamo::attr::time(&until))
        .send()
        .await
        .unwrap();
    // WHEN a keyless window is set by a writer that waits at most two seconds
    let impatient = stack
        .writer()
        .with_shared_wait(std::time::Duration::from_secs(2));
    let slug = Slug::parse("many-0").unwrap();
    let refused = impatient
        .set_keyless(&slug, Some(until), Utc::now())
        .await
        .expect_err("the list is held past the wait");
    // THEN it names the list it waited for, not the dataset
    match &refused {
        WriteError::Contended { what, seconds } => {
            assert!(what.contains("category#biology"), "{what}");
            assert!(*seconds >= 2, "{seconds}");
        }
        other => panic!("{other:?}"),
    }
    let message = refused.to_string();
    assert!(
        !message.contains("dataset '") && message.contains("nothing was changed"),
        "{message}"
    );
    // AND nothing changed: no keyless window on the dataset
    let item = stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .set_key(Some(catalog_aws::dynamo::layout::key_of(
            catalog_aws::dynamo::layout::dataset_pk("many-0"),
            catalog_aws::dynamo::layout::DATASET_SK,
        )))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert!(
        matches!(
            item.get("keyless_until"),
            None | Some(aws_sdk_dynamodb::types::AttributeValue::Null(_))
        ),
        "{item:?}"
    );
    assert_eq!(
        item["rev"].as_n().unwrap(),
        "1",
        "the dataset is as published"
    );
}
