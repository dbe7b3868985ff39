//! The operators' CLI end to end: the compiled `catalog-admin` against the emulators, and the
//! API (the functions' handlers and adapters) reflecting each change on the next request.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use catalog::api;
use catalog::domain::Slug;
use catalog::model::DatasetMeta;
use catalog_tests::{built_binary, http_get, json_body, samples_dir, v2_request, Stack};
use catalog_writer::{Expected, NewVersion, WriteError};
use chrono::Utc;
use serde_json::Value;

/// Runs `catalog-admin` with the stack's configuration and extra environment.
fn admin(stack: &Stack, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(built_binary("catalog-admin"))
        .args(args)
        .envs(stack.function_env())
        .envs(env.iter().copied())
        .output()
        .expect("run catalog-admin")
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "catalog-admin failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sample(name: &str) -> PathBuf {
    samples_dir().join(format!("{name}.parquet"))
}

fn publish(stack: &Stack, file: &Path, slug: &str) -> Output {
    admin(
        stack,
        &[
            "publish",
            file.to_str().unwrap(),
            "--slug",
            slug,
            "--name",
            "Published through the CLI",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "testing",
            "--tag",
            "cli",
        ],
        &[],
    )
}

async fn metadata(stack: &Stack, slug: &str) -> lambda_http::Response<lambda_http::Body> {
    api::metadata(
        &v2_request(&format!("/api/v1/datasets/{slug}"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await
}

async fn data(
    stack: &Stack,
    slug: &str,
    key: Option<&str>,
) -> lambda_http::Response<lambda_http::Body> {
    let headers: Vec<(&str, &str)> = key.map(|k| ("x-api-key", k)).into_iter().collect();
    api::data(
        &v2_request(&format!("/api/v1/datasets/{slug}/data"), &headers),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await
}

async fn list(stack: &Stack) -> Value {
    json_body(
        &api::list(
            &v2_request("/api/v1/datasets", &[]),
            &stack.catalog(),
            Utc::now(),
        )
        .await,
    )
}

fn create_key(stack: &Stack) -> String {
    let out = ok(&admin(
        stack,
        &["keys", "create", "--scope", "read", "--label", "t"],
        &[],
    ));
    out.trim().to_owned()
}

fn inspect(file: &Path) -> Value {
    let out = Command::new(built_binary("catalog-admin"))
        .args(["inspect", file.to_str().unwrap()])
        .output()
        .expect("inspect");
    serde_json::from_slice(&out.stdout).expect("inspect prints JSON")
}

#[tokio::test]
async fn published_dataset_is_served_with_its_statistics_and_downloads() {
    let stack = Stack::start().await;
    let file = sample("air-quality-hourly");
    let printed = ok(&publish(&stack, &file, "air"));
    assert!(printed.contains("published air version 1"), "{printed}");

    let meta = json_body(&metadata(&stack, "air").await);
    let inspected = inspect(&file);
    assert_eq!(meta["schema"], inspected["schema"]);
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
async fn keys_create_list_revoke_take_effect_on_the_next_request() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    let key = create_key(&stack);
    assert!(key.starts_with("dcat_") && key.len() >= 5 + 32, "{key}");
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 200);

    let listed = ok(&admin(&stack, &["keys", "list"], &[]));
    assert!(!listed.contains(&key), "the secret is never listed");
    assert!(listed.contains(&key[..9]), "the prefix is: {listed}");
    let id = listed
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    ok(&admin(&stack, &["keys", "revoke", &id], &[]));
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 401);
    let listed = ok(&admin(&stack, &["keys", "list"], &[]));
    assert!(
        listed.lines().nth(1).unwrap().contains('T'),
        "revoked time shown: {listed}"
    );
}

#[tokio::test]
async fn keyless_set_and_clear_take_effect_on_the_next_request() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "river"));
    assert_eq!(data(&stack, "river", None).await.status(), 401);
    ok(&admin(
        &stack,
        &["keyless", "set", "river", "--until", "+1h"],
        &[],
    ));
    assert_eq!(data(&stack, "river", None).await.status(), 200);
    let item = &list(&stack).await["items"][0];
    assert_eq!(item["keyless"], true, "the list shows the window too");
    ok(&admin(&stack, &["keyless", "clear", "river"], &[]));
    assert_eq!(data(&stack, "river", None).await.status(), 401);
    assert_eq!(
        json_body(&metadata(&stack, "river").await)["keyless_until"],
        Value::Null
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
async fn a_failed_upload_leaves_the_previous_version_serving() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "gauges", Some(&key)).await);

    // S3 unreachable mid-publish (after the statistics, before the version record).
    let dead = format!("http://127.0.0.1:{}", catalog_tests::free_port());
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_S3", &dead)],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("upload"));

    let after = json_body(&data(&stack, "gauges", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let versions = ok(&admin(&stack, &["versions", "list", "gauges"], &[]));
    assert_eq!(
        versions.lines().count(),
        1,
        "no record of the failed version: {versions}"
    );
    // The next publish works and gets a fresh version number.
    let out = ok(&publish(&stack, &sample("city-bikes"), "gauges"));
    assert!(out.contains("version 3"), "{out}");
}

#[tokio::test]
async fn losing_a_publish_race_changes_nothing() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "raced"));
    let writer = stack.writer();
    let slug = Slug::parse("raced").unwrap();
    let meta: DatasetMeta = writer.dataset_meta(&slug).await.unwrap().unwrap();
    let now = Utc::now();
    // Two publishers reserve versions 2 and 3, both having seen version 1 active.
    let a = writer
        .reserve_version(&slug, &meta, None, false, now)
        .await
        .unwrap();
    let b = writer
        .reserve_version(&slug, &meta, None, false, now)
        .await
        .unwrap();
    assert_eq!((a.version, b.version), (2, 3));
    assert_eq!(a.previous, Some(1));
    let version = |n: u64, rows: u64| NewVersion {
        active: catalog::model::ActiveVersion {
            version: n,
            s3_key: format!("datasets/raced/v{n}/x.parquet"),
            size: 1,
            row_count: rows,
            columns: vec!["c".into()],
            sha256: "0".repeat(64),
            published_at: now,
        },
        schema_json: "[]".into(),
    };
    writer.put_version(&slug, &version(2, 222)).await.unwrap();
    writer.put_version(&slug, &version(3, 333)).await.unwrap();
    // B wins; A's activation, still expecting version 1, fails and changes nothing.
    writer
        .activate(&slug, 3, Expected::Version(1), None, now)
        .await
        .unwrap();
    let lost = writer
        .activate(&slug, 2, a.previous.into(), None, now)
        .await;
    assert!(matches!(lost, Err(WriteError::Conflict(_))), "{lost:?}");
    let key = create_key(&stack);
    assert_eq!(
        json_body(&data(&stack, "raced", Some(&key)).await)["row_count"],
        333
    );
}

#[test]
fn every_command_explains_itself_with_an_example() {
    for args in [
        vec!["--help"],
        vec!["keys", "--help"],
        vec!["keyless", "--help"],
        vec!["datasets", "--help"],
        vec!["versions", "--help"],
        vec!["publish", "--help"],
        vec!["inspect", "--help"],
        vec!["keys", "create", "--help"],
        vec!["keys", "list", "--help"],
        vec!["keys", "revoke", "--help"],
        vec!["keyless", "set", "--help"],
        vec!["keyless", "clear", "--help"],
        vec!["datasets", "list", "--help"],
        vec!["datasets", "show", "--help"],
        vec!["versions", "list", "--help"],
        vec!["versions", "activate", "--help"],
    ] {
        let out = Command::new(built_binary("catalog-admin"))
            .args(&args)
            .output()
            .expect("run --help");
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("Example: catalog-admin"), "{args:?}: {help}");
    }
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

/// A TCP proxy to `target` that cuts every connection after `limit` bytes from the client: an
/// upload cut off midway, at the transport under the real SDK client.
async fn cutting_proxy(target: String, limit: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let upstream = async {
                    let mut sent = 0;
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        let n = n.min(limit - sent);
                        if sw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                        sent += n;
                        if sent >= limit {
                            return; // cut: both halves drop
                        }
                    }
                };
                let downstream = tokio::io::copy(&mut sr, &mut cw);
                tokio::select! {
                    _ = upstream => {}
                    _ = downstream => {}
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_cut_off_midway_leaves_the_previous_version_serving() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "cut"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "cut", Some(&key)).await);

    // Every connection to S3 dies after 4 KiB: the upload starts and never completes.
    let s3 = stack.s3_url.trim_start_matches("http://").to_owned();
    let proxy = cutting_proxy(s3, 4096).await;
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "cut",
        ],
        &[("AWS_ENDPOINT_URL_S3", &proxy)],
    );
    assert!(!out.status.success(), "the publish must fail");
    assert!(String::from_utf8_lossy(&out.stderr).contains("upload"));

    let after = json_body(&data(&stack, "cut", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let (code, _) = http_get(after["url"].as_str().unwrap()).await;
    assert_eq!(code, 200, "the previous version still downloads");
    let versions = ok(&admin(&stack, &["versions", "list", "cut"], &[]));
    assert_eq!(
        versions.lines().count(),
        1,
        "no record of the cut version: {versions}"
    );
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix("datasets/cut/v2/")
        .send()
        .await
        .unwrap();
    assert_eq!(
        listed.key_count(),
        Some(0),
        "no object at the new version's key"
    );
}

#[tokio::test]
async fn datasets_list_and_show_and_expiring_keys() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("bird-sightings"), "birds"));
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    let listed = ok(&admin(&stack, &["datasets", "list"], &[]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines[0], "2 datasets");
    assert!(
        lines[1].starts_with("bikes") && lines[2].starts_with("birds"),
        "{listed}"
    );
    let shown: Value =
        serde_json::from_str(&ok(&admin(&stack, &["datasets", "show", "birds"], &[]))).unwrap();
    let meta = json_body(&metadata(&stack, "birds").await);
    for field in [
        "id",
        "name",
        "row_count",
        "column_count",
        "size",
        "schema",
        "insights",
    ] {
        assert_eq!(shown[field], meta[field], "{field}");
    }
    assert_eq!(shown["active_version"], 1);
    let missing = admin(&stack, &["datasets", "show", "nope"], &[]);
    assert_eq!(missing.status.code(), Some(2));

    // A key created to expire in 2 seconds works, then stops working.
    let out = ok(&admin(
        &stack,
        &["keys", "create", "--scope", "read", "--expires", "+2s"],
        &[],
    ));
    let key = out.trim().to_owned();
    assert_eq!(data(&stack, "birds", Some(&key)).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(data(&stack, "birds", Some(&key)).await.status(), 401);
    let past = admin(
        &stack,
        &[
            "keys",
            "create",
            "--scope",
            "read",
            "--expires",
            "2000-01-01T00:00:00Z",
        ],
        &[],
    );
    assert_eq!(past.status.code(), Some(2));
    let scope = admin(&stack, &["keys", "create", "--scope", "write"], &[]);
    assert_eq!(scope.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamodb_failure_at_activation_leaves_the_previous_version_serving() {
    // GIVEN version 1 serving, and DynamoDB failing every transaction (the activation) with
    // 500s behind a proxy, while reads and single writes pass
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "gauges", Some(&key)).await);
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for(
        "TransactWriteItems",
        catalog_tests::faults::Fault::InternalServerError,
    );

    // WHEN a new version is published through it
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );

    // THEN the CLI fails, and version 1 still serves, unchanged
    assert!(!out.status.success(), "publish must fail");
    assert!(
        proxy.take_requests() > 0,
        "the publish went through the proxy"
    );
    let after = json_body(&data(&stack, "gauges", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let meta = json_body(&metadata(&stack, "gauges").await);
    assert_eq!(meta["row_count"], before["row_count"]);
    // AND once DynamoDB is healthy, publishing works again
    proxy.set(catalog_tests::faults::Fault::Healthy);
    let out = ok(&admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    ));
    assert!(out.contains("version 3"), "{out}");
}

/// The data endpoint with a query string, signing URLs valid for `ttl`.
async fn data_query(stack: &Stack, path_and_query: &str, key: &str, ttl: Duration) -> Value {
    let resp = api::data(
        &v2_request(path_and_query, &[("x-api-key", key)]),
        &stack.catalog(),
        &stack.signer(ttl),
        Utc::now(),
    )
    .await;
    let mut body = json_body(&resp);
    body["status"] = resp.status().as_u16().into();
    body
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn a_pinned_version_downloads_the_same_file_after_expiry_and_never_a_newer_one() {
    let stack = Stack::start().await;
    let key = create_key(&stack);
    let first = std::fs::read(sample("river-levels")).unwrap();
    let second = std::fs::read(sample("bird-sightings")).unwrap();
    ok(&publish(&stack, &sample("river-levels"), "pinned"));

    // GIVEN the metadata names version 1 and its digest
    let meta = json_body(&metadata(&stack, "pinned").await);
    assert_eq!(meta["version"], 1);
    assert_eq!(meta["sha256"], sha256_hex(&first));

    // WHEN a client pins it and its URL expires
    let short = Duration::from_secs(1);
    let d = data_query(
        &stack,
        "/api/v1/datasets/pinned/data?version=1",
        &key,
        short,
    )
    .await;
    assert_eq!(d["status"], 200, "{d}");
    assert_eq!(d["version"], 1);
    assert_eq!(d["sha256"], sha256_hex(&first));
    assert_eq!(d["size_bytes"], first.len() as u64);
    assert_eq!(d["published_at"], meta["published_at"]);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (code, _) = http_get(d["url"].as_str().unwrap()).await;
    assert_eq!(code, 403, "S3 refuses the expired URL");

    // THEN refreshing with the same pin gets the same file
    let long = Duration::from_secs(900);
    let again = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    let (code, bytes) = http_get(again["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(sha256_hex(&bytes), sha256_hex(&first));

    // WHEN version 2 is published
    ok(&publish(&stack, &sample("bird-sightings"), "pinned"));
    // THEN the old pin is a 404 naming the active version, never the newer file
    let stale = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    assert_eq!(stale["status"], 404, "{stale}");
    assert_eq!(stale["code"], "not_found");
    assert_eq!(
        stale["error"],
        "version 1 of 'pinned' is not available: its active version is 2"
    );
    // AND the new pin, or no pin, serves version 2 and its digest matches the bytes
    for path in [
        "/api/v1/datasets/pinned/data?version=2",
        "/api/v1/datasets/pinned/data",
    ] {
        let d = data_query(&stack, path, &key, long).await;
        assert_eq!(d["version"], 2, "{path}");
        let (code, bytes) = http_get(d["url"].as_str().unwrap()).await;
        assert_eq!(code, 200);
        assert_eq!(bytes.as_ref(), second.as_slice());
        assert_eq!(d["sha256"], sha256_hex(&bytes));
        assert_eq!(d["size_bytes"], bytes.len() as u64);
    }
    assert_eq!(json_body(&metadata(&stack, "pinned").await)["version"], 2);

    // AND after a rollback, version 1 is served again, byte for byte
    ok(&admin(
        &stack,
        &["versions", "activate", "pinned", "1"],
        &[],
    ));
    let back = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    let (_, bytes) = http_get(back["url"].as_str().unwrap()).await;
    assert_eq!(bytes.as_ref(), first.as_slice());
    let gone = data_query(&stack, "/api/v1/datasets/pinned/data?version=2", &key, long).await;
    assert_eq!(gone["status"], 404);
}
