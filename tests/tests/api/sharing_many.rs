//! Delta Sharing over a table of 10,000 files (100 Hive partitions of 100 files, published with
//! the real `catalog-admin publish`), with Delta Sharing's own Python connector
//! (tests/sharing_many_client.py) and through the handler: a partition predicate hands out only
//! its files, read from one manifest chunk, and the rows equal pyarrow reading the same files
//! with the same filter; a predicate on a file column skips files by their statistics;
//! `limitHint` and `limit`; the protocol's paging; and what a client without paging gets when
//! the answer would be too large.

use std::collections::BTreeSet;

use catalog_http::testing::V2Event;
use catalog_tests::{start_local_api, tool, Wire};
use serde_json::json;

use super::many_files::publish_dir;
use super::sharing::{ask, table, Profiles};
use super::*;

const SLUG: &str = "many-parts";
const PARTS: u64 = 100;
const PER_PART: u64 = 100;

fn client(ops: &Value) -> Vec<Value> {
    let python = tool("PROTOCOLS_PYTHON", ".venv-protocols/bin/python");
    let results = catalog_tests::python_json(&python, "tests/sharing_many_client.py", ops, &[]);
    serde_json::from_value(results).expect("one result per operation")
}

/// `{"op": "equal"|…, column, literal}` as the connector sends it.
fn json_hint(op: &str, column: &str, ty: &str, value: &str) -> String {
    json!({"op": op, "children": [
        {"op": "column", "name": column, "valueType": ty},
        {"op": "literal", "value": value, "valueType": ty},
    ]})
    .to_string()
}

/// An answer's lines, parsed.
fn lines(resp: &lambda_http::Response<lambda_http::Body>) -> Vec<Value> {
    String::from_utf8(resp.body().to_vec())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The file lines of an answer.
fn files(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter_map(|l| l.get("file")).collect()
}

fn path_of(file: &Value) -> String {
    // The URL names the object: datasets/<slug>/v1/files/<path>?…, its `=` percent-encoded.
    let url = file["url"].as_str().unwrap();
    let key = url.split('?').next().unwrap();
    key.split("/files/").nth(1).unwrap().replace("%3D", "=")
}

#[tokio::test]
async fn ten_thousand_files_are_skipped_by_partition_and_statistics_and_paged() {
    // GIVEN a table of 10,000 files, 100 in each of 100 partitions, published with the CLI
    let g = given().await;
    let root = std::env::temp_dir().join(format!("catalog-sharing-many-{}", uuid::Uuid::new_v4()));
    let root_str = root.to_str().unwrap().to_owned();
    let written = client(&json!([
        {"op": "write", "root": root_str, "parts": PARTS, "per_part": PER_PART}
    ]));
    assert_eq!(written[0]["files"], PARTS * PER_PART);
    publish_dir(&g.stack, &root, SLUG);
    let tables = "/shares/catalog/schemas/datasets/tables";
    let query = format!("{tables}/{SLUG}/query");
    let (dynamo, s3) = (Wire::default(), Wire::default());
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    // (the key's use recorded this hour)
    ask(&catalog, &signer, "GET", "/shares", Some(READ_KEY), "").await;
    dynamo.take();

    // WHEN a query asks for partition 7
    let seven = json_hint("equal", "part", "int", "7");
    let body = json!({ "jsonPredicateHints": seven }).to_string();
    let resp = ask(&catalog, &signer, "POST", &query, Some(READ_KEY), &body).await;
    assert_eq!(resp.status(), 200, "{:?}", resp.body());
    let answer = lines(&resp);
    // THEN the metadata names the partition column and every file, and the answer holds
    // exactly partition 7's 100 files, each with its partition value and statistics
    let meta = &answer[1]["metaData"];
    assert_eq!(meta["partitionColumns"], json!(["part"]));
    assert_eq!(meta["numFiles"], PARTS * PER_PART);
    let listed = files(&answer);
    assert_eq!(listed.len() as u64, PER_PART);
    for f in &listed {
        assert_eq!(f["partitionValues"], json!({"part": "7"}), "{f}");
        assert!(path_of(f).starts_with("part=07/"), "{f}");
        let stats: Value = serde_json::from_str(f["stats"].as_str().unwrap()).unwrap();
        assert_eq!(stats["numRecords"], 3);
        let min = stats["minValues"]["id"].as_i64().unwrap();
        assert_eq!(stats["maxValues"]["id"].as_i64().unwrap(), min + 2);
        assert_eq!(stats["nullCount"]["id"], 0);
    }
    // AND it read the table with the key, then the one manifest chunk that holds partition 7
    // (the summary's partition ranges leave the other nine out); no S3 call
    assert_eq!(
        dynamo.take(),
        ["DynamoDB.BatchGetItem", "DynamoDB.BatchGetItem"]
    );
    assert!(s3.take().is_empty());

    // WHEN a predicate names a file column: id < 30
    let body = json!({ "jsonPredicateHints": json_hint("lessThan", "id", "long", "30") });
    let resp = ask(
        &catalog,
        &signer,
        "POST",
        &query,
        Some(READ_KEY),
        &body.to_string(),
    )
    .await;
    // THEN only the ten files whose statistics allow it are listed (partition 0's first ten)
    let answer = lines(&resp);
    let mut paths: Vec<String> = files(&answer).into_iter().map(path_of).collect();
    paths.sort();
    let expected: Vec<String> = (0..10)
        .map(|n| format!("part=00/f-{n:03}.parquet"))
        .collect();
    assert_eq!(paths, expected);

    // WHEN limitHint asks for 10 rows of partition 7
    let body = json!({ "jsonPredicateHints": seven, "limitHint": 10 }).to_string();
    let resp = ask(&catalog, &signer, "POST", &query, Some(READ_KEY), &body).await;
    // THEN four files of 3 rows are enough, and listed
    assert_eq!(files(&lines(&resp)).len(), 4);

    // WHEN a client pages the last two partitions (a SQL hint) 64 files at a time
    let mut seen = Vec::new();
    let mut token: Option<String> = None;
    let mut pages = 0;
    loop {
        let mut body = json!({ "predicateHints": ["part >= 98"], "maxFiles": 64 });
        if let Some(t) = &token {
            body["pageToken"] = json!(t);
        }
        let resp = ask(
            &catalog,
            &signer,
            "POST",
            &query,
            Some(READ_KEY),
            &body.to_string(),
        )
        .await;
        assert_eq!(resp.status(), 200, "{:?}", resp.body());
        let page = lines(&resp);
        pages += 1;
        let listed = files(&page);
        assert!(listed.len() <= 64);
        seen.extend(listed.into_iter().map(path_of));
        // THEN every page ends with the protocol's endStreamAction
        let end = &page.last().unwrap()["endStreamAction"];
        assert!(end.is_object(), "{page:?}");
        match end.get("nextPageToken").and_then(Value::as_str) {
            Some(next) => token = Some(next.to_owned()),
            None => break,
        }
        assert!(pages < 10, "paging ends");
    }
    // AND the pages hold the two partitions' 200 files once each, in order
    assert_eq!(pages, 4);
    let distinct: BTreeSet<&String> = seen.iter().collect();
    assert_eq!((seen.len(), distinct.len()), (200, 200));
    assert!(seen
        .iter()
        .all(|p| p.starts_with("part=98/") || p.starts_with("part=99/")));
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "manifest order");
    // AND a token sent with other hints is refused
    let first = json!({ "predicateHints": ["part >= 98"], "maxFiles": 64 }).to_string();
    let page = lines(&ask(&catalog, &signer, "POST", &query, Some(READ_KEY), &first).await);
    let next = page.last().unwrap()["endStreamAction"]["nextPageToken"].clone();
    let other = json!({ "predicateHints": ["part >= 97"], "maxFiles": 64, "pageToken": next });
    let resp = ask(
        &catalog,
        &signer,
        "POST",
        &query,
        Some(READ_KEY),
        &other.to_string(),
    )
    .await;
    assert_eq!(resp.status(), 400);
    assert_eq!(json_body(&resp)["errorCode"], "INVALID_PARAMETER_VALUE");

    // WHEN the whole table is asked for without paging, by a client that takes the answer as
    // it is
    let whole = json!({}).to_string();
    let resp = ask(&catalog, &signer, "POST", &query, Some(READ_KEY), &whole).await;
    // THEN it is refused: 10,000 file lines pass 4,000,000 bytes; the message says what to send
    assert_eq!(resp.status(), 400);
    let message = json_body(&resp)["message"].as_str().unwrap().to_owned();
    assert!(
        message.contains("maxFiles") && message.contains("gzip"),
        "{message}"
    );
    // WHEN a client that accepts gzip asks the same
    let event = V2Event::new("POST", &format!("/api/v1/delta-sharing{query}"))
        .body(&whole)
        .header("authorization", &format!("Bearer {READ_KEY}"))
        .header("accept-encoding", "gzip, deflate");
    let resp = api::sharing(&event.request(), &catalog, &signer, Utc::now()).await;
    // THEN the answer is gzip-compressed and holds every file once
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-encoding"], "gzip");
    assert_eq!(resp.headers()["vary"], "Accept-Encoding");
    let compressed = resp.body().to_vec();
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(compressed.as_slice()),
        &mut text,
    )
    .unwrap();
    assert!(text.len() > 4_000_000, "{} bytes", text.len());
    assert!(
        compressed.len() < text.len() / 4,
        "{} bytes",
        compressed.len()
    );
    let whole: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let paths: BTreeSet<String> = files(&whole).into_iter().map(path_of).collect();
    assert_eq!(paths.len() as u64, PARTS * PER_PART);

    // WHEN the connector loads partition 7, ids below 30, and 10 rows of partition 7
    let (api, _guard) = start_local_api(&g.stack);
    let profiles = Profiles::new();
    let profile = profiles.write("reader", &api, READ_KEY);
    let t = table(SLUG);
    let results = client(&json!([
        {"op": "load", "profile": profile, "table": t, "json": seven, "root": root_str,
         "filter": ["part", "==", 7]},
        {"op": "load", "profile": profile, "table": t,
         "json": json_hint("lessThan", "id", "long", "30"), "root": root_str,
         "filter": ["id", "<", 30]},
        {"op": "load", "profile": profile, "table": t, "json": seven, "limit": 10,
         "root": root_str, "filter": ["part", "==", 7]},
        {"op": "list", "profile": profile, "table": t},
    ]));
    // THEN its frames equal pyarrow's reading of the files with the same filter
    assert_eq!(results[0]["equal"], true, "{}", results[0]["why"]);
    assert_eq!(results[0]["rows"], PER_PART * 3);
    assert_eq!(
        results[0]["columns"],
        json!(["id", "value", "label", "part"])
    );
    assert_eq!(results[1]["equal"], true, "{}", results[1]["why"]);
    assert_eq!(results[1]["rows"], 30);
    // AND the limit reads 10 of partition 7's rows
    assert_eq!(results[2]["rows"], 10, "{}", results[2]);
    assert_eq!(results[2]["subset"], true, "{}", results[2]);
    // AND the connector lists the whole table, without paging (it never pages): its answer
    // came gzip-compressed, every file once
    let listed = &results[3];
    assert_eq!(listed["files"], PARTS * PER_PART, "{listed}");
    assert_eq!(listed["distinct"], PARTS * PER_PART, "{listed}");
    assert_eq!(listed["encodings"], json!(["gzip"]), "{listed}");
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test]
async fn a_pinned_version_of_many_files_is_read_from_that_versions_summary() {
    // GIVEN a table whose version 1 is five files in two splits, partitioned by year (one of
    // them Hive's null), and whose version 2 is six files partitioned by part
    let g = given().await;
    let first = super::many_files::write_files();
    publish_dir(&g.stack, &first, "pinned-parts");
    let second =
        std::env::temp_dir().join(format!("catalog-sharing-pinned-{}", uuid::Uuid::new_v4()));
    client(&json!([
        {"op": "write", "root": second.to_str().unwrap(), "parts": 2, "per_part": 3}
    ]));
    publish_dir(&g.stack, &second, "pinned-parts");
    let signer = g.stack.signer(std::time::Duration::from_secs(900));
    let query = "/shares/catalog/schemas/datasets/tables/pinned-parts/query";
    let read = |body: Value| {
        let (signer, catalog) = (&signer, &g.catalog);
        async move {
            let resp = ask(
                catalog,
                signer,
                "POST",
                query,
                Some(READ_KEY),
                &body.to_string(),
            )
            .await;
            assert_eq!(resp.status(), 200, "{body}: {:?}", resp.body());
            let version = resp.headers()["delta-table-version"]
                .to_str()
                .unwrap()
                .to_owned();
            (version, lines(&resp))
        }
    };

    // WHEN a client reads version 1, then the latest
    let (version, pinned) = read(json!({"version": 1})).await;
    // THEN version 1's files are listed from version 1's summary, each naming the version
    assert_eq!(version, "1");
    assert_eq!(pinned[1]["metaData"]["partitionColumns"], json!(["year"]));
    assert_eq!(pinned[1]["metaData"]["numFiles"], 5);
    let listed = files(&pinned);
    let paths: Vec<String> = listed.iter().map(|f| path_of(f)).collect();
    assert_eq!(paths, super::many_files::FILES);
    assert!(listed.iter().all(|f| f["version"] == 1));
    let years: Vec<&Value> = listed
        .iter()
        .map(|f| &f["partitionValues"]["year"])
        .collect();
    assert_eq!(
        years,
        [
            &json!("2024"),
            &Value::Null,
            &json!("2024"),
            &json!("2024"),
            &json!("2025")
        ]
    );
    let (version, latest) = read(json!({})).await;
    assert_eq!(version, "2");
    assert_eq!(latest[1]["metaData"]["partitionColumns"], json!(["part"]));
    assert_eq!(files(&latest).len(), 6);

    // WHEN version 1 is paged two files at a time
    let mut seen = Vec::new();
    let mut body = json!({"version": 1, "maxFiles": 2});
    loop {
        let (version, page) = read(body.clone()).await;
        assert_eq!(version, "1");
        seen.extend(files(&page).into_iter().map(path_of));
        match page.last().unwrap()["endStreamAction"].get("nextPageToken") {
            Some(next) => body["pageToken"] = next.clone(),
            None => break,
        }
    }
    // THEN every page reads version 1, and the pages hold its five files
    assert_eq!(seen, super::many_files::FILES);
    // AND a later page's token reads its first page's version even without `version`
    let (_, first_page) = read(json!({"maxFiles": 2, "version": 1})).await;
    let token = first_page.last().unwrap()["endStreamAction"]["nextPageToken"].clone();
    let (version, _) = read(json!({"maxFiles": 2, "pageToken": token})).await;
    assert_eq!(version, "1");
    let _ = std::fs::remove_dir_all(&first);
    let _ = std::fs::remove_dir_all(&second);
}
