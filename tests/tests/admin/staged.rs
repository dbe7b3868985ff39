//! Publishing in place through the CLI: files staged under the bucket's `staging/` prefix with
//! `catalog-admin stage upload` (a second run uploads nothing), published with `catalog-admin
//! stage publish` (footers and statistics by ranged GETs, server-side copies into the version's
//! keys), read back through the API: the listing's presigned URLs give the files' bytes, and the
//! statistics and the manifest hash are those of publishing the same files from disk. The
//! multipart copy (UploadPartCopy of ranges) with a small threshold, an object staged without a
//! checksum (hashed by reading it), and the refusals: another schema, staged CSV, a missing
//! prefix, a prefix outside `staging/`.

use std::collections::BTreeMap;

use sha2::Digest;

use super::*;

/// Writes Parquet files with pyarrow under `root`, each `(path, first id, rows, variant)`:
/// `id` (int64), `value` (double, every seventh null), `label` (string, from a small set, so
/// that top values count), `day` (date32). Variant `other` has `value` as a string; `big`
/// adds 1 KiB random hex labels, uncompressed (about `rows` KiB).
fn write_files(root: &Path, files: &[(&str, i64, u64, &str)]) {
    let script = r#"
import datetime, json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
root, files = sys.argv[1], json.loads(sys.argv[2])
for rel, start, rows, variant in files:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ids = list(range(start, start + rows))
    columns = {"id": pa.array(ids, pa.int64()),
               "value": pa.array([None if i % 7 == 0 else i * 0.25 for i in ids], pa.float64()),
               "label": pa.array(["kind-%d" % (i % 4) for i in ids], pa.string()),
               "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 40)
                                for i in ids], pa.date32())}
    if variant == "other":
        columns["value"] = pa.array([str(i) for i in ids], pa.string())
    if variant == "big":
        columns["label"] = pa.array([os.urandom(512).hex() for _ in ids], pa.string())
        pq.write_table(pa.table(columns), path, compression="NONE", use_dictionary=False)
        continue
    pq.write_table(pa.table(columns), path, row_group_size=max(1, rows // 3))
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

fn stage_publish(stack: &Stack, from: &str, slug: &str, extra: &[&str]) -> Output {
    let mut args = vec!["stage", "publish", from, "--slug", slug];
    args.extend_from_slice(&META);
    args.extend_from_slice(extra);
    admin(stack, &args, &[])
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

/// The data listing's files of `slug` (one page), each `path` with the bytes its presigned URL
/// gives, after checking them against the listed `sha256`.
async fn downloaded(stack: &Stack, slug: &str, key: &str) -> BTreeMap<String, Vec<u8>> {
    let resp = api::data(
        &v2_request(
            &format!("/api/v1/datasets/{slug}/data?page_size=1000"),
            &[("x-api-key", key)],
        ),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await;
    let body = json_body(&resp);
    assert_eq!(resp.status(), 200, "{body}");
    let mut out = BTreeMap::new();
    for file in body["files"].as_array().expect("a listing of files") {
        let (status, bytes) = http_get(file["url"].as_str().unwrap()).await;
        assert_eq!(status, 200, "{file}");
        assert_eq!(
            hex::encode(sha2::Sha256::digest(&bytes)),
            file["sha256"].as_str().unwrap(),
            "{file}: the bytes are the listed SHA-256's"
        );
        out.insert(file["path"].as_str().unwrap().to_owned(), bytes.to_vec());
    }
    out
}

fn local_files(root: &Path, rels: &[&str]) -> BTreeMap<String, Vec<u8>> {
    rels.iter()
        .map(|rel| ((*rel).to_owned(), std::fs::read(root.join(rel)).unwrap()))
        .collect()
}

const FILES: [&str; 5] = [
    "test/year=2024/part-0.parquet",
    "test/year=2025/part-0.parquet",
    "train/year=2024/part-0.parquet",
    "train/year=2024/part-1.parquet",
    "train/year=2025/part-0.parquet",
];

#[tokio::test(flavor = "multi_thread")]
async fn staged_files_publish_in_place_with_the_statistics_of_a_publish_from_disk() {
    let stack = Stack::start().await;
    let root = temp_root("staged");
    let specs: Vec<(&str, i64, u64, &str)> = FILES
        .iter()
        .enumerate()
        .map(|(i, rel)| (*rel, 1000 * i as i64, 200 + 50 * i as u64, ""))
        .collect();
    write_files(&root, &specs);
    std::fs::write(root.join("README.md"), "about the data").unwrap();
    let bucket = stack.target.bucket.clone();
    let staged = format!("s3://{bucket}/staging/sales/");
    let dir = root.to_str().unwrap();

    // GIVEN the directory staged with `stage upload`
    let out = ok(&admin(&stack, &["stage", "upload", dir, &staged], &[]));
    assert!(
        out.contains("staged 5 file(s)")
            && out.contains(&format!("under {staged}: 5 uploaded, 0 already there")),
        "{out}"
    );
    let stored = objects(&stack, "staging/sales/").await;
    let expected: BTreeMap<String, Vec<u8>> = local_files(&root, &FILES)
        .into_iter()
        .map(|(rel, bytes)| (format!("staging/sales/{rel}"), bytes))
        .collect();
    assert!(stored == expected, "the staged objects are the files");
    // AND a second run uploads nothing
    let again = ok(&admin(&stack, &["stage", "upload", dir, &staged], &[]));
    assert!(again.contains(": 0 uploaded, 5 already there"), "{again}");

    // WHEN the staged prefix is published in place, and the same files from disk
    let out = stage_publish(&stack, &staged, "inplace", &[]);
    let stdout = ok(&out);
    assert!(
        stdout.contains("published inplace version 1 (5 files in 2 splits (test 2, train 3)")
            && stdout.contains(&format!(
                "in place from {staged}: 5 file(s) copied server-side (0 in parts), 0 hashed"
            )),
        "{stdout}"
    );
    let mut args = vec!["publish", dir, "--slug", "disk"];
    args.extend_from_slice(&META);
    ok(&admin(&stack, &args, &[]));

    // THEN the version's files are the staged files, byte for byte, through the API
    let key = create_key(&stack);
    assert!(
        downloaded(&stack, "inplace", &key).await == local_files(&root, &FILES),
        "the presigned URLs give the files"
    );
    // AND the statistics, of the version and of each split, and the manifest hash are those of
    // the publish from disk
    let (inplace, disk) = (
        json_body(&metadata(&stack, "inplace").await),
        json_body(&metadata(&stack, "disk").await),
    );
    assert!(inplace["schema"].as_array().is_some_and(|s| s.len() == 5));
    for field in ["schema", "row_count", "size", "sha256", "files"] {
        assert_eq!(inplace[field], disk[field], "{field}");
    }
    for split in ["train", "test"] {
        let of = |slug: &str| {
            let request = v2_request(&format!("/api/v1/datasets/{slug}?split={split}"), &[]);
            let catalog = stack.catalog();
            async move { json_body(&api::metadata(&request, &catalog, Utc::now()).await) }
        };
        let (a, b) = (of("inplace").await, of("disk").await);
        assert!(a["schema"].is_array(), "{a}");
        assert_eq!(a["schema"], b["schema"], "split {split}");
    }
    // AND the staged objects stay where they were (copied, not moved)
    assert!(objects(&stack, "staging/sales/").await == expected);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_object_is_copied_in_parts_and_only_one_staged_without_a_sha256_is_read_to_hash_it()
{
    let stack = Stack::start().await;
    let root = temp_root("staged-parts");
    // About 17.5 MiB: staged in parts (over 16 MiB, so with its SHA-256 in its metadata), and
    // over an 8 MiB threshold, copied in parts of 5 MiB (S3's smallest).
    write_files(
        &root,
        &[
            ("big.parquet", 0, 17 * 1024, "big"),
            ("small.parquet", 5, 100, ""),
        ],
    );
    let bucket = stack.target.bucket.clone();
    let big_size = std::fs::metadata(root.join("big.parquet")).unwrap().len();
    assert!(big_size > 16 << 20 && big_size <= 20 << 20, "{big_size}");
    ok(&admin(
        &stack,
        &[
            "stage",
            "upload",
            root.join("big.parquet").to_str().unwrap(),
            &format!("s3://{bucket}/staging/parts/"),
        ],
        &[],
    ));
    // The small file put as a plain PUT with no SHA-256, as a copy tool would.
    stack
        .s3
        .put_object()
        .bucket(&bucket)
        .key("staging/parts/small.parquet")
        .body(std::fs::read(root.join("small.parquet")).unwrap().into())
        .send()
        .await
        .unwrap();

    let out = stage_publish(
        &stack,
        "staging/parts",
        "parts",
        &["--copy-threshold", "8388608", "--copy-part-size", "5242880"],
    );
    let stdout = ok(&out);
    assert!(
        stdout.contains("2 file(s) copied server-side (1 in parts), 1 hashed by reading them"),
        "{stdout}"
    );
    // The large one went in four parts (UploadPartCopy): its copy's ETag is a multipart one.
    let head = stack
        .s3
        .head_object()
        .bucket(&bucket)
        .key("datasets/parts/v1/files/big.parquet")
        .send()
        .await
        .unwrap();
    assert!(
        head.e_tag()
            .is_some_and(|e| e.trim_matches('"').ends_with("-4")),
        "{:?}",
        head.e_tag()
    );
    let key = create_key(&stack);
    assert!(
        downloaded(&stack, "parts", &key).await
            == local_files(&root, &["big.parquet", "small.parquet"]),
        "the copies, in parts and whole, are the files"
    );
    let versions = stack
        .writer()
        .list_versions(&Slug::parse("parts").unwrap())
        .await
        .unwrap();
    assert_eq!(versions[0].version.row_count, 17 * 1024 + 100);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_staged_input_is_refused_and_nothing_is_published() {
    let stack = Stack::start().await;
    let root = temp_root("staged-bad");
    write_files(
        &root,
        &[("a.parquet", 0, 20, ""), ("b.parquet", 100, 20, "other")],
    );
    let bucket = stack.target.bucket.clone();
    let put = |key: &str, bytes: Vec<u8>| {
        stack
            .s3
            .put_object()
            .bucket(&bucket)
            .key(key)
            .body(bytes.into())
            .send()
    };
    for name in ["a.parquet", "b.parquet"] {
        put(
            &format!("staging/mixed/{name}"),
            std::fs::read(root.join(name)).unwrap(),
        )
        .await
        .unwrap();
    }
    put(
        "staging/csv/a.parquet",
        std::fs::read(root.join("a.parquet")).unwrap(),
    )
    .await
    .unwrap();
    put("staging/csv/more.csv", b"id,value\n1,2\n".to_vec())
        .await
        .unwrap();
    let cases = [
        (
            "staging/mixed/",
            format!("s3://{bucket}/staging/mixed/b.parquet"),
        ),
        ("staging/mixed/", "value".to_owned()),
        (
            "staging/csv/",
            format!("s3://{bucket}/staging/csv/more.csv is CSV, TSV or JSON Lines"),
        ),
        ("staging/csv/", "publish it from disk".to_owned()),
        (
            "staging/nothing/",
            format!("no objects under s3://{bucket}/staging/nothing/"),
        ),
        ("datasets/x/", "give a prefix under".to_owned()),
        ("s3://elsewhere/staging/mixed/", "not elsewhere".to_owned()),
    ];
    for (from, expected) in &cases {
        let out = stage_publish(&stack, from, "bad", &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{from}: {stderr}");
        assert!(stderr.contains(expected.as_str()), "{from}: {stderr}");
        assert_eq!(
            objects(&stack, "datasets/").await.len(),
            0,
            "{from}: nothing copied"
        );
        assert!(
            stack
                .writer()
                .dataset_meta(&Slug::parse("bad").unwrap())
                .await
                .unwrap()
                .is_none(),
            "{from}: no dataset item"
        );
    }
}

/// A proxy in front of S3 that refuses (403 AccessDenied, which the SDK does not retry) every
/// copy (a request with `x-amz-copy-source`) and forwards the rest; its URL.
async fn refusing_copies(upstream: String) -> String {
    use http_body_util::{BodyExt, Full};
    use hyper::body::{Bytes, Incoming};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let client = reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (client, upstream) = (client.clone(), upstream.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let (client, upstream) = (client.clone(), upstream.clone());
                    async move {
                        let (parts, body) = req.into_parts();
                        if parts.headers.contains_key("x-amz-copy-source") {
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
                        let body = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
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
    url
}

#[tokio::test(flavor = "multi_thread")]
async fn a_publish_in_place_whose_copies_fail_leaves_the_previous_version_serving() {
    let stack = Stack::start().await;
    let root = temp_root("staged-fail");
    write_files(
        &root,
        &[
            ("first/a.parquet", 0, 30, ""),
            ("second/a.parquet", 100, 40, ""),
            ("second/b.parquet", 200, 40, ""),
        ],
    );
    let bucket = stack.target.bucket.clone();
    for name in ["first", "second"] {
        ok(&admin(
            &stack,
            &[
                "stage",
                "upload",
                root.join(name).to_str().unwrap(),
                &format!("s3://{bucket}/staging/{name}/"),
            ],
            &[],
        ));
    }
    // GIVEN version 1 published in place
    ok(&stage_publish(&stack, "staging/first/", "kept", &[]));

    // WHEN a second publish in place has its copies refused by S3
    let proxy = refusing_copies(stack.s3_url.clone()).await;
    let mut args = vec!["stage", "publish", "staging/second/", "--slug", "kept"];
    args.extend_from_slice(&META);
    let out = admin(&stack, &args, &[("AWS_ENDPOINT_URL_S3", &proxy)]);
    let stderr = String::from_utf8_lossy(&out.stderr);

    // THEN it fails saying so, and version 1 still serves, its files as they were
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("injected refusal") && stderr.contains("nothing is published"),
        "{stderr}"
    );
    let versions = stack
        .writer()
        .list_versions(&Slug::parse("kept").unwrap())
        .await
        .unwrap();
    assert_eq!(versions.len(), 1, "no second version recorded");
    assert!(versions[0].active && versions[0].version.version == 1);
    assert_eq!(versions[0].version.row_count, 30);
    let key = create_key(&stack);
    assert!(
        downloaded(&stack, "kept", &key).await == local_files(&root.join("first"), &["a.parquet"]),
        "version 1's file still serves"
    );
    assert!(objects(&stack, "datasets/kept/v2/files/").await.is_empty());
}
