//! The metadata endpoint.

use super::*;

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
