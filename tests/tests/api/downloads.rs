//! The data endpoint: keys, keyless windows, and URLs that S3 (s3s-fs) honours or refuses.

use super::*;

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
        .revoke_key(&catalog::keys::KeyHash::of(READ_KEY), Utc::now())
        .await
        .expect("revoke");
    assert_eq!(g.data(path, &[("x-api-key", READ_KEY)]).await.status(), 401);
}

#[tokio::test]
async fn a_key_revoked_by_a_fast_clock_fails_on_the_next_request() {
    let g = given().await;
    let path = "/api/v1/datasets/air-quality-hourly/data";
    assert_eq!(g.data(path, &[("x-api-key", READ_KEY)]).await.status(), 200);
    // The operator's clock is an hour ahead: the stored revocation time is in the future.
    g.stack
        .writer()
        .revoke_key(
            &catalog::keys::KeyHash::of(READ_KEY),
            Utc::now() + chrono::Duration::hours(1),
        )
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

#[tokio::test]
async fn expires_at_is_the_signing_sessions_expiry_when_it_ends_before_the_ttl() {
    // GIVEN a signing role whose sessions (from STS, here moto's) last 15 minutes, and a
    // requested URL life of one hour
    let g = given().await;
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(catalog_aws::aws::http_client(
            catalog_aws::aws::RootCertificates::Platform,
        ))
        .region(aws_config::Region::new(catalog_tests::REGION))
        .credentials_provider(catalog_tests::credentials())
        .endpoint_url(&g.stack.dynamo_url)
        .load()
        .await;
    let config = catalog_aws::config::DataConfig {
        datasets_table: g.stack.target.datasets_table.clone(),
        keys_table: g.stack.target.keys_table.clone(),
        bucket: g.stack.target.bucket.clone(),
        url_ttl: Duration::from_secs(3600),
        s3_force_path_style: true,
        signing_role_arn: Some("arn:aws:iam::123456789012:role/catalog-signer".into()),
        signing_session: Duration::from_secs(900),
    };
    let credentials = catalog_aws::aws::signing_credentials(&sdk, &config)
        .await
        .expect("provider");
    let signer = catalog_aws::s3::S3Signer::new(
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
