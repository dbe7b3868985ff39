//! The data endpoint: keys, keyless windows, formats, errors.

use super::*;

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
        catalog_http::api::data(&get("/api/v1/datasets/edge/data", &[]), &c, &signer, now()).await;
    assert_json_error(&at_end, 401);
    let just_before = catalog_http::api::data(
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
async fn a_revoked_key_is_refused_whatever_the_revokers_clock_said() {
    // GIVEN a key revoked by an operator whose clock ran an hour ahead
    let c = catalog();
    let ahead = "dcat_revoked_ahead_0123456789abcdef";
    c.insert_key(
        KeyHash::of(ahead),
        KeyRecord {
            owner: None,
            datasets: None,
            id: "k-ahead".into(),
            scopes: vec![Scope::Read],
            expires_at: None,
            revoked_at: Some(now() + Duration::hours(1)),
            last_used_at: None,
        },
    );
    // WHEN it is used on the next request, THEN it is refused
    let resp = data_with(&c, "/api/v1/datasets/gated/data", &[("x-api-key", ahead)]).await;
    assert_error(&resp, 401, "invalid_key");
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
    let meta =
        body(&catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await);
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
