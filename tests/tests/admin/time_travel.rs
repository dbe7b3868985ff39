//! Delta Sharing time travel after the CLI's changes: only versions that were activated and not
//! withdrawn since are read by number; a rolled-back version, and one recorded by a publish that
//! never activated it, get the answer a version that does not exist gets.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_http::testing::V2Event;

/// A Delta Sharing query of `slug` as of `version`, with `key`, through the handler.
async fn query(
    stack: &Stack,
    key: &str,
    slug: &str,
    version: u64,
) -> lambda_http::Response<lambda_http::Body> {
    let path = format!("/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables/{slug}/query");
    let event = V2Event::new("POST", &path)
        .header("authorization", &format!("Bearer {key}"))
        .body(&format!(r#"{{"version": {version}}}"#));
    api::sharing(
        &event.request(),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await
}

/// The version of the file a query answered with (its file line's `version`).
async fn served(stack: &Stack, key: &str, slug: &str, version: u64) -> Value {
    let resp = query(stack, key, slug, version).await;
    assert_eq!(resp.status(), 200, "v{version}: {:?}", resp.body());
    let text = String::from_utf8(resp.body().to_vec()).unwrap();
    let file: Value = serde_json::from_str(text.lines().nth(2).expect("a file line")).unwrap();
    file["file"]["version"].clone()
}

/// A refusal as the client sees it, the number asked for written `N`: status, the protocol's
/// error code, this catalog's code and the message.
async fn refusal(stack: &Stack, key: &str, slug: &str, version: u64) -> (u16, Value) {
    let resp = query(stack, key, slug, version).await;
    let mut body = json_body(&resp);
    body.as_object_mut().unwrap().remove("requestId");
    let message = body["message"]
        .as_str()
        .unwrap_or_default()
        .replace(&format!("version {version} of"), "version N of");
    body["message"] = Value::String(message);
    (resp.status().as_u16(), body)
}

/// What a version that was never published gets.
async fn missing(stack: &Stack, key: &str, slug: &str) -> (u16, Value) {
    let answer = refusal(stack, key, slug, 99).await;
    assert_eq!(answer.0, 404, "{answer:?}");
    assert_eq!(answer.1["errorCode"], "RESOURCE_DOES_NOT_EXIST");
    answer
}

#[tokio::test]
async fn a_version_withdrawn_by_a_rollback_is_never_shared_again() {
    // GIVEN versions 1 and 2 published, version 2 read by number while it is active
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    ok(&publish(&stack, &sample("city-bikes"), "gauges"));
    let key = create_key(&stack);
    assert_eq!(served(&stack, &key, "gauges", 2).await, 2);
    assert_eq!(served(&stack, &key, "gauges", 1).await, 1);

    // WHEN an operator rolls back to version 1, then publishes version 3
    ok(&admin(
        &stack,
        &["versions", "activate", "gauges", "1"],
        &[],
    ));
    let out = ok(&publish(&stack, &sample("bird-sightings"), "gauges"));
    assert!(out.contains("version 3"), "{out}");

    // THEN version 2 gets exactly the answer of a version that never existed
    assert_eq!(
        refusal(&stack, &key, "gauges", 2).await,
        missing(&stack, &key, "gauges").await
    );
    // AND versions 1 (active before, never withdrawn) and 3 (active) are read
    assert_eq!(served(&stack, &key, "gauges", 1).await, 1);
    assert_eq!(served(&stack, &key, "gauges", 3).await, 3);

    // AND activating version 2 again shares it again, withdrawing version 3
    ok(&admin(
        &stack,
        &["versions", "activate", "gauges", "2"],
        &[],
    ));
    assert_eq!(served(&stack, &key, "gauges", 2).await, 2);
    assert_eq!(served(&stack, &key, "gauges", 1).await, 1);
    assert_eq!(refusal(&stack, &key, "gauges", 3).await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_recorded_by_a_publish_that_never_activated_it_is_never_shared() {
    // GIVEN version 1 serving, and a publish of version 2 whose activation fails (every
    // transaction answered 500 behind a proxy): its record is written, never activated
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for(
        "TransactWriteItems",
        catalog_tests::faults::Fault::InternalServerError,
    );
    let failed = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    assert!(!failed.status.success(), "the publish must fail");
    let slug = Slug::parse("gauges").unwrap();
    let versions = stack.writer().list_versions(&slug).await.unwrap();
    assert_eq!(versions.len(), 2, "version 2 is recorded: {versions:?}");

    // WHEN a later publish makes version 3 active
    let out = ok(&publish(&stack, &sample("bird-sightings"), "gauges"));
    assert!(out.contains("version 3"), "{out}");

    // THEN version 2 gets exactly the answer of a version that never existed
    assert_eq!(
        refusal(&stack, &key, "gauges", 2).await,
        missing(&stack, &key, "gauges").await
    );
    // AND versions 1 and 3 are read
    assert_eq!(served(&stack, &key, "gauges", 1).await, 1);
    assert_eq!(served(&stack, &key, "gauges", 3).await, 3);
}

#[tokio::test]
async fn a_dataset_recorded_before_the_served_versions_shares_its_active_version_alone() {
    // GIVEN versions 1 and 2, their dataset's item (and alias) as written before
    // `served_versions` existed
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    ok(&publish(&stack, &sample("city-bikes"), "gauges"));
    let key = create_key(&stack);
    let id = json_body(&metadata(&stack, "gauges").await)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    for pk in ["DS#gauges".to_owned(), format!("ID#{id}")] {
        stack
            .dynamo
            .update_item()
            .table_name(&stack.target.datasets_table)
            .key("pk", AttributeValue::S(pk))
            .key("sk", AttributeValue::S("DATASET".into()))
            .update_expression("REMOVE served_versions")
            .condition_expression("attribute_exists(served_versions)")
            .send()
            .await
            .expect("the item had the attribute");
    }

    // THEN only the active version is read: nothing says version 1 was never withdrawn
    assert_eq!(served(&stack, &key, "gauges", 2).await, 2);
    assert_eq!(
        refusal(&stack, &key, "gauges", 1).await,
        missing(&stack, &key, "gauges").await
    );

    // WHEN version 3 is published
    ok(&publish(&stack, &sample("bird-sightings"), "gauges"));

    // THEN version 2, active until then, is read by number; version 1 still is not
    assert_eq!(served(&stack, &key, "gauges", 2).await, 2);
    assert_eq!(served(&stack, &key, "gauges", 3).await, 3);
    assert_eq!(refusal(&stack, &key, "gauges", 1).await.0, 404);
}
