//! Publishing a version of many files through the CLI: a directory of splits and partitions
//! uploaded to its paths, byte for byte, its manifest recorded and the version activated with
//! the manifest hash as its sha256; a cut-off publish run again uploading only the rest (its
//! requests counted by a proxy in front of s3s-fs); each bad input refused with nothing
//! written.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};

use super::*;

/// A file to write: its path, its first id and its variant ([`parquet_tree`]).
type Spec<'a> = (&'a str, i64, &'a str);

/// Writes Parquet files with pyarrow under `root`, each `(path, first id, variant)`: ten rows
/// of `id` (int64), `value` (double) and `label` (string) starting at the id, so that no two
/// files are alike. Variant `other` has `value` as a string; `year` adds a column `year`;
/// `big` has 17,408 rows of 1 KiB labels, uncompressed (over 16 MiB: uploaded in parts).
fn parquet_tree(root: &Path, files: &[Spec]) {
    let script = r#"
import json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
root, files = sys.argv[1], json.loads(sys.argv[2])
for rel, start, variant in files:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ids = list(range(start, start + 10))
    columns = {"id": pa.array(ids, pa.int64()),
               "value": pa.array([i * 0.5 for i in ids], pa.float64()),
               "label": pa.array(["l%d" % i for i in ids], pa.string())}
    if variant == "other":
        columns["value"] = pa.array([str(i) for i in ids], pa.string())
    if variant == "year":
        columns["year"] = pa.array([2024] * 10, pa.int64())
    if variant == "big":
        # Over 16 MiB uncompressed: uploaded in parts.
        n = 17 * 1024
        columns = {"id": pa.array(range(start, start + n), pa.int64()),
                   "value": pa.array([0.5] * n, pa.float64()),
                   "label": pa.array([os.urandom(512).hex() for _ in range(n)], pa.string())}
        pq.write_table(pa.table(columns), path, compression="NONE", use_dictionary=False)
        continue
    pq.write_table(pa.table(columns), path)
"#;
    let spec = serde_json::to_string(files).unwrap();
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args(["-c", script, root.to_str().unwrap(), &spec])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "writing the files failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn temp_root(what: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("catalog-{what}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&root).unwrap();
    root
}

fn publish_args<'a>(inputs: &[&'a str], slug: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["publish"];
    args.extend_from_slice(inputs);
    args.extend_from_slice(&[
        "--slug",
        slug,
        "--name",
        "Many files",
        "--license",
        "CC0-1.0",
        "--source",
        "tests",
        "--category",
        "testing",
    ]);
    args.extend_from_slice(extra);
    args
}

/// The manifest hash (catalog::files) of files `(split, path, rows)` under `root`: the SHA-256
/// of one line per file, `<split>\t<path>\t<size>\t<rows>\t<sha256>\n`, sorted by split then
/// path.
fn manifest_hash(root: &Path, files: &[(&str, &str, u64)]) -> String {
    use sha2::Digest;
    let mut sorted = files.to_vec();
    sorted.sort();
    let mut hasher = sha2::Sha256::new();
    for (split, rel, rows) in sorted {
        let bytes = std::fs::read(root.join(rel)).unwrap();
        hasher.update(format!(
            "{split}\t{rel}\t{}\t{rows}\t{}\n",
            bytes.len(),
            hex::encode(sha2::Sha256::digest(&bytes))
        ));
    }
    hex::encode(hasher.finalize())
}

/// Every object under `prefix`, with its bytes.
async fn objects(stack: &Stack, prefix: &str) -> BTreeMap<String, Vec<u8>> {
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix(prefix)
        .send()
        .await
        .unwrap();
    let mut out = BTreeMap::new();
    for object in listed.contents() {
        let key = object.key().unwrap().to_owned();
        let body = stack
            .s3
            .get_object()
            .bucket(&stack.target.bucket)
            .key(&key)
            .send()
            .await
            .unwrap()
            .body
            .collect()
            .await
            .unwrap()
            .into_bytes();
        out.insert(key, body.to_vec());
    }
    out
}

/// Asserts that the objects under `prefix` are exactly the files of `root` at `rels`, byte for
/// byte.
async fn assert_uploaded(stack: &Stack, prefix: &str, root: &Path, rels: &[&str]) {
    let stored = objects(stack, prefix).await;
    let expected: BTreeMap<String, Vec<u8>> = rels
        .iter()
        .map(|rel| {
            (
                format!("{prefix}{rel}"),
                std::fs::read(root.join(rel)).unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stored.keys().collect::<Vec<_>>(),
        expected.keys().collect::<Vec<_>>()
    );
    for (key, bytes) in &expected {
        assert!(&stored[key] == bytes, "{key}: the object is not the file");
    }
}

/// A proxy in front of S3 that counts the PUTs and HEADs of files (keys under a version's
/// `files/`) it forwards, and refuses (403 AccessDenied, which the SDK does not retry) every
/// PUT of a file after the first `limit`.
struct S3Counter {
    url: String,
    puts: Arc<AtomicUsize>,
    heads: Arc<AtomicUsize>,
}

async fn s3_counter(upstream: String, limit: usize) -> S3Counter {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (puts, heads) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let counts = (puts.clone(), heads.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (client, upstream, counts) = (client.clone(), upstream.clone(), counts.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let (client, upstream, (puts, heads)) =
                        (client.clone(), upstream.clone(), counts.clone());
                    async move {
                        let (parts, body) = req.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let file = parts.uri.path().contains("/files/");
                        if file && parts.method == hyper::Method::PUT {
                            if puts.load(Ordering::SeqCst) >= limit {
                                let refusal = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
                                    <Error><Code>AccessDenied</Code>\
                                    <Message>injected refusal</Message></Error>";
                                return Ok::<_, String>(
                                    hyper::Response::builder()
                                        .status(403)
                                        .header("content-type", "application/xml")
                                        .body(Full::new(Bytes::from(refusal)))
                                        .unwrap(),
                                );
                            }
                            puts.fetch_add(1, Ordering::SeqCst);
                        }
                        if file && parts.method == hyper::Method::HEAD {
                            heads.fetch_add(1, Ordering::SeqCst);
                        }
                        let resp = client
                            .request(parts.method.clone(), format!("{upstream}{}", parts.uri))
                            .headers(parts.headers.clone())
                            .body(body)
                            .send()
                            .await
                            .map_err(|e| e.to_string())?;
                        let status = resp.status();
                        let headers = resp.headers().clone();
                        let bytes = resp.bytes().await.map_err(|e| e.to_string())?;
                        let mut answer = hyper::Response::new(Full::new(bytes));
                        *answer.status_mut() = status;
                        *answer.headers_mut() = headers;
                        Ok(answer)
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    S3Counter { url, puts, heads }
}

/// The files of the tests below: two splits, partitions by year, and a file left out.
const SPLIT_FILES: [&str; 5] = [
    "test/year=2024/part-0.parquet",
    "test/year=2025/part-0.parquet",
    "train/year=2024/part-0.parquet",
    "train/year=2024/part-1.parquet",
    "train/year=2025/part-0.parquet",
];

#[tokio::test(flavor = "multi_thread")]
async fn a_directory_of_splits_and_partitions_goes_up_file_by_file_to_its_paths() {
    let stack = Stack::start().await;
    let root = temp_root("many");
    let files: Vec<(&str, i64, &str)> = SPLIT_FILES
        .iter()
        .enumerate()
        .map(|(i, rel)| (*rel, 100 * i as i64, ""))
        .collect();
    parquet_tree(&root, &files);
    std::fs::write(root.join("README.md"), "about the data").unwrap();

    let out = admin(
        &stack,
        &publish_args(&[root.to_str().unwrap()], "sales", &[]),
        &[],
    );
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // Four columns: the files' three and the partition column, year.
    assert!(
        stdout
            .contains("sales version 1 (5 files in 2 splits (test 2, train 3), 50 rows, 4 columns")
            && stdout.contains("5 file(s) uploaded, 0 already there"),
        "{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains("splits from the top-level directories"),
        "{stderr}"
    );
    assert!(
        stderr.contains("README.md"),
        "the file left out is named: {stderr}"
    );

    assert_uploaded(&stack, "datasets/sales/v1/files/", &root, &SPLIT_FILES).await;
    let plan: Value = serde_json::from_slice(
        &objects(&stack, "datasets/sales/v1/publish.json").await["datasets/sales/v1/publish.json"],
    )
    .unwrap();
    assert_eq!(plan["files"], 5);
    assert!(
        stdout.contains(plan["manifest_sha256"].as_str().unwrap()),
        "the plan holds the manifest hash printed: {stdout}"
    );
    // The version is recorded and active: its sha256 is the manifest hash (computed here from
    // the files, as catalog::files documents it), its s3_key its files' prefix.
    assert!(out.status.success(), "{stderr}");
    let expected_hash = manifest_hash(
        &root,
        &SPLIT_FILES
            .iter()
            .map(|rel| (rel.split('/').next().unwrap(), *rel, 10))
            .collect::<Vec<_>>(),
    );
    assert!(
        stdout.contains(&format!("manifest sha256 {expected_hash}")),
        "{stdout}"
    );
    let slug = Slug::parse("sales").unwrap();
    let versions = stack.writer().list_versions(&slug).await.unwrap();
    assert_eq!(versions.len(), 1);
    let v = &versions[0];
    assert!(v.active);
    assert_eq!(v.version.sha256, expected_hash);
    assert_eq!(v.version.s3_key, "datasets/sales/v1/files/");
    assert_eq!(v.version.row_count, 50);
    let total: u64 = SPLIT_FILES
        .iter()
        .map(|rel| std::fs::metadata(root.join(rel)).unwrap().len())
        .sum();
    assert_eq!(v.version.size, total);
    assert_eq!(v.version.columns, ["id", "value", "label", "year"]);
    assert_eq!(list(&stack).await["total"], 1);
    // The version carries the manifest's summary in its `active` map, and activation copied
    // it onto the dataset item (where the data, rows and sharing routes read it).
    let files = v
        .version
        .files
        .as_ref()
        .expect("a many-file version's summary");
    assert_eq!(files.files, 5);
    assert_eq!(files.rows, 50);
    assert_eq!(files.sha256, expected_hash);
    let get = |sk: &'static str| {
        stack
            .dynamo
            .get_item()
            .table_name(&stack.target.datasets_table)
            .key(
                "pk",
                aws_sdk_dynamodb::types::AttributeValue::S("DS#sales".into()),
            )
            .key("sk", aws_sdk_dynamodb::types::AttributeValue::S(sk.into()))
            .send()
    };
    for sk in ["V#0000000001", "DATASET"] {
        let item = get(sk).await.unwrap().item.unwrap();
        let active = item["active"].as_m().unwrap();
        let summary = catalog_aws::dynamo::manifest::summary_from(active)
            .unwrap()
            .expect(sk);
        assert_eq!(&summary, files.as_ref(), "{sk}");
    }
    let chunks = stack
        .dynamo
        .query()
        .table_name(&stack.target.datasets_table)
        .key_condition_expression("pk = :pk AND begins_with(sk, :m)")
        .expression_attribute_values(
            ":pk",
            aws_sdk_dynamodb::types::AttributeValue::S("DS#sales".into()),
        )
        .expression_attribute_values(
            ":m",
            aws_sdk_dynamodb::types::AttributeValue::S("M#0000000001#".into()),
        )
        .send()
        .await
        .unwrap();
    assert!(
        chunks.count() >= 2,
        "a chunk per split, files and statistics"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_off_publish_run_again_uploads_only_the_files_not_yet_there() {
    let stack = Stack::start().await;
    let root = temp_root("resume");
    let rels: Vec<String> = (0..12)
        .map(|i| format!("year={}/part-{i:02}.parquet", 2020 + i % 3))
        .collect();
    let files: Vec<(&str, i64, &str)> = rels
        .iter()
        .enumerate()
        .map(|(i, rel)| (rel.as_str(), 10 * i as i64, ""))
        .collect();
    parquet_tree(&root, &files);
    let dir = root.to_str().unwrap();
    let args = publish_args(&[dir], "cut", &["--parallel", "3"]);

    // GIVEN a publish whose S3 refuses every upload after the first 4
    let cutting = s3_counter(stack.s3_url.clone(), 4).await;
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &cutting.url)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("upload") && stderr.contains("running the same publish again"),
        "{stderr}"
    );
    let prefix = "datasets/cut/v1/files/";
    let first = objects(&stack, prefix).await;
    assert_eq!(first.len(), 4, "{:?}", first.keys());
    assert_eq!(cutting.puts.load(Ordering::SeqCst), 4);

    // WHEN it runs again, the same files, through a proxy that counts
    let counting = s3_counter(stack.s3_url.clone(), usize::MAX).await;
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &counting.url)]);
    let stdout = String::from_utf8_lossy(&out.stdout);

    // THEN it takes the same version again and uploads only the 8 files not there, after one
    // HEAD of each file that was
    assert!(
        stdout.contains("cut version 1 (12 files,")
            && stdout.contains("8 file(s) uploaded, 4 already there (a cut-off publish"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
    assert_eq!(counting.puts.load(Ordering::SeqCst), 8);
    assert_eq!(counting.heads.load(Ordering::SeqCst), 4);
    let versions = ok(&admin(&stack, &["versions", "list", "cut"], &[]));
    assert!(
        versions.contains("* v1") && versions.lines().count() == 1,
        "{versions}"
    );
    let rel_refs: Vec<&str> = rels.iter().map(String::as_str).collect();
    assert_uploaded(&stack, prefix, &root, &rel_refs).await;
    // The objects the cut-off run put were not put again.
    let again = objects(&stack, prefix).await;
    for (key, bytes) in &first {
        assert_eq!(&again[key], bytes);
    }

    // AND other files take a new version: nothing of version 1 is overwritten
    parquet_tree(&root, &[(rels[0].as_str(), 999, "")]);
    let counting = s3_counter(stack.s3_url.clone(), usize::MAX).await;
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &counting.url)]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("cut version 2 (12 files,")
            && stdout.contains("12 file(s) uploaded, 0 already there\n"),
        "{stdout}"
    );
    assert_eq!(counting.puts.load(Ordering::SeqCst), 12);
    assert_eq!(objects(&stack, prefix).await, again, "version 1 untouched");
    let versions = ok(&admin(&stack, &["versions", "list", "cut"], &[]));
    assert!(
        versions.contains("  v1") && versions.contains("* v2"),
        "{versions}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_naming_what_is_wrong_and_nothing_is_written() {
    let stack = Stack::start().await;
    let root = temp_root("bad");
    let case = |name: &str| root.join(name);
    // Two files with the same schema, and what each case adds to them.
    let good = [("train/a.parquet", 0, ""), ("test/b.parquet", 10, "")];
    let mut trees: Vec<(&str, Vec<Spec>)> = vec![
        (
            "two-schemas",
            vec![("a.parquet", 0, ""), ("b.parquet", 10, "other")],
        ),
        (
            "partition-type",
            vec![
                ("year=2024/a.parquet", 0, ""),
                ("year=abc/b.parquet", 10, ""),
            ],
        ),
        (
            "partition-column",
            vec![
                ("year=2024/a.parquet", 0, "year"),
                ("year=2025/b.parquet", 10, "year"),
            ],
        ),
        (
            "partition-keys",
            vec![
                ("year=2024/a.parquet", 0, ""),
                ("month=1/b.parquet", 10, ""),
            ],
        ),
    ];
    trees.push(("good", good.to_vec()));
    for (name, files) in &trees {
        parquet_tree(&case(name), files);
    }
    std::fs::create_dir_all(case("not-parquet")).unwrap();
    std::fs::copy(case("good/train/a.parquet"), case("not-parquet/a.parquet")).unwrap();
    std::fs::write(case("not-parquet/b.parquet"), "id,value\n1,2\n").unwrap();
    let many = case("too-many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..=100_000 {
        std::fs::write(many.join(format!("{i:06}.parquet")), b"PAR1....PAR1").unwrap();
    }
    let path = |name: &str| case(name).to_str().unwrap().to_owned();
    let (good_dir, good_a) = (path("good"), path("good/train/a.parquet"));
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec![path("two-schemas")], "b.parquet"),
        (
            vec![
                path("partition-type"),
                "--partition-type".into(),
                "year=int64".into(),
            ],
            "partition value 'abc' of 'year' is not an int64",
        ),
        (
            vec![path("partition-column")],
            "partition key(s) year also column(s)",
        ),
        (vec![path("partition-keys")], "different partition keys"),
        (
            vec![path("not-parquet")],
            "file 'b.parquet' is not a Parquet file",
        ),
        (vec![path("too-many")], "more than 100000 files"),
        (
            vec![good_dir.clone(), "--split".into(), "x=../good/*".into()],
            "has a '..' segment",
        ),
        (
            vec![good_dir.clone(), "--split".into(), "x=/tmp/*".into()],
            "is absolute",
        ),
        (
            vec![good_dir.clone(), good_a],
            "file 'good/train/a.parquet' is given twice",
        ),
        (
            vec![
                good_dir.clone(),
                "--split".into(),
                "train=train/*".into(),
                "--split".into(),
                "test=test/*".into(),
                "--split".into(),
                "validation=validation/*".into(),
            ],
            "split 'validation' has no files",
        ),
        (
            vec![good_dir.clone(), "--split".into(), "tr-ain=train/*".into()],
            "split name 'tr-ain' is not allowed",
        ),
        (vec![path("nothing-*.parquet")], "matches no file"),
    ];
    for (given, expected) in &cases {
        let mut args = vec!["publish"];
        args.extend(given.iter().map(String::as_str));
        args.extend(publish_args(&[], "bad", &[]).into_iter().skip(1));
        let out = admin(&stack, &args, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{given:?}: {stderr}");
        assert!(stderr.contains(expected), "{given:?}: {stderr}");
        assert_eq!(
            objects(&stack, "").await.len(),
            0,
            "{given:?}: nothing uploaded"
        );
        assert!(
            stack
                .writer()
                .dataset_meta(&Slug::parse("bad").unwrap())
                .await
                .unwrap()
                .is_none(),
            "{given:?}: no dataset item"
        );
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cut_off_publish_is_not_resumed_once_another_version_was_reserved() {
    let stack = Stack::start().await;
    let root = temp_root("not-resumed");
    let rels = ["a.parquet", "b.parquet", "c.parquet"];
    parquet_tree(
        &root,
        &rels
            .iter()
            .enumerate()
            .map(|(i, rel)| (*rel, 10 * i as i64, ""))
            .collect::<Vec<_>>(),
    );
    let args = publish_args(&[root.to_str().unwrap()], "gap", &["--parallel", "1"]);
    // GIVEN a publish cut off after one upload (version 1 reserved, never recorded)
    let cutting = s3_counter(stack.s3_url.clone(), 1).await;
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &cutting.url)]);
    assert_eq!(out.status.code(), Some(1));
    let v1 = objects(&stack, "datasets/gap/v1/").await;
    assert_eq!(v1.len(), 2, "one file and the plan: {:?}", v1.keys());
    // AND another publish that reserved and activated version 2 meanwhile
    ok(&publish(&stack, &sample("city-bikes"), "gap"));

    // WHEN the cut-off publish runs again
    let out = ok(&admin(&stack, &args, &[]));

    // THEN it takes version 3 and uploads every file; version 1's objects are as they were
    assert!(
        out.contains("gap version 3 (3 files,")
            && out.contains("3 file(s) uploaded, 0 already there\n"),
        "{out}"
    );
    assert_uploaded(&stack, "datasets/gap/v3/files/", &root, &rels).await;
    assert_eq!(objects(&stack, "datasets/gap/v1/").await, v1);
    let versions = ok(&admin(&stack, &["versions", "list", "gap"], &[]));
    assert!(
        versions.contains("  v2") && versions.contains("* v3") && !versions.contains("v1"),
        "{versions}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_uploaded_in_parts_whose_checksum_the_server_does_not_report_goes_up_again() {
    let stack = Stack::start().await;
    let root = temp_root("parts");
    let rels = ["a-big.parquet", "b.parquet", "c.parquet"];
    parquet_tree(
        &root,
        &[
            (rels[0], 0, "big"),
            (rels[1], 100_000, ""),
            (rels[2], 200_000, ""),
        ],
    );
    assert!(std::fs::metadata(root.join(rels[0])).unwrap().len() > 16 << 20);
    let args = publish_args(&[root.to_str().unwrap()], "parts", &["--parallel", "1"]);
    // GIVEN a publish cut off after the large file's two parts (the next PUT refused)
    let cutting = s3_counter(stack.s3_url.clone(), 2).await;
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &cutting.url)]);
    assert_eq!(out.status.code(), Some(1));
    let prefix = "datasets/parts/v1/files/";
    let first = objects(&stack, prefix).await;
    assert_eq!(
        first.keys().collect::<Vec<_>>(),
        [&format!("{prefix}{}", rels[0])]
    );

    // WHEN it runs again: s3s-fs reports no checksum for an object made of parts
    let counting = s3_counter(stack.s3_url.clone(), usize::MAX).await;
    let out = ok(&admin(
        &stack,
        &args,
        &[("AWS_ENDPOINT_URL_S3", &counting.url)],
    ));

    // THEN the large file, compared by a HEAD, goes up again (2 parts) with the two others,
    // and the version serves every file as it is
    assert!(
        out.contains("parts version 1 (3 files,")
            && out.contains("3 file(s) uploaded, 0 already there (a cut-off publish"),
        "{out}"
    );
    assert_eq!(counting.heads.load(Ordering::SeqCst), 1);
    assert_eq!(counting.puts.load(Ordering::SeqCst), 4);
    assert_uploaded(&stack, prefix, &root, &rels).await;
}
