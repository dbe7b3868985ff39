//! Every endpoint through the real handlers and adapters, against DynamoDB (moto) and S3
//! (s3s-fs, which checks SigV4 signatures and expiry), with the sample datasets seeded.

use std::time::Duration;

use catalog::api;
use catalog::dynamo::DynamoCatalog;
use catalog_tests::{
    http_get, json_body, manifest, read_parquet, v2_request, Stack, EVENTS_DATASET_ID,
};
use chrono::{TimeDelta, Utc};
use serde_json::Value;

const READ_KEY: &str = "dcat_integration_read_key_000000000000000000000000000000000000000";
const WRITE_KEY: &str = "dcat_integration_write_key_00000000000000000000000000000000000000";

struct Given {
    stack: Stack,
    catalog: DynamoCatalog,
}

/// GIVEN the emulators, the four sample datasets (one gated, one in an open keyless window, one
/// whose window closed, one gated and never keyless) and a read key and a write-only key.
async fn given() -> Given {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(READ_KEY, &["read"], now, None).await;
    stack.add_key(WRITE_KEY, &["write"], now, None).await;
    let catalog = stack.catalog();
    Given { stack, catalog }
}

impl Given {
    async fn list(&self, path: &str) -> lambda_http::Response<lambda_http::Body> {
        api::list(&v2_request(path, &[]), &self.catalog, Utc::now()).await
    }

    async fn metadata(&self, path: &str) -> lambda_http::Response<lambda_http::Body> {
        api::metadata(&v2_request(path, &[]), &self.catalog, Utc::now()).await
    }

    async fn data(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> lambda_http::Response<lambda_http::Body> {
        let signer = self.stack.signer(Duration::from_secs(900));
        api::data(
            &v2_request(path, headers),
            &self.catalog,
            &signer,
            Utc::now(),
        )
        .await
    }
}

fn slugs(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["slug"].as_str().expect("slug").to_owned())
        .collect()
}

#[tokio::test]
async fn list_returns_every_seeded_dataset_newest_first_with_total() {
    let g = given().await;
    let resp = g.list("/api/v1/datasets").await;
    assert_eq!(resp.status(), 200);
    let page = json_body(&resp);
    let mut expected: Vec<String> = manifest()
        .datasets
        .into_iter()
        .map(|d| d.slug.to_string())
        .collect();
    expected.reverse();
    assert_eq!(slugs(&page), expected, "newest published first");
    assert_eq!(page["total"], 4);
    assert_eq!(page["page"], 1);
    assert_eq!(page["page_size"], 20);
    // Each summary agrees with the dataset's own metadata.
    for item in page["items"].as_array().unwrap() {
        assert!(item.get("schema").is_none(), "summaries carry no schema");
        let slug = item["slug"].as_str().unwrap();
        let full = json_body(&g.metadata(&format!("/api/v1/datasets/{slug}")).await);
        for field in [
            "id",
            "name",
            "description",
            "category",
            "tags",
            "license",
            "size",
            "row_count",
            "column_count",
            "keyless",
            "keyless_until",
            "updated_at",
        ] {
            assert_eq!(item[field], full[field], "{slug}.{field}");
        }
    }
}

#[tokio::test]
async fn list_pages_through_the_catalog_once_and_past_the_end_is_empty() {
    let g = given().await;
    let mut seen = Vec::new();
    for page in 1..=2 {
        let p = json_body(
            &g.list(&format!("/api/v1/datasets?page={page}&page_size=3"))
                .await,
        );
        assert_eq!(p["total"], 4);
        seen.extend(slugs(&p));
    }
    let mut all: Vec<String> = manifest()
        .datasets
        .into_iter()
        .map(|d| d.slug.to_string())
        .collect();
    all.reverse();
    assert_eq!(seen, all);
    let past = json_body(&g.list("/api/v1/datasets?page=3&page_size=3").await);
    assert_eq!(past["items"], Value::Array(vec![]));
    assert_eq!(past["total"], 4);
}

#[tokio::test]
async fn list_of_an_empty_catalog_is_an_empty_page() {
    let stack = Stack::start().await;
    let resp = api::list(
        &v2_request("/api/v1/datasets", &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let page = json_body(&resp);
    assert_eq!(page["total"], 0);
    assert_eq!(page["items"], Value::Array(vec![]));
}

#[tokio::test]
async fn metadata_by_slug_returns_the_stored_schema_and_statistics() {
    let g = given().await;
    let sample = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == "air-quality-hourly")
        .expect("sample");
    let resp = g.metadata("/api/v1/datasets/air-quality-hourly").await;
    assert_eq!(resp.status(), 200);
    let d = json_body(&resp);
    assert_eq!(d["schema"], sample.schema);
    assert_eq!(
        d["discussions"],
        serde_json::to_value(&sample.meta.discussions).unwrap()
    );
    assert_eq!(d["row_count"], sample.row_count);
    assert_eq!(d["column_count"], sample.column_count);
    assert_eq!(d["size"], sample.size);
    assert_eq!(d["name"], sample.meta.card.name);
    assert_eq!(d["keyless"], false);
    assert_eq!(d["keyless_until"], Value::Null);
    assert_eq!(d["id"], EVENTS_DATASET_ID);
    // Every Column and Discussion object has the spec's fields (2.2, 2.3), and the numeric
    // statistics are null exactly for non-numeric columns.
    for column in d["schema"].as_array().unwrap() {
        for field in [
            "name",
            "dtype",
            "null_count",
            "null_percent",
            "unique_count",
            "mean",
            "std",
            "min",
            "max",
            "median",
            "top_values",
            "sample_values",
        ] {
            assert!(
                column.get(field).is_some(),
                "column lacks {field}: {column}"
            );
        }
        let numeric = ["int", "uint", "float", "double"]
            .iter()
            .any(|p| column["dtype"].as_str().unwrap().starts_with(p));
        if !numeric {
            for stat in ["mean", "std", "min", "max", "median"] {
                assert!(column[stat].is_null(), "{stat} of {column}");
            }
        }
    }
    for discussion in d["discussions"].as_array().unwrap() {
        for field in ["id", "title", "slug", "path"] {
            assert!(discussion[field].is_string(), "{discussion}");
        }
    }
}

#[tokio::test]
async fn metadata_by_uuid_equals_metadata_by_slug() {
    let g = given().await;
    let by_slug = json_body(&g.metadata("/api/v1/datasets/air-quality-hourly").await);
    let resp = g
        .metadata(&format!("/api/v1/datasets/{EVENTS_DATASET_ID}"))
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(json_body(&resp), by_slug);
}

#[tokio::test]
async fn metadata_of_unknown_slug_and_uuid_is_404() {
    let g = given().await;
    assert_eq!(
        g.metadata("/api/v1/datasets/no-such-thing").await.status(),
        404
    );
    let unknown = uuid::Uuid::new_v4();
    assert_eq!(
        g.metadata(&format!("/api/v1/datasets/{unknown}"))
            .await
            .status(),
        404
    );
}

#[tokio::test]
async fn metadata_reports_keyless_windows_as_of_now() {
    let g = given().await;
    let open = json_body(&g.metadata("/api/v1/datasets/city-bikes").await);
    assert_eq!(open["keyless"], true);
    let closed = json_body(&g.metadata("/api/v1/datasets/river-levels").await);
    assert_eq!(closed["keyless"], false);
    assert!(closed["keyless_until"].as_str().is_some());
}

/// Downloads the descriptor's URL and checks the Parquet file against the descriptor.
async fn assert_downloads(descriptor: &Value) {
    let url = descriptor["url"].as_str().expect("url");
    let (status, bytes) = http_get(url).await;
    assert_eq!(status, 200, "download of {url}");
    let (rows, columns, read) = read_parquet(bytes);
    assert_eq!(rows, descriptor["row_count"].as_u64().unwrap());
    assert_eq!(read, rows, "every row reads back");
    let expected: Vec<String> = descriptor["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap().to_owned())
        .collect();
    assert_eq!(columns, expected);
}

#[tokio::test]
async fn data_with_read_key_in_x_api_key_gives_a_url_that_downloads_the_parquet_file() {
    let g = given().await;
    let before = Utc::now();
    let resp = g
        .data(
            "/api/v1/datasets/air-quality-hourly/data",
            &[("x-api-key", READ_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 200, "{}", json_body(&resp));
    let d = json_body(&resp);
    assert_eq!(d["slug"], "air-quality-hourly");
    assert_eq!(d["format"], "parquet");
    let expires = chrono::DateTime::parse_from_rfc3339(d["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    let ttl = expires - before;
    assert!(
        ttl > TimeDelta::seconds(895) && ttl <= TimeDelta::seconds(900),
        "default TTL is 15 minutes, got {ttl}"
    );
    assert_downloads(&d).await;
}

#[tokio::test]
async fn data_with_read_key_as_bearer_downloads() {
    let g = given().await;
    let bearer = format!("Bearer {READ_KEY}");
    let resp = g
        .data(
            "/api/v1/datasets/bird-sightings/data?format=parquet",
            &[("authorization", &bearer)],
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert_downloads(&json_body(&resp)).await;
}

#[tokio::test]
async fn data_without_key_in_open_keyless_window_downloads() {
    let g = given().await;
    let resp = g.data("/api/v1/datasets/city-bikes/data", &[]).await;
    assert_eq!(resp.status(), 200);
    assert_downloads(&json_body(&resp)).await;
}

#[tokio::test]
async fn data_by_uuid_without_key_in_keyless_window_downloads() {
    let g = given().await;
    let id = json_body(&g.metadata("/api/v1/datasets/city-bikes").await)["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let resp = g.data(&format!("/api/v1/datasets/{id}/data"), &[]).await;
    assert_eq!(resp.status(), 200);
    assert_downloads(&json_body(&resp)).await;
    let unknown = uuid::Uuid::new_v4();
    let resp = g
        .data(
            &format!("/api/v1/datasets/{unknown}/data"),
            &[("x-api-key", READ_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 404);
}

#[tokio::test]
async fn downloaded_object_size_equals_reported_size() {
    let g = given().await;
    let meta = json_body(&g.metadata("/api/v1/datasets/bird-sightings").await);
    let d = json_body(
        &g.data(
            "/api/v1/datasets/bird-sightings/data",
            &[("x-api-key", READ_KEY)],
        )
        .await,
    );
    let (_, bytes) = http_get(d["url"].as_str().unwrap()).await;
    assert_eq!(bytes.len() as u64, meta["size"].as_u64().unwrap());
}

#[tokio::test]
async fn data_by_uuid_downloads() {
    let g = given().await;
    let resp = g
        .data(
            &format!("/api/v1/datasets/{EVENTS_DATASET_ID}/data"),
            &[("x-api-key", READ_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(json_body(&resp)["slug"], "air-quality-hourly");
}

#[tokio::test]
async fn data_without_key_is_401_when_gated_or_window_closed() {
    let g = given().await;
    for slug in ["air-quality-hourly", "river-levels", "bird-sightings"] {
        let resp = g.data(&format!("/api/v1/datasets/{slug}/data"), &[]).await;
        assert_eq!(resp.status(), 401, "{slug}");
    }
}

#[tokio::test]
async fn invalid_key_is_401_even_for_keyless_dataset() {
    let g = given().await;
    let resp = g
        .data(
            "/api/v1/datasets/city-bikes/data",
            &[("x-api-key", "dcat_not_a_real_key")],
        )
        .await;
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn key_without_read_scope_is_403() {
    let g = given().await;
    let resp = g
        .data(
            "/api/v1/datasets/air-quality-hourly/data",
            &[("x-api-key", WRITE_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 403);
}

#[tokio::test]
async fn revoked_key_fails_on_the_next_request() {
    let g = given().await;
    let path = "/api/v1/datasets/air-quality-hourly/data";
    assert_eq!(g.data(path, &[("x-api-key", READ_KEY)]).await.status(), 200);
    g.stack
        .writer()
        .revoke_key(&catalog::domain::KeyHash::of(READ_KEY), Utc::now())
        .await
        .expect("revoke");
    assert_eq!(g.data(path, &[("x-api-key", READ_KEY)]).await.status(), 401);
}

#[tokio::test]
async fn expired_key_is_401() {
    let g = given().await;
    let key = "dcat_integration_expired_key_000000000000000000000000000000000000";
    let now = Utc::now();
    g.stack
        .add_key(key, &["read"], now, Some(now - TimeDelta::seconds(1)))
        .await;
    let resp = g
        .data(
            "/api/v1/datasets/air-quality-hourly/data",
            &[("x-api-key", key)],
        )
        .await;
    assert_eq!(resp.status(), 401);
}

#[tokio::test]
async fn tampered_url_is_refused_by_s3() {
    let g = given().await;
    let d = json_body(
        &g.data(
            "/api/v1/datasets/air-quality-hourly/data",
            &[("x-api-key", READ_KEY)],
        )
        .await,
    );
    let url = d["url"].as_str().unwrap();
    // Another, existing object under the same signature.
    let other = json_body(
        &g.data(
            "/api/v1/datasets/bird-sightings/data",
            &[("x-api-key", READ_KEY)],
        )
        .await,
    );
    let other_path = other["url"].as_str().unwrap().split('?').next().unwrap();
    assert_eq!(http_get(other["url"].as_str().unwrap()).await.0, 200);
    let query = url.split_once('?').unwrap().1;
    let other_key = format!("{other_path}?{query}");
    assert_eq!(http_get(&other_key).await.0, 403, "{other_key}");
    // A flipped signature character.
    let at = url.find("X-Amz-Signature=").unwrap() + "X-Amz-Signature=".len();
    let mut tampered = url.to_owned();
    let flipped = if &url[at..at + 1] == "0" { "1" } else { "0" };
    tampered.replace_range(at..at + 1, flipped);
    assert_eq!(http_get(&tampered).await.0, 403, "{tampered}");
    // A longer life than signed.
    let longer = url.replace("X-Amz-Expires=900", "X-Amz-Expires=9000");
    assert_eq!(http_get(&longer).await.0, 403, "{longer}");
    // The untouched URL still works.
    assert_eq!(http_get(url).await.0, 200);
}

#[tokio::test]
async fn expired_url_is_refused_by_s3() {
    let g = given().await;
    let signer = g.stack.signer(Duration::from_secs(2));
    let resp = api::data(
        &v2_request("/api/v1/datasets/city-bikes/data", &[]),
        &g.catalog,
        &signer,
        Utc::now(),
    )
    .await;
    assert_eq!(resp.status(), 200);
    let d = json_body(&resp);
    let url = d["url"].as_str().unwrap().to_owned();
    let expires = chrono::DateTime::parse_from_rfc3339(d["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    // Good before expires_at...
    assert_eq!(http_get(&url).await.0, 200, "a fresh URL downloads");
    // ...refused after it.
    let wait = (expires - Utc::now()).to_std().unwrap_or_default() + Duration::from_millis(1500);
    tokio::time::sleep(wait).await;
    assert_eq!(
        http_get(&url).await.0,
        403,
        "an expired URL must not download"
    );
}

/// Every endpoint, served by the production SDK configuration (retries, timeouts) against a
/// DynamoDB at `endpoint`, answers 503 with `Retry-After`, the given error code and no
/// internals.
async fn assert_every_endpoint_is_503(endpoint: String, code: &str, error: &str) {
    let stack = Stack::start().await;
    let sdk = catalog::aws::load_sdk_config().await;
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&sdk)
            .endpoint_url(endpoint)
            .region(aws_sdk_dynamodb::config::Region::new("us-east-1"))
            .credentials_provider(catalog_tests::credentials())
            .build(),
    );
    let catalog = DynamoCatalog::with_keys(client, "catalog-datasets", "catalog-keys");
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

const UNAVAILABLE: &str = "the catalog is temporarily unavailable, retry shortly";
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

#[tokio::test]
async fn expires_at_is_the_signing_sessions_expiry_when_it_ends_before_the_ttl() {
    // GIVEN a signing role whose sessions (from STS, here moto's) last 15 minutes, and a
    // requested URL life of one hour
    let g = given().await;
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(catalog::aws::http_client(
            catalog::aws::RootCertificates::Platform,
        ))
        .region(aws_config::Region::new(catalog_tests::REGION))
        .credentials_provider(catalog_tests::credentials())
        .endpoint_url(&g.stack.dynamo_url)
        .load()
        .await;
    let config = catalog::config::DataConfig {
        datasets_table: g.stack.target.datasets_table.clone(),
        keys_table: g.stack.target.keys_table.clone(),
        bucket: g.stack.target.bucket.clone(),
        url_ttl: Duration::from_secs(3600),
        s3_force_path_style: true,
        signing_role_arn: Some("arn:aws:iam::123456789012:role/catalog-signer".into()),
        signing_session: Duration::from_secs(900),
    };
    let credentials = catalog::aws::signing_credentials(&sdk, &config)
        .await
        .expect("provider");
    let signer = catalog::s3::S3Signer::new(
        aws_sdk_s3::config::Builder::from(&sdk)
            .endpoint_url(&g.stack.s3_url)
            .force_path_style(true)
            .build(),
        credentials,
        &config.bucket,
        config.url_ttl,
    );
    // WHEN a URL is issued
    let before = Utc::now();
    let resp = api::data(
        &v2_request("/api/v1/datasets/city-bikes/data", &[]),
        &g.catalog,
        &signer,
        Utc::now(),
    )
    .await;
    // THEN it is signed with the session's credentials and reports their expiry, not the TTL
    assert_eq!(resp.status(), 200, "{}", json_body(&resp));
    let d = json_body(&resp);
    let url = d["url"].as_str().unwrap();
    assert!(url.contains("X-Amz-Security-Token="), "{url}");
    assert!(url.contains("X-Amz-Expires=3600"), "{url}");
    let expires = chrono::DateTime::parse_from_rfc3339(d["expires_at"].as_str().unwrap())
        .unwrap()
        .with_timezone(&Utc);
    let life = expires - before;
    assert!(
        life > TimeDelta::seconds(880) && life <= TimeDelta::seconds(901),
        "expires_at should be the 15-minute session's end, got {life}"
    );
}
