//! Faults at the transport level, under the real SDK clients with the functions' own SDK
//! configuration (3 attempts, 1 s per attempt, 3 s in all): a proxy in front of moto that
//! answers DynamoDB's 500, throttles, hangs or drops the connection on purpose. Every request
//! then gets the JSON 503 with `Retry-After` and no internals, well within the function's
//! 10 s timeout, after a bounded number of attempts; once the proxy is healthy again, the very
//! next request succeeds on the same clients.

use std::time::{Duration, Instant};

use catalog_aws::dynamo::DynamoCatalog;
use catalog_search::listing::indexed;
use catalog_tests::faults::{start_proxy, Fault};
use catalog_tests::{json_body, v2_request, Stack};
use chrono::Utc;

const KEY: &str = "dcat_faults_read_key_0000000000000000000000000000000000000000000";

#[tokio::test]
async fn injected_faults_give_a_prompt_503_and_the_next_healthy_request_succeeds() {
    // GIVEN the sample catalog behind a fault-injecting proxy, read by the functions' own SDK
    // configuration (retries and timeouts as deployed)
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(KEY, &["read"], now, None).await;
    let proxy = start_proxy(stack.dynamo_url.clone()).await;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .endpoint_url(&proxy.url)
            .region(aws_sdk_dynamodb::config::Region::new(catalog_tests::REGION))
            .credentials_provider(catalog_tests::credentials())
            .build(),
    );
    let catalog = indexed(DynamoCatalog::new(
        client,
        &stack.target.datasets_table,
        &stack.target.keys_table,
    ));
    let signer = stack.signer(Duration::from_secs(60));
    let rows = stack.rows();
    let requests = || {
        [
            ("list", v2_request("/api/v1/datasets", &[])),
            ("metadata", v2_request("/api/v1/datasets/city-bikes", &[])),
            (
                "data",
                v2_request(
                    "/api/v1/datasets/air-quality-hourly/data",
                    &[("x-api-key", KEY)],
                ),
            ),
            (
                "rows",
                v2_request(
                    "/api/v1/datasets/air-quality-hourly/rows?length=5",
                    &[("x-api-key", KEY)],
                ),
            ),
        ]
    };
    for fault in [
        Fault::InternalServerError,
        Fault::Throttling,
        Fault::Hang,
        Fault::DropConnection,
        Fault::ErrorPage,
    ] {
        // WHEN DynamoDB misbehaves
        proxy.set(fault);
        for (name, req) in requests() {
            let started = Instant::now();
            let resp = catalog_tests::answer(&req, &catalog, &signer, &rows).await;
            let took = started.elapsed();
            let attempts = proxy.take_requests();
            // THEN a JSON 503 with Retry-After and no internals, promptly, after at most
            // 3 attempts
            assert_eq!(resp.status(), 503, "{fault:?} {name}: {}", json_body(&resp));
            assert_eq!(resp.headers()["retry-after"], "1", "{fault:?} {name}");
            // (DynamoDB throttling is told apart by its code: `rate_limited`)
            let (code, error) = match fault {
                Fault::Throttling => (
                    "rate_limited",
                    "the catalog is receiving more requests than it can serve right now, retry shortly",
                ),
                _ => (
                    "unavailable",
                    "the catalog is temporarily unavailable, retry shortly",
                ),
            };
            assert_eq!(
                json_body(&resp),
                serde_json::json!({"error": error, "code": code, "request_id": "it"}),
                "{fault:?} {name}"
            );
            assert!(
                took < Duration::from_secs(5),
                "{fault:?} {name}: took {took:?}, the function's timeout is 10 s"
            );
            assert!(
                (1..=3).contains(&attempts),
                "{fault:?} {name}: {attempts} attempts"
            );
        }
        // AND once DynamoDB is healthy again, the next request succeeds on the same clients
        proxy.set(Fault::Healthy);
        for (name, req) in requests() {
            let resp = catalog_tests::answer(&req, &catalog, &signer, &rows).await;
            assert_eq!(
                resp.status(),
                200,
                "after {fault:?}, {name}: {}",
                json_body(&resp)
            );
        }
        proxy.take_requests();
    }
}
