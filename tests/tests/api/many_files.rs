//! A version of many files through the metadata and data endpoints, on the real stack: a
//! dataset of splits and Hive partitions published with the real `catalog-admin publish`, its
//! metadata's `files`, its data listing page by page (filters, bad parameters, the access rule,
//! what a page costs on the wire), every URL downloaded and read back; a one-file dataset in
//! both forms; and `catalog-admin download` of every file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use catalog::input::Slug;
use catalog::keys::{NewKey, Scope};
use catalog_tests::{admin_command, run_admin, tool, Call, Wire};
use sha2::{Digest, Sha256};

use super::*;

/// The files published: two splits, partitions by year, one of them Hive's null.
pub(super) const FILES: [&str; 5] = [
    "test/year=2024/part-0.parquet",
    "test/year=__HIVE_DEFAULT_PARTITION__/part-0.parquet",
    "train/year=2024/part-0.parquet",
    "train/year=2024/part-1.parquet",
    "train/year=2025/part-0.parquet",
];

const ONLY_AIR: &str = "dcat_files_only_air_0000000000000000000000000000000000000000000";

/// Writes `FILES` under a new directory with pyarrow: ten rows each of `id` (int64), `value`
/// (double) and `label` (string), each file's ids its own.
pub(super) fn write_files() -> PathBuf {
    let root = std::env::temp_dir().join(format!("catalog-files-{}", uuid::Uuid::new_v4()));
    let script = r#"
import json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
root, files = sys.argv[1], json.loads(sys.argv[2])
for n, rel in enumerate(files):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ids = list(range(100 * n, 100 * n + 10))
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                             "value": pa.array([i * 0.5 for i in ids], pa.float64()),
                             "label": pa.array(["l%d" % i for i in ids], pa.string())}), path)
"#;
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args([
            "-c",
            script,
            root.to_str().unwrap(),
            &serde_json::to_string(&FILES).unwrap(),
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    root
}

/// Publishes the directory `root` as `slug` with the real CLI.
pub(super) fn publish_dir(stack: &Stack, root: &Path, slug: &str) {
    let out = run_admin(admin_command().envs(stack.function_env()).args([
        "publish",
        root.to_str().unwrap(),
        "--slug",
        slug,
        "--name",
        "Sales in many files",
        "--license",
        "CC0-1.0",
        "--source",
        "tests",
        "--category",
        "testing",
    ]));
    assert!(
        out.status.success(),
        "publish: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Each file's size and SHA-256, by path.
pub(super) fn local_files(root: &Path) -> BTreeMap<String, (u64, String)> {
    FILES
        .iter()
        .map(|rel| {
            let bytes = std::fs::read(root.join(rel)).unwrap();
            (
                (*rel).to_owned(),
                (bytes.len() as u64, hex::encode(Sha256::digest(&bytes))),
            )
        })
        .collect()
}

struct Many {
    g: Given,
    root: PathBuf,
}

/// GIVEN the sample catalog, a read key, and `sales` published from `FILES`.
async fn given_many() -> Many {
    let g = given().await;
    let root = write_files();
    publish_dir(&g.stack, &root, "sales");
    Many { g, root }
}

impl Many {
    async fn get(&self, query: &str) -> (u16, Value) {
        let resp = self
            .g
            .data(
                &format!("/api/v1/datasets/sales/data{query}"),
                &[("x-api-key", READ_KEY)],
            )
            .await;
        (resp.status().as_u16(), json_body(&resp))
    }

    /// Every page of a listing, following `next_page_token`: the pages' bodies.
    async fn pages(&self, query: &str) -> Vec<Value> {
        let mut pages = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let q = match &token {
                Some(t) => format!("{query}&page_token={t}"),
                None => query.to_owned(),
            };
            let (status, body) = self.get(&q).await;
            assert_eq!(status, 200, "{q}: {body}");
            token = body["next_page_token"].as_str().map(str::to_owned);
            pages.push(body);
            if token.is_none() {
                return pages;
            }
            assert!(pages.len() < 10, "{query}: no end");
        }
    }
}

fn paths(page: &Value) -> Vec<String> {
    page["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_metadata_shows_a_many_file_versions_files_splits_and_partition_columns() {
    let m = given_many().await;
    let resp = m.g.metadata("/api/v1/datasets/sales").await;
    assert_eq!(resp.status(), 200);
    let body = json_body(&resp);
    let local = local_files(&m.root);
    let size = |split: &str| -> u64 {
        local
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{split}/")))
            .map(|(_, (s, _))| s)
            .sum()
    };
    assert_eq!(
        body["files"],
        serde_json::json!({
            "count": 5,
            "partition_columns": [{"name": "year", "type": "int64"}],
            "splits": [
                {"name": "test", "files": 2, "row_count": 20, "size": size("test")},
                {"name": "train", "files": 3, "row_count": 30, "size": size("train")},
            ],
        })
    );
    assert_eq!(body["size"], size("test") + size("train"));
    assert_eq!(body["row_count"], 50);
    // A one-file dataset's answer has no files object
    let one = json_body(&m.g.metadata("/api/v1/datasets/city-bikes").await);
    assert!(one.get("files").is_none(), "{one}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listing_hands_out_every_file_once_each_url_serving_its_bytes() {
    let m = given_many().await;
    let local = local_files(&m.root);
    let meta = json_body(&m.g.metadata("/api/v1/datasets/sales").await);

    // WHEN the data endpoint is asked without parameters THEN it lists the first page, all 5
    let (status, first) = m.get("").await;
    assert_eq!(status, 200, "{first}");
    assert!(first.get("url").is_none(), "{first}");
    assert_eq!(first["file_count"], 5);
    assert_eq!(first["page_size"], 1000);
    assert_eq!(first["next_page_token"], Value::Null);
    assert_eq!(first["sha256"], meta["sha256"]);
    assert_eq!(first["size_bytes"], meta["size"]);
    assert_eq!(first["row_count"], 50);
    assert_eq!(first["version"], 1);
    assert_eq!(first["format"], "parquet");
    assert_eq!(
        first["columns"],
        serde_json::json!(["id", "value", "label", "year"])
    );
    assert!(first["expires_at"].is_string());
    assert_eq!(paths(&first), FILES);
    for file in first["files"].as_array().unwrap() {
        let path = file["path"].as_str().unwrap();
        let (size, sha) = &local[path];
        let split = path.split('/').next().unwrap();
        let year = if path.contains("__HIVE") {
            Value::Null
        } else {
            Value::from(
                path[path.find("year=").unwrap() + 5..][..4]
                    .parse::<i64>()
                    .unwrap(),
            )
        };
        assert_eq!(file["split"], split, "{path}");
        assert_eq!(
            file["partition_values"],
            serde_json::json!({ "year": year })
        );
        assert_eq!(file["row_count"], 10, "{path}");
        assert_eq!(file["size_bytes"], *size, "{path}");
        assert_eq!(file["sha256"], sha.as_str(), "{path}");
        // THEN each URL serves that file: its SHA-256, and Parquet that reads back
        let (status, bytes) = http_get(file["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "{path}");
        assert_eq!(&hex::encode(Sha256::digest(&bytes)), sha, "{path}");
        let (rows, columns, read) = read_parquet(bytes);
        assert_eq!((rows, read), (10, 10), "{path}");
        assert_eq!(columns, ["id", "value", "label"], "{path}");
    }

    // Pages of 2: three pages, every file once, in order, the count on each
    let pages = m.pages("?page_size=2").await;
    assert_eq!(pages.len(), 3);
    assert_eq!(
        pages.iter().flat_map(paths).collect::<Vec<_>>(),
        FILES.to_vec()
    );
    assert!(pages
        .iter()
        .all(|p| p["file_count"] == 5 && p["page_size"] == 2));
    assert_eq!(pages[2]["next_page_token"], Value::Null);
}

#[tokio::test(flavor = "multi_thread")]
async fn split_and_partition_filters_and_their_bad_values() {
    let m = given_many().await;
    for (query, expected) in [
        ("?split=train", &FILES[2..]),
        ("?split=test", &FILES[..2]),
        ("?partition=year=2024", &[FILES[0], FILES[2], FILES[3]][..]),
        ("?split=train&partition=year=2024", &FILES[2..4]),
        ("?partition=year=__HIVE_DEFAULT_PARTITION__", &FILES[1..2]),
        (
            "?split=train&partition=year=2024&partition=year=2025",
            &[][..],
        ),
        // Filters naming nothing: an empty page, not an error
        ("?split=validation", &[][..]),
        ("?partition=month=1", &[][..]),
        ("?partition=year=1999", &[][..]),
        ("?split=test&partition=year=2025", &[][..]),
    ] {
        // Pages of one, so that filters and pages are tested together
        let pages = m.pages(&format!("{query}&page_size=1")).await;
        let got: Vec<String> = pages.iter().flat_map(paths).collect();
        assert_eq!(got, expected, "{query}");
        for page in &pages {
            assert_eq!(page["file_count"], expected.len(), "{query}");
        }
        if expected.is_empty() {
            assert_eq!(pages[0]["files"], serde_json::json!([]), "{query}");
            assert_eq!(pages[0]["expires_at"], Value::Null, "{query}");
        }
    }
    let (_, train) = m.get("?split=train&page_size=1").await;
    let train_token = train["next_page_token"].as_str().unwrap().to_owned();
    let (_, all) = m.get("?page_size=1").await;
    let token = all["next_page_token"].as_str().unwrap().to_owned();
    for (query, says) in [
        ("?partition=year".to_owned(), "is not KEY=VALUE"),
        ("?partition==2024".to_owned(), "is not KEY=VALUE"),
        (
            "?partition=year=abc".to_owned(),
            "of 'year' is not an int64",
        ),
        ("?page_size=0".to_owned(), "page_size '0'"),
        ("?page_size=1001".to_owned(), "page_size '1001'"),
        ("?page_size=ten".to_owned(), "page_size 'ten'"),
        ("?page_token=zz".to_owned(), "page_token 'zz'"),
        (
            format!("?page_token={token}x"),
            "is not one this endpoint gave",
        ),
        (
            format!("?split=test&page_token={train_token}"),
            "does not belong to this listing",
        ),
        (
            format!("?version=2&page_token={token}"),
            "page_token lists version 1",
        ),
        ("?split=a&split=b".to_owned(), "more than once"),
    ] {
        let (status, body) = m.get(&query).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(says),
            "{query}: {body}"
        );
    }
    // The download route cannot redirect to many files: it says where they are listed
    let resp =
        m.g.download(
            "/api/v1/datasets/sales/download",
            &[("x-api-key", READ_KEY)],
        )
        .await;
    assert_eq!(resp.status(), 400);
    let body = json_body(&resp);
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .contains("is 5 files, which one redirect cannot hand out"),
        "{body}"
    );
    // HEAD checks the parameters and the key, and signs nothing
    let head = catalog_http::testing::V2Event::new("HEAD", "/api/v1/datasets/sales/data")
        .header("x-api-key", READ_KEY)
        .request();
    let signer = m.g.stack.signer(std::time::Duration::from_secs(900));
    let resp = api::data(&head, &m.g.catalog, &signer, Utc::now()).await;
    assert_eq!(resp.status(), 200);
    assert!(!String::from_utf8_lossy(resp.body()).contains("X-Amz"));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_file_dataset_answers_as_ever_or_in_the_listing_form_when_asked() {
    let g = given().await;
    let key = [("x-api-key", READ_KEY)];
    let path = "/api/v1/datasets/air-quality-hourly/data";
    let plain = json_body(&g.data(path, &key).await);
    assert!(
        plain["url"].is_string() && plain.get("files").is_none(),
        "{plain}"
    );
    assert!(plain.get("file_count").is_none(), "{plain}");

    let resp = g.data(&format!("{path}?page_size=10"), &key).await;
    assert_eq!(resp.status(), 200);
    let listed = json_body(&resp);
    assert!(listed.get("url").is_none(), "{listed}");
    for field in [
        "slug",
        "version",
        "sha256",
        "size_bytes",
        "row_count",
        "columns",
    ] {
        assert_eq!(listed[field], plain[field], "{field}");
    }
    assert_eq!(listed["file_count"], 1);
    assert_eq!(listed["next_page_token"], Value::Null);
    let file = &listed["files"][0];
    let version = plain["version"].as_u64().unwrap();
    assert_eq!(
        file["path"],
        format!("air-quality-hourly-v{version}.parquet")
    );
    assert_eq!(file["split"], Value::Null);
    assert_eq!(file["partition_values"], serde_json::json!({}));
    assert_eq!(file["sha256"], plain["sha256"]);
    assert_eq!(file["size_bytes"], plain["size_bytes"]);
    let (status, bytes) = http_get(file["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    assert_eq!(
        hex::encode(Sha256::digest(&bytes)),
        plain["sha256"].as_str().unwrap()
    );
    // A split or a partition: it has neither, an empty page
    for query in ["?split=train", "?partition=year=2024"] {
        let body = json_body(&g.data(&format!("{path}{query}"), &key).await);
        assert_eq!(body["file_count"], 0, "{query}");
        assert_eq!(body["files"], serde_json::json!([]), "{query}");
    }
    let bad = g.data(&format!("{path}?partition=year"), &key).await;
    assert_eq!(bad.status(), 400);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listing_keeps_the_access_rule_and_costs_two_round_trips_a_page() {
    let m = given_many().await;
    // No key, outside any keyless window: 401; a key limited to another dataset: 403
    let resp =
        m.g.data("/api/v1/datasets/sales/data?page_size=2", &[])
            .await;
    assert_eq!(resp.status(), 401, "{}", json_body(&resp));
    let mut key = NewKey::for_secret(ONLY_AIR, vec![Scope::Read], "files", Utc::now(), None);
    key.datasets = Some(vec![Slug::parse("air-quality-hourly").unwrap()]);
    m.g.stack.writer().put_key(&key).await.expect("put key");
    let resp =
        m.g.data(
            "/api/v1/datasets/sales/data?split=train",
            &[("x-api-key", ONLY_AIR)],
        )
        .await;
    assert_eq!(resp.status(), 403, "{}", json_body(&resp));
    let resp =
        m.g.data(
            "/api/v1/datasets/air-quality-hourly/data?page_size=1",
            &[("x-api-key", ONLY_AIR)],
        )
        .await;
    assert_eq!(resp.status(), 200, "{}", json_body(&resp));

    // A page costs the gate's BatchGetItem (the dataset, with the summary, and the key) and one
    // BatchGetItem of the manifest chunks it needs (a chunk never spans two splits: the whole
    // version's first page needs both of this version's); nothing goes to S3
    let (dynamo, s3) = (Wire::default(), Wire::default());
    let (catalog, signer) = m.g.stack.wired(&dynamo, &s3);
    let rows = m.g.stack.rows_wired(&s3);
    let ask = |q: &str| {
        v2_request(
            &format!("/api/v1/datasets/sales/data{q}"),
            &[("x-api-key", READ_KEY)],
        )
    };
    // (the key's last use is recorded once an hour: done by this first request)
    catalog_tests::answer(&ask(""), &catalog, &signer, &rows).await;
    dynamo.take_calls();
    for (query, chunks) in [
        ("", 2),
        ("?page_size=2", 1),
        ("?split=train&partition=year=2024", 1),
        ("?partition=year=2025", 1),
    ] {
        let resp = catalog_tests::answer(&ask(query), &catalog, &signer, &rows).await;
        assert_eq!(resp.status(), 200, "{query}");
        let calls: Vec<(String, usize)> = dynamo
            .take_calls()
            .into_iter()
            .map(
                |Call {
                     operation, items, ..
                 }| (operation, items),
            )
            .collect();
        assert_eq!(
            calls,
            [
                ("DynamoDB.BatchGetItem".to_owned(), 2),
                ("DynamoDB.BatchGetItem".to_owned(), chunks)
            ],
            "{query}"
        );
        assert!(s3.take().is_empty(), "{query}");
    }
    // A filter naming nothing reads no chunk
    let resp = catalog_tests::answer(&ask("?split=validation"), &catalog, &signer, &rows).await;
    assert_eq!(resp.status(), 200);
    let calls = dynamo.take();
    assert_eq!(calls, ["DynamoDB.BatchGetItem"]);
}

/// `catalog-admin download` through the local API, in `cwd`, with `CATALOG_API_KEY` set.
fn admin_download(base: &str, args: &[&str], cwd: &Path) -> std::process::Output {
    let mut cmd = admin_command();
    cmd.arg("download")
        .args(args)
        .args(["--api-url", base])
        .current_dir(cwd)
        .env("CATALOG_API_KEY", READ_KEY);
    run_admin(&mut cmd)
}

/// The files under `dir`, relative, with their bytes (no `.part` may be left).
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    if dir.exists() {
        walk(dir, dir, &mut out);
    }
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn catalog_admin_download_fetches_every_file_verified_and_resumes() {
    let m = given_many().await;
    let (base, _api) = catalog_tests::start_local_api(&m.g.stack);
    let scratch = std::env::temp_dir().join(format!("catalog-dl-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&scratch).unwrap();
    let expected: BTreeMap<String, Vec<u8>> = FILES
        .iter()
        .map(|rel| ((*rel).to_owned(), std::fs::read(m.root.join(rel)).unwrap()))
        .collect();

    // WHEN every file is downloaded, two at a time
    let out = admin_download(&base, &["sales", "out", "--parallel", "2"], &scratch);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // THEN DIR/<path> holds each file byte for byte, and nothing else
    assert_eq!(tree(&scratch.join("out")), expected);
    assert!(
        stdout.contains("5 file(s)") && stdout.contains("5 fetched, 0 already there"),
        "{stdout}"
    );

    // A second run skips every file; a damaged file is fetched again
    std::fs::write(scratch.join("out").join(FILES[4]), b"damaged").unwrap();
    let out = admin_download(&base, &["sales", "out"], &scratch);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("1 fetched, 4 already there"), "{stdout}");
    assert_eq!(tree(&scratch.join("out")), expected);
    let out = admin_download(&base, &["sales", "out"], &scratch);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(stdout.contains("0 fetched, 5 already there"), "{stdout}");

    // --split and --partition: only those files, to the default directory sales-v1
    let out = admin_download(
        &base,
        &["sales", "--split", "train", "--partition", "year=2024"],
        &scratch,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let train: BTreeMap<String, Vec<u8>> = expected
        .iter()
        .filter(|(p, _)| p.starts_with("train/year=2024/"))
        .map(|(p, b)| (p.clone(), b.clone()))
        .collect();
    assert_eq!(train.len(), 2);
    assert_eq!(tree(&scratch.join("sales-v1")), train);

    // A one-file dataset into DIR: as ever, named <slug>-v<version>.parquet
    let out = admin_download(&base, &["air-quality-hourly", "one"], &scratch);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let one = tree(&scratch.join("one"));
    assert_eq!(one.len(), 1, "{:?}", one.keys());
    assert!(
        one.contains_key("air-quality-hourly-v1.parquet"),
        "{:?}",
        one.keys()
    );
    std::fs::remove_dir_all(&scratch).unwrap();
}
