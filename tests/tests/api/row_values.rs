//! An `approval` dataset's statistics on the real stack: everything the public reads of it
//! (metadata, Croissant, the list, DCAT) holds no value drawn from its rows; a key
//! `catalog::access::authorize` admits reads them on the metadata and Croissant routes; any
//! other key gets the public answer, with 200. And what it costs on the wire.

use catalog_tests::Wire;

use super::access_rule::{
    given_levels, GRANTED, LAPSED, ONLY_AIR, ONLY_BIRDS, OPERATOR, UNGRANTED,
};
use super::*;

/// The statistics fields that hold values drawn from the rows.
const ROW_VALUE_FIELDS: [&str; 9] = [
    "mean",
    "std",
    "min",
    "max",
    "median",
    "top_values",
    "top_counts",
    "sample_values",
    "histogram",
];

/// The metadata (or, with `croissant`, the Croissant document) of `slug` for a request with
/// `headers`: its status, cache headers and body.
async fn read(
    g: &Given,
    slug: &str,
    croissant: bool,
    headers: &[(&str, &str)],
) -> (u16, String, Option<String>, Value) {
    let path = format!(
        "/api/v1/datasets/{slug}{}",
        if croissant { "/croissant" } else { "" }
    );
    let req = v2_request(&path, headers);
    let resp = if croissant {
        api::croissant(&req, &g.catalog, Utc::now()).await
    } else {
        api::metadata(&req, &g.catalog, Utc::now()).await
    };
    let header = |name: &str| {
        resp.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        resp.status().as_u16(),
        header("cache-control").unwrap_or_default(),
        header("vary"),
        json_body(&resp),
    )
}

/// The Column objects of a metadata answer, or the `statistics` of a Croissant document's
/// fields.
fn columns(body: &Value, croissant: bool) -> Vec<Value> {
    if croissant {
        body["recordSet"][0]["field"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["statistics"].clone())
            .collect()
    } else {
        body["schema"].as_array().unwrap().clone()
    }
}

/// The row values in `columns`: (column, field) of each non-empty one.
fn row_values(columns: &[Value]) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    for column in columns {
        for field in ROW_VALUE_FIELDS {
            let empty = match column.get(field) {
                None | Some(Value::Null) => true,
                Some(Value::Array(a)) => a.is_empty(),
                Some(_) => false,
            };
            if !empty {
                found.push((column["name"].as_str().unwrap_or("?").to_owned(), field));
            }
        }
    }
    found
}

/// The text values the full statistics show (sample and top values of at least 6 characters):
/// none may appear anywhere in a public answer.
fn distinctive_texts(columns: &[Value]) -> Vec<String> {
    columns
        .iter()
        .flat_map(|c| {
            ["sample_values", "top_values"]
                .into_iter()
                .flat_map(move |f| c[f].as_array().cloned().unwrap_or_default())
        })
        .filter_map(|v| v.as_str().map(str::to_owned))
        .filter(|s| s.chars().count() >= 6)
        .collect()
}

#[tokio::test]
async fn an_approval_datasets_row_values_are_shown_only_to_whom_authorize_admits() {
    // GIVEN bird-sightings at the approval level, account 1 granted it, and keys of each kind
    let g = given_levels().await;
    for croissant in [false, true] {
        // WHEN a granted account's key and an operator's key read it
        let (status, cache, _, full) =
            read(&g, "bird-sightings", croissant, &[("x-api-key", GRANTED)]).await;
        assert_eq!(status, 200);
        assert_eq!(
            cache, "no-store",
            "an answer that depends on the key is never cached"
        );
        let full_columns = columns(&full, croissant);
        // THEN they see every statistic
        assert!(
            row_values(&full_columns)
                .iter()
                .any(|(_, f)| *f == "sample_values"),
            "{full_columns:?}"
        );
        let (_, _, _, operator) =
            read(&g, "bird-sightings", croissant, &[("x-api-key", OPERATOR)]).await;
        assert_eq!(columns(&operator, croissant), full_columns);
        if !croissant {
            assert_eq!(full["values_withheld"], false);
        }
        let texts = distinctive_texts(&full_columns);
        assert!(!texts.is_empty(), "the sample has text values to look for");

        // WHEN anyone else reads it: no key, an unknown key, a malformed one, a key without the
        // read scope, an account's key without a grant or with a lapsed one, a key limited to
        // another dataset (a key limited to this one is admitted: it is an operator's)
        let bad = "Bearer not-a-key";
        for headers in [
            vec![],
            vec![(
                "x-api-key",
                "dcat_row_values_unknown_00000000000000000000000000000000000",
            )],
            vec![("authorization", bad)],
            vec![("x-api-key", WRITE_KEY)],
            vec![("x-api-key", UNGRANTED)],
            vec![("x-api-key", LAPSED)],
            vec![("x-api-key", ONLY_AIR)],
        ] {
            let (status, cache, vary, public) =
                read(&g, "bird-sightings", croissant, &headers).await;
            // THEN 200, never 401 or 403, with the names, types and counts and no row value
            assert_eq!(status, 200, "{headers:?}: {public}");
            let public_columns = columns(&public, croissant);
            assert_eq!(public_columns.len(), full_columns.len());
            assert_eq!(row_values(&public_columns), vec![], "{headers:?}");
            for (p, f) in public_columns.iter().zip(&full_columns) {
                for kept in [
                    "name",
                    "dtype",
                    "null_count",
                    "null_percent",
                    "unique_count",
                ] {
                    assert_eq!(p[kept], f[kept], "{kept} of {}", f["name"]);
                }
            }
            let text = public.to_string();
            for value in &texts {
                assert!(!text.contains(value.as_str()), "{value} in {headers:?}");
            }
            if !croissant {
                assert_eq!(public["values_withheld"], true);
            }
            assert_eq!(vary.as_deref(), Some("authorization, x-api-key"));
            if headers.is_empty() {
                assert!(cache.starts_with("public"), "{cache}");
            }
        }
        let (_, _, _, limited_here) = read(
            &g,
            "bird-sightings",
            croissant,
            &[("x-api-key", ONLY_BIRDS)],
        )
        .await;
        assert_eq!(columns(&limited_here, croissant), full_columns);

        // AND neither the list nor DCAT carries any of them
        for listing in ["/api/v1/datasets?page_size=100", "/api/v1/catalog"] {
            let resp = if listing.ends_with("catalog") {
                api::catalog(&v2_request(listing, &[]), &g.catalog, Utc::now()).await
            } else {
                g.list(listing).await
            };
            assert_eq!(resp.status(), 200);
            let text = String::from_utf8_lossy(resp.body().as_ref()).into_owned();
            for value in &texts {
                assert!(!text.contains(value.as_str()), "{value} in {listing}");
            }
        }
    }

    // AND an approval dataset inside its keyless window, and a registered one, show every
    // statistic to the public (anyone reads their file)
    for slug in ["city-bikes", "air-quality-hourly"] {
        let (status, _, _, public) = read(&g, slug, false, &[]).await;
        assert_eq!(status, 200);
        assert_eq!(public["values_withheld"], false, "{slug}");
        assert!(!row_values(&columns(&public, false)).is_empty(), "{slug}");
    }
}

#[tokio::test]
async fn an_approval_datasets_statistics_cost_one_more_read_only_for_an_accounts_key() {
    let g = given_levels().await;
    let dynamo = Wire::default();
    let s3 = Wire::default();
    let (catalog, _signer) = g.stack.wired(&dynamo, &s3);
    let cost = |slug: &'static str, key: Option<&'static str>| {
        let catalog = &catalog;
        let dynamo = &dynamo;
        async move {
            dynamo.take();
            let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
            let resp = api::metadata(
                &v2_request(&format!("/api/v1/datasets/{slug}"), &headers),
                catalog,
                Utc::now(),
            )
            .await;
            assert_eq!(resp.status(), 200, "{slug}: {}", json_body(&resp));
            dynamo.take()
        }
    };
    // THEN no key: one GetItem, as ever; a key: the dataset and the key in one BatchGetItem; an
    // account's key on an approval dataset outside its window: its grant, one more GetItem
    assert_eq!(cost("bird-sightings", None).await, ["DynamoDB.GetItem"]);
    assert_eq!(cost("air-quality-hourly", None).await, ["DynamoDB.GetItem"]);
    assert_eq!(
        cost("air-quality-hourly", Some(GRANTED)).await,
        ["DynamoDB.BatchGetItem"]
    );
    assert_eq!(
        cost("bird-sightings", Some(OPERATOR)).await,
        ["DynamoDB.BatchGetItem"]
    );
    assert_eq!(
        cost("bird-sightings", Some(GRANTED)).await,
        ["DynamoDB.BatchGetItem", "DynamoDB.GetItem"]
    );
    assert!(s3.take().is_empty());
}
