//! Publishing through the CLI: statistics served, republish and rollback, input checks, races, metadata files, multipart uploads.

use super::*;

#[tokio::test]
async fn published_dataset_is_served_with_its_statistics_and_downloads() {
    let stack = Stack::start().await;
    let file = sample("air-quality-hourly");
    let printed = ok(&publish(&stack, &file, "air"));
    assert!(printed.contains("published air version 1"), "{printed}");

    let meta = json_body(&metadata(&stack, "air").await);
    let inspected = inspect(&file);
    assert_eq!(meta["schema"], inspected["schema"]);
    // Beyond the spec, served as computed: histograms on the numeric columns, top counts on all.
    let columns = meta["schema"].as_array().unwrap();
    assert!(columns.iter().any(|c| c["histogram"]["counts"].is_array()));
    assert!(columns.iter().all(|c| c["top_counts"].is_array()));
    assert!(!printed.contains("histograms left out"), "{printed}");
    assert_eq!(meta["row_count"], inspected["row_count"]);
    assert_eq!(meta["size"], inspected["size"]);
    assert_eq!(meta["name"], "Published through the CLI");
    assert_eq!(meta["tags"], serde_json::json!(["cli"]));

    let key = create_key(&stack);
    let resp = data(&stack, "air", Some(&key)).await;
    assert_eq!(resp.status(), 200);
    let (code, bytes) = http_get(json_body(&resp)["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(bytes.as_ref(), std::fs::read(&file).unwrap().as_slice());
    assert_eq!(list(&stack).await["total"], 1);
}

#[tokio::test]
async fn republish_serves_version_2_keeps_its_place_and_rollback_restores_version_1() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("bird-sightings"), "first"));
    ok(&publish(&stack, &sample("river-levels"), "birds"));
    ok(&publish(&stack, &sample("city-bikes"), "last"));
    let before: Vec<Value> = list(&stack).await["items"].as_array().unwrap().clone();

    // Re-publish with a different file and only a new name: other fields are kept.
    let out = admin(
        &stack,
        &[
            "publish",
            sample("bird-sightings").to_str().unwrap(),
            "--slug",
            "birds",
            "--name",
            "Renamed",
        ],
        &[],
    );
    assert!(ok(&out).contains("published birds version 2"));
    let key = create_key(&stack);
    let v2 = json_body(&data(&stack, "birds", Some(&key)).await);
    assert_eq!(
        v2["row_count"],
        inspect(&sample("bird-sightings"))["row_count"]
    );
    let meta = json_body(&metadata(&stack, "birds").await);
    assert_eq!(meta["name"], "Renamed");
    assert_eq!(meta["license"], "CC0-1.0", "kept from version 1");

    let after = list(&stack).await;
    let order = |items: &[Value]| -> Vec<String> {
        items
            .iter()
            .map(|i| i["slug"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(order(after["items"].as_array().unwrap()), order(&before));
    assert_eq!(after["total"], 3);
    let entry = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["slug"] == "birds")
        .unwrap();
    assert_eq!(
        entry["row_count"], v2["row_count"],
        "the list shows version 2"
    );
    assert_eq!(entry["name"], "Renamed");

    let versions = ok(&admin(&stack, &["versions", "list", "birds"], &[]));
    assert!(
        versions.contains("  v1") && versions.contains("* v2"),
        "{versions}"
    );

    ok(&admin(&stack, &["versions", "activate", "birds", "1"], &[]));
    let v1 = json_body(&data(&stack, "birds", Some(&key)).await);
    assert_eq!(
        v1["row_count"],
        inspect(&sample("river-levels"))["row_count"]
    );
    assert_eq!(
        v1["columns"],
        json_body(&metadata(&stack, "birds").await)["schema"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].clone())
            .collect::<Value>()
    );
}

#[tokio::test]
async fn bad_input_is_refused_with_a_message_and_nothing_is_written() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-bad-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let text = dir.join("not.parquet");
    std::fs::write(&text, "slug,name\na,b\n").unwrap();
    let empty = dir.join("empty.parquet");
    std::fs::write(&empty, "").unwrap();
    let mut truncated = std::fs::read(sample("city-bikes")).unwrap();
    truncated.truncate(truncated.len() / 2);
    let corrupt = dir.join("corrupt.parquet");
    std::fs::write(&corrupt, truncated).unwrap();

    for (file, slug, why) in [
        (text.as_path(), "ok-slug", "Parquet"),
        (empty.as_path(), "ok-slug", "Parquet"),
        (corrupt.as_path(), "ok-slug", "Parquet"),
        (sample("city-bikes").as_path(), "Bad_Slug", "slug"),
        (
            dir.join("missing.parquet").as_path(),
            "ok-slug",
            "cannot read",
        ),
    ] {
        let out = publish(&stack, file, slug);
        assert_eq!(out.status.code(), Some(2), "{}", file.display());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(why), "{}: {err}", file.display());
    }
    // A new dataset needs its descriptive fields.
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "ok-slug",
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--name is required"));
    // A discussion whose path a browser would read as another site, and access settings that
    // are not allowed: refused, naming the discussion or the setting.
    for (name, meta, why) in [
        (
            "backslash.json",
            r#"{"discussions": [{"id": "7", "title": "t", "slug": "s", "path": "/\\evil.example"}]}"#,
            "discussion '7'",
        ),
        (
            "tab.json",
            r#"{"discussions": [{"id": "8", "title": "t", "slug": "s", "path": "/\t/evil.example"}]}"#,
            "discussion '8'",
        ),
        (
            "two-slashes.json",
            r#"{"discussions": [{"id": "9", "title": "t", "slug": "s", "path": "//evil.example"}]}"#,
            "discussion '9'",
        ),
        (
            "form.json",
            r#"{"access": {"level": "approval", "form": [{"name": "Bad Name", "label": "x"}]}}"#,
            "access.form",
        ),
    ] {
        let file = dir.join(name);
        std::fs::write(&file, meta).unwrap();
        let out = admin(
            &stack,
            &[
                "publish",
                sample("city-bikes").to_str().unwrap(),
                "--slug",
                "ok-slug",
                "--metadata",
                file.to_str().unwrap(),
                "--name",
                "n",
                "--license",
                "l",
                "--source",
                "s",
                "--category",
                "c",
            ],
            &[],
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {err}");
        assert!(err.contains(why), "{name}: {err}");
    }

    assert_eq!(list(&stack).await["total"], 0);
    assert_eq!(metadata(&stack, "ok-slug").await.status(), 404);
    let objects = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .send()
        .await
        .unwrap();
    assert_eq!(objects.key_count(), Some(0), "no object uploaded");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn losing_a_publish_race_changes_nothing() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "raced"));
    let writer = stack.writer();
    let slug = Slug::parse("raced").unwrap();
    let meta: DatasetMeta = writer.dataset_meta(&slug).await.unwrap().unwrap();
    let now = Utc::now();
    let version = |n: u64, rows: u64| NewVersion {
        active: catalog::records::ActiveVersion {
            version: n,
            s3_key: format!("datasets/raced/v{n}/x.parquet"),
            size: 1,
            row_count: rows,
            columns: vec!["c".into()],
            sha256: "0".repeat(64),
            published_at: now,
            files: None,
            ingested: None,
        },
        schema_json: "[]".into(),
    };
    let publication = Publication {
        slug: &slug,
        meta: &meta,
        id: None,
        new_only: false,
        now,
    };
    let staged = |n: u64, rows: u64| Staged {
        version: version(n, rows),
        meta: meta.clone(),
    };
    // Two publishers reserve versions 2 and 3, both having seen version 1 active: B runs whole
    // while A is still uploading. B wins; A's activation, still expecting version 1, fails and
    // changes nothing.
    let mut seen = Vec::new();
    let lost = writer
        .publish(publication, |a| {
            seen.push((a.version, a.previous));
            let (writer, seen) = (&writer, &mut seen);
            async move {
                let b = writer
                    .publish(publication, |b| async move {
                        Ok::<_, WriteError>(staged(b.version, 333))
                    })
                    .await?;
                seen.push((b.version, b.previous));
                Ok::<_, WriteError>(staged(a.version, 222))
            }
        })
        .await;
    assert_eq!(seen, [(2, Some(1)), (3, Some(1))]);
    assert!(matches!(lost, Err(WriteError::Conflict(_))), "{lost:?}");
    let key = create_key(&stack);
    assert_eq!(
        json_body(&data(&stack, "raced", Some(&key)).await)["row_count"],
        333
    );
}

#[tokio::test]
async fn new_refuses_a_slug_that_is_taken_and_metadata_comes_from_yaml() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-meta-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let yaml = dir.join("meta.yaml");
    std::fs::write(
        &yaml,
        "name: From YAML\nlicense: ODbL-1.0\nsource: tests\ncategory: transport\n\
         tags: [bikes, yaml]\ndiscussions:\n  - {id: '7', title: Hi, slug: hi, path: /d/hi}\n",
    )
    .unwrap();
    let file = sample("city-bikes");
    let args = |extra: &[&str]| {
        let mut v = vec![
            "publish",
            file.to_str().unwrap(),
            "--slug",
            "bikes",
            "--metadata",
        ];
        v.push(yaml.to_str().unwrap());
        v.extend_from_slice(extra);
        v.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        admin(&stack, &refs, &[])
    };
    ok(&run(args(&["--new"])));
    let meta = json_body(&metadata(&stack, "bikes").await);
    assert_eq!(meta["name"], "From YAML");
    assert_eq!(meta["tags"], serde_json::json!(["bikes", "yaml"]));
    assert_eq!(meta["discussions"][0]["path"], "/d/hi");

    let again = run(args(&["--new"]));
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("already taken"));
    let versions = ok(&admin(&stack, &["versions", "list", "bikes"], &[]));
    assert_eq!(versions.lines().count(), 1, "nothing new was written");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_large_file_goes_up_in_parts_and_downloads_whole() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-large-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("large.parquet");
    // ~24 MiB of incompressible bytes: more than one 16 MiB part.
    let script = "import os, sys, pyarrow as pa, pyarrow.parquet as pq\n\
                  t = pa.table({'blob': [os.urandom(1 << 20) for _ in range(24)], 'n': list(range(24))})\n\
                  pq.write_table(t, sys.argv[1], compression='none')\n";
    let python = std::env::var_os("PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| catalog_tests::repo_root().join(".venv/bin/python"));
    let status = Command::new(python)
        .args(["-c", script])
        .arg(&file)
        .status()
        .expect("python");
    assert!(status.success());
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 16 * 1024 * 1024);
    ok(&publish(&stack, &file, "large"));
    let key = create_key(&stack);
    let d = json_body(&data(&stack, "large", Some(&key)).await);
    let (code, bytes) = http_get(d["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(bytes.len() as u64, size);
    assert_eq!(bytes.as_ref(), std::fs::read(&file).unwrap().as_slice());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A request as it goes on the wire: method and URI, then its headers (names lowercase).
type Request = (String, Vec<(String, String)>);

/// Every request an S3 client sends.
#[derive(Debug, Default, Clone)]
struct Sent(std::sync::Arc<std::sync::Mutex<Vec<Request>>>);

impl aws_smithy_runtime_api::client::interceptors::Intercept for Sent {
    fn name(&self) -> &'static str {
        "sent"
    }

    fn read_before_transmit(
        &self,
        context: &aws_smithy_runtime_api::client::interceptors::context::BeforeTransmitInterceptorContextRef<'_>,
        _: &aws_smithy_runtime_api::client::runtime_components::RuntimeComponents,
        _: &mut aws_smithy_types::config_bag::ConfigBag,
    ) -> Result<(), aws_smithy_runtime_api::box_error::BoxError> {
        let request = context.request();
        let headers = request
            .headers()
            .iter()
            .map(|(k, v)| (k.to_lowercase(), v.to_owned()))
            .collect();
        self.0
            .lock()
            .unwrap()
            .push((format!("{} {}", request.method(), request.uri()), headers));
        Ok(())
    }
}

/// S3 verifies each part of a multipart upload on its side: the upload is created with the
/// SHA-256 algorithm, and each part is sent with the base64 of its own SHA-256, as the bytes of
/// the file at that part's place give it (s3s-fs does not verify part checksums itself, so
/// this checks what S3 receives).
#[tokio::test]
async fn each_part_of_a_large_upload_carries_its_own_sha256_for_s3_to_verify() {
    use sha2::{Digest, Sha256};
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-parts-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("large.parquet");
    let script = "import os, sys, pyarrow as pa, pyarrow.parquet as pq\n\
                  t = pa.table({'blob': [os.urandom(1 << 20) for _ in range(20)], 'n': list(range(20))})\n\
                  pq.write_table(t, sys.argv[1], compression='none')\n";
    let python = std::env::var_os("PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| catalog_tests::repo_root().join(".venv/bin/python"));
    assert!(Command::new(python)
        .args(["-c", script])
        .arg(&file)
        .status()
        .expect("python")
        .success());
    let sent = Sent::default();
    let s3 = aws_sdk_s3::Client::from_conf(
        stack
            .s3
            .config()
            .to_builder()
            .interceptor(sent.clone())
            .build(),
    );
    let publisher = catalog_admin::publish::Publisher {
        writer: stack.writer(),
        s3,
        bucket: stack.target.bucket.clone(),
    };
    let input = catalog_admin::publish::MetaInput {
        name: Some("Large".into()),
        license: Some("CC0-1.0".into()),
        source: Some("tests".into()),
        category: Some("testing".into()),
        ..Default::default()
    };
    publisher
        .publish(
            &file,
            &Slug::parse("parts").unwrap(),
            input,
            false,
            Utc::now(),
        )
        .await
        .expect("publish");

    let bytes = std::fs::read(&file).unwrap();
    let expected: Vec<String> = bytes
        .chunks(catalog_admin::publish::PART_SIZE)
        .map(|part| aws_smithy_types::base64::encode(Sha256::digest(part)))
        .collect();
    assert_eq!(expected.len(), 2, "the file goes up in two parts");
    let sent = sent.0.lock().unwrap().clone();
    let header = |headers: &[(String, String)], name: &str| {
        headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let create = sent
        .iter()
        .find(|(line, _)| line.starts_with("POST") && line.ends_with("?uploads"))
        .expect("CreateMultipartUpload");
    assert_eq!(
        header(&create.1, "x-amz-checksum-algorithm").as_deref(),
        Some("SHA256"),
        "{create:?}"
    );
    let parts: Vec<Option<String>> = sent
        .iter()
        .filter(|(line, _)| line.starts_with("PUT") && line.contains("partNumber="))
        .map(|(_, headers)| header(headers, "x-amz-checksum-sha256"))
        .collect();
    assert_eq!(
        parts,
        expected.into_iter().map(Some).collect::<Vec<_>>(),
        "each part's own SHA-256, in order"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
