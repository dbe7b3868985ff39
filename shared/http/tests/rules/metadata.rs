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
        body(&catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await);
    let id = by_slug["id"].as_str().unwrap();
    let resp =
        catalog_http::api::metadata(&get(&format!("/api/v1/datasets/{id}"), &[]), &c, now()).await;
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
    let resp = catalog_http::api::metadata(
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
    let resp = catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await;
    let msg = assert_json_error(&resp, 500);
    assert_eq!(msg, "internal error");
}

// ----------------------------------------------------------------------------------------------
// An approval dataset's statistics: no value drawn from the rows for the public

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

/// Whether no column of `schema` holds a value drawn from the rows, while each keeps its name,
/// type and counts.
fn holds_no_row_value(schema: &Value) -> bool {
    schema.as_array().unwrap().iter().all(|column| {
        column["name"].is_string()
            && column["dtype"].is_string()
            && column["null_count"].is_u64()
            && column["unique_count"].is_u64()
            && ROW_VALUE_FIELDS.iter().all(|f| match column.get(*f) {
                None | Some(Value::Null) => true,
                Some(Value::Array(a)) => a.is_empty(),
                Some(_) => false,
            })
    })
}

/// GIVEN the catalog with `approved` (gated, at the approval level), an account's key granted
/// it, an account's key without a grant, and an operator's key (no account).
fn with_approval_dataset() -> (MemoryCatalog, Uuid) {
    use catalog::keys::Owner;
    use catalog::policy::{AccessLevel, Grant};
    let c = catalog();
    let mut approved = record("approved", None, true);
    approved.meta.card.access_level = AccessLevel::Approval;
    let id = approved.id;
    c.insert_dataset(approved);
    let account_key = |id: &str, owner: &str| KeyRecord {
        owner: Some(Owner::parse(owner).unwrap()),
        datasets: None,
        id: id.into(),
        scopes: vec![Scope::Read],
        expires_at: None,
        revoked_at: None,
        last_used_at: None,
    };
    c.insert_key(
        KeyHash::of(GRANTED_KEY),
        account_key("k-granted", "granted"),
    );
    c.insert_key(
        KeyHash::of(UNGRANTED_KEY),
        account_key("k-ungranted", "ungranted"),
    );
    c.insert_grant(
        Owner::parse("granted").unwrap(),
        id,
        Grant {
            granted: true,
            expires_at: None,
        },
    );
    (c, id)
}

const GRANTED_KEY: &str = "dcat_granted_key_0123456789abcdef";
const UNGRANTED_KEY: &str = "dcat_ungranted_key_0123456789abcdef";

#[tokio::test]
async fn an_approval_datasets_public_metadata_and_croissant_hold_no_row_value() {
    let (c, _) = with_approval_dataset();
    for path in [
        "/api/v1/datasets/approved",
        "/api/v1/datasets/approved/croissant",
    ] {
        let croissant = path.ends_with("croissant");
        let answer = |headers: &[(&str, &str)]| {
            let req = get(path, headers);
            let c = &c;
            async move {
                if croissant {
                    catalog_http::api::croissant(&req, c, now()).await
                } else {
                    catalog_http::api::metadata(&req, c, now()).await
                }
            }
        };
        let schema_of = |b: &Value| -> Value {
            if croissant {
                Value::Array(
                    b["recordSet"][0]["field"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|f| f["statistics"].clone())
                        .collect(),
                )
            } else {
                b["schema"].clone()
            }
        };
        // WHEN the public asks, with no key or one that is not admitted
        for headers in [
            vec![],
            vec![("x-api-key", UNKNOWN_KEY)],
            vec![("x-api-key", REVOKED_KEY)],
            vec![("x-api-key", WRITE_ONLY_KEY)],
            vec![("x-api-key", UNGRANTED_KEY)],
            vec![("authorization", "Bearer")],
            vec![("x-api-key", "not a key")],
        ] {
            let resp = answer(&headers).await;
            // THEN 200, never 401 or 403, and no value drawn from the rows
            assert_eq!(resp.status(), 200, "{path} {headers:?}");
            let b = body(&resp);
            let schema = schema_of(&b);
            assert_eq!(schema.as_array().unwrap().len(), 2, "{path}");
            assert!(holds_no_row_value(&schema), "{path} {headers:?}: {schema}");
            if !croissant {
                assert_eq!(b["values_withheld"], true);
            }
            assert_eq!(resp.headers()["vary"], "authorization, x-api-key", "{path}");
        }
        // WHEN a key that `authorize` admits asks (a granted account's, an operator's)
        for key in [GRANTED_KEY, READ_KEY] {
            let resp = answer(&[("x-api-key", key)]).await;
            assert_eq!(resp.status(), 200);
            let b = body(&resp);
            // THEN every statistic, and the answer is not cached
            let schema = schema_of(&b);
            assert_eq!(schema[0]["sample_values"], json!([1, 2]), "{path} {key}");
            assert_eq!(schema[0]["min"], 1, "{path} {key}");
            assert_eq!(schema[1]["top_values"], json!(["q"]), "{path} {key}");
            if !croissant {
                assert_eq!(b["values_withheld"], false);
            }
            assert_eq!(resp.headers()["cache-control"], "no-store", "{path}");
        }
    }
    // AND at the registered level, and in an approval dataset's open keyless window, the
    // public sees every statistic (the spec's public metadata)
    let registered =
        body(&catalog_http::api::metadata(&get("/api/v1/datasets/gated", &[]), &c, now()).await);
    assert_eq!(registered["schema"][0]["sample_values"], json!([1, 2]));
    assert_eq!(registered["values_withheld"], false);
    let mut open = record("approved-open", Some(now() + Duration::hours(1)), true);
    open.meta.card.access_level = catalog::policy::AccessLevel::Approval;
    c.insert_dataset(open);
    let b = body(
        &catalog_http::api::metadata(&get("/api/v1/datasets/approved-open", &[]), &c, now()).await,
    );
    assert_eq!(b["schema"][0]["sample_values"], json!([1, 2]));
}
