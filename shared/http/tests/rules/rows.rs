//! The rows route: its answer, its window, and the data endpoint's rules, case for case.

use super::*;

async fn rows(path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    catalog_http::api::rows(&get(path, headers), &catalog(), &FakeRows::default(), now()).await
}

#[tokio::test]
async fn rows_with_a_read_key_hold_the_window_the_columns_and_the_version() {
    let resp = rows(
        "/api/v1/datasets/gated/rows?offset=1&length=5",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert_eq!(
        body(&resp),
        json!({
            "slug": "gated",
            "version": 3,
            "columns": [{"name": "x", "type": "int64"}, {"name": "s", "type": "int64"}],
            "rows": [{"row_idx": 1, "row": {"x": 1, "s": 1}, "truncated_cells": []}],
            "offset": 1,
            "length": 1,
            "num_rows_total": 2,
            "next_offset": null,
        })
    );
}

#[tokio::test]
async fn rows_answer_every_access_case_as_the_data_endpoint_does() {
    let cases: [(&str, &[(&str, &str)]); 12] = [
        ("gated", &[]),
        ("gated", &[("x-api-key", READ_KEY)]),
        ("gated", &[("x-api-key", WRITE_ONLY_KEY)]),
        ("gated", &[("x-api-key", REVOKED_KEY)]),
        ("gated", &[("x-api-key", EXPIRED_KEY)]),
        ("gated", &[("x-api-key", UNKNOWN_KEY)]),
        ("open-window", &[]),
        ("open-window", &[("x-api-key", UNKNOWN_KEY)]),
        ("closed-window", &[]),
        ("unpublished", &[("x-api-key", READ_KEY)]),
        ("nope", &[("x-api-key", READ_KEY)]),
        ("NOT-A-SLUG", &[]),
    ];
    for (slug, headers) in cases {
        let data = data(&format!("/api/v1/datasets/{slug}/data"), headers).await;
        let rows = rows(&format!("/api/v1/datasets/{slug}/rows"), headers).await;
        assert_eq!(rows.status(), data.status(), "{slug} {headers:?}");
        assert_eq!(
            body(&rows)["code"],
            body(&data)["code"],
            "{slug} {headers:?}"
        );
        assert_eq!(
            rows.headers().get("www-authenticate"),
            data.headers().get("www-authenticate"),
            "{slug} {headers:?}"
        );
    }
}

#[tokio::test]
async fn rows_at_or_past_the_end_are_an_empty_page() {
    for offset in ["2", "3", "18446744073709551615", "99999999999999999999999"] {
        let resp = rows(
            &format!("/api/v1/datasets/open-window/rows?offset={offset}"),
            &[],
        )
        .await;
        assert_eq!(resp.status(), 200, "{offset}");
        let b = body(&resp);
        assert_eq!(b["rows"], json!([]), "{offset}");
        assert_eq!(b["length"], 0, "{offset}");
        assert_eq!(b["next_offset"], Value::Null, "{offset}");
        assert_eq!(b["num_rows_total"], 2, "{offset}");
    }
}

#[tokio::test]
async fn rows_length_is_capped_at_100_and_the_offset_defaults_to_0() {
    let resp = rows("/api/v1/datasets/open-window/rows?length=1", &[]).await;
    let b = body(&resp);
    assert_eq!(
        (b["offset"].clone(), b["length"].clone()),
        (json!(0), json!(1))
    );
    assert_eq!(b["next_offset"], 1);
    assert_eq!(
        catalog::rows::RowWindow::parse(None, Some("5000"))
            .unwrap()
            .length(),
        100
    );
}

#[tokio::test]
async fn rows_with_bad_parameters_are_400() {
    for query in [
        "offset=-1",
        "offset=x",
        "length=0",
        "length=-1",
        "offset=1&offset=1",
        "version=0",
    ] {
        let resp = rows(&format!("/api/v1/datasets/open-window/rows?{query}"), &[]).await;
        assert_error(&resp, 400, "bad_request");
    }
}

#[tokio::test]
async fn rows_of_a_pinned_version_that_is_not_active_are_404_naming_the_active_one() {
    let resp = rows("/api/v1/datasets/open-window/rows?version=2", &[]).await;
    let message = assert_error(&resp, 404, "not_found");
    assert!(message.contains("active version is 3"), "{message}");
    let resp = rows("/api/v1/datasets/open-window/rows?version=3", &[]).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn rows_read_the_file_only_once_the_request_is_let_through() {
    let reader = FakeRows::default();
    for headers in [vec![], vec![("x-api-key", UNKNOWN_KEY)]] {
        catalog_http::api::rows(
            &get("/api/v1/datasets/gated/rows", &headers),
            &catalog(),
            &reader,
            now(),
        )
        .await;
    }
    assert_eq!(reader.reads.load(Ordering::SeqCst), 0);
}
