//! The Delta Sharing server: with Delta Sharing's own Python connector (PyPI `delta-sharing`,
//! tests/sharing_client.py) against the local API over moto and s3s-fs: what each kind of key
//! lists, `load_as_pandas` against pyarrow's reading of the same file, a pinned version while the
//! dataset is re-published, the protocol's errors; and, through the handler, what each route
//! costs on the wire.

use std::path::PathBuf;

use catalog_http::testing::V2Event;
use catalog_tests::{samples_dir, start_local_api, tool, Wire};
use serde_json::json;

use super::access_rule::{
    given_levels, GRANTED, LAPSED, ONLY_AIR, ONLY_BIRDS, OPERATOR, UNGRANTED,
};
use super::*;

/// A profile file as a provider hands it out, in a directory removed afterwards.
pub(super) struct Profiles(PathBuf);

impl Profiles {
    pub(super) fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("catalog-sharing-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }

    /// The profile of `key` on the API at `api` (its base URL), as the CLI and the keys page
    /// write it.
    pub(super) fn write(&self, name: &str, api: &str, key: &str) -> String {
        let path = self.0.join(format!("{name}.share"));
        let profile = catalog_http::sharing::profile(api, key, None);
        std::fs::write(&path, profile.to_string()).unwrap();
        path.display().to_string()
    }
}

impl Drop for Profiles {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs the connector over `ops` (tests/sharing_client.py); one result per operation.
fn connector(ops: &Value) -> Vec<Value> {
    let python = tool("PROTOCOLS_PYTHON", ".venv-protocols/bin/python");
    let results = catalog_tests::python_json(&python, "tests/sharing_client.py", ops, &[]);
    serde_json::from_value(results).expect("one result per operation")
}

fn sample_file(slug: &str) -> PathBuf {
    let sample = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == slug)
        .expect("a sample");
    samples_dir().join(sample.file)
}

pub(super) fn table(slug: &str) -> String {
    format!("catalog.datasets.{slug}")
}

/// What the data endpoint says of `key` on every sample dataset: the ones it downloads.
async fn readable_by_data(g: &Given, key: &str) -> Vec<String> {
    let mut readable = Vec::new();
    for sample in manifest().datasets {
        let slug = sample.slug.to_string();
        let resp = g
            .data(
                &format!("/api/v1/datasets/{slug}/data"),
                &[("x-api-key", key)],
            )
            .await;
        if resp.status() == 200 {
            readable.push(table(&slug));
        }
    }
    readable.sort();
    readable
}

#[tokio::test]
async fn the_connector_lists_exactly_what_each_key_may_read_and_refuses_a_revoked_key() {
    // GIVEN the access matrix's catalog and keys, and a key revoked a moment ago
    let g = given_levels().await;
    let revoked = "dcat_sharing_revoked_000000000000000000000000000000000000000000000";
    g.stack.add_key(revoked, &["read"], Utc::now(), None).await;
    g.stack
        .writer()
        .revoke_key(&catalog::keys::KeyHash::of(revoked), Utc::now())
        .await
        .expect("revoke");
    let (api, _guard) = start_local_api(&g.stack);
    let profiles = Profiles::new();
    let kinds = [
        ("operator", OPERATOR),
        ("ordinary", UNGRANTED),
        ("granted", GRANTED),
        ("lapsed", LAPSED),
        ("limited", ONLY_AIR),
        ("limited-to-approval", ONLY_BIRDS),
    ];
    // WHEN the connector lists all tables with each profile
    let mut ops: Vec<Value> = kinds
        .iter()
        .map(|(name, key)| json!({"op": "list", "profile": profiles.write(name, &api, key)}))
        .collect();
    ops.push(json!({"op": "list", "profile": profiles.write("revoked", &api, revoked)}));
    let results = connector(&Value::Array(ops));
    // THEN each lists exactly the datasets the data endpoint lets it download
    for ((name, key), result) in kinds.iter().zip(&results) {
        let expected = readable_by_data(&g, key).await;
        assert!(!expected.is_empty(), "{name} reads something");
        assert_eq!(result["tables"], json!(expected), "{name}: {result}");
    }
    // (the matrix's own cases, spelled out for the record)
    assert_eq!(
        results[2]["tables"],
        json!([
            "catalog.datasets.air-quality-hourly",
            "catalog.datasets.bird-sightings",
            "catalog.datasets.city-bikes",
            "catalog.datasets.river-levels"
        ])
    );
    assert_eq!(
        results[4]["tables"],
        json!(["catalog.datasets.air-quality-hourly"])
    );
    // AND the revoked key is refused, in the protocol's shape
    let refused = &results[6];
    assert_eq!(refused["status"], 401, "{refused}");
    assert_eq!(refused["body"]["errorCode"], "UNAUTHENTICATED", "{refused}");
    assert_eq!(refused["body"]["code"], "invalid_key", "{refused}");
}

#[tokio::test]
async fn catalog_admin_writes_a_profile_the_connector_reads() {
    // GIVEN the catalog and the local API
    let g = given_levels().await;
    let (api, _guard) = start_local_api(&g.stack);
    let profiles = Profiles::new();
    let path = profiles.0.join("partner.share");
    let create = |dataset: &str| {
        let mut cmd = catalog_tests::admin_command();
        cmd.envs(g.stack.function_env()).args([
            "keys",
            "create",
            "--scope",
            "read",
            "--label",
            "partner",
            "--expires",
            "+30d",
            "--dataset",
            dataset,
            "--sharing-profile",
            path.to_str().unwrap(),
            "--api-url",
            &api,
        ]);
        catalog_tests::run_admin(&mut cmd)
    };
    // WHEN an operator creates a key limited to one dataset, with a profile file
    let out = create("river-levels");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let key = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    // THEN the file is the recipient's profile, readable by its owner only
    let profile: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(profile["shareCredentialsVersion"], 1);
    assert_eq!(profile["endpoint"], format!("{api}/delta-sharing"));
    assert_eq!(profile["bearerToken"], key.as_str());
    let expiry =
        chrono::DateTime::parse_from_rfc3339(profile["expirationTime"].as_str().unwrap()).unwrap();
    assert!(
        (expiry.to_utc() - (Utc::now() + TimeDelta::days(30)))
            .num_seconds()
            .abs()
            < 60
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // AND the connector, given the file, lists the one dataset the key reads
    let results = connector(&json!([{"op": "list", "profile": path}]));
    assert_eq!(
        results[0]["tables"],
        json!([table("river-levels")]),
        "{}",
        results[0]
    );
    // AND an existing file is never overwritten: the command fails and creates no key
    let keys_before = g.stack.writer().list_keys().await.unwrap().len();
    let again = create("air-quality-hourly");
    assert!(!again.status.success());
    assert!(again.stdout.is_empty(), "no key printed");
    assert_eq!(
        g.stack.writer().list_keys().await.unwrap().len(),
        keys_before
    );
    assert!(
        std::fs::read_to_string(&path).unwrap().contains(&key),
        "the first key's profile stays"
    );
}

#[tokio::test]
async fn load_as_pandas_equals_pyarrow_and_a_pinned_version_holds_while_republished() {
    // GIVEN the sample catalog, an operator's key and river-levels at version 1
    let g = given_levels().await;
    let (api, _guard) = start_local_api(&g.stack);
    let profiles = Profiles::new();
    let profile = profiles.write("operator", &api, OPERATOR);
    let samples: Vec<String> = manifest()
        .datasets
        .iter()
        .map(|d| d.slug.to_string())
        .collect();
    // WHEN the connector loads every table
    let ops: Vec<Value> = samples
        .iter()
        .map(|slug| {
            json!({"op": "load", "profile": profile, "table": table(slug),
                   "parquet": sample_file(slug)})
        })
        .collect();
    // THEN each frame equals pyarrow's reading of the published file
    for (slug, result) in samples.iter().zip(connector(&Value::Array(ops))) {
        assert_eq!(result["equal"], true, "{slug}: {}", result["why"]);
    }

    // WHEN river-levels is re-published (version 2 holds another file)
    let mut second = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == "air-quality-hourly")
        .unwrap();
    second.slug = catalog::input::Slug::parse("river-levels").unwrap();
    g.stack.seed_one(&samples_dir(), &second, Utc::now()).await;
    let river = table("river-levels");
    let results = connector(&json!([
        {"op": "version", "profile": profile, "table": river},
        {"op": "load", "profile": profile, "table": river, "version": 1,
         "parquet": sample_file("river-levels")},
        {"op": "load", "profile": profile, "table": river,
         "parquet": sample_file("air-quality-hourly")},
        {"op": "load", "profile": profile, "table": river, "version": 2,
         "parquet": sample_file("air-quality-hourly")},
    ]));
    // THEN the table is at version 2, a client pinned to version 1 still reads version 1's
    // file, and the latest (or version 2) is the new file
    assert_eq!(results[0]["version"], 2, "{}", results[0]);
    for (i, result) in results.iter().enumerate().skip(1) {
        assert_eq!(result["equal"], true, "load {i}: {}", result["why"]);
    }
}

#[tokio::test]
async fn the_connector_meets_the_protocols_errors_and_the_delta_schema() {
    let g = given_levels().await;
    let (api, _guard) = start_local_api(&g.stack);
    let profiles = Profiles::new();
    let operator = profiles.write("operator", &api, OPERATOR);
    let ungranted = profiles.write("ungranted", &api, UNGRANTED);
    let limited = profiles.write("limited", &api, ONLY_AIR);
    let results = connector(&json!([
        {"op": "fail", "profile": operator, "table": table("no-such-dataset")},
        {"op": "fail", "profile": operator, "table": "catalog.other.air-quality-hourly"},
        {"op": "fail", "profile": operator, "table": "other.datasets.air-quality-hourly"},
        {"op": "fail", "profile": ungranted, "table": table("bird-sightings")},
        {"op": "fail", "profile": limited, "table": table("river-levels")},
        {"op": "fail", "profile": operator, "table": table("river-levels"), "version": 9},
        {"op": "fail", "profile": operator, "table": table("river-levels"),
         "timestamp": "2026-01-01T00:00:00Z"},
        {"op": "metadata", "profile": operator, "table": table("air-quality-hourly")},
    ]));
    let expected = [
        (404, "RESOURCE_DOES_NOT_EXIST", "not_found"),
        (404, "RESOURCE_DOES_NOT_EXIST", "not_found"),
        (404, "RESOURCE_DOES_NOT_EXIST", "not_found"),
        (403, "PERMISSION_DENIED", "access_required"),
        (403, "PERMISSION_DENIED", "key_not_for_dataset"),
        (404, "RESOURCE_DOES_NOT_EXIST", "version_unavailable"),
        (400, "UNSUPPORTED_OPERATION", "unsupported"),
    ];
    for (i, (status, error_code, code)) in expected.into_iter().enumerate() {
        let r = &results[i];
        assert_eq!(r["status"], status, "case {i}: {r}");
        assert_eq!(r["body"]["errorCode"], error_code, "case {i}: {r}");
        assert_eq!(r["body"]["code"], code, "case {i}: {r}");
        assert!(
            r["body"]["message"].as_str().is_some_and(|m| !m.is_empty()),
            "case {i}: {r}"
        );
    }
    // The Delta schema the connector reads, from the stored dtypes.
    let schema = &results[7]["schema"];
    assert_eq!(results[7]["format"], "parquet");
    let types: Vec<(String, Value)> = schema["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["name"].as_str().unwrap().to_owned(), f["type"].clone()))
        .collect();
    assert_eq!(
        types,
        [
            ("station_id", json!("string")),
            ("measured_at", json!("timestamp")),
            ("pm25_ugm3", json!("double")),
            ("pm10_ugm3", json!("double")),
            ("no2_ppb", json!("long")),
            ("temperature_c", json!("double")),
            ("is_valid", json!("boolean")),
        ]
        .map(|(n, t)| (n.to_owned(), t))
    );
}

/// A Delta Sharing request through the handler, with the catalog and signer given.
pub(super) async fn ask(
    catalog: &IndexedCatalog,
    signer: &catalog_aws::s3::S3Signer,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: &str,
) -> lambda_http::Response<lambda_http::Body> {
    let mut event = V2Event::new(method, &format!("/api/v1/delta-sharing{path}")).body(body);
    if let Some(key) = key {
        event = event.header("authorization", &format!("Bearer {key}"));
    }
    api::sharing(&event.request(), catalog, signer, Utc::now()).await
}

#[tokio::test]
async fn each_route_costs_the_round_trips_it_states() {
    // GIVEN the matrix's catalog, with every key's use already recorded this hour
    let g = given_levels().await;
    let (dynamo, s3) = (Wire::default(), Wire::default());
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    for key in [OPERATOR, GRANTED, ONLY_AIR] {
        ask(&catalog, &signer, "GET", "/shares", Some(key), "").await;
    }
    dynamo.take();
    let tables = "/shares/catalog/schemas/datasets/tables";
    #[rustfmt::skip]
    let cases: [(&str, String, &str, &str, &[&str]); 9] = [
        ("GET", "/shares".into(), OPERATOR, "", &["DynamoDB.GetItem"]),
        ("GET", "/shares/catalog/schemas".into(), OPERATOR, "", &["DynamoDB.GetItem"]),
        ("GET", "/shares/catalog/all-tables".into(), OPERATOR, "", &["DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.Query"]),
        // an account's key, whose page holds an approval dataset outside its window
        ("GET", "/shares/catalog/all-tables".into(), GRANTED, "", &["DynamoDB.GetItem", "DynamoDB.GetItem", "DynamoDB.Query", "DynamoDB.Query"]),
        ("GET", tables.into(), ONLY_AIR, "", &["DynamoDB.GetItem", "DynamoDB.BatchGetItem"]),
        ("GET", format!("{tables}/air-quality-hourly/metadata"), OPERATOR, "", &["DynamoDB.BatchGetItem"]),
        ("POST", format!("{tables}/air-quality-hourly/query"), OPERATOR, "{}", &["DynamoDB.BatchGetItem"]),
        ("POST", format!("{tables}/river-levels/query"), OPERATOR, r#"{"version": 1}"#, &["DynamoDB.BatchGetItem"]),
        // an account's key on an approval dataset: its grant, strongly consistent
        ("POST", format!("{tables}/bird-sightings/query"), GRANTED, "{}", &["DynamoDB.BatchGetItem", "DynamoDB.GetItem"]),
    ];
    for (method, path, key, body, expected) in cases {
        // WHEN the route is asked
        let resp = ask(&catalog, &signer, method, &path, Some(key), body).await;
        // THEN it answers with exactly these DynamoDB requests, and no S3 call
        assert_eq!(resp.status(), 200, "{method} {path}: {:?}", resp.body());
        assert_eq!(dynamo.take(), expected, "{method} {path}");
        assert!(s3.take().is_empty(), "{method} {path}: no S3 call");
    }
}

#[tokio::test]
async fn the_protocols_answers_have_its_headers_and_lines() {
    let g = given_levels().await;
    let signer = g.stack.signer(Duration::from_secs(900));
    let tables = "/shares/catalog/schemas/datasets/tables";
    // A query: protocol, metadata and one file line, with the version's header.
    let resp = ask(
        &g.catalog,
        &signer,
        "POST",
        &format!("{tables}/air-quality-hourly/query"),
        Some(OPERATOR),
        "{}",
    )
    .await;
    assert_eq!(resp.status(), 200);
    let headers = resp.headers();
    assert_eq!(
        headers["content-type"],
        "application/x-ndjson; charset=utf-8"
    );
    assert_eq!(headers["delta-table-version"], "1");
    assert_eq!(
        headers["delta-sharing-capabilities"],
        "responseformat=parquet"
    );
    assert_eq!(headers["cache-control"], "no-store");
    let text = String::from_utf8(resp.body().to_vec()).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], json!({"protocol": {"minReaderVersion": 1}}));
    let meta = &lines[1]["metaData"];
    assert_eq!(meta["format"], json!({"provider": "parquet"}));
    assert_eq!(meta["partitionColumns"], json!([]));
    let sample = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == "air-quality-hourly")
        .unwrap();
    let file = &lines[2]["file"];
    assert_eq!(file["id"], sample.sha256.as_str());
    assert_eq!(file["size"], sample.size);
    assert_eq!(file["partitionValues"], json!({}));
    let stats: Value = serde_json::from_str(file["stats"].as_str().unwrap()).unwrap();
    assert_eq!(stats["numRecords"], sample.row_count);
    let expires = file["expirationTimestamp"].as_i64().unwrap();
    let in_15_minutes = (Utc::now() + TimeDelta::minutes(15)).timestamp_millis();
    assert!((in_15_minutes - expires).abs() < 60_000, "{expires}");
    // The URL is the file: downloaded, it hashes to the file's id.
    let (status, bytes) = http_get(file["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    use sha2::Digest;
    assert_eq!(hex::encode(sha2::Sha256::digest(&bytes)), sample.sha256);

    // The version route, in both its forms, and the unsupported routes.
    for (method, path) in [
        ("GET", format!("{tables}/air-quality-hourly/version")),
        ("HEAD", format!("{tables}/air-quality-hourly")),
    ] {
        let resp = ask(&g.catalog, &signer, method, &path, Some(OPERATOR), "").await;
        assert_eq!(resp.status(), 200, "{method} {path}");
        assert_eq!(resp.headers()["delta-table-version"], "1");
    }
    for (method, path, body, status, error_code) in [
        (
            "GET",
            format!("{tables}/air-quality-hourly/changes?startingVersion=1"),
            "",
            400,
            "UNSUPPORTED_OPERATION",
        ),
        (
            "GET",
            format!("{tables}/air-quality-hourly/version?startingTimestamp=2026-01-01T00:00:00Z"),
            "",
            400,
            "UNSUPPORTED_OPERATION",
        ),
        (
            "POST",
            format!("{tables}/air-quality-hourly/query"),
            "{\"startingVersion\": 1}",
            400,
            "UNSUPPORTED_OPERATION",
        ),
        (
            "POST",
            format!("{tables}/air-quality-hourly/query"),
            "{not json",
            400,
            "MALFORMED_REQUEST",
        ),
        (
            "GET",
            "/shares/catalog/all-tables?pageToken=zz".into(),
            "",
            400,
            "INVALID_PARAMETER_VALUE",
        ),
        (
            "GET",
            "/shares/catalog/all-tables?maxResults=-1".into(),
            "",
            400,
            "INVALID_PARAMETER_VALUE",
        ),
        (
            "GET",
            format!("{tables}/air-quality-hourly/query"),
            "",
            405,
            "METHOD_NOT_ALLOWED",
        ),
    ] {
        let resp = ask(&g.catalog, &signer, method, &path, Some(OPERATOR), body).await;
        let got = json_body(&resp);
        assert_eq!(
            (resp.status().as_u16(), got["errorCode"].as_str()),
            (status, Some(error_code)),
            "{method} {path}: {got}"
        );
    }
    // Without a key: 401 on every route, the challenge included.
    let resp = ask(&g.catalog, &signer, "GET", "/shares", None, "").await;
    assert_eq!(resp.status(), 401);
    assert!(resp.headers().contains_key("www-authenticate"));
    assert_eq!(json_body(&resp)["errorCode"], "UNAUTHENTICATED");

    // Paging: one table per page, in publication order, every table once.
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let path = format!("/shares/catalog/all-tables?maxResults=1&pageToken={token}");
        let page = json_body(&ask(&g.catalog, &signer, "GET", &path, Some(OPERATOR), "").await);
        for item in page["items"].as_array().unwrap() {
            seen.push(item["name"].as_str().unwrap().to_owned());
        }
        match page["nextPageToken"].as_str() {
            Some(next) => token = next.to_owned(),
            None => break,
        }
        assert!(seen.len() < 100, "paging ends");
    }
    let published: Vec<String> = manifest()
        .datasets
        .iter()
        .map(|d| d.slug.to_string())
        .collect();
    assert_eq!(seen, published);
}

/// The table names a list answer holds.
fn names(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn table_lists_leave_out_unpublished_datasets_and_withdrawn_entries() {
    use aws_sdk_dynamodb::types::AttributeValue;
    use catalog_aws::dynamo::layout::{name, LIST_PK};
    let g = given_levels().await;
    let signer = g.stack.signer(Duration::from_secs(900));
    let slug = |s: &str| catalog::input::Slug::parse(s).unwrap();
    // GIVEN air-quality-hourly (the one dataset of a limited key) unpublished
    g.stack
        .writer()
        .unpublish(&slug("air-quality-hourly"), Utc::now())
        .await
        .expect("unpublish");
    // AND river-levels' catalog entry marked `withdrawn`, as a take-down's transaction leaves
    // it until the renumbering after it has run
    let entries = g
        .stack
        .dynamo
        .query()
        .table_name(&g.stack.target.datasets_table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(LIST_PK.into()))
        .send()
        .await
        .unwrap();
    let river = entries
        .items()
        .iter()
        .find(|item| item.get(name::SLUG) == Some(&AttributeValue::S("river-levels".into())))
        .expect("river-levels is listed");
    g.stack
        .dynamo
        .update_item()
        .table_name(&g.stack.target.datasets_table)
        .key(name::PK, river[name::PK].clone())
        .key(name::SK, river[name::SK].clone())
        .update_expression("SET withdrawn = :yes")
        .expression_attribute_values(":yes", AttributeValue::Bool(true))
        .send()
        .await
        .unwrap();
    let list = |key: &'static str, query: String| {
        let signer = &signer;
        let g = &g;
        async move {
            let path = format!("/shares/catalog/all-tables{query}");
            let resp = ask(&g.catalog, signer, "GET", &path, Some(key), "").await;
            assert_eq!(resp.status(), 200, "{path}: {:?}", resp.body());
            json_body(&resp)
        }
    };

    // WHEN the limited key lists its tables
    // THEN the unpublished dataset is not among them, as its routes answer 404
    assert_eq!(
        names(&list(ONLY_AIR, String::new()).await),
        Vec::<String>::new()
    );

    // WHEN the operator's key lists every table, in one page and one table per page
    let mut expected: Vec<String> = manifest()
        .datasets
        .iter()
        .map(|d| d.slug.to_string())
        .filter(|s| s != "air-quality-hourly" && s != "river-levels")
        .collect();
    expected.sort();
    let mut whole = names(&list(OPERATOR, String::new()).await);
    whole.sort();
    let mut paged = Vec::new();
    let mut token = String::new();
    loop {
        let page = list(OPERATOR, format!("?maxResults=1&pageToken={token}")).await;
        paged.extend(names(&page));
        match page["nextPageToken"].as_str() {
            Some(next) => token = next.to_owned(),
            None => break,
        }
        assert!(paged.len() < 100, "paging ends");
    }
    paged.sort();
    // THEN neither shows the withdrawn entry, and every other table appears once
    assert_eq!(whole, expected);
    assert_eq!(paged, expected);
}

#[tokio::test]
async fn max_results_zero_answers_an_empty_page_and_reads_no_range() {
    // GIVEN the matrix's catalog, with the operator's key's use already recorded this hour
    let g = given_levels().await;
    let (dynamo, s3) = (Wire::default(), Wire::default());
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    ask(&catalog, &signer, "GET", "/shares", Some(OPERATOR), "").await;
    dynamo.take();
    for path in [
        "/shares/catalog/all-tables?maxResults=0",
        "/shares/catalog/schemas/datasets/tables?maxResults=0&pageToken=p2",
    ] {
        // WHEN a list asks for no table
        let resp = ask(&catalog, &signer, "GET", path, Some(OPERATOR), "").await;
        // THEN the answer is an empty page pointing at the same table (the protocol: "0 will
        // return no results but nextPageToken may be populated")
        assert_eq!(resp.status(), 200, "{path}: {:?}", resp.body());
        let page = json_body(&resp);
        assert_eq!(page["items"], json!([]), "{path}");
        let at = if path.contains("p2") { "p2" } else { "p0" };
        assert_eq!(page["nextPageToken"], at, "{path}");
        // AND no range query is sent (its range would end before it starts, which DynamoDB
        // refuses): the key and the catalog's counter only
        assert_eq!(
            dynamo.take(),
            ["DynamoDB.GetItem", "DynamoDB.GetItem"],
            "{path}"
        );
    }
    // Past the last table: no token, and still no range query.
    let resp = ask(
        &catalog,
        &signer,
        "GET",
        "/shares/catalog/all-tables?maxResults=0&pageToken=p99",
        Some(OPERATOR),
        "",
    )
    .await;
    let page = json_body(&resp);
    assert_eq!(page["items"], json!([]));
    assert!(page.get("nextPageToken").is_none(), "{page}");
    assert_eq!(dynamo.take(), ["DynamoDB.GetItem", "DynamoDB.GetItem"]);
}
