//! Storage failures: unreachable or throttled DynamoDB, unpublished and malformed records.

use super::*;

/// Every endpoint, served by the production SDK configuration (retries, timeouts) against a
/// DynamoDB at `endpoint`, answers 503 with `Retry-After`, the given error code and no
/// internals.
async fn assert_every_endpoint_is_503(endpoint: String, code: &str, error: &str) {
    let stack = Stack::start().await;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .endpoint_url(endpoint)
            .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
            .credentials_provider(catalog_tests::credentials())
            .build(),
    );
    let catalog = indexed(DynamoCatalog::new(
        client,
        "catalog-datasets",
        "catalog-keys",
    ));
    let signer = stack.signer(Duration::from_secs(60));
    for resp in [
        api::list(&v2_request("/api/v1/datasets", &[]), &catalog, Utc::now()).await,
        api::metadata(
            &v2_request("/api/v1/datasets/city-bikes", &[]),
            &catalog,
            Utc::now(),
        )
        .await,
        api::data(
            &v2_request(
                "/api/v1/datasets/city-bikes/data",
                &[("x-api-key", READ_KEY)],
            ),
            &catalog,
            &signer,
            Utc::now(),
        )
        .await,
    ] {
        assert_eq!(resp.status(), 503);
        assert_eq!(resp.headers()["retry-after"], "1");
        assert_eq!(
            json_body(&resp),
            serde_json::json!({"error": error, "code": code, "request_id": "it"})
        );
    }
}
const RATE_LIMITED: &str =
    "the catalog is receiving more requests than it can serve right now, retry shortly";

#[tokio::test]
async fn unreachable_dynamodb_is_503_with_retry_after() {
    // A port nobody listens on: connection refused, retried, then given up.
    let endpoint = format!("http://127.0.0.1:{}", catalog_tests::free_port());
    assert_every_endpoint_is_503(endpoint, "unavailable", UNAVAILABLE).await;
}

/// A DynamoDB endpoint that answers every call with a throttling error, as DynamoDB does on the
/// wire (HTTP 400 with the exception's type in the JSON body).
async fn throttling_dynamodb() -> String {
    use hyper::server::conn::http1;
    use hyper_util::rt::TokioIo;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let service = hyper::service::service_fn(|_req| async {
                    let body = r#"{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"Rate of requests exceeds the allowed throughput."}"#;
                    Ok::<_, std::convert::Infallible>(
                        hyper::Response::builder()
                            .status(400)
                            .header("content-type", "application/x-amz-json-1.0")
                            .header("x-amzn-requestid", "throttled")
                            .body(http_body_util::Full::new(bytes::Bytes::from_static(
                                body.as_bytes(),
                            )))
                            .unwrap(),
                    )
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn throttled_dynamodb_is_503_with_retry_after() {
    assert_every_endpoint_is_503(throttling_dynamodb().await, "rate_limited", RATE_LIMITED).await;
}

/// Writes a raw dataset item, bypassing the writer, as a broken or half-made record would be.
async fn put_raw_dataset(stack: &Stack, slug: &str, with_name: bool) {
    use aws_sdk_dynamodb::types::AttributeValue::{Null, S};
    let mut put = stack
        .dynamo
        .put_item()
        .table_name(&stack.target.datasets_table)
        .item("pk", S(format!("DS#{slug}")))
        .item("sk", S("DATASET".into()))
        .item("slug", S(slug.into()))
        .item("id", S(uuid::Uuid::new_v4().to_string()))
        .item("description", Null(true))
        .item("license", S("CC0-1.0".into()))
        .item("source", S("test".into()))
        .item("category", S("test".into()))
        .item("insights", S("".into()))
        .item("discussions", S("[]".into()))
        .item("created_at", S("2026-01-01T00:00:00Z".into()))
        .item("updated_at", S("2026-01-01T00:00:00Z".into()));
    if with_name {
        put = put.item("name", S("Half made".into()));
    }
    put.send().await.expect("put raw item");
}

#[tokio::test]
async fn dataset_without_active_version_is_404_saying_so() {
    let g = given().await;
    put_raw_dataset(&g.stack, "half-made", true).await;
    let resp = g.metadata("/api/v1/datasets/half-made").await;
    assert_eq!(resp.status(), 404);
    assert!(json_body(&resp)["error"]
        .as_str()
        .unwrap()
        .contains("no active version"));
    let resp = g
        .data(
            "/api/v1/datasets/half-made/data",
            &[("x-api-key", READ_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 404);
    assert!(json_body(&resp)["error"]
        .as_str()
        .unwrap()
        .contains("no active version"));
}

#[tokio::test]
async fn malformed_record_is_500_with_a_generic_message() {
    let g = given().await;
    put_raw_dataset(&g.stack, "broken", false).await;
    let resp = g.metadata("/api/v1/datasets/broken").await;
    assert_eq!(resp.status(), 500);
    assert_eq!(
        json_body(&resp),
        serde_json::json!({"error": "internal error", "code": "internal", "request_id": "it"})
    );
}
