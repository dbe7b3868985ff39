//! The cost of each request, counted on the wire: every HTTP request the real SDK clients send
//! to DynamoDB and S3 while the handlers answer one API request, how many items each response
//! carried, and the status the request got (a cheap answer must still be the right one).

use catalog_tests::{json_body, v2_request, Call, Stack, Wire, EVENTS_DATASET_ID};
use chrono::{Duration, Utc};

/// A request (path, headers), the status it gets, and the DynamoDB calls it must cost, in
/// order: (operation, items in the response).
type Case<'a> = (
    &'a str,
    Vec<(&'a str, &'a str)>,
    u16,
    &'a [(&'a str, usize)],
);

const KEY: &str = "dcat_cost_read_key_000000000000000000000000000000000000000000000";
const REVOKED: &str = "dcat_cost_revoked_key_0000000000000000000000000000000000000000000";
const EXPIRED: &str = "dcat_cost_expired_key_0000000000000000000000000000000000000000000";
const NO_READ: &str = "dcat_cost_noread_key_00000000000000000000000000000000000000000000";

const GET: &str = "DynamoDB.GetItem";
const QUERY: &str = "DynamoDB.Query";
const BATCH: &str = "DynamoDB.BatchGetItem";
const UPDATE: &str = "DynamoDB.UpdateItem";

#[tokio::test]
async fn each_request_costs_the_designed_round_trips_and_items_and_no_s3_call() {
    // GIVEN the sample catalog (4 datasets, 2 in category environment), keys of every kind,
    // and clients whose every request is recorded
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(KEY, &["read"], now, None).await;
    stack.add_key(REVOKED, &["read"], now, None).await;
    stack
        .add_key(EXPIRED, &["read"], now, Some(now - Duration::hours(1)))
        .await;
    stack.add_key(NO_READ, &["write"], now, None).await;
    stack
        .writer()
        .revoke_key(&catalog::keys::KeyHash::of(REVOKED), now)
        .await
        .expect("revoke");
    let dynamo_wire = Wire::default();
    let s3_wire = Wire::default();
    let (catalog, signer) = stack.wired(&dynamo_wire, &s3_wire);
    let rows = stack.rows_wired(&s3_wire);

    let by_id = format!("/api/v1/datasets/{EVENTS_DATASET_ID}");
    let by_id_data = format!("{by_id}/data");
    let bearer = format!("Bearer {KEY}");
    let gated = "/api/v1/datasets/air-quality-hourly/data";
    let gated_download = "/api/v1/datasets/air-quality-hourly/download";
    let basic = |key: &str| {
        format!(
            "Basic {}",
            aws_smithy_types::base64::encode(format!("key:{key}"))
        )
    };
    let basic_key = basic(KEY);
    let basic_bad = basic("dcat_bad");
    let cases: Vec<Case> = vec![
        // Listing: the counter, then exactly one page of entries
        ("/api/v1/datasets", vec![], 200, &[(GET, 1), (QUERY, 4)]),
        (
            "/api/v1/datasets?page=2&page_size=2",
            vec![],
            200,
            &[(GET, 1), (QUERY, 2)],
        ),
        (
            "/api/v1/datasets?page=2&page_size=1",
            vec![],
            200,
            &[(GET, 1), (QUERY, 1)],
        ),
        (
            "/api/v1/datasets?page=2&page_size=3",
            vec![],
            200,
            &[(GET, 1), (QUERY, 1)],
        ),
        ("/api/v1/datasets?page=9", vec![], 200, &[(GET, 1)]),
        (
            "/api/v1/datasets?category=environment",
            vec![],
            200,
            &[(GET, 1), (QUERY, 2)],
        ),
        // A value no dataset has: an empty page, and the catalog counter for the operators' mark
        (
            "/api/v1/datasets?category=nope",
            vec![],
            200,
            &[(GET, 0), (GET, 1)],
        ),
        // Facet counts: the facet summary read with the counters, in the same first request
        // (a BatchGetItem: the catalog counter and the summary, and the facet's counter)
        (
            "/api/v1/datasets?facets=true",
            vec![],
            200,
            &[(BATCH, 2), (QUERY, 4)],
        ),
        (
            "/api/v1/datasets?category=environment&facets=true",
            vec![],
            200,
            &[(BATCH, 3), (QUERY, 2)],
        ),
        (
            "/api/v1/datasets?category=nope&facets=true",
            vec![],
            200,
            &[(BATCH, 2)],
        ),
        // Words: the counter, the summary and the text index's manifest; the shard the word
        // needs and the delta; the page's entries (one match)
        (
            "/api/v1/datasets?q=river&facets=true",
            vec![],
            200,
            &[(BATCH, 3), (BATCH, 2), (BATCH, 1)],
        ),
        ("/api/v1/datasets?facets=yes", vec![], 400, &[]),
        ("/api/v1/datasets?page=0", vec![], 400, &[]),
        ("/api/v1/nowhere", vec![], 404, &[]),
        // Metadata: one item, by slug or by UUID
        ("/api/v1/datasets/city-bikes", vec![], 200, &[(GET, 1)]),
        (&by_id, vec![], 200, &[(GET, 1)]),
        ("/api/v1/datasets/no-such-dataset", vec![], 404, &[(GET, 0)]),
        ("/api/v1/datasets/Bad_Slug", vec![], 400, &[]),
        // Data: the dataset alone when no key is sent, else the dataset and the key together
        ("/api/v1/datasets/city-bikes/data", vec![], 200, &[(GET, 1)]),
        (gated, vec![], 401, &[(GET, 1)]),
        // A key's first download in the hour also records its last use (one UpdateItem that
        // reads nothing); the next ones are the BatchGetItem alone.
        (
            gated,
            vec![("x-api-key", KEY)],
            200,
            &[(BATCH, 2), (UPDATE, 0)],
        ),
        (gated, vec![("x-api-key", KEY)], 200, &[(BATCH, 2)]),
        (
            &by_id_data,
            vec![("authorization", &bearer)],
            200,
            &[(BATCH, 2)],
        ),
        (gated, vec![("x-api-key", "dcat_bad")], 401, &[(BATCH, 1)]),
        (gated, vec![("x-api-key", REVOKED)], 401, &[(BATCH, 2)]),
        (gated, vec![("x-api-key", EXPIRED)], 401, &[(BATCH, 2)]),
        (gated, vec![("x-api-key", NO_READ)], 403, &[(BATCH, 2)]),
        (
            "/api/v1/datasets/city-bikes/data",
            vec![("x-api-key", "dcat_bad")],
            401,
            &[(BATCH, 1)],
        ),
        (
            "/api/v1/datasets/no-such-dataset/data",
            vec![("x-api-key", KEY)],
            404,
            &[(BATCH, 1)],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data?version=1",
            vec![("x-api-key", KEY)],
            200,
            &[(BATCH, 2)],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data?version=2",
            vec![("x-api-key", KEY)],
            404,
            &[(BATCH, 2)],
        ),
        (
            "/api/v1/datasets/air-quality-hourly/data?format=csv",
            vec![],
            400,
            &[],
        ),
        // Croissant: the metadata's one item
        (
            "/api/v1/datasets/city-bikes/croissant",
            vec![],
            200,
            &[(GET, 1)],
        ),
        (
            "/api/v1/datasets/no-such-dataset/croissant",
            vec![],
            404,
            &[(GET, 0)],
        ),
        // The DCAT catalog: a page of the list, at the list's cost
        ("/api/v1/catalog", vec![], 200, &[(GET, 1), (QUERY, 4)]),
        (
            "/api/v1/catalog?page=2&page_size=2",
            vec![("accept", "text/turtle")],
            200,
            &[(GET, 1), (QUERY, 2)],
        ),
        ("/api/v1/catalog?format=xml", vec![], 400, &[]),
        // The download route: the data route's reads, then a redirect
        (
            "/api/v1/datasets/city-bikes/download",
            vec![],
            302,
            &[(GET, 1)],
        ),
        (
            gated_download,
            vec![("authorization", &basic_key)],
            302,
            &[(BATCH, 2)],
        ),
        (
            gated_download,
            vec![("authorization", &basic_bad)],
            401,
            &[(BATCH, 1)],
        ),
        (
            gated_download,
            vec![("authorization", "Basic not-base64!")],
            401,
            &[],
        ),
        (gated_download, vec![], 401, &[(GET, 1)]),
        // A key in the query string is never read: no key was sent
        (
            "/api/v1/datasets/air-quality-hourly/data?api_key=dcat_in_the_query",
            vec![],
            401,
            &[(GET, 1)],
        ),
        (
            gated,
            vec![("x-api-key", "dcat_other"), ("authorization", &bearer)],
            400,
            &[],
        ),
    ];
    let mut wrong = Vec::new();
    for (path, headers, status, expected) in cases {
        let req = v2_request(path, &headers);
        let resp = catalog_tests::answer(&req, &catalog, &signer, &rows).await;
        // WHEN one request is answered THEN it gets its status, exactly the designed calls
        // crossed the wire, each response carried the designed number of items, and nothing
        // went to S3 (URLs are signed locally)
        let got = resp.status().as_u16();
        let calls: Vec<(String, usize)> = dynamo_wire
            .take_calls()
            .into_iter()
            .map(
                |Call {
                     operation, items, ..
                 }| (operation, items),
            )
            .collect();
        let want: Vec<(String, usize)> = expected
            .iter()
            .map(|(operation, items)| ((*operation).to_owned(), *items))
            .collect();
        if got != status || calls != want {
            wrong.push(format!(
                "{path} {headers:?}: status {got} (want {status}), calls {calls:?} (want {want:?}): {}",
                json_body(&resp)
            ));
        }
        let s3 = s3_wire.take();
        if !s3.is_empty() {
            wrong.push(format!("{path}: S3 calls {s3:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
