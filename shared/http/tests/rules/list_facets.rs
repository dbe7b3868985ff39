//! The list endpoint's facet counts (`facets=true`): every category, tag and license value of
//! the catalog with how many listed datasets have it, in the case it was first published in.

use super::*;

/// GIVEN, oldest published first: two datasets in biology (in two cases) sharing a tag and a
/// license (also in two cases), one in transport, and one never published (not listed, so not
/// counted).
fn faceted() -> MemoryCatalog {
    let c = MemoryCatalog::default();
    let with = |slug: &str, category: &str, tags: &[&str], license: &str, active: bool| {
        let mut r = record(slug, None, active);
        r.meta.card.category = category.into();
        r.meta.card.tags = tags.iter().map(|t| (*t).to_owned()).collect();
        r.meta.card.license = license.into();
        r
    };
    c.insert_dataset(with(
        "first",
        " Biology",
        &["Birds", "wetlands", "birds"],
        "CC-BY-4.0",
        true,
    ));
    c.insert_dataset(with("second", "biology", &["BIRDS"], "cc-by-4.0", true));
    c.insert_dataset(with("third", "Transport", &["city"], "CC0-1.0", true));
    c.insert_dataset(with("draft", "Astronomy", &["stars"], "MIT", false));
    c
}

async fn list_faceted(c: &MemoryCatalog, query: &str) -> Response<Body> {
    catalog_http::api::list(&get(&format!("/api/v1/datasets?{query}"), &[]), c, now()).await
}

fn expected() -> Value {
    json!({
        "category": [{"value": "Biology", "count": 2}, {"value": "Transport", "count": 1}],
        "tag": [
            {"value": "Birds", "count": 2},
            {"value": "city", "count": 1},
            {"value": "wetlands", "count": 1}
        ],
        "license": [{"value": "CC-BY-4.0", "count": 2}, {"value": "CC0-1.0", "count": 1}]
    })
}

#[tokio::test]
async fn facets_true_counts_every_listed_value_in_the_case_it_was_first_published_in() {
    let resp = list_faceted(&faceted(), "facets=true").await;
    assert_eq!(resp.status(), 200);
    let b = body(&resp);
    assert_eq!(b["facets"], expected(), "most first, then A to Z");
    assert_eq!(b["total"], 3);
}

#[tokio::test]
async fn facet_counts_are_over_the_whole_catalog_whatever_the_filters_words_and_page() {
    let c = faceted();
    for query in [
        "facets=true&category=transport",
        "facets=true&tag=birds&license=cc0-1.0",
        "facets=true&q=nothing-has-this&sort=name",
        "facets=true&page=9&page_size=1",
    ] {
        let b = body(&list_faceted(&c, query).await);
        assert_eq!(b["facets"], expected(), "{query}");
    }
    let narrowed = body(&list_faceted(&c, "facets=true&category=transport").await);
    assert_eq!(narrowed["total"], 1, "the page itself is filtered");
}

#[tokio::test]
async fn without_facets_true_the_answer_has_no_facets() {
    let c = faceted();
    for query in ["", "facets=false", "category=biology&facets=false"] {
        let b = body(&list_faceted(&c, query).await);
        let mut keys: Vec<&str> = b.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(keys, ["items", "page", "page_size", "total"], "{query}");
    }
}

#[tokio::test]
async fn an_empty_catalog_has_no_facet_values() {
    let b = body(&list_faceted(&MemoryCatalog::default(), "facets=true").await);
    assert_eq!(
        b["facets"],
        json!({"category": [], "tag": [], "license": []})
    );
}

#[tokio::test]
async fn facets_given_twice_or_other_than_true_or_false_is_a_400() {
    let c = faceted();
    for query in [
        "facets=true&facets=true",
        "facets=true&facets=false",
        "facets=",
        "facets=1",
        "facets=yes",
        "facets=TRUE",
    ] {
        let message = assert_error(&list_faceted(&c, query).await, 400, "bad_request");
        assert!(message.contains("facets"), "{query}: {message}");
    }
}
