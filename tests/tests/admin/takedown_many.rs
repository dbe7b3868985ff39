//! Taking down versions of many files through the CLI: `versions delete` removes every object
//! under the version's prefix and its manifest items, `datasets delete` every object and item
//! of the dataset, `datasets unpublish` answers 410 on the listing form too, and `versions
//! sweep` removes what publishes that never recorded their version left. After each, the other
//! versions still serve.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_tests::facets::{scan_all, text};
use catalog_tests::faults::{start_proxy, Fault};

/// Writes `count` Parquet files under `root` with pyarrow, `year=<y>/part-<i>.parquet`, ten
/// rows each, ids starting at `first` (so that two calls with other `first`s differ).
fn parquet_dir(root: &Path, count: usize, first: i64) {
    let script = r#"
import os, sys
import pyarrow as pa, pyarrow.parquet as pq
root, count, first = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for i in range(count):
    path = os.path.join(root, "year=%d" % (2020 + i % 2), "part-%03d.parquet" % i)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    start = first + 10 * i
    pq.write_table(pa.table({"id": pa.array(range(start, start + 10), pa.int64())}), path)
"#;
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args([
            "-c",
            script,
            root.to_str().unwrap(),
            &count.to_string(),
            &first.to_string(),
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn new_dir(what: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("catalog-{what}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&root).unwrap();
    root
}

fn publish_dir(stack: &Stack, dir: &Path, slug: &str, env: &[(&str, &str)]) -> Output {
    admin(
        stack,
        &[
            "publish",
            dir.to_str().unwrap(),
            "--slug",
            slug,
            "--name",
            "Many files taken down",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "testing",
        ],
        env,
    )
}

/// The bucket's keys under `prefix`.
async fn objects(stack: &Stack, prefix: &str) -> Vec<String> {
    let mut keys = Vec::new();
    let mut pages = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix(prefix)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        keys.extend(
            page.unwrap()
                .contents()
                .iter()
                .filter_map(|o| o.key().map(str::to_owned)),
        );
    }
    keys
}

/// The sort keys of `slug`'s items that start with `prefix` (`M#0000000001#`: version 1's
/// manifest items).
async fn items(stack: &Stack, slug: &str, prefix: &str) -> Vec<String> {
    stack
        .dynamo
        .query()
        .table_name(&stack.target.datasets_table)
        .key_condition_expression("pk = :pk AND begins_with(sk, :p)")
        .expression_attribute_values(":pk", AttributeValue::S(format!("DS#{slug}")))
        .expression_attribute_values(":p", AttributeValue::S(prefix.into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .items()
        .iter()
        .map(|i| text(i, "sk"))
        .collect()
}

fn manifest(v: u64) -> String {
    format!("M#{v:010}#")
}

/// The data route's status for `path_and_query` (under `/api/v1/datasets/`).
async fn data_status(stack: &Stack, path_and_query: &str, key: &str) -> u16 {
    api::data(
        &v2_request(
            &format!("/api/v1/datasets/{path_and_query}"),
            &[("x-api-key", key)],
        ),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await
    .status()
    .as_u16()
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_version_of_many_files_removes_every_object_and_manifest_item_under_it() {
    let stack = Stack::start().await;
    let (first, third) = (new_dir("del-v1"), new_dir("del-v3"));
    parquet_dir(&first, 12, 0);
    parquet_dir(&third, 5, 1000);
    ok(&publish_dir(&stack, &first, "many", &[]));
    ok(&publish(&stack, &sample("city-bikes"), "many"));
    ok(&publish_dir(&stack, &third, "many", &[]));
    let key = create_key(&stack);
    // 12 files and the plan; 5 files and the plan
    assert_eq!(objects(&stack, "datasets/many/v1/").await.len(), 13);
    assert_eq!(objects(&stack, "datasets/many/v3/").await.len(), 6);
    assert!(!items(&stack, "many", &manifest(1)).await.is_empty());
    let v3_objects = objects(&stack, "datasets/many/v3/").await;
    let v3_items = items(&stack, "many", &manifest(3)).await;
    assert!(!v3_items.is_empty());

    // WHEN version 1 (many files, not active) is deleted
    let out = ok(&admin(&stack, &["versions", "delete", "many", "1"], &[]));
    assert!(
        out.contains("many: version 1 deleted, with 13 file(s)"),
        "{out}"
    );
    // THEN no object under its prefix and no manifest item of it remains
    assert!(objects(&stack, "datasets/many/v1/").await.is_empty());
    assert!(items(&stack, "many", &manifest(1)).await.is_empty());
    let listed = ok(&admin(&stack, &["versions", "list", "many"], &[]));
    assert!(
        !listed.contains("v1 ") && listed.contains("  v2") && listed.contains("* v3"),
        "{listed}"
    );
    // AND the others are untouched, version 3 still serves
    assert_eq!(objects(&stack, "datasets/many/v3/").await, v3_objects);
    assert_eq!(items(&stack, "many", &manifest(3)).await, v3_items);
    assert_eq!(objects(&stack, "datasets/many/v2/").await.len(), 1);
    let resp = metadata(&stack, "many").await;
    assert_eq!(resp.status(), 200);
    assert_eq!(json_body(&resp)["version"], 3);

    // WHEN the active version 3 is deleted, activating version 2 (one file) in the same step
    let out = ok(&admin(
        &stack,
        &["versions", "delete", "many", "3", "--activate", "2"],
        &[],
    ));
    assert!(
        out.contains("many: version 3 deleted, with 6 file(s)"),
        "{out}"
    );
    // THEN version 3's objects and manifest items are gone, version 2 serves its file
    assert!(objects(&stack, "datasets/many/v3/").await.is_empty());
    assert!(items(&stack, "many", &manifest(3)).await.is_empty());
    let resp = data(&stack, "many", Some(&key)).await;
    assert_eq!(resp.status(), 200);
    let body = json_body(&resp);
    assert_eq!(body["version"], 2);
    assert_eq!(http_get(body["url"].as_str().unwrap()).await.0, 200);
    // AND deleting it again finds nothing: no version 3; nor can it be activated
    let again = admin(&stack, &["versions", "delete", "many", "3"], &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("no version 3"));
    let activate = admin(&stack, &["versions", "activate", "many", "1"], &[]);
    assert_eq!(activate.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&activate.stderr).contains("no version 1"));
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_dataset_of_many_files_removes_every_object_and_item_and_unpublishing_answers_410_on_the_listing(
) {
    let stack = Stack::start().await;
    let (a, b) = (new_dir("ds-a"), new_dir("ds-b"));
    parquet_dir(&a, 6, 0);
    parquet_dir(&b, 4, 500);
    ok(&publish_dir(&stack, &a, "doomed", &[]));
    ok(&publish_dir(&stack, &b, "doomed", &[]));
    ok(&publish(&stack, &sample("river-levels"), "kept"));
    let key = create_key(&stack);
    assert_eq!(objects(&stack, "datasets/doomed/").await.len(), 12);

    // WHEN the dataset of many files is unpublished
    ok(&admin(&stack, &["datasets", "unpublish", "doomed"], &[]));
    // THEN the metadata and the data route answer 410, the listing form included; its files
    // are kept
    assert_eq!(metadata(&stack, "doomed").await.status(), 410);
    for query in [
        "doomed/data",
        "doomed/data?page_size=2",
        "doomed/data?partition=year%3D2020",
    ] {
        assert_eq!(data_status(&stack, query, &key).await, 410, "{query}");
    }
    assert_eq!(objects(&stack, "datasets/doomed/").await.len(), 12);
    // AND restoring serves it again
    ok(&admin(&stack, &["datasets", "restore", "doomed"], &[]));
    assert_eq!(metadata(&stack, "doomed").await.status(), 200);
    assert_eq!(data_status(&stack, "doomed/data", &key).await, 200);

    // WHEN it is deleted
    let out = ok(&admin(
        &stack,
        &["datasets", "delete", "doomed", "--yes"],
        &[],
    ));
    assert!(
        out.contains("doomed: deleted (2 versions, 12 files)"),
        "{out}"
    );
    // THEN no object under its prefix and no item of its partition remains (manifest items
    // included)
    assert!(objects(&stack, "datasets/doomed/").await.is_empty());
    let left: Vec<String> = scan_all(&stack.dynamo, &stack.target.datasets_table)
        .await
        .iter()
        .filter(|i| text(i, "pk") == "DS#doomed" || text(i, "slug") == "doomed")
        .map(|i| format!("{} {}", text(i, "pk"), text(i, "sk")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // AND the other dataset still serves
    let resp = data(&stack, "kept", Some(&key)).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(
        http_get(json_body(&resp)["url"].as_str().unwrap()).await.0,
        200
    );
}

// The proxy runs on the test's runtime while the CLI runs: two worker threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sweeping_removes_what_unrecorded_versions_left_but_never_the_latest_reservation() {
    let stack = Stack::start().await;
    let (first, other) = (new_dir("sweep-1"), new_dir("sweep-2"));
    parquet_dir(&first, 8, 0);
    parquet_dir(&other, 3, 900);
    // GIVEN a publish cut off after its uploads: DynamoDB refuses the manifest's writes
    let proxy = start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for("BatchWriteItem", Fault::InternalServerError);
    let out = publish_dir(
        &stack,
        &first,
        "swept",
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(objects(&stack, "datasets/swept/v1/").await.len(), 9);
    // AND the same dataset published with other files: version 2, active
    let out = ok(&publish_dir(&stack, &other, "swept", &[]));
    assert!(out.contains("swept version 2"), "{out}");
    let v2 = objects(&stack, "datasets/swept/v2/").await;
    assert_eq!(v2.len(), 4);

    // WHEN the operator sweeps the dataset
    let out = ok(&admin(&stack, &["versions", "sweep", "swept"], &[]));
    // THEN version 1's objects (and any manifest item) are gone; version 2 serves untouched
    assert!(
        out.contains("version 1 (no record) swept: 9 file(s)")
            && out.contains("1 unrecorded version(s) swept"),
        "{out}"
    );
    assert!(objects(&stack, "datasets/swept/v1/").await.is_empty());
    assert!(items(&stack, "swept", &manifest(1)).await.is_empty());
    assert_eq!(objects(&stack, "datasets/swept/v2/").await, v2);
    assert_eq!(json_body(&metadata(&stack, "swept").await)["version"], 2);
    // AND version 1 is fenced: its key holds the withdrawn mark, which no listing shows
    let fenced = items(&stack, "swept", "V#0000000001").await;
    assert_eq!(fenced, ["V#0000000001"]);
    let listed = ok(&admin(&stack, &["versions", "list", "swept"], &[]));
    assert_eq!(listed.lines().count(), 1, "{listed}");

    // WHEN another publish is cut off (version 3, the latest reservation, unrecorded)
    let out = publish_dir(
        &stack,
        &first,
        "swept",
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    assert_eq!(out.status.code(), Some(1));
    let v3 = objects(&stack, "datasets/swept/v3/").await;
    assert_eq!(v3.len(), 9);
    // THEN a sweep leaves it: the same publish run again may resume it
    proxy.set(Fault::Healthy);
    let out = ok(&admin(&stack, &["versions", "sweep", "swept"], &[]));
    assert!(out.contains("0 unrecorded version(s) swept"), "{out}");
    assert_eq!(objects(&stack, "datasets/swept/v3/").await, v3);
    let out = ok(&publish_dir(&stack, &first, "swept", &[]));
    assert!(
        out.contains("swept version 3") && out.contains("0 file(s) uploaded, 8 already there"),
        "{out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_publish_still_uploading_when_its_version_is_swept_can_never_record_it() {
    use catalog::files::{FileInput, Manifest, ManifestInput, RelPath};
    use catalog::records::ActiveVersion;
    use catalog_writer::publish::StagedFiles;

    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("city-bikes"), "fenced"));
    let (writer, slug) = (stack.writer(), Slug::parse("fenced").unwrap());
    let meta = writer.dataset_meta(&slug).await.unwrap().unwrap();
    let built = Manifest::build(ManifestInput {
        files: vec![FileInput {
            path: RelPath::parse("a.parquet").unwrap(),
            split: None,
            rows: 10,
            size: 100,
            sha256: "ab".repeat(32),
            stats: vec![],
        }],
        columns: vec!["id".into()],
        ..Default::default()
    })
    .unwrap();
    let publication = Publication {
        slug: &slug,
        meta: &meta,
        id: None,
        new_only: false,
        now: Utc::now(),
    };
    // WHEN a publish of many files reserves version 2 and, while it uploads, another publish
    // reserves version 3 and the operator sweeps version 2 (no record names it)
    let result = writer
        .publish_files(
            publication,
            |_| async { Ok::<_, WriteError>(false) },
            |resumed| {
                let (writer, slug, meta, built) = (&writer, &slug, &meta, &built);
                async move {
                    let version = resumed.reserved.version;
                    assert_eq!(version, 2);
                    writer
                        .reserve_or_resume(publication, |_| async { Ok::<_, WriteError>(false) })
                        .await?;
                    let swept = writer.unrecorded_versions(slug, [version]).await?;
                    assert_eq!(swept, [2], "the latest reservation is 3");
                    writer.delete_version(slug, version, Utc::now()).await?;
                    Ok(StagedFiles {
                        version: NewVersion {
                            active: ActiveVersion {
                                version,
                                s3_key: format!("datasets/fenced/v{version}/files/"),
                                size: 100,
                                row_count: 10,
                                columns: vec!["id".into()],
                                sha256: built.sha256().to_owned(),
                                published_at: Utc::now(),
                                files: None,
                                ingested: None,
                            },
                            schema_json: "[]".into(),
                        },
                        meta: meta.clone(),
                        manifest: built.clone(),
                        split_schemas: Vec::new(),
                    })
                }
            },
        )
        .await;
    // THEN the publish fails recording its version, and version 1 still serves
    assert!(matches!(result, Err(WriteError::Conflict(_))), "{result:?}");
    let listed = ok(&admin(&stack, &["versions", "list", "fenced"], &[]));
    assert!(
        listed.starts_with("* v1 ") && listed.lines().count() == 1,
        "{listed}"
    );
    assert_eq!(json_body(&metadata(&stack, "fenced").await)["version"], 1);
    // AND the manifest items it wrote after the sweep are what a failed publish leaves: the
    // next sweep removes them
    assert!(!items(&stack, "fenced", &manifest(2)).await.is_empty());
    let out = ok(&admin(&stack, &["versions", "sweep", "fenced"], &[]));
    assert!(out.contains("1 unrecorded version(s) swept"), "{out}");
    assert!(items(&stack, "fenced", &manifest(2)).await.is_empty());
}
