//! The list and metadata endpoints against the emulators.

use super::*;

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
