//! The cost of each request, counted on the wire: every HTTP request the real SDK clients send
//! to DynamoDB and S3 while the handlers answer one API request.

use catalog_tests::{json_body, v2_request, Stack, Wire, EVENTS_DATASET_ID};
use chrono::Utc;

/// A request (path, headers) and the DynamoDB operations it must cost, in order.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a [&'a str]);

const KEY: &str = "dcat_cost_read_key_000000000000000000000000000000000000000000000";

#[tokio::test]
async fn each_request_costs_the_designed_round_trips_and_no_s3_call() {
    // GIVEN the sample catalog and clients whose every request is recorded
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(KEY, &["read"], now, None).await;
    let dynamo_wire = Wire::default();
    let s3_wire = Wire::default();
    let (catalog, signer) = stack.wired(&dynamo_wire, &s3_wire);

    let by_id = format!("/api/v1/datasets/{EVENTS_DATASET_ID}");
    let by_id_data = format!("{by_id}/data");
    let bearer = format!("Bearer {KEY}");
    let cases: Vec<Case> = vec![
        (
            "/api/v1/datasets",
            vec![],
            &["DynamoDB.GetItem", "DynamoDB.Query"],
        ),
        (
            "/api/v1/datasets?page=2&page_size=2",
            vec![],
            &["DynamoDB.GetItem", "DynamoDB.Query"],
        ),
        ("/api/v1/datasets?page=9", vec![], &["DynamoDB.GetItem"]),
        ("/api/v1/datasets/city-bikes", vec![], &["DynamoDB.GetItem"]),
        (&by_id, vec![], &["DynamoDB.GetItem"]),
        (
            "/api/v1/datasets/city-bikes/data",
            vec![],
            &["DynamoDB.GetItem"],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data",
            vec![("x-api-key", KEY)],
            &["DynamoDB.BatchGetItem"],
        ),
        (
            &by_id_data,
            vec![("authorization", &bearer)],
            &["DynamoDB.BatchGetItem"],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data",
            vec![("x-api-key", "dcat_bad")],
            &["DynamoDB.BatchGetItem"],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data?format=csv",
            vec![],
            &[],
        ),
    ];
    for (path, headers, expected) in cases {
        let req = v2_request(path, &headers);
        let resp = catalog_tests::answer(&req, &catalog, &signer).await;
        assert!(resp.status().as_u16() < 500, "{path}: {}", json_body(&resp));
        // WHEN one request is answered THEN exactly the designed calls crossed the wire
        assert_eq!(dynamo_wire.take(), expected, "{path} {headers:?}");
        assert_eq!(s3_wire.take(), Vec::<String>::new(), "{path}: no S3 call");
    }
}
