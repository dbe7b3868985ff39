//! Publishing CSV and JSON Lines: converted to Parquet by `catalog-admin publish`, served as
//! Parquet whose rows are the text's values; bad input publishes nothing; skipped rows and the
//! inputs' formats are recorded on the version and shown by the metadata endpoint.

use std::io::Write;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;
use serde_json::json;
use sha2::Digest;

use super::*;

fn dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("catalog-ingest-{label}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `catalog-admin publish` of `inputs` with the descriptive flags and `extra`.
fn publish_text(stack: &Stack, inputs: &[&Path], slug: &str, extra: &[&str]) -> Output {
    let mut args: Vec<&str> = vec!["publish"];
    args.extend(inputs.iter().map(|p| p.to_str().unwrap()));
    args.extend([
        "--slug",
        slug,
        "--name",
        "Converted",
        "--license",
        "CC0-1.0",
        "--source",
        "tests",
        "--category",
        "testing",
    ]);
    args.extend(extra);
    admin(stack, &args, &[])
}

/// A value as JSON: dates as `YYYY-MM-DD`, timestamps as microseconds.
fn value(field: &Field) -> Value {
    match field {
        Field::Null => Value::Null,
        Field::Bool(b) => json!(b),
        Field::Long(i) => json!(i),
        Field::Double(f) => json!(f),
        Field::Str(s) => json!(s),
        Field::Date(days) => json!((chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap()
            + chrono::Duration::days(i64::from(*days)))
        .to_string()),
        Field::TimestampMicros(t) => json!(t),
        other => panic!("a type the test does not expect: {other:?}"),
    }
}

/// Every row of a Parquet file's bytes, as JSON objects (parquet's own record reader).
fn rows(bytes: bytes::Bytes) -> Vec<Value> {
    let reader = SerializedFileReader::new(bytes).expect("a valid Parquet file");
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            let row = row.unwrap();
            Value::Object(
                row.get_column_iter()
                    .map(|(name, field)| (name.clone(), value(field)))
                    .collect(),
            )
        })
        .collect()
}

/// The rows the data endpoint's URL serves for a single-file version.
async fn served_rows(stack: &Stack, slug: &str, key: &str) -> Vec<Value> {
    let answer = json_body(&data(stack, slug, Some(key)).await);
    let (code, bytes) = http_get(answer["url"].as_str().expect("a URL")).await;
    assert_eq!(code, 200);
    rows(bytes)
}

const TRIPS_CSV: &str = "id,name,price,day,ok\n\
                         1,\"Smith, Jane\",1.5,2024-01-31,true\n\
                         2,Lee,,2024-02-01,false\n\
                         3,\"say \"\"hi\"\"\",2.25,,true\n";

fn trips_expected() -> Vec<Value> {
    vec![
        json!({"id": 1, "name": "Smith, Jane", "price": 1.5, "day": "2024-01-31", "ok": true}),
        json!({"id": 2, "name": "Lee", "price": null, "day": "2024-02-01", "ok": false}),
        json!({"id": 3, "name": "say \"hi\"", "price": 2.25, "day": null, "ok": true}),
    ]
}

#[tokio::test]
async fn a_csv_and_a_gzipped_json_lines_serve_their_values_as_parquet() {
    let stack = Stack::start().await;
    let dir = dir("values");
    let csv = dir.join("trips.csv");
    std::fs::write(&csv, TRIPS_CSV).unwrap();
    let printed = ok(&publish_text(&stack, &[&csv], "trips", &[]));
    assert!(
        printed.contains("published trips version 1 (3 rows, 5 columns"),
        "{printed}"
    );
    let key = create_key(&stack);
    assert_eq!(served_rows(&stack, "trips", &key).await, trips_expected());
    let meta = json_body(&metadata(&stack, "trips").await);
    assert_eq!(meta["row_count"], 3);
    assert!(meta.get("files").is_none(), "a single-file version");
    assert_eq!(
        meta["ingested"],
        json!({"formats": ["csv"], "compressions": ["none"], "inputs": 1, "rows_skipped": 0,
               "skipped": []})
    );
    let dtypes: Vec<&str> = meta["schema"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["dtype"].as_str().unwrap())
        .collect();
    assert_eq!(dtypes, ["int64", "string", "double", "date32[day]", "bool"]);

    let jsonl = dir.join("trips.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    for row in trips_expected() {
        writeln!(gz, "{row}").unwrap();
    }
    std::fs::write(&jsonl, gz.finish().unwrap()).unwrap();
    ok(&publish_text(&stack, &[&jsonl], "trips-json", &[]));
    let served = served_rows(&stack, "trips-json", &key).await;
    // arrow-json orders the columns as their keys first appear: compare by name.
    assert_eq!(served, trips_expected());
    let meta = json_body(&metadata(&stack, "trips-json").await);
    assert_eq!(meta["ingested"]["formats"], json!(["jsonl"]));
    assert_eq!(meta["ingested"]["compressions"], json!(["gzip"]));
}

#[tokio::test]
async fn a_bad_csv_publishes_nothing_and_the_previous_version_still_serves() {
    let stack = Stack::start().await;
    let dir = dir("bad");
    let good = dir.join("trips.csv");
    std::fs::write(&good, TRIPS_CSV).unwrap();
    ok(&publish_text(&stack, &[&good], "trips", &[]));
    let work = dir.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "id,name\n1,a\n2,b\nabc,c\n4,d,extra\n").unwrap();
    for (extra, why) in [
        (
            vec!["--infer-rows", "2"],
            "bad.csv, line 4, column 'id': 'abc' is not a valid int64",
        ),
        (
            vec![],
            "bad.csv, line 5: too many fields: 3 where the header has 2",
        ),
    ] {
        let mut args = extra.clone();
        args.extend(["--work-dir", work.to_str().unwrap()]);
        let out = publish_text(&stack, &[&bad], "trips", &args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(why), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(&work).unwrap().count(),
        0,
        "the work directory is removed"
    );
    let meta = json_body(&metadata(&stack, "trips").await);
    assert_eq!(meta["version"], 1);
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix("datasets/trips/v2")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.key_count(), Some(0), "nothing uploaded");
    let key = create_key(&stack);
    assert_eq!(served_rows(&stack, "trips", &key).await, trips_expected());
}

#[tokio::test]
async fn skipped_rows_are_counted_on_the_version_and_shown() {
    let stack = Stack::start().await;
    let dir = dir("skip");
    let csv = dir.join("skip.csv");
    std::fs::write(&csv, "id,name\n1,a\n2,b,extra\n3,c\n4\n5,e\n").unwrap();
    let out = publish_text(&stack, &[&csv], "skipping", &["--on-error", "skip"]);
    ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipped 2 bad row(s)"), "{err}");
    let meta = json_body(&metadata(&stack, "skipping").await);
    assert_eq!(meta["row_count"], 3);
    assert_eq!(meta["ingested"]["rows_skipped"], 2);
    assert_eq!(
        meta["ingested"]["skipped"],
        json!([
            {"file": "skip.csv", "line": 3, "reason": "too many fields: 3 where the header has 2 (1 more)"},
            {"file": "skip.csv", "line": 5, "reason": "too few fields: 1 where the header has 2 (1 fewer)"},
        ])
    );
    let key = create_key(&stack);
    let ids: Vec<Value> = served_rows(&stack, "skipping", &key)
        .await
        .into_iter()
        .map(|r| r["id"].clone())
        .collect();
    assert_eq!(ids, [json!(1), json!(3), json!(5)]);
}

#[tokio::test]
async fn a_large_input_and_a_directory_of_inputs_make_versions_of_many_files() {
    let stack = Stack::start().await;
    let dir = dir("many");
    let mut text = String::from("id,word\n");
    for i in 0..200_000u64 {
        text.push_str(&format!(
            "{i},{:x}\n",
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ));
    }
    let big = dir.join("big.csv");
    std::fs::write(&big, &text).unwrap();
    let printed = ok(&publish_text(
        &stack,
        &[&big],
        "big",
        &["--target-file-size", "1M"],
    ));
    assert!(printed.contains("published big version 1"), "{printed}");
    let meta = json_body(&metadata(&stack, "big").await);
    assert_eq!(meta["row_count"], 200_000);
    let files = meta["files"]["count"].as_u64().unwrap();
    assert!(files > 1, "split into files: {meta}");
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix("datasets/big/v1/files/")
        .send()
        .await
        .unwrap();
    let keys: Vec<&str> = listed.contents().iter().filter_map(|o| o.key()).collect();
    assert!(
        keys.contains(&"datasets/big/v1/files/big-part-00000.parquet"),
        "{keys:?}"
    );
    assert_eq!(keys.len() as u64, files);

    // Split directories keep their names: train/ and test/ are the version's splits.
    let root = dir.join("corpus");
    for (split, rows) in [("train", "1,a\n2,b\n"), ("test", "3,c\n")] {
        std::fs::create_dir_all(root.join(split)).unwrap();
        std::fs::write(root.join(split).join("part.csv"), format!("id,w\n{rows}")).unwrap();
    }
    ok(&publish_text(&stack, &[&root], "corpus", &[]));
    let meta = json_body(&metadata(&stack, "corpus").await);
    let splits: Vec<(String, u64)> = meta["files"]["splits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap().to_owned(),
                s["row_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(splits, [("test".to_owned(), 1), ("train".to_owned(), 2)]);
    assert_eq!(meta["ingested"]["inputs"], 2);
}

async fn originals(stack: &Stack, slug: &str, key: Option<&str>) -> (u16, Value) {
    let headers: Vec<(&str, &str)> = key.map(|k| ("x-api-key", k)).into_iter().collect();
    let resp = api::data(
        &v2_request(
            &format!("/api/v1/datasets/{slug}/data?format=original"),
            &headers,
        ),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await;
    (resp.status().as_u16(), json_body(&resp))
}

#[tokio::test]
async fn kept_originals_download_byte_for_byte_under_the_data_rule() {
    let stack = Stack::start().await;
    let dir = dir("original");
    let csv = dir.join("trips.csv.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(TRIPS_CSV.as_bytes()).unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::write(&csv, &bytes).unwrap();
    let sha256 = hex::encode(sha2::Sha256::digest(&bytes));
    ok(&publish_text(&stack, &[&csv], "kept", &["--keep-original"]));
    let key = create_key(&stack);
    // The Parquet is served as ever.
    assert_eq!(served_rows(&stack, "kept", &key).await, trips_expected());
    let (status, answer) = originals(&stack, "kept", Some(&key)).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["format"], "original");
    assert_eq!(answer["version"], 1);
    let original = &answer["originals"][0];
    assert_eq!(answer["originals"].as_array().unwrap().len(), 1);
    assert_eq!(original["name"], "trips.csv.gz");
    assert_eq!(original["media_type"], "application/gzip");
    assert_eq!(original["size_bytes"], bytes.len());
    assert_eq!(original["sha256"], sha256.as_str());
    let (code, downloaded) = http_get(original["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(downloaded.as_ref(), bytes.as_slice(), "byte for byte");
    assert_eq!(hex::encode(sha2::Sha256::digest(&downloaded)), sha256);
    let meta = json_body(&metadata(&stack, "kept").await);
    assert_eq!(
        meta["ingested"]["originals"],
        json!([{"name": "trips.csv.gz", "size": bytes.len(), "sha256": sha256,
                "media_type": "application/gzip"}]),
        "no object key shown"
    );
    // The data route's rule: no key, no original.
    let (status, answer) = originals(&stack, "kept", None).await;
    assert_eq!(
        (status, answer["code"].as_str()),
        (401, Some("missing_key")),
        "{answer}"
    );
    // A version that kept none: 404, saying so.
    let plain = dir.join("plain.csv");
    std::fs::write(&plain, TRIPS_CSV).unwrap();
    ok(&publish_text(&stack, &[&plain], "plain", &[]));
    let (status, answer) = originals(&stack, "plain", Some(&key)).await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["code"], "not_found");
    assert!(
        answer["error"]
            .as_str()
            .unwrap()
            .contains("kept no original files"),
        "{answer}"
    );
    // And format=original takes no listing parameter.
    let resp = api::data(
        &v2_request(
            "/api/v1/datasets/kept/data?format=original&page_size=5",
            &[("x-api-key", &key)],
        ),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await;
    assert_eq!(resp.status(), 400);
}

#[tokio::test]
async fn convert_writes_the_parquet_publish_would_and_publishes_nothing() {
    let stack = Stack::start().await;
    let dir = dir("convert");
    let csv = dir.join("trips.csv");
    std::fs::write(&csv, TRIPS_CSV).unwrap();
    let out = dir.join("out");
    // WHEN a CSV is converted
    let printed = ok(&admin(
        &stack,
        &[
            "convert",
            csv.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    ));
    // THEN its Parquet is in --out, named as publish would publish it, with the CSV's values
    assert!(
        printed.contains("converted 1 input(s) to 1 Parquet file(s)") && printed.contains("3 rows"),
        "{printed}"
    );
    let written = std::fs::read(out.join("trips.parquet")).unwrap();
    assert_eq!(rows(written.into()), trips_expected());
    // AND a directory that is not empty is refused, as is a flag of publish only
    let again = admin(
        &stack,
        &[
            "convert",
            csv.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("not empty"));
    let kept = admin(
        &stack,
        &[
            "convert",
            csv.to_str().unwrap(),
            "--out",
            dir.join("other").to_str().unwrap(),
            "--keep-original",
        ],
        &[],
    );
    assert_eq!(kept.status.code(), Some(2));
    // AND a bad CSV is named by file, line and column, as publish names it
    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "id,name\n1,a\n2,b\nabc,c\n").unwrap();
    let failed = admin(
        &stack,
        &[
            "convert",
            bad.to_str().unwrap(),
            "--out",
            dir.join("bad-out").to_str().unwrap(),
            "--infer-rows",
            "2",
        ],
        &[],
    );
    assert_eq!(failed.status.code(), Some(2));
    let err = String::from_utf8_lossy(&failed.stderr);
    assert!(
        err.contains("bad.csv, line 4, column 'id': 'abc' is not a valid int64"),
        "{err}"
    );
    // AND nothing reached the catalog
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix("datasets/")
        .send()
        .await
        .unwrap();
    assert_eq!(listed.key_count(), Some(0));
}
