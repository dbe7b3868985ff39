//! The local API over real HTTP, as a browser or an HTTP cache meets it: CORS preflights and
//! headers (and that template.yaml configures API Gateway with the same policy), and
//! conditional reads with `If-None-Match`.

use catalog_http::api::cors;
use catalog_tests::{http_request, repo_root, Stack, EVENTS_READ_KEY};
use chrono::Utc;

fn header<'a>(headers: &'a hyper::HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).map(|v| v.to_str().expect("ASCII header"))
}

#[test]
fn template_cors_configuration_is_the_functions_policy() {
    let text = std::fs::read_to_string(repo_root().join("template.yaml")).expect("template.yaml");
    let template: serde_norway::Value = serde_norway::from_str(&text).expect("YAML");
    let cors_config = &template["Resources"]["HttpApi"]["Properties"]["CorsConfiguration"];
    let list = |name: &str| -> Vec<String> {
        cors_config[name]
            .as_sequence()
            .unwrap_or_else(|| panic!("CorsConfiguration.{name}"))
            .iter()
            .map(|v| v.as_str().expect("string").to_owned())
            .collect()
    };
    assert_eq!(list("AllowOrigins"), [cors::ALLOW_ORIGIN]);
    assert_eq!(list("AllowMethods"), cors::ALLOW_METHODS);
    assert_eq!(list("AllowHeaders"), cors::ALLOW_HEADERS);
    assert_eq!(list("ExposeHeaders"), cors::EXPOSE_HEADERS);
    assert_eq!(
        cors_config["MaxAge"].as_u64(),
        Some(u64::from(cors::MAX_AGE_SECONDS))
    );
    assert!(
        cors_config.get("AllowCredentials").is_none(),
        "no credentials with a wildcard origin"
    );
}

#[tokio::test]
async fn browsers_may_call_every_endpoint_with_either_key_header() {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);
    let origin = ("origin", "https://notebook.example.org");

    for path in [
        "/datasets",
        "/datasets/city-bikes",
        "/datasets/city-bikes/data",
    ] {
        // A preflight for a GET carrying a key, as fetch() sends it
        for key_header in ["x-api-key", "authorization", "x-api-key,if-none-match"] {
            let (status, headers, body) = http_request(
                "OPTIONS",
                &format!("{base}{path}"),
                &[
                    origin,
                    ("access-control-request-method", "GET"),
                    ("access-control-request-headers", key_header),
                ],
            )
            .await;
            assert_eq!(status, 204, "preflight {path}");
            assert!(body.is_empty());
            assert_eq!(header(&headers, "access-control-allow-origin"), Some("*"));
            assert_eq!(
                header(&headers, "access-control-allow-methods"),
                Some("GET, OPTIONS")
            );
            let allowed = header(&headers, "access-control-allow-headers").unwrap();
            for requested in key_header.split(',') {
                assert!(allowed.split(", ").any(|h| h == requested), "{allowed}");
            }
            assert_eq!(header(&headers, "access-control-max-age"), Some("600"));
        }
    }

    // The actual requests: readable cross-origin, errors included, with the useful headers
    // exposed to scripts
    let bearer = format!("Bearer {EVENTS_READ_KEY}");
    for (path, headers, expected) in [
        ("/datasets", vec![origin], 200),
        ("/datasets/city-bikes", vec![origin], 200),
        (
            "/datasets/city-bikes/data",
            vec![origin, ("x-api-key", EVENTS_READ_KEY)],
            200,
        ),
        (
            "/datasets/city-bikes/data",
            vec![origin, ("authorization", bearer.as_str())],
            200,
        ),
        ("/datasets/air-quality-hourly/data", vec![origin], 401),
        ("/datasets/nope", vec![origin], 404),
    ] {
        let (status, headers, _) = http_request("GET", &format!("{base}{path}"), &headers).await;
        assert_eq!(status, expected, "{path}");
        assert_eq!(
            header(&headers, "access-control-allow-origin"),
            Some("*"),
            "{path}"
        );
        assert_eq!(
            header(&headers, "access-control-expose-headers"),
            Some("etag, last-modified, retry-after, www-authenticate")
        );
    }
    // An OPTIONS request outside the API is not a preflight the API answers
    let (status, _, _) = http_request("OPTIONS", &format!("{base}/elsewhere"), &[origin]).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn if_none_match_over_http_saves_the_body_until_the_answer_changes() {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);

    for path in ["/datasets?page_size=2", "/datasets/river-levels"] {
        let url = format!("{base}{path}");
        let (status, headers, body) = http_request("GET", &url, &[]).await;
        assert_eq!(status, 200);
        assert!(!body.is_empty());
        let etag = header(&headers, "etag").expect("ETag").to_owned();
        assert!(header(&headers, "last-modified").is_some());
        assert_eq!(
            header(&headers, "cache-control"),
            Some("public, max-age=60")
        );

        let (status, headers, body) = http_request("GET", &url, &[("if-none-match", &etag)]).await;
        assert_eq!(status, 304, "{path}");
        assert!(body.is_empty(), "a 304 carries no body");
        assert_eq!(header(&headers, "etag"), Some(etag.as_str()));
    }

    // WHEN a dataset's keyless window opens, its metadata and the list change
    let url = format!("{base}/datasets/river-levels");
    let (_, headers, _) = http_request("GET", &url, &[]).await;
    let etag = header(&headers, "etag").unwrap().to_owned();
    let list_url = format!("{base}/datasets?page_size=100");
    let (_, headers, _) = http_request("GET", &list_url, &[]).await;
    let list_etag = header(&headers, "etag").unwrap().to_owned();
    let (_, headers, _) = http_request("GET", &url, &[]).await;
    let last_modified = header(&headers, "last-modified").unwrap().to_owned();
    let slug = catalog::input::Slug::parse("river-levels").unwrap();
    let changed_at = now + chrono::Duration::seconds(5);
    stack
        .writer()
        .set_keyless(&slug, Some(now + chrono::Duration::hours(1)), changed_at)
        .await
        .unwrap();
    // The change is an update: Last-Modified moves to it
    let (_, headers, _) = http_request("GET", &url, &[]).await;
    assert_ne!(
        header(&headers, "last-modified"),
        Some(last_modified.as_str())
    );
    assert_eq!(
        header(&headers, "last-modified").map(str::to_owned),
        Some(changed_at.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
    );
    // THEN the old tags no longer match: full answers with new tags
    for (url, old) in [(&url, &etag), (&list_url, &list_etag)] {
        let (status, headers, _) = http_request("GET", url, &[("if-none-match", old)]).await;
        assert_eq!(status, 200, "{url}");
        assert_ne!(header(&headers, "etag"), Some(old.as_str()));
    }
}

#[tokio::test]
async fn every_answer_of_the_local_api_carries_its_own_request_id() {
    let stack = Stack::start().await;
    let (base, _api) = catalog_tests::start_local_api(&stack);
    let mut ids = std::collections::HashSet::new();
    for path in ["/datasets/nope", "/datasets/nope", "/datasets?page=0"] {
        let (status, _, body) = http_request("GET", &format!("{base}{path}"), &[]).await;
        assert!(status == 404 || status == 400, "{path}: {status}");
        let body: serde_json::Value = serde_json::from_slice(&body).expect("JSON error");
        let id = body["request_id"].as_str().expect("request_id").to_owned();
        assert!(
            uuid::Uuid::try_parse(&id).is_ok(),
            "{id} is not a generated id"
        );
        ids.insert(id);
    }
    assert_eq!(ids.len(), 3, "each request has its own id: {ids:?}");
}

/// What the template says of its routes besides their table (`api::routes` holds the table
/// against the template): their throttling, and the signing role of those that sign URLs.
#[test]
fn template_routes_are_throttled_and_signed_as_configured() {
    let text = std::fs::read_to_string(repo_root().join("template.yaml")).expect("template.yaml");
    let template: serde_norway::Value = serde_norway::from_str(&text).expect("YAML");
    let resources = &template["Resources"];
    let routes: Vec<String> = catalog_http::routes::ROUTES
        .iter()
        .filter(|r| !r.by_default)
        .map(|r| format!("ANY {}", r.path))
        .collect();
    // Route-level throttling names routes that exist, the data route among them.
    let settings = resources["HttpApi"]["Properties"]["RouteSettings"]
        .as_mapping()
        .expect("RouteSettings");
    let keys: Vec<&str> = settings.keys().filter_map(|k| k.as_str()).collect();
    for throttled in [
        "ANY /api/v1/datasets/{slug}/data",
        "ANY /api/v1/datasets/{slug}/download",
        "ANY /api/v1/datasets/{slug}/rows",
        "ANY /api/v1/delta-sharing/{proxy+}",
    ] {
        assert!(keys.contains(&throttled), "{throttled}: {keys:?}");
    }
    for key in keys {
        assert!(routes.iter().any(|r| r == key), "{key} is not a route");
    }
    // The deployed functions that sign URLs refuse to start without their signing role.
    for function in ["CatalogDataFunction", "CatalogSharingFunction"] {
        let variables = &resources[function]["Properties"]["Environment"]["Variables"];
        assert_eq!(
            variables["SIGNING_ROLE_REQUIRED"].as_str(),
            Some("true"),
            "{function}"
        );
        assert!(!variables["SIGNING_ROLE_ARN"].is_null(), "{function}");
    }
}
