//! The spec's rules and the project's decisions, one test each, against in-memory adapters.
//! Requests are built from API Gateway HTTP API (payload v2) events, as Lambda delivers them.
//! The same rules run against DynamoDB and S3 emulators in the `tests/` crate.

use std::sync::atomic::Ordering;

use catalog::domain::{KeyHash, Scope, Slug};
use catalog::memory::{FakeSigner, MemoryCatalog};
use catalog::model::{ActiveVersion, Card, DatasetMeta, DatasetRecord, Discussion, KeyRecord};
use catalog::testing::V2Event;
use chrono::{DateTime, Duration, TimeZone, Utc};
use lambda_http::{Body, Request, Response};
use serde_json::{json, Value};
use uuid::Uuid;

const READ_KEY: &str = "dcat_read_key_0123456789abcdef";
const WRITE_ONLY_KEY: &str = "dcat_write_key_0123456789abcdef";
const REVOKED_KEY: &str = "dcat_revoked_key_0123456789abcdef";
const EXPIRED_KEY: &str = "dcat_expired_key_0123456789abcdef";
const UNKNOWN_KEY: &str = "dcat_unknown_key_0123456789abcdef";

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
}

fn record(slug: &str, keyless_until: Option<DateTime<Utc>>, active: bool) -> DatasetRecord {
    DatasetRecord {
        id: Uuid::new_v4(),
        slug: Slug::parse(slug).unwrap(),
        meta: DatasetMeta {
            card: Card {
                name: format!("Dataset {slug}"),
                description: None,
                category: "testing".into(),
                tags: vec!["a".into(), "b".into()],
                license: "CC-BY-4.0".into(),
            },
            source: "test".into(),
            insights: "none".into(),
            discussions: vec![Discussion {
                id: "1".into(),
                title: "t".into(),
                slug: "s".into(),
                path: "/p".into(),
            }],
        },
        schema: serde_json::value::RawValue::from_string(
            r#"[{"name":"x","dtype":"int64","null_count":0,"null_percent":0.0,"unique_count":2,"mean":1.5,"std":0.7,"min":1,"max":2,"median":1.5,"top_values":[1,2],"sample_values":[1,2]},{"name":"s","dtype":"string","null_count":1,"null_percent":50.0,"unique_count":1,"mean":null,"std":null,"min":null,"max":null,"median":null,"top_values":["q"],"sample_values":["q"]}]"#.into(),
        )
        .unwrap(),
        keyless_until,
        created_at: now() - Duration::days(10),
        updated_at: now() - Duration::days(1),
        active: active.then(|| ActiveVersion {
            version: 3,
            s3_key: format!("datasets/{slug}/v3/data.parquet"),
            size: 1234,
            row_count: 2,
            columns: vec!["x".into(), "s".into()],
            sha256: "00".repeat(32),
            published_at: now() - Duration::days(1),
        }),
    }
}

/// GIVEN a catalog with a gated dataset, one in an open keyless window, one whose window has
/// closed, one without an active version, and keys of every kind.
fn catalog() -> MemoryCatalog {
    let c = MemoryCatalog::default();
    c.insert_dataset(record("gated", None, true));
    c.insert_dataset(record(
        "open-window",
        Some(now() + Duration::hours(1)),
        true,
    ));
    c.insert_dataset(record(
        "closed-window",
        Some(now() - Duration::seconds(1)),
        true,
    ));
    c.insert_dataset(record("unpublished", None, false));
    let key = |id: &str, scopes: Vec<Scope>| KeyRecord {
        id: id.into(),
        scopes,
        expires_at: None,
        revoked_at: None,
    };
    c.insert_key(KeyHash::of(READ_KEY), key("k-read", vec![Scope::Read]));
    c.insert_key(
        KeyHash::of(WRITE_ONLY_KEY),
        key("k-write", vec![Scope::parse("write")]),
    );
    c.insert_key(
        KeyHash::of(REVOKED_KEY),
        KeyRecord {
            revoked_at: Some(now() - Duration::minutes(1)),
            ..key("k-revoked", vec![Scope::Read])
        },
    );
    c.insert_key(
        KeyHash::of(EXPIRED_KEY),
        KeyRecord {
            expires_at: Some(now()),
            ..key("k-expired", vec![Scope::Read])
        },
    );
    c
}

/// An API Gateway HTTP API (v2) event, deserialized as lambda_http does in Lambda.
fn get(path_and_query: &str, headers: &[(&str, &str)]) -> Request {
    request("GET", path_and_query, headers)
}

fn request(method: &str, path_and_query: &str, headers: &[(&str, &str)]) -> Request {
    V2Event::new(method, path_and_query)
        .headers(headers.iter().copied())
        .request()
}

fn body(resp: &Response<Body>) -> Value {
    serde_json::from_slice(resp.body().as_ref()).expect("JSON body")
}

fn assert_json_error(resp: &Response<Body>, status: u16) -> String {
    assert_eq!(resp.status().as_u16(), status, "body: {:?}", body(resp));
    assert_eq!(
        resp.headers()["content-type"],
        "application/json",
        "errors are JSON"
    );
    let b = body(resp);
    let mut keys: Vec<&str> = b
        .as_object()
        .map(|o| o.keys().map(String::as_str).collect())
        .unwrap_or_default();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["code", "error", "request_id"],
        "error body is {{error, code, request_id}}: {b}"
    );
    let code = b["code"].as_str().expect("code is a string");
    assert!(ERROR_CODES.contains(&code), "unknown code {code}");
    assert!(
        b["request_id"].as_str().is_some_and(|r| !r.is_empty()),
        "request_id: {b}"
    );
    assert_eq!(
        resp.headers()
            .get("cache-control")
            .map(|v| v.to_str().unwrap()),
        Some("no-store"),
        "errors are never cached"
    );
    b["error"].as_str().expect("error is a string").to_owned()
}

/// Every code an error body can carry (docs/api.md, openapi.yaml).
const ERROR_CODES: &[&str] = &[
    "bad_request",
    "missing_key",
    "invalid_key",
    "insufficient_scope",
    "not_found",
    "no_active_version",
    "method_not_allowed",
    "rate_limited",
    "unavailable",
    "internal",
];

/// An error response with this status and code; returns the message.
fn assert_error(resp: &Response<Body>, status: u16, code: &str) -> String {
    let message = assert_json_error(resp, status);
    assert_eq!(body(resp)["code"], code, "{message}");
    message
}

async fn data(path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    data_with(&catalog(), path, headers).await
}

async fn data_with(c: &MemoryCatalog, path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    catalog::api::data(&get(path, headers), c, &signer, now()).await
}

async fn list(path: &str) -> Response<Body> {
    catalog::api::list(&get(path, &[]), &catalog(), now()).await
}

async fn metadata(path: &str) -> Response<Body> {
    catalog::api::metadata(&get(path, &[]), &catalog(), now()).await
}

// ----------------------------------------------------------------------------------------------
// List

#[tokio::test]
async fn list_defaults_to_page_1_of_20_and_shows_every_published_dataset() {
    let resp = list("/api/v1/datasets").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "application/json");
    let b = body(&resp);
    assert_eq!(b["page"], 1);
    assert_eq!(b["page_size"], 20);
    assert_eq!(b["total"], 3, "the unpublished dataset is not listed");
    let slugs: Vec<&str> = b["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap())
        .collect();
    assert_eq!(
        slugs,
        ["closed-window", "open-window", "gated"],
        "newest first"
    );
}

#[tokio::test]
async fn list_items_are_summaries_without_schema() {
    let b = body(&list("/api/v1/datasets").await);
    let item = b["items"][0].as_object().unwrap();
    let mut keys: Vec<&str> = item.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "category",
            "column_count",
            "description",
            "id",
            "keyless",
            "keyless_until",
            "license",
            "name",
            "row_count",
            "size",
            "slug",
            "tags",
            "updated_at"
        ]
    );
}

#[tokio::test]
async fn list_computes_keyless_at_request_time() {
    let b = body(&list("/api/v1/datasets").await);
    let by_slug = |slug: &str| {
        b["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["slug"] == slug)
            .unwrap()
            .clone()
    };
    assert_eq!(by_slug("open-window")["keyless"], true);
    assert_eq!(by_slug("closed-window")["keyless"], false);
    assert_eq!(by_slug("gated")["keyless"], false);
    assert_eq!(by_slug("gated")["keyless_until"], Value::Null);
}

#[tokio::test]
async fn list_page_size_above_100_is_capped_and_reported() {
    let b = body(&list("/api/v1/datasets?page_size=1000").await);
    assert_eq!(b["page_size"], 100);
}

#[tokio::test]
async fn list_pages_through_every_dataset_once() {
    let mut seen = Vec::new();
    for page in 1..=3 {
        let b = body(&list(&format!("/api/v1/datasets?page={page}&page_size=1")).await);
        assert_eq!(b["total"], 3);
        assert_eq!(b["page"], page);
        for item in b["items"].as_array().unwrap() {
            seen.push(item["slug"].as_str().unwrap().to_owned());
        }
    }
    assert_eq!(seen, ["closed-window", "open-window", "gated"]);
}

#[tokio::test]
async fn list_page_past_the_end_is_empty_with_the_true_total() {
    for path in [
        "/api/v1/datasets?page=2",
        "/api/v1/datasets?page=18446744073709551615&page_size=100",
    ] {
        let resp = list(path).await;
        assert_eq!(resp.status(), 200);
        let b = body(&resp);
        assert_eq!(b["items"], json!([]), "{path}");
        assert_eq!(b["total"], 3, "{path}");
    }
}

#[tokio::test]
async fn list_rejects_page_or_page_size_that_is_not_a_positive_integer() {
    for q in [
        "page=0",
        "page=-1",
        "page=abc",
        "page=1.5",
        "page=",
        "page_size=0",
        "page_size=ten",
        "page=1&page=2",
    ] {
        let resp = list(&format!("/api/v1/datasets?{q}")).await;
        let msg = assert_json_error(&resp, 400);
        assert!(msg.contains("page"), "{q}: {msg}");
    }
}

#[tokio::test]
async fn list_answers_503_with_retry_after_when_the_store_is_throttled() {
    let c = catalog();
    c.unavailable.store(true, Ordering::SeqCst);
    let resp = catalog::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    assert_json_error(&resp, 503);
    assert_eq!(resp.headers()["retry-after"], "1");
}

// ----------------------------------------------------------------------------------------------
// Metadata

#[tokio::test]
async fn metadata_by_slug_returns_the_full_dataset_object() {
    let resp = metadata("/api/v1/datasets/open-window").await;
    assert_eq!(resp.status(), 200);
    let b = body(&resp);
    for field in [
        "slug",
        "name",
        "description",
        "license",
        "source",
        "category",
        "tags",
        "size",
        "row_count",
        "column_count",
        "schema",
        "keyless",
        "keyless_until",
        "insights",
        "discussions",
        "created_at",
        "updated_at",
    ] {
        assert!(b.get(field).is_some(), "missing {field}");
    }
    assert_eq!(b["slug"], "open-window");
    assert_eq!(b["keyless"], true);
    assert_eq!(b["keyless_until"], "2026-06-01T13:00:00Z");
    assert_eq!(b["size"], 1234);
    assert_eq!(b["row_count"], 2);
    assert_eq!(b["column_count"], 2);
    assert_eq!(b["schema"][0]["name"], "x");
    assert_eq!(b["schema"][0]["mean"], 1.5);
    assert_eq!(
        b["schema"][1]["mean"],
        Value::Null,
        "no numeric stats for strings"
    );
    assert_eq!(b["discussions"][0]["path"], "/p");
    assert_eq!(b["created_at"], "2026-05-22T12:00:00Z");
}

#[tokio::test]
async fn metadata_by_uuid_returns_the_same_dataset() {
    let c = catalog();
    let by_slug =
        body(&catalog::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await);
    let id = by_slug["id"].as_str().unwrap();
    let resp =
        catalog::api::metadata(&get(&format!("/api/v1/datasets/{id}"), &[]), &c, now()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(body(&resp), by_slug);
}

#[tokio::test]
async fn metadata_of_unknown_slug_or_uuid_is_404() {
    assert_json_error(&metadata("/api/v1/datasets/nope").await, 404);
    let msg = assert_json_error(
        &metadata(&format!("/api/v1/datasets/{}", Uuid::new_v4())).await,
        404,
    );
    assert!(msg.contains("no dataset"), "{msg}");
}

#[tokio::test]
async fn metadata_of_malformed_slug_is_400() {
    let msg = assert_json_error(&metadata("/api/v1/datasets/Not_A_Slug").await, 400);
    assert!(msg.contains("slug"), "{msg}");
}

#[tokio::test]
async fn metadata_of_dataset_without_active_version_is_404_saying_so() {
    let msg = assert_json_error(&metadata("/api/v1/datasets/unpublished").await, 404);
    assert!(msg.contains("no active version"), "{msg}");
}

#[tokio::test]
async fn metadata_never_checks_a_key() {
    let c = catalog();
    let resp = catalog::api::metadata(
        &get("/api/v1/datasets/gated", &[("x-api-key", UNKNOWN_KEY)]),
        &c,
        now(),
    )
    .await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn internal_errors_are_500_with_a_generic_message() {
    let c = catalog();
    c.corrupt.store(true, Ordering::SeqCst);
    let resp = catalog::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await;
    let msg = assert_json_error(&resp, 500);
    assert_eq!(msg, "internal error");
}

// ----------------------------------------------------------------------------------------------
// Data

#[tokio::test]
async fn data_with_read_key_in_x_api_key_returns_the_descriptor() {
    let resp = data("/api/v1/datasets/gated/data", &[("x-api-key", READ_KEY)]).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let b = body(&resp);
    assert_eq!(
        b,
        json!({
            "slug": "gated",
            "format": "parquet",
            "url": "https://signed.invalid/datasets/gated/v3/data.parquet?sig=fake",
            "expires_at": "2026-06-01T12:15:00Z",
            "row_count": 2,
            "columns": ["x", "s"],
            "version": 3,
            "sha256": "00".repeat(32),
            "size_bytes": 1234,
            "published_at": "2026-05-31T12:00:00Z",
        })
    );
}

#[tokio::test]
async fn data_with_read_key_as_bearer_token_returns_the_descriptor() {
    for header in [format!("Bearer {READ_KEY}"), format!("bearer {READ_KEY}")] {
        let resp = data(
            "/api/v1/datasets/gated/data?format=parquet",
            &[("authorization", &header)],
        )
        .await;
        assert_eq!(resp.status(), 200, "{header}");
    }
}

#[tokio::test]
async fn data_without_key_inside_keyless_window_is_200() {
    let resp = data("/api/v1/datasets/open-window/data", &[]).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(body(&resp)["slug"], "open-window");
}

#[tokio::test]
async fn data_without_key_on_gated_dataset_is_401() {
    let msg = assert_json_error(&data("/api/v1/datasets/gated/data", &[]).await, 401);
    assert!(msg.contains("required"), "{msg}");
}

#[tokio::test]
async fn data_without_key_after_keyless_window_closed_is_401() {
    assert_json_error(&data("/api/v1/datasets/closed-window/data", &[]).await, 401);
}

#[tokio::test]
async fn invalid_key_is_401_even_for_keyless_dataset() {
    for headers in [
        vec![("x-api-key", UNKNOWN_KEY)],
        vec![("authorization", "Bearer dcat_nope")],
        vec![("authorization", "Basic dXNlcjpwYXNz")],
        vec![("authorization", "Bearer")],
        vec![("x-api-key", "")],
    ] {
        let msg = assert_json_error(
            &data("/api/v1/datasets/open-window/data", &headers).await,
            401,
        );
        assert!(msg.contains("invalid"), "{headers:?}: {msg}");
    }
}

#[tokio::test]
async fn valid_read_key_on_keyless_dataset_is_200() {
    let resp = data(
        "/api/v1/datasets/open-window/data",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn key_without_read_scope_is_403_even_for_keyless_dataset() {
    assert_json_error(
        &data(
            "/api/v1/datasets/open-window/data",
            &[("x-api-key", WRITE_ONLY_KEY)],
        )
        .await,
        403,
    );
}

#[tokio::test]
async fn keyless_window_ends_exactly_at_keyless_until() {
    let c = MemoryCatalog::default();
    c.insert_dataset(record("edge", Some(now()), true));
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let at_end =
        catalog::api::data(&get("/api/v1/datasets/edge/data", &[]), &c, &signer, now()).await;
    assert_json_error(&at_end, 401);
    let just_before = catalog::api::data(
        &get("/api/v1/datasets/edge/data", &[]),
        &c,
        &signer,
        now() - Duration::milliseconds(1),
    )
    .await;
    assert_eq!(just_before.status(), 200);
}

#[tokio::test]
async fn data_of_unknown_uuid_is_404() {
    let resp = data(
        &format!("/api/v1/datasets/{}/data", Uuid::new_v4()),
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_json_error(&resp, 404);
}

#[tokio::test]
async fn revoked_key_is_401() {
    assert_json_error(
        &data("/api/v1/datasets/gated/data", &[("x-api-key", REVOKED_KEY)]).await,
        401,
    );
}

#[tokio::test]
async fn expired_key_is_401() {
    assert_json_error(
        &data("/api/v1/datasets/gated/data", &[("x-api-key", EXPIRED_KEY)]).await,
        401,
    );
}

#[tokio::test]
async fn valid_key_without_read_scope_is_403() {
    let msg = assert_json_error(
        &data(
            "/api/v1/datasets/gated/data",
            &[("x-api-key", WRITE_ONLY_KEY)],
        )
        .await,
        403,
    );
    assert!(msg.contains("read scope"), "{msg}");
}

#[tokio::test]
async fn missing_and_invalid_key_messages_differ_and_do_not_reveal_existence() {
    let missing = assert_json_error(&data("/api/v1/datasets/gated/data", &[]).await, 401);
    let unknown = assert_json_error(
        &data("/api/v1/datasets/gated/data", &[("x-api-key", UNKNOWN_KEY)]).await,
        401,
    );
    let revoked = assert_json_error(
        &data("/api/v1/datasets/gated/data", &[("x-api-key", REVOKED_KEY)]).await,
        401,
    );
    assert_ne!(missing, unknown);
    assert_eq!(unknown, revoked, "unknown and revoked keys look the same");
}

#[tokio::test]
async fn key_in_query_string_is_never_read() {
    for q in ["api_key", "x-api-key", "key", "apikey"] {
        let resp = data(&format!("/api/v1/datasets/gated/data?{q}={READ_KEY}"), &[]).await;
        assert_json_error(&resp, 401);
    }
}

#[tokio::test]
async fn conflicting_keys_in_both_headers_are_400() {
    let bearer = format!("Bearer {READ_KEY}");
    let resp = data(
        "/api/v1/datasets/gated/data",
        &[("x-api-key", UNKNOWN_KEY), ("authorization", &bearer)],
    )
    .await;
    assert_json_error(&resp, 400);
    let same = data(
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY), ("authorization", &bearer)],
    )
    .await;
    assert_eq!(same.status(), 200);
}

#[tokio::test]
async fn format_other_than_parquet_is_400_naming_the_allowed_value() {
    for f in ["csv", "PARQUET", ""] {
        let resp = data(
            &format!("/api/v1/datasets/gated/data?format={f}"),
            &[("x-api-key", READ_KEY)],
        )
        .await;
        let msg = assert_json_error(&resp, 400);
        assert!(msg.contains("parquet"), "{f}: {msg}");
    }
}

#[tokio::test]
async fn data_of_unknown_dataset_is_404() {
    assert_json_error(
        &data("/api/v1/datasets/nope/data", &[("x-api-key", READ_KEY)]).await,
        404,
    );
    assert_json_error(&data("/api/v1/datasets/nope/data", &[]).await, 404);
}

#[tokio::test]
async fn data_of_dataset_without_active_version_is_404_saying_so() {
    let msg = assert_json_error(
        &data(
            "/api/v1/datasets/unpublished/data",
            &[("x-api-key", READ_KEY)],
        )
        .await,
        404,
    );
    assert!(msg.contains("no active version"), "{msg}");
}

#[tokio::test]
async fn data_by_uuid_works_like_by_slug() {
    let c = catalog();
    let meta = body(&catalog::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await);
    let id = meta["id"].as_str().unwrap();
    let resp = data_with(
        &c,
        &format!("/api/v1/datasets/{id}/data"),
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(body(&resp)["slug"], "gated");
}

#[tokio::test]
async fn data_answers_503_with_retry_after_when_the_store_is_throttled() {
    let c = catalog();
    c.unavailable.store(true, Ordering::SeqCst);
    let resp = data_with(
        &c,
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    let msg = assert_json_error(&resp, 503);
    assert!(!msg.contains("throttled"), "no internals: {msg}");
    assert_eq!(resp.headers()["retry-after"], "1");
}

// ----------------------------------------------------------------------------------------------
// Routing

#[tokio::test]
async fn non_get_methods_are_405_with_allow_header() {
    let resp =
        catalog::api::list(&request("POST", "/api/v1/datasets", &[]), &catalog(), now()).await;
    assert_json_error(&resp, 405);
    assert_eq!(resp.headers()["allow"], "GET");
}

#[tokio::test]
async fn a_function_answers_404_for_another_functions_route() {
    let resp = catalog::api::list(&get("/api/v1/datasets/gated", &[]), &catalog(), now()).await;
    assert_json_error(&resp, 404);
    let resp = metadata("/api/v1/elsewhere").await;
    assert_json_error(&resp, 404);
}

// ----------------------------------------------------------------------------------------------
// Beyond the spec: version binding, access, error codes, conditional reads

fn header<'a>(resp: &'a Response<Body>, name: &str) -> Option<&'a str> {
    resp.headers().get(name).map(|v| v.to_str().unwrap())
}

#[tokio::test]
async fn metadata_names_the_active_version_and_what_the_data_endpoint_requires() {
    let b = body(&metadata("/api/v1/datasets/gated").await);
    assert_eq!(b["version"], 3);
    assert_eq!(b["sha256"], "00".repeat(32));
    assert_eq!(b["published_at"], "2026-05-31T12:00:00Z");
    assert_eq!(
        b["access"],
        json!({"mode": "key_required", "keyless_until": null, "required_scope": "read"})
    );

    let b = body(&metadata("/api/v1/datasets/open-window").await);
    assert_eq!(
        b["access"],
        json!({"mode": "keyless", "keyless_until": "2026-06-01T13:00:00Z", "required_scope": null})
    );
    let b = body(&metadata("/api/v1/datasets/closed-window").await);
    assert_eq!(b["access"]["mode"], "key_required");
    assert_eq!(b["access"]["keyless_until"], "2026-06-01T11:59:59Z");
    assert_eq!(b["access"]["required_scope"], "read");
}

#[tokio::test]
async fn access_agrees_with_what_the_data_endpoint_does_without_a_key() {
    for slug in ["gated", "open-window", "closed-window"] {
        let mode = body(&metadata(&format!("/api/v1/datasets/{slug}")).await)["access"]["mode"]
            .as_str()
            .unwrap()
            .to_owned();
        let status = data(&format!("/api/v1/datasets/{slug}/data"), &[])
            .await
            .status();
        let expected = if mode == "keyless" { 200 } else { 401 };
        assert_eq!(status, expected, "{slug}: access.mode {mode}");
    }
}

#[tokio::test]
async fn a_version_pin_serves_only_the_active_version() {
    let key = [("x-api-key", READ_KEY)];
    let resp = data("/api/v1/datasets/gated/data?version=3", &key).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(body(&resp)["version"], 3);

    for other in ["2", "4", "9999999999"] {
        let resp = data(
            &format!("/api/v1/datasets/gated/data?version={other}"),
            &key,
        )
        .await;
        let message = assert_error(&resp, 404, "not_found");
        assert_eq!(
            message,
            format!("version {other} of 'gated' is not available: its active version is 3")
        );
    }
    for bad in ["0", "-1", "abc", "1.5", "", "12345678901"] {
        let resp = data(&format!("/api/v1/datasets/gated/data?version={bad}"), &key).await;
        let message = assert_error(&resp, 400, "bad_request");
        assert!(
            message.starts_with("version must be a positive integer"),
            "{message}"
        );
    }
    let resp = data("/api/v1/datasets/gated/data?version=3&version=3", &key).await;
    assert_error(&resp, 400, "bad_request");
}

#[tokio::test]
async fn a_version_pin_does_not_bypass_the_key_rules() {
    let resp = data("/api/v1/datasets/gated/data?version=2", &[]).await;
    assert_error(&resp, 401, "missing_key");
    let resp = data("/api/v1/datasets/open-window/data?version=3", &[]).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn every_error_carries_its_stable_code_and_the_request_id() {
    let key = |k| [("x-api-key", k)];
    let c = catalog();
    let cases: Vec<(Response<Body>, u16, &str)> = vec![
        (
            data("/api/v1/datasets/gated/data", &[]).await,
            401,
            "missing_key",
        ),
        (
            data("/api/v1/datasets/gated/data", &key("dcat_nope")).await,
            401,
            "invalid_key",
        ),
        (
            data("/api/v1/datasets/gated/data", &key(REVOKED_KEY)).await,
            401,
            "invalid_key",
        ),
        (
            data("/api/v1/datasets/gated/data", &key(WRITE_ONLY_KEY)).await,
            403,
            "insufficient_scope",
        ),
        (
            data("/api/v1/datasets/nope/data", &key(READ_KEY)).await,
            404,
            "not_found",
        ),
        (
            data("/api/v1/datasets/unpublished/data", &key(READ_KEY)).await,
            404,
            "no_active_version",
        ),
        (
            data("/api/v1/datasets/gated/data?format=csv", &key(READ_KEY)).await,
            400,
            "bad_request",
        ),
        (
            metadata("/api/v1/datasets/Bad_Slug").await,
            400,
            "bad_request",
        ),
        (
            metadata("/api/v1/datasets/unpublished").await,
            404,
            "no_active_version",
        ),
        (list("/api/v1/datasets/x/y").await, 404, "not_found"),
        (
            catalog::api::list(&request("POST", "/api/v1/datasets", &[]), &c, now()).await,
            405,
            "method_not_allowed",
        ),
    ];
    for (resp, status, code) in &cases {
        assert_error(resp, *status, code);
        assert_eq!(body(resp)["request_id"], "req-1", "the event's request id");
    }

    c.unavailable.store(true, Ordering::SeqCst);
    let resp = catalog::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    assert_error(&resp, 503, "rate_limited");
    assert_eq!(header(&resp, "retry-after"), Some("1"));
    c.unavailable.store(false, Ordering::SeqCst);
    c.corrupt.store(true, Ordering::SeqCst);
    let resp = catalog::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    assert_error(&resp, 500, "internal");
}

#[tokio::test]
async fn unauthorized_answers_carry_an_rfc_6750_challenge() {
    let resp = data("/api/v1/datasets/gated/data", &[]).await;
    assert_eq!(
        header(&resp, "www-authenticate"),
        Some(r#"Bearer realm="dataset-catalog""#),
        "no error attribute when no key was sent (RFC 6750 3.1)"
    );
    for bad in [
        vec![("x-api-key", "dcat_nope")],
        vec![("authorization", "Bearer dcat_nope")],
        vec![("authorization", "Basic dXNlcjpwYXNz")],
        vec![("x-api-key", EXPIRED_KEY)],
    ] {
        let resp = data("/api/v1/datasets/open-window/data", &bad).await;
        assert_eq!(resp.status(), 401);
        let challenge = header(&resp, "www-authenticate").unwrap();
        assert!(
            challenge.starts_with(r#"Bearer realm="dataset-catalog", error="invalid_token""#),
            "{challenge}"
        );
    }
    let resp = data(
        "/api/v1/datasets/gated/data",
        &[("x-api-key", WRITE_ONLY_KEY)],
    )
    .await;
    assert_eq!(
        header(&resp, "www-authenticate"),
        Some(r#"Bearer realm="dataset-catalog", error="insufficient_scope", scope="read""#)
    );
    let ok = data("/api/v1/datasets/gated/data", &[("x-api-key", READ_KEY)]).await;
    assert_eq!(header(&ok, "www-authenticate"), None);
}

#[tokio::test]
async fn list_and_metadata_carry_a_strong_etag_last_modified_and_public_caching() {
    // The list's Last-Modified is its latest change: closed-window's keyless window ended at
    // 11:59:59 (its `keyless` flag changed then); gated was last updated a day ago.
    for (path, last_modified) in [
        ("/api/v1/datasets", "Mon, 01 Jun 2026 11:59:59 GMT"),
        ("/api/v1/datasets/gated", "Sun, 31 May 2026 12:00:00 GMT"),
    ] {
        let resp = if path.ends_with("datasets") {
            list(path).await
        } else {
            metadata(path).await
        };
        assert_eq!(resp.status(), 200);
        let etag = header(&resp, "etag").expect("ETag").to_owned();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() == 34,
            "{etag}"
        );
        assert_eq!(
            etag,
            catalog::api::entity_tag(resp.body().as_ref()),
            "ETag digests the body"
        );
        assert_eq!(header(&resp, "cache-control"), Some("public, max-age=60"));
        assert_eq!(
            header(&resp, "last-modified"),
            Some(last_modified),
            "{path}"
        );
    }
}

#[tokio::test]
async fn if_none_match_with_the_current_etag_is_304_without_a_body() {
    let c = catalog();
    let first = catalog::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await;
    let etag = header(&first, "etag").unwrap().to_owned();
    for value in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".into(),
    ] {
        let req = get("/api/v1/datasets/gated", &[("if-none-match", &value)]);
        let resp = catalog::api::metadata(&req, &c, now()).await;
        assert_eq!(resp.status(), 304, "If-None-Match: {value}");
        assert!(resp.body().is_empty(), "a 304 has no body");
        assert_eq!(header(&resp, "etag"), Some(etag.as_str()));
        assert_eq!(header(&resp, "cache-control"), Some("public, max-age=60"));
    }
    // A stale tag, or a changed answer, gets the full 200.
    let req = get("/api/v1/datasets/gated", &[("if-none-match", "\"stale\"")]);
    assert_eq!(catalog::api::metadata(&req, &c, now()).await.status(), 200);
    let req = get("/api/v1/datasets/gated", &[("if-none-match", &etag)]);
    let later = catalog::api::metadata(&req, &c, now() + Duration::days(400)).await;
    assert_eq!(
        later.status(),
        304,
        "time alone does not change a gated dataset's answer"
    );
    let open = catalog::api::metadata(&get("/api/v1/datasets/open-window", &[]), &c, now()).await;
    let open_etag = header(&open, "etag").unwrap().to_owned();
    let req = get(
        "/api/v1/datasets/open-window",
        &[("if-none-match", &open_etag)],
    );
    let after_window = catalog::api::metadata(&req, &c, now() + Duration::hours(2)).await;
    assert_eq!(
        after_window.status(),
        200,
        "the keyless window closed: the answer changed"
    );
    assert_eq!(body(&after_window)["access"]["mode"], "key_required");
    assert_eq!(
        header(&after_window, "last-modified"),
        Some("Mon, 01 Jun 2026 13:00:00 GMT")
    );

    let page = catalog::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    let page_etag = header(&page, "etag").unwrap().to_owned();
    let req = get("/api/v1/datasets", &[("if-none-match", &page_etag)]);
    assert_eq!(catalog::api::list(&req, &c, now()).await.status(), 304);
    let req = get(
        "/api/v1/datasets?page_size=2",
        &[("if-none-match", &page_etag)],
    );
    assert_eq!(
        catalog::api::list(&req, &c, now()).await.status(),
        200,
        "another page"
    );
}

#[tokio::test]
async fn no_cached_answer_outlives_an_open_keyless_window() {
    // open-window closes in one hour; at 59m30s only 30 seconds of caching remain.
    let c = catalog();
    let at = now() + Duration::minutes(59) + Duration::seconds(30);
    let resp = catalog::api::metadata(&get("/api/v1/datasets/open-window", &[]), &c, at).await;
    assert_eq!(header(&resp, "cache-control"), Some("public, max-age=30"));
    let resp = catalog::api::list(&get("/api/v1/datasets", &[]), &c, at).await;
    assert_eq!(header(&resp, "cache-control"), Some("public, max-age=30"));
    let resp = catalog::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, at).await;
    assert_eq!(header(&resp, "cache-control"), Some("public, max-age=60"));
}

#[tokio::test]
async fn download_answers_are_never_cached() {
    let ok = data("/api/v1/datasets/gated/data", &[("x-api-key", READ_KEY)]).await;
    assert_eq!(header(&ok, "cache-control"), Some("no-store"));
    assert_eq!(header(&ok, "etag"), None);
    let denied = data("/api/v1/datasets/gated/data", &[]).await;
    assert_eq!(header(&denied, "cache-control"), Some("no-store"));
}
