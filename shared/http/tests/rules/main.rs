//! The spec's rules and the project's decisions, one test each, against in-memory adapters.
//! Requests are built from API Gateway HTTP API (payload v2) events, as Lambda delivers them.
//! The same rules run against DynamoDB and S3 emulators in the `tests/` crate.

use std::sync::atomic::Ordering;

use catalog::input::Slug;

use catalog::keys::{KeyHash, KeyRecord, Scope};
use catalog::records::{ActiveVersion, Card, DatasetMeta, DatasetRecord, Discussion};
use catalog_http::testing::V2Event;
use catalog_memory::{FakeRows, FakeSigner, MemoryCatalog};
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
            readme: None,
            access: Default::default(),
            card: Card {
                access_level: Default::default(),
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
        unpublished_at: None,
        downloads: 0,
        active: active.then(|| ActiveVersion {
            version: 3,
            s3_key: format!("datasets/{slug}/v3/data.parquet"),
            size: 1234,
            row_count: 2,
            columns: vec!["x".into(), "s".into()],
            sha256: "00".repeat(32),
            published_at: now() - Duration::days(1),
            files: None,
            ingested: None,
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
        owner: None,
        datasets: None,
        id: id.into(),
        scopes,
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
    };
    c.insert_key(KeyHash::of(READ_KEY), key("k-read", vec![Scope::Read]));
    c.insert_key(
        KeyHash::of(WRITE_ONLY_KEY),
        key("k-write", vec![Scope::parse("write")]),
    );
    c.insert_key(
        KeyHash::of(REVOKED_KEY),
        KeyRecord {
            owner: None,
            datasets: None,
            revoked_at: Some(now() - Duration::minutes(1)),
            ..key("k-revoked", vec![Scope::Read])
        },
    );
    c.insert_key(
        KeyHash::of(EXPIRED_KEY),
        KeyRecord {
            owner: None,
            datasets: None,
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
    "unpublished",
    "method_not_allowed",
    "rate_limited",
    "unavailable",
    "internal",
    "invalid_token",
    "invalid_body",
    "invalid_label",
    "invalid_expiry",
    "key_limit_reached",
    "account_disabled",
    "key_not_found",
    "preview_unavailable",
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
    catalog_http::api::data(&get(path, headers), c, &signer, now()).await
}

async fn list(path: &str) -> Response<Body> {
    catalog_http::api::list(&get(path, &[]), &catalog(), now()).await
}

async fn metadata(path: &str) -> Response<Body> {
    catalog_http::api::metadata(&get(path, &[]), &catalog(), now()).await
}

mod account;
mod data;
mod every_endpoint;
mod list;
mod list_facets;
mod metadata;
mod metrics;
mod rows;
