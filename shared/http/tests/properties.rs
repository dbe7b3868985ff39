//! Property tests over everything that parses outside input: paths, query strings, the two key
//! headers, and whole API Gateway v1 (REST), v2 (HTTP API) and function-URL events. For any
//! input: no panic, and every answer is one of the documented statuses with a JSON body (an
//! `{"error"}` object unless it is a 200). Bounded runs (PROPTEST_CASES overrides the count).
//!
//! Events go through what the deployed functions run: deserialized as lambda_runtime does, then
//! `catalog_http::lambda::Guard` in front of lambda_http's adapter, and the response document Lambda
//! would return is checked. Whole events are built from their parts (source, method, host,
//! domain name, scheme, stage, path, query, key headers), arbitrary ones included, so that every
//! input is an event and every case asserts. Which of them the guard must refuse is decided by
//! an oracle outside the code under test: whether lambda_http itself panics building the
//! request.

use catalog::error::ApiError;
use catalog::input::{DatasetRef, PageRequest, Slug};
use catalog::keys::{KeyHash, KeyRecord, Scope};
use catalog::records::{ActiveVersion, Card, DatasetMeta, DatasetRecord};
use catalog_http::api::Route;
use catalog_http::error::ToHttp;
use catalog_http::testing::{joined_headers, V2Event};
use catalog_memory::{FakeRows, FakeSigner, MemoryCatalog};
use chrono::{DateTime, Duration, TimeZone, Utc};
use std::convert::Infallible;

use catalog_http::lambda::Guard;
use lambda_http::request::LambdaRequest;
use lambda_http::{service_fn, Adapter, Context, LambdaEvent, Request, Service};
use proptest::prelude::*;
use serde_json::{json, Value};
use uuid::Uuid;

const READ_KEY: &str = "dcat_read_key_0123456789abcdef";
const DOCUMENTED: &[u16] = &[200, 204, 400, 401, 403, 404, 405];

fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 6, 1, 12, 0, 0).unwrap()
}

fn record(slug: &str, keyless: bool) -> DatasetRecord {
    DatasetRecord {
        id: Uuid::from_u128(0x6f1c2a9e_3b7d_4c5e_9a8f_0d1e2f3a4b5c),
        slug: Slug::parse(slug).unwrap(),
        meta: DatasetMeta {
            readme: None,
            access: Default::default(),
            card: Card {
                access_level: Default::default(),
                name: format!("Dataset {slug}"),
                description: None,
                category: "testing".into(),
                tags: vec![],
                license: "CC-BY-4.0".into(),
            },
            source: "test".into(),
            insights: String::new(),
            discussions: vec![],
        },
        schema: serde_json::value::RawValue::from_string("[]".into()).unwrap(),
        keyless_until: keyless.then(|| now() + Duration::hours(1)),
        created_at: now(),
        updated_at: now(),
        unpublished_at: None,
        downloads: 0,
        active: Some(ActiveVersion {
            version: 1,
            s3_key: format!("datasets/{slug}/v1/x.parquet"),
            size: 1,
            row_count: 1,
            columns: vec!["x".into()],
            sha256: "00".repeat(32),
            published_at: now(),
            files: None,
            ingested: None,
        }),
    }
}

fn catalog() -> MemoryCatalog {
    let c = MemoryCatalog::default();
    c.insert_dataset(record("gated", false));
    c.insert_dataset(record("open", true));
    c.insert_key(
        KeyHash::of(READ_KEY),
        KeyRecord {
            owner: None,
            datasets: None,
            id: "k".into(),
            scopes: vec![Scope::Read],
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
    );
    c
}

/// Answers a request the way the deployed API routes it.
async fn answer(
    req: Request,
    catalog: &MemoryCatalog,
) -> Result<lambda_http::Response<lambda_http::Body>, Infallible> {
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    Ok(catalog_http::api::dispatch(&req, catalog, &signer, &FakeRows::default(), now()).await)
}

/// Invokes the function stack with an event document: the response document Lambda would
/// send back, or `None` when the document is not an event (lambda_runtime then reports an
/// invocation error; no panic either way).
fn invoke(doc: &str, catalog: &MemoryCatalog) -> Option<Value> {
    let payload: LambdaRequest = serde_json::from_str(doc).ok()?;
    let event = LambdaEvent::new(payload, Context::default());
    let mut function = Guard::new(Adapter::from(service_fn(|req| answer(req, catalog))));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let Ok(response) = rt.block_on(function.call(event));
    Some(serde_json::to_value(response).expect("the response serializes"))
}

/// A response document (API Gateway v1 or v2 shape) with a documented status and a JSON body
/// (for a HEAD request, the JSON answer's headers and no body).
fn assert_documented(response: &Value, head: bool) -> Result<u16, TestCaseError> {
    let status = response["statusCode"].as_u64().unwrap_or(0) as u16;
    prop_assert!(
        DOCUMENTED.contains(&status),
        "undocumented status in {response}"
    );
    if status == 405 {
        let allow = header(response, "allow");
        prop_assert_eq!(allow.as_deref(), Some("GET, HEAD, OPTIONS"));
    }
    if head && status != 204 {
        prop_assert_eq!(response["body"].as_str().unwrap_or_default(), "");
        prop_assert!(
            status == 304
                || header(response, "content-type").as_deref() == Some("application/json"),
            "{}",
            response
        );
        return Ok(status);
    }
    if status == 204 {
        // A CORS preflight: no body.
        prop_assert_eq!(response["body"].as_str().unwrap_or_default(), "");
        prop_assert!(header(response, "access-control-allow-methods").is_some());
        return Ok(status);
    }
    let body: Value = serde_json::from_str(response["body"].as_str().unwrap_or_default())
        .map_err(|e| TestCaseError::fail(format!("body is not JSON ({e}): {response}")))?;
    if status != 200 {
        let error = body.get("error").and_then(Value::as_str);
        prop_assert!(error.is_some_and(|e| !e.is_empty()), "error body {body}");
        prop_assert_eq!(body.as_object().map(|o| o.len()), Some(3), "{}", body);
        prop_assert!(
            body["code"].as_str().is_some_and(|c| !c.is_empty()),
            "{}",
            body
        );
        prop_assert!(
            body["request_id"].as_str().is_some_and(|r| !r.is_empty()),
            "{}",
            body
        );
    }
    Ok(status)
}

/// A header of a response document: v2 responses carry `headers`, v1 responses (as lambda_http
/// writes them) `multiValueHeaders`.
fn header(response: &Value, name: &str) -> Option<String> {
    response["headers"][name]
        .as_str()
        .or_else(|| response["multiValueHeaders"][name][0].as_str())
        .map(str::to_owned)
}

fn must_invoke(event: &Value) -> Result<Value, TestCaseError> {
    invoke(&event.to_string(), &catalog())
        .ok_or_else(|| TestCaseError::fail(format!("not accepted as an event: {event}")))
}

/// Path segments: mostly near the real routes, sometimes anything at all.
fn path() -> impl Strategy<Value = String> {
    let segment = prop_oneof![
        Just("api".to_owned()),
        Just("v1".to_owned()),
        Just("datasets".to_owned()),
        Just("data".to_owned()),
        Just("gated".to_owned()),
        Just("open".to_owned()),
        Just("6f1c2a9e-3b7d-4c5e-9a8f-0d1e2f3a4b5c".to_owned()),
        "[a-z0-9-]{0,70}",
        "[A-Za-z0-9%._~!$&'()*+,;=:@-]{0,20}",
        any::<String>().prop_map(|s| s.chars().filter(|c| *c != '/' && *c != '?').collect()),
    ];
    prop::collection::vec(segment, 0..7).prop_map(|segments| format!("/{}", segments.join("/")))
}

fn query_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[0-9]{1,25}",
        "-?[0-9]{0,5}(\\.[0-9]{0,3})?",
        Just("parquet".to_owned()),
        Just("csv".to_owned()),
        "[a-zA-Z0-9%+&=]{0,12}",
        any::<String>(),
    ]
}

fn query() -> impl Strategy<Value = Vec<(String, String)>> {
    let name = prop_oneof![
        Just("page".to_owned()),
        Just("page_size".to_owned()),
        Just("format".to_owned()),
        Just("api_key".to_owned()),
        "[a-z_]{1,10}",
    ];
    prop::collection::vec((name, query_value()), 0..4)
}

fn key_headers() -> impl Strategy<Value = Vec<(String, String)>> {
    let value = prop_oneof![
        Just(READ_KEY.to_owned()),
        Just(format!("Bearer {READ_KEY}")),
        Just(format!("bearer   {READ_KEY}")),
        Just("Basic dXNlcjpwYXNz".to_owned()),
        Just("Bearer".to_owned()),
        Just(String::new()),
        "dcat_[0-9a-f]{0,70}",
        "[ -~]{0,300}",
    ];
    let name = prop_oneof![
        Just("x-api-key".to_owned()),
        Just("authorization".to_owned())
    ];
    prop::collection::vec((name, value), 0..3)
}

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("GET".to_owned()),
        1 => Just("POST".to_owned()),
        1 => Just("HEAD".to_owned()),
        1 => Just("DELETE".to_owned()),
        1 => Just("OPTIONS".to_owned()),
    ]
}

fn encode(query: &[(String, String)]) -> String {
    query
        .iter()
        .map(|(k, v)| {
            let enc = |s: &str| {
                s.bytes()
                    .map(|b| match b {
                        b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                            (b as char).to_string()
                        }
                        _ => format!("%{b:02X}"),
                    })
                    .collect::<String>()
            };
            format!("{}={}", enc(k), enc(v))
        })
        .collect::<Vec<_>>()
        .join("&")
}

fn v2_event(method: &str, path: &str, query: &str, headers: &[(String, String)]) -> Value {
    V2Event::raw(method, path, query)
        .headers(headers.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .json()
}

fn function_url_event(method: &str, path: &str, query: &str, h: &[(String, String)]) -> Value {
    let mut event = v2_event(method, path, query, h);
    event["requestContext"]["domainName"] = json!("abc123.lambda-url.us-east-1.on.aws");
    event["requestContext"]["apiId"] = json!("abc123");
    event
}

fn v1_event(
    method: &str,
    path: &str,
    query: &[(String, String)],
    headers: &[(String, String)],
) -> Value {
    let mut single = serde_json::Map::new();
    let mut multi: serde_json::Map<String, Value> = serde_json::Map::new();
    for (k, v) in query {
        single.insert(k.clone(), json!(v));
        let entry = multi.entry(k.clone()).or_insert_with(|| json!([]));
        if let Some(values) = entry.as_array_mut() {
            values.push(json!(v));
        }
    }
    let mut multi_headers: serde_json::Map<String, Value> = serde_json::Map::new();
    for (k, v) in headers {
        let entry = multi_headers.entry(k.clone()).or_insert_with(|| json!([]));
        if let Some(values) = entry.as_array_mut() {
            values.push(json!(v));
        }
    }
    json!({
        "resource": "/{proxy+}", "path": path, "httpMethod": method,
        "headers": joined_headers(headers), "multiValueHeaders": multi_headers,
        "queryStringParameters": if single.is_empty() { Value::Null } else { Value::Object(single) },
        "multiValueQueryStringParameters": if multi.is_empty() { Value::Null } else { Value::Object(multi) },
        "pathParameters": null, "stageVariables": null,
        "requestContext": {
            "accountId": "123456789012", "apiId": "api", "resourceId": "r", "stage": "prod",
            "requestId": "prop", "httpMethod": method, "path": path,
            "resourcePath": "/{proxy+}", "protocol": "HTTP/1.1",
            "identity": {"sourceIp": "192.0.2.1", "userAgent": "prop"}
        },
        "body": null, "isBase64Encoded": false
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn route_parsing_never_panics(path in any::<String>()) {
        let _ = Route::parse(&path);
    }

    #[test]
    fn a_dataset_reference_is_a_valid_slug_or_a_uuid_or_400(raw in any::<String>()) {
        match DatasetRef::parse(&raw) {
            Ok(DatasetRef::Slug(slug)) => {
                prop_assert_eq!(slug.as_str(), raw.as_str());
                prop_assert!(raw.len() <= 64 && !raw.is_empty());
                prop_assert!(Uuid::try_parse(&raw).is_err());
            }
            Ok(DatasetRef::Id(id)) => prop_assert_eq!(id, Uuid::try_parse(&raw).unwrap()),
            Err(e) => prop_assert_eq!(ApiError::from(e).status().as_u16(), 400),
        }
    }

    #[test]
    fn paging_is_in_bounds_or_400(page in prop::option::of(query_value()),
                                  size in prop::option::of(query_value())) {
        match PageRequest::parse(page.as_deref(), size.as_deref()) {
            Ok(p) => {
                prop_assert!(p.page() >= 1);
                prop_assert!((1..=PageRequest::MAX_PAGE_SIZE).contains(&p.page_size()));
            }
            Err(e) => prop_assert_eq!(ApiError::from(e).status().as_u16(), 400),
        }
    }

    #[test]
    fn any_http_api_request_gets_a_documented_answer(
        method in method(), path in path(), query in query(), headers in key_headers()
    ) {
        let event = v2_event(&method, &path, &encode(&query), &headers);
        assert_documented(&must_invoke(&event)?, method == "HEAD")?;
    }

    #[test]
    fn any_rest_api_request_gets_a_documented_answer(
        method in method(), path in path(), query in query(), headers in key_headers()
    ) {
        let event = v1_event(&method, &path, &query, &headers);
        assert_documented(&must_invoke(&event)?, method == "HEAD")?;
    }

    #[test]
    fn any_function_url_request_gets_a_documented_answer(
        method in method(), path in path(), query in query(), headers in key_headers()
    ) {
        let event = function_url_event(&method, &path, &encode(&query), &headers);
        assert_documented(&must_invoke(&event)?, method == "HEAD")?;
    }

    /// Any event, of any source, with any host, domain name, scheme, stage, path and query:
    /// a documented answer; a JSON 400 "malformed request" exactly when lambda_http would
    /// panic building the request (the oracle); otherwise exactly the status the handlers give
    /// the request lambda_http builds.
    #[test]
    fn any_event_gets_a_documented_answer_and_a_400_exactly_when_lambda_http_would_panic(
        shape in shape()
    ) {
        let event = shape.event();
        let response = must_invoke(&event)?;
        let malformed = lambda_http_panics(&event);
        // HEAD: every answer without its body, the guard's 400 included.
        let head = shape.method == "HEAD";
        let status = assert_documented(&response, head)?;
        let error = serde_json::from_str::<Value>(response["body"].as_str().unwrap_or_default())
            .ok()
            .and_then(|b| b["error"].as_str().map(str::to_owned))
            .unwrap_or_default();
        if malformed {
            prop_assert_eq!(status, 400, "{}", event);
            prop_assert!(head || error.starts_with("malformed request: "), "{} {}", error, event);
        } else {
            prop_assert_eq!(status, handler_status(&event), "{}", event);
            prop_assert!(!error.starts_with("malformed request"), "{} {}", error, event);
        }
    }
}

/// Where an event comes from.
#[derive(Debug, Clone, Copy)]
enum Source {
    RestApi,
    HttpApi,
    FunctionUrl,
}

/// An event's parts.
#[derive(Debug, Clone)]
struct Shape {
    source: Source,
    method: String,
    /// The `host` header.
    host: Option<String>,
    /// `requestContext.domainName`.
    domain: Option<String>,
    /// The `x-forwarded-proto` header.
    proto: Option<String>,
    /// `requestContext.stage` (absent when `None`).
    stage: Option<String>,
    path: String,
    /// The REST API's query parameters.
    query: Vec<(String, String)>,
    /// The HTTP API's and function URL's `rawQueryString`, as sent.
    raw_query: String,
    headers: Vec<(String, String)>,
}

impl Shape {
    fn event(&self) -> Value {
        let mut headers = self.headers.clone();
        if let Some(host) = &self.host {
            headers.push(("host".into(), host.clone()));
        }
        if let Some(proto) = &self.proto {
            headers.push(("x-forwarded-proto".into(), proto.clone()));
        }
        let mut event = match self.source {
            Source::RestApi => v1_event(&self.method, &self.path, &self.query, &headers),
            Source::HttpApi => v2_event(&self.method, &self.path, &self.raw_query, &headers),
            Source::FunctionUrl => {
                function_url_event(&self.method, &self.path, &self.raw_query, &headers)
            }
        };
        let context = &mut event["requestContext"];
        match &self.domain {
            Some(domain) => context["domainName"] = json!(domain),
            None => {
                context.as_object_mut().unwrap().remove("domainName");
            }
        }
        match &self.stage {
            Some(stage) => context["stage"] = json!(stage),
            None => {
                context.as_object_mut().unwrap().remove("stage");
            }
        }
        event
    }
}

/// Text a header may carry (lambda_runtime refuses an event whose header has a control
/// character): anything else, non-ASCII included.
fn header_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), 0..max).prop_map(|chars| {
        chars
            .into_iter()
            .filter(|c| *c == '\t' || !c.is_control())
            .collect()
    })
}

fn shape() -> impl Strategy<Value = Shape> {
    let source = prop_oneof![
        Just(Source::RestApi),
        Just(Source::HttpApi),
        Just(Source::FunctionUrl)
    ];
    let method = prop_oneof![
        4 => Just("GET".to_owned()),
        1 => Just("HEAD".to_owned()),
        1 => Just("POST".to_owned()),
        1 => Just("OPTIONS".to_owned()),
        1 => Just("DELETE".to_owned()),
        1 => Just("PATCH".to_owned()),
    ];
    let host = prop::option::weighted(
        0.6,
        prop_oneof![
            5 => Just("abc123.execute-api.us-east-1.amazonaws.com".to_owned()),
            2 => "[a-z0-9.-]{1,30}(:[0-9]{1,6})?",
            1 => "[ -~]{0,20}",
            1 => header_text(20),
        ],
    );
    let domain = prop::option::weighted(
        0.85,
        prop_oneof![
            5 => Just("abc123.execute-api.us-east-1.amazonaws.com".to_owned()),
            1 => "[ -~]{0,20}",
            1 => any::<String>(),
        ],
    );
    let proto = prop::option::weighted(
        0.3,
        prop_oneof![
            3 => Just("https".to_owned()),
            1 => Just("http".to_owned()),
            1 => "[ -~]{0,8}",
        ],
    );
    let stage = prop::option::weighted(
        0.9,
        prop_oneof![
            4 => Just("$default".to_owned()),
            2 => Just("prod".to_owned()),
            1 => "[a-z]{1,8}",
            1 => "[ -~]{0,8}",
        ],
    );
    let route = prop_oneof![
        Just("/api/v1/datasets"),
        Just("/api/v1/datasets/gated"),
        Just("/api/v1/datasets/open"),
        Just("/api/v1/datasets/6f1c2a9e-3b7d-4c5e-9a8f-0d1e2f3a4b5c"),
        Just("/api/v1/datasets/missing"),
        Just("/api/v1/datasets/gated/data"),
        Just("/api/v1/datasets/open/data"),
        Just("/api/v1/datasets/missing/data"),
    ]
    .prop_map(str::to_owned);
    let path = prop_oneof![
        6 => route,
        3 => path(),
        1 => path().prop_map(|p| format!(" {p}")),
        1 => "[ -~]{0,30}",
        1 => any::<String>(),
    ];
    let raw_query = prop_oneof![
        6 => query().prop_map(|q| encode(&q)),
        1 => "[ -~]{0,30}",
        1 => any::<String>(),
    ];
    (
        (source, method, host, domain, proto),
        (stage, path, query(), raw_query, key_headers()),
    )
        .prop_map(
            |((source, method, host, domain, proto), (stage, path, query, raw_query, headers))| {
                Shape {
                    source,
                    method,
                    host,
                    domain,
                    proto,
                    stage,
                    path,
                    query,
                    raw_query,
                    headers,
                }
            },
        )
}

/// The oracle: whether lambda_http itself panics turning this event into a request. Either way
/// it may build the path counts: with the stage (its default) and without it (with
/// `AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH`, which is the same as an event on `$default`).
fn lambda_http_panics(event: &Value) -> bool {
    let panics = |doc: Value| {
        let payload: LambdaRequest = serde_json::from_value(doc).expect("an event");
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
            let _request: Request = payload.into();
        }))
        .is_err()
    };
    let mut unstaged = event.clone();
    unstaged["requestContext"]["stage"] = json!("$default");
    panics(event.clone()) || panics(unstaged)
}

/// The status the handlers give the request lambda_http builds from this event, without the
/// guard (for an event it can build).
fn handler_status(event: &Value) -> u16 {
    let payload: LambdaRequest = serde_json::from_value(event.clone()).expect("an event");
    let request: Request = payload.into();
    let catalog = catalog();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let Ok(response) = rt.block_on(answer(request, &catalog));
    response.status().as_u16()
}

#[test]
fn the_fuzz_finding_in_lambda_http_gets_a_400() {
    let doc = include_str!("../../../fuzz/regressions/event-lambda-http-url-unwrap.json");
    let response = invoke(doc, &catalog()).expect("an HTTP API event");
    assert_eq!(response["statusCode"], 400, "{response}");
    let body: Value = serde_json::from_str(response["body"].as_str().unwrap()).unwrap();
    assert_eq!(
        body["error"],
        "malformed request: the host and path do not form a URL"
    );
    // Answered like every other error: never cached, readable cross-origin
    assert_eq!(
        header(&response, "cache-control").as_deref(),
        Some("no-store")
    );
    assert_eq!(
        header(&response, "access-control-allow-origin").as_deref(),
        Some("*")
    );
}

/// HEAD answers as GET without the body (docs/api.md), the guard's 400 to a malformed HEAD
/// event included (found by the property test above).
#[test]
fn a_malformed_head_event_gets_its_400_without_a_body() {
    let mut event = v2_event("HEAD", " /api/v1/datasets", "", &[]);
    event["headers"]["host"] = json!("abc123.execute-api.us-east-1.amazonaws.com");
    assert!(lambda_http_panics(&event), "malformed: {event}");
    let response = invoke(&event.to_string(), &catalog()).expect("an event");
    assert_eq!(response["statusCode"], 400, "{response}");
    assert_eq!(
        response["body"].as_str().unwrap_or_default(),
        "",
        "{response}"
    );
}
