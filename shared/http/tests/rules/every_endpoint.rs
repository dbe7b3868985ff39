//! What every endpoint shares: methods, routes, versions, error codes, challenges, caching.

use super::*;

// ----------------------------------------------------------------------------------------------
// Routing

#[tokio::test]
async fn other_methods_are_405_with_an_allow_header_naming_every_allowed_method() {
    for method in ["POST", "PUT", "DELETE", "PATCH"] {
        let resp =
            catalog_http::api::list(&request(method, "/api/v1/datasets", &[]), &catalog(), now())
                .await;
        assert_json_error(&resp, 405);
        assert_eq!(resp.headers()["allow"], "GET, HEAD, OPTIONS");
    }
}

#[tokio::test]
async fn head_is_get_without_the_body() {
    let c = catalog();
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let cases = [
        ("/api/v1/datasets", vec![]),
        ("/api/v1/datasets/gated", vec![]),
        ("/api/v1/datasets/gated/data", vec![("x-api-key", READ_KEY)]),
        ("/api/v1/datasets/gated/data", vec![]),
        ("/api/v1/datasets/nope", vec![]),
    ];
    for (path, headers) in cases {
        let answer = |method: &'static str| {
            let req = request(method, path, &headers);
            let (c, signer) = (&c, &signer);
            async move {
                catalog_http::api::dispatch(&req, c, signer, &FakeRows::default(), now()).await
            }
        };
        let (get, head) = (answer("GET").await, answer("HEAD").await);
        assert_eq!(head.status(), get.status(), "{path}");
        assert!(!get.body().is_empty(), "{path}");
        assert!(head.body().is_empty(), "{path}: HEAD has no body");
        for name in ["content-type", "etag", "cache-control", "www-authenticate"] {
            assert_eq!(
                head.headers().get(name),
                get.headers().get(name),
                "{path}: {name}"
            );
        }
    }
}

#[tokio::test]
async fn paths_are_exact_a_prefix_or_a_trailing_slash_is_a_json_404() {
    for path in [
        "/anything/api/v1/datasets",
        "/api/v1/datasets/",
        "/",
        "/api/v2/datasets",
    ] {
        let resp = list(path).await;
        let message = assert_error(&resp, 404, "not_found");
        assert!(message.contains("no route"), "{path}: {message}");
    }
    assert_error(&metadata("/api/v1/datasets/gated/").await, 404, "not_found");
    assert_error(
        &data("/api/v1/datasets/gated/data/", &[]).await,
        404,
        "not_found",
    );
}

#[tokio::test]
async fn what_a_client_sent_is_echoed_at_most_40_characters_long() {
    let long = "9".repeat(5_000);
    for path in [
        format!("/api/v1/datasets?page={long}x"),
        format!("/api/v1/datasets?page_size={long}x"),
        format!("/api/v1/{long}"),
    ] {
        let message = assert_json_error(
            &list(&path).await,
            if path.contains('?') { 400 } else { 404 },
        );
        assert!(message.len() < 200, "{} bytes: {message}", message.len());
    }
    let message = assert_json_error(
        &data(&format!("/api/v1/datasets/gated/data?format={long}"), &[]).await,
        400,
    );
    assert!(message.len() < 200, "{message}");
}

#[tokio::test]
async fn a_function_answers_404_for_another_functions_route() {
    let resp =
        catalog_http::api::list(&get("/api/v1/datasets/gated", &[]), &catalog(), now()).await;
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
        json!({"mode": "key_required", "keyless_until": null, "required_scope": "read", "level": "registered"})
    );

    let b = body(&metadata("/api/v1/datasets/open-window").await);
    assert_eq!(
        b["access"],
        json!({"mode": "keyless", "keyless_until": "2026-06-01T13:00:00Z", "required_scope": null, "level": "registered"})
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
            catalog_http::api::list(&request("POST", "/api/v1/datasets", &[]), &c, now()).await,
            405,
            "method_not_allowed",
        ),
    ];
    for (resp, status, code) in &cases {
        assert_error(resp, *status, code);
        assert_eq!(body(resp)["request_id"], "req-1", "the event's request id");
    }

    c.unavailable.store(true, Ordering::SeqCst);
    let resp = catalog_http::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    assert_error(&resp, 503, "rate_limited");
    assert_eq!(header(&resp, "retry-after"), Some("1"));
    c.unavailable.store(false, Ordering::SeqCst);
    c.corrupt.store(true, Ordering::SeqCst);
    let resp = catalog_http::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
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
        // The oracle, computed here: the first 128 bits of the body's SHA-256, hex, quoted.
        let digest = <sha2::Sha256 as sha2::Digest>::digest(resp.body().as_ref());
        let expected = format!("\"{}\"", hex::encode(&digest[..16]));
        assert_eq!(etag, expected, "ETag digests the body");
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
    let first = catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await;
    let etag = header(&first, "etag").unwrap().to_owned();
    for value in [
        etag.clone(),
        format!("W/{etag}"),
        format!("\"other\", {etag}"),
        "*".into(),
    ] {
        let req = get("/api/v1/datasets/gated", &[("if-none-match", &value)]);
        let resp = catalog_http::api::metadata(&req, &c, now()).await;
        assert_eq!(resp.status(), 304, "If-None-Match: {value}");
        assert!(resp.body().is_empty(), "a 304 has no body");
        assert_eq!(header(&resp, "etag"), Some(etag.as_str()));
        assert_eq!(header(&resp, "cache-control"), Some("public, max-age=60"));
    }
    // A stale tag, or a changed answer, gets the full 200.
    let req = get("/api/v1/datasets/gated", &[("if-none-match", "\"stale\"")]);
    assert_eq!(
        catalog_http::api::metadata(&req, &c, now()).await.status(),
        200
    );
    let req = get("/api/v1/datasets/gated", &[("if-none-match", &etag)]);
    let later = catalog_http::api::metadata(&req, &c, now() + Duration::days(400)).await;
    assert_eq!(
        later.status(),
        304,
        "time alone does not change a gated dataset's answer"
    );
    let open =
        catalog_http::api::metadata(&get("/api/v1/datasets/open-window", &[]), &c, now()).await;
    let open_etag = header(&open, "etag").unwrap().to_owned();
    let req = get(
        "/api/v1/datasets/open-window",
        &[("if-none-match", &open_etag)],
    );
    let after_window = catalog_http::api::metadata(&req, &c, now() + Duration::hours(2)).await;
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

    let page = catalog_http::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    let page_etag = header(&page, "etag").unwrap().to_owned();
    let req = get("/api/v1/datasets", &[("if-none-match", &page_etag)]);
    assert_eq!(catalog_http::api::list(&req, &c, now()).await.status(), 304);
    let req = get(
        "/api/v1/datasets?page_size=2",
        &[("if-none-match", &page_etag)],
    );
    assert_eq!(
        catalog_http::api::list(&req, &c, now()).await.status(),
        200,
        "another page"
    );
}

#[tokio::test]
async fn no_cached_answer_outlives_an_open_keyless_window() {
    // open-window closes in one hour; at 59m30s only 30 seconds of caching remain.
    let c = catalog();
    let at = now() + Duration::minutes(59) + Duration::seconds(30);
    let resp = catalog_http::api::metadata(&get("/api/v1/datasets/open-window", &[]), &c, at).await;
    assert_eq!(header(&resp, "cache-control"), Some("public, max-age=30"));
    let resp = catalog_http::api::list(&get("/api/v1/datasets", &[]), &c, at).await;
    assert_eq!(header(&resp, "cache-control"), Some("public, max-age=30"));
    let resp = catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, at).await;
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
