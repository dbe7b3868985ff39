//! The list endpoint.

use super::*;

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
            "access_level",
            "category",
            "column_count",
            "description",
            "downloads",
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
    let resp = catalog_http::api::list(&get("/api/v1/datasets", &[]), &c, now()).await;
    assert_json_error(&resp, 503);
    assert_eq!(resp.headers()["retry-after"], "1");
}
