//! Statistics computed per file and merged (docs/scaling.md): `catalog-admin stats edges`, one
//! `stats file` process per file (run side by side, as a fan-out's workers would), `stats
//! merge`, against `catalog-admin inspect` of one file holding every row; and the same per-file
//! work over the files staged in S3 (s3s-fs), read by ranged GETs, as the per-file function
//! (`catalog_stats::fanout`) runs it, merged from the bucket; and the state machine of
//! template.yaml against the items that function reads. What only a deployed stack shows (Step
//! Functions running the Distributed Map, the Lambda function's limits) is not tested here.

use serde_json::Value;

use super::*;

/// Writes `whole.parquet` (3,000 rows: int64, double with NaN, ±infinity and nulls, text with
/// some values past 200 characters and nulls, bool, date32, timestamp with a zone,
/// decimal128(12, 3)) and `part-0..6.parquet`, the same rows in 7 files of 500 rows (one
/// empty, one with another row group size), under `dir`.
fn write_table(dir: &Path) -> Vec<PathBuf> {
    let script = r#"
import datetime, decimal, sys
import pyarrow as pa, pyarrow.parquet as pq
root = sys.argv[1]
n = 3000
r = lambda i: (i * 2654435761) % 1000003
def x(i):
    if i % 97 == 5: return None
    if i % 97 == 6: return float("nan")
    if i % 211 == 7: return float("inf")
    return (r(i) - 500000) / 1000
table = pa.table({
    "id": pa.array([i * 3 - 500 for i in range(n)], pa.int64()),
    "few": pa.array([None if i % 7 == 3 else r(i) % 11 for i in range(n)], pa.int32()),
    "x": pa.array([x(i) for i in range(n)], pa.float64()),
    "name": pa.array([None if i % 13 == 0 else ("z" * 230 + str(i % 3) if i % 50 == 1 else "name-%d" % (r(i) % 400)) for i in range(n)], pa.string()),
    "flag": pa.array([None if i % 5 == 0 else r(i) % 3 == 0 for i in range(n)], pa.bool_()),
    "day": pa.array([datetime.date(2022, 1, 1) + datetime.timedelta(days=r(i) % 400) for i in range(n)], pa.date32()),
    "ts": pa.array([datetime.datetime(2023, 11, 14, tzinfo=datetime.timezone.utc) + datetime.timedelta(microseconds=r(i) * 1000003) for i in range(n)], pa.timestamp("us", tz="UTC")),
    "price": pa.array([decimal.Decimal(r(i) - 400000).scaleb(-3) for i in range(n)], pa.decimal128(12, 3)),
})
pq.write_table(table, root + "/whole.parquet")
cuts = [0, 0, 500, 1000, 1500, 2000, 2500, 3000]
for p in range(7):
    part = table.slice(cuts[p], cuts[p + 1] - cuts[p])
    pq.write_table(part, root + "/part-%d.parquet" % p, row_group_size=(128 if p == 3 else None))
"#;
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args(["-c", script, dir.to_str().unwrap()])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "writing the files failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (0..7)
        .map(|p| dir.join(format!("part-{p}.parquet")))
        .collect()
}

/// Puts the file at `path` as `key` in the stack's bucket.
async fn put(stack: &Stack, key: &str, path: impl AsRef<Path>) {
    stack
        .s3
        .put_object()
        .bucket(&stack.target.bucket)
        .key(key)
        .body(std::fs::read(path).unwrap().into())
        .send()
        .await
        .unwrap();
}

fn run(args: &[&str], env: &[(String, String)]) -> String {
    ok(&run_admin(
        admin_command()
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v))),
    ))
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Equal, but for `mean` and `std`, which agree to 1e-12 (a merge against one pass).
fn assert_same_columns(got: &[Value], expected: &[Value]) {
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        for field in ["mean", "std"] {
            match (g[field].as_f64(), e[field].as_f64()) {
                (Some(a), Some(b)) => {
                    assert!(
                        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0),
                        "{g}"
                    )
                }
                (a, b) => assert_eq!(a, b, "{}: {field}", g["name"]),
            }
        }
        let strip = |c: &Value| {
            let mut c = c.clone();
            c["mean"] = Value::Null;
            c["std"] = Value::Null;
            c
        };
        assert_eq!(strip(g), strip(e));
    }
}

/// `stats edges`, then a `stats file` process per file, all at once, then `stats merge` give
/// the column statistics `inspect` prints for one file of every row: histograms, medians,
/// top values and the first file's sample values included, none approximate.
#[test]
fn per_file_statistics_merged_are_those_of_one_file() {
    let dir = std::env::temp_dir().join(format!("catalog-scale-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let parts = write_table(&dir);
    let names: Vec<&str> = parts.iter().map(|p| p.to_str().unwrap()).collect();
    let edges = dir.join("edges.json");
    let mut args = vec!["stats", "edges"];
    args.extend(&names);
    args.extend(["--out", edges.to_str().unwrap()]);
    run(&args, &[]);

    // One worker per file, side by side.
    let workers: Vec<(std::process::Child, PathBuf)> = parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let out = dir.join(format!("partial-{i}.json"));
            let child = admin_command()
                .args(["stats", "file", part.to_str().unwrap(), "--edges"])
                .arg(&edges)
                .arg("--out")
                .arg(&out)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut partials = Vec::new();
    for (child, out) in workers {
        let done = child.wait_with_output().unwrap();
        ok(&done);
        assert!(std::fs::metadata(&out).unwrap().len() < 64 << 10);
        partials.push(out);
    }
    let merged_path = dir.join("stats.json");
    let mut args = vec!["stats", "merge"];
    let partial_names: Vec<&str> = partials.iter().map(|p| p.to_str().unwrap()).collect();
    args.extend(&partial_names);
    args.extend(["--out", merged_path.to_str().unwrap()]);
    run(&args, &[]);
    let merged = read(&merged_path);

    let inspected: Value = serde_json::from_str(&run(
        &["inspect", dir.join("whole.parquet").to_str().unwrap()],
        &[],
    ))
    .unwrap();
    assert_eq!(merged["row_count"], 3_000);
    assert_eq!(merged["row_count"], inspected["row_count"]);
    let columns = merged["columns"].as_array().unwrap();
    assert_same_columns(columns, inspected["schema"].as_array().unwrap());
    assert_eq!(merged["estimates"], Value::Array(vec![]));
    // Not vacuous.
    let id = &columns[0];
    assert_eq!(
        id["sample_values"],
        serde_json::json!([-500, -497, -494, -491, -488])
    );
    for c in columns {
        assert_eq!(c["approximate"], false, "{c}");
    }
    for name in ["id", "few", "x", "day", "ts", "price"] {
        let c = columns.iter().find(|c| c["name"] == name).unwrap();
        assert!(c["histogram"]["counts"].is_array(), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same per-file work over the files staged in the bucket (s3s-fs), read by ranged GETs:
/// the same edges, partials and merged statistics as from disk.
#[tokio::test(flavor = "multi_thread")]
async fn per_file_statistics_read_staged_objects() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-scale-s3-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let parts = write_table(&dir);
    let bucket = stack.target.bucket.clone();
    let mut urls = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let key = format!("staging/scale/part-{i}.parquet");
        put(&stack, &key, part).await;
        urls.push(format!("s3://{bucket}/{key}"));
    }
    // What a Spark job leaves beside its files, which no version takes: `stats edges` of the
    // prefix, the per-file work and `stage publish` all leave them out.
    for (key, part) in [
        ("staging/scale/_SUCCESS", &parts[0]),
        ("staging/scale/_temporary/0/part-1.parquet", &parts[1]),
    ] {
        put(&stack, key, part).await;
    }
    let env = stack.function_env();
    let file = |name: &str| dir.join(name).to_str().unwrap().to_owned();
    let (local_edges, s3_edges) = (file("edges.json"), file("edges-s3.json"));
    let mut args: Vec<&str> = vec!["stats", "edges"];
    args.extend(parts.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--out", &local_edges]);
    run(&args, &[]);
    let mut args: Vec<&str> = vec!["stats", "edges"];
    args.extend(urls.iter().map(String::as_str));
    args.extend(["--out", &s3_edges]);
    run(&args, &env);
    let (mut a, b) = (read(Path::new(&local_edges)), read(Path::new(&s3_edges)));
    assert_eq!(b["files"][0], urls[0].as_str());
    // The prefix stands for its .parquet objects, in key order.
    let by_prefix = file("edges-prefix.json");
    let prefix = format!("s3://{bucket}/staging/scale/");
    run(&["stats", "edges", &prefix, "--out", &by_prefix], &env);
    assert_eq!(read(Path::new(&by_prefix)), b);
    a["files"] = b["files"].clone();
    assert_eq!(a, b);

    let (mut local, mut remote) = (Vec::new(), Vec::new());
    for (i, (part, url)) in parts.iter().zip(&urls).enumerate() {
        let (l, r) = (
            file(&format!("local-{i}.json")),
            file(&format!("s3-{i}.json")),
        );
        run(
            &[
                "stats",
                "file",
                part.to_str().unwrap(),
                "--edges",
                &local_edges,
                "--out",
                &l,
            ],
            &[],
        );
        run(
            &["stats", "file", url, "--edges", &s3_edges, "--out", &r],
            &env,
        );
        let (mut a, b) = (read(Path::new(&l)), read(Path::new(&r)));
        assert_eq!(b["file"], url.as_str());
        // Read from S3, a partial carries the ETag its reads were conditioned on.
        assert!(b["etag"].as_str().is_some_and(|e| e.len() > 2), "{b}");
        assert!(a.get("etag").is_none(), "{a}");
        a["file"] = b["file"].clone();
        a["etag"] = b["etag"].clone();
        assert_eq!(a, b, "{url}");
        local.push(l);
        remote.push(r);
    }
    let merged = |partials: &[String], out: &str| {
        let mut args: Vec<&str> = vec!["stats", "merge"];
        args.extend(partials.iter().map(String::as_str));
        args.extend(["--out", out]);
        run(&args, &[]);
        read(Path::new(out))
    };
    let from_disk = merged(&local, &file("merged.json"));
    let from_s3 = merged(&remote, &file("merged-s3.json"));
    assert_eq!(from_disk, from_s3);
    assert_eq!(from_s3["row_count"], 3_000);

    // The per-file function's work (catalog_stats::fanout, as the Distributed Map's items run
    // it): the edges put under stats/, one item per staged file (no size or ETag given: a
    // HeadObject asks them), each partial written under the results prefix by its path...
    put(&stack, "stats/scale/edges.json", &s3_edges).await;
    // One item per listed object, as the map's ItemReader lists them (ListObjectsV2: key, size
    // and ETag, S3's quoted form); every other one without size and ETag, which a HeadObject
    // then gives. The objects no version takes are skipped, unread.
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&bucket)
        .prefix("staging/scale/")
        .send()
        .await
        .unwrap();
    let mut written = Vec::new();
    for (n, object) in listed.contents().iter().enumerate() {
        let key = object.key().unwrap();
        let mut item = serde_json::json!({
            "prefix": "staging/scale/", "key": key,
            "edges": "stats/scale/edges.json", "results": "stats/scale/partials/",
        });
        if n % 2 == 0 {
            // s3s-fs lists no ETag (S3 does): the object's own, as S3 would list it.
            let etag = match object.e_tag() {
                Some(etag) => etag.to_owned(),
                None => stack
                    .s3
                    .head_object()
                    .bucket(&bucket)
                    .key(key)
                    .send()
                    .await
                    .unwrap()
                    .e_tag()
                    .unwrap()
                    .to_owned(),
            };
            assert!(etag.starts_with('"'), "{etag}");
            item["size"] = serde_json::json!(object.size().unwrap());
            item["etag"] = serde_json::json!(etag);
        }
        let task = catalog_stats::fanout::FileTask::parse(item).unwrap();
        match catalog_stats::fanout::run(&stack.s3, &bucket, &task)
            .await
            .unwrap()
        {
            Some(done) => {
                assert!(done.read_requests > 0 && done.read_bytes > 0, "{done:?}");
                written.push(done.partial);
            }
            None => assert!(key.contains("/_"), "{key} skipped"),
        }
    }
    let expected: Vec<String> = (0..parts.len())
        .map(|i| format!("stats/scale/partials/part-{i}.parquet.json"))
        .collect();
    assert_eq!(written, expected);
    // ...which `stats merge s3://…/` reads back in key order: the statistics of the same
    // partials merged from disk.
    let from_prefix = file("merged-prefix.json");
    let prefix = format!("s3://{bucket}/stats/scale/partials/");
    run(&["stats", "merge", &prefix, "--out", &from_prefix], &env);
    assert_eq!(read(Path::new(&from_prefix)), from_s3);

    // `stage publish --partials` takes those partials as the version's statistics: the same
    // schema statistics (mean and std to 1e-12), rows, files and manifest as the version
    // published in place reading every file.
    let staged = format!("s3://{bucket}/staging/scale/");
    let publish = |slug: &str, extra: &[&str]| {
        let mut args = vec!["stage", "publish", staged.as_str(), "--slug", slug];
        args.extend_from_slice(&META);
        args.extend_from_slice(extra);
        admin(&stack, &args, &[])
    };
    // The number of ranged GETs each publish made, as it says.
    let gets = |out: &Output| -> u64 {
        let said = ok(out);
        let before = said.split(" ranged GETs").next().unwrap_or_default();
        before
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("{said}"))
    };
    let read_every_file = gets(&publish("scale-read", &[]));
    let with_partials = gets(&publish("scale-merged", &["--partials", &prefix]));
    // The footers alone, against the footers and every column's pages.
    assert!(
        with_partials * 2 < read_every_file,
        "{with_partials} GETs with the partials, {read_every_file} reading every file"
    );
    let (read_here, merged_there) = (
        json_body(&metadata(&stack, "scale-read").await),
        json_body(&metadata(&stack, "scale-merged").await),
    );
    assert_eq!(merged_there["row_count"], 3_000);
    assert_same_columns(
        merged_there["schema"].as_array().unwrap(),
        read_here["schema"].as_array().unwrap(),
    );
    for field in ["row_count", "size", "sha256", "files"] {
        assert_eq!(merged_there[field], read_here[field], "{field}");
    }
    // A staged object replaced since its partial was computed is refused by name, and so is a
    // prefix of partials that lacks one of the files; nothing is published.
    put(&stack, "staging/scale/part-1.parquet", &parts[2]).await;
    let out = publish("scale-changed", &["--partials", &prefix]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "s3://{bucket}/staging/scale/part-1.parquet is not the object its partial \
             statistics were computed over"
        )),
        "{stderr}"
    );
    let out = publish("scale-changed", &["--partials", &remote[0]]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "no partial statistics of s3://{bucket}/staging/scale/part-1.parquet"
        )),
        "{stderr}"
    );
    assert_eq!(metadata(&stack, "scale-changed").await.status(), 404);
    // Edges that are not there: refused, naming them, before the file is read.
    let other = catalog_stats::fanout::FileTask::parse(serde_json::json!({
        "prefix": "staging/", "key": "staging/scale/part-0.parquet",
        "edges": "stats/scale/missing.json", "results": "stats/scale/partials/",
    }))
    .unwrap();
    let refused = catalog_stats::fanout::run(&stack.s3, &bucket, &other)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("stats/scale/missing.json") && refused.contains("NoSuchKey"),
        "{refused}"
    );
    // A bad address is refused by name.
    let out = run_admin(
        admin_command()
            .args(["stats", "file", "s3://no-key", "--edges", &s3_edges])
            .envs(env.iter().map(|(k, v)| (k, v))),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("s3://no-key: not s3://bucket/key"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A JSONPath of the state machine's ItemSelector (`$.name` in the execution's input,
/// `$$.Map.Item.Value.Name` in the listed object), resolved as Step Functions does.
fn resolve(path: &str, input: &Value, listed: &Value) -> Value {
    if let Some(field) = path.strip_prefix("$$.Map.Item.Value.") {
        return listed[field].clone();
    }
    let field = path.strip_prefix("$.").expect("a path of the input");
    input[field].clone()
}

/// The Distributed Map in template.yaml hands the per-file function the item it reads: each
/// ItemSelector field, resolved against an execution's input and an object of the
/// ListObjectsV2 listing, makes a `FileTask` the function accepts (the same key, size and ETag);
/// only `.parquet` objects reach the function; the function is the `catalog-file-stats`
/// binary, reads the staged files and writes only under `stats/`.
#[test]
fn the_state_machine_hands_each_file_the_item_the_function_reads() {
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let json = |v: &serde_norway::Value| serde_json::to_value(v).unwrap();
    let machine = json(&template["Resources"]["FileStatsStateMachine"]["Properties"]);
    let map = &machine["Definition"]["States"]["PerFile"];
    assert_eq!(map["Type"], "Map");
    assert_eq!(
        map["ItemProcessor"]["ProcessorConfig"]["Mode"],
        "DISTRIBUTED"
    );
    // The function may run up to 15 minutes: longer than an EXPRESS child execution's 5.
    assert_eq!(
        map["ItemProcessor"]["ProcessorConfig"]["ExecutionType"],
        "STANDARD"
    );
    assert_eq!(
        map["ItemReader"]["Resource"],
        "arn:aws:states:::s3:listObjectsV2"
    );
    assert_eq!(map["ItemReader"]["Parameters"]["Prefix.$"], "$.prefix");

    let input = serde_json::json!({
        "prefix": "staging/sales/", "edges": "stats/sales/edges.json",
        "results": "stats/sales/partials/",
    });
    let listed = serde_json::json!({
        "Key": "staging/sales/year=2024/part-0.parquet", "Size": 1_073_741_824_u64,
        "Etag": "\"9b2cf535f27731c974343645a3985328\"",
        "LastModified": "2026-11-29T03:00:00Z", "StorageClass": "STANDARD",
    });
    let mut item = serde_json::Map::new();
    for (field, path) in map["ItemSelector"].as_object().unwrap() {
        let field = field.strip_suffix(".$").expect("every field a path");
        item.insert(
            field.to_owned(),
            resolve(path.as_str().unwrap(), &input, &listed),
        );
    }
    let task = catalog_stats::fanout::FileTask::parse(Value::Object(item.clone()))
        .unwrap_or_else(|e| panic!("{e}: {item:?}"));
    assert_eq!(task.key, "staging/sales/year=2024/part-0.parquet");
    assert_eq!(task.size, Some(1_073_741_824));
    assert_eq!(
        task.etag.as_deref(),
        Some("\"9b2cf535f27731c974343645a3985328\"")
    );
    assert_eq!(
        task.partial_key(),
        "stats/sales/partials/year=2024/part-0.parquet.json"
    );

    // Every listed object goes whole to the function (which skips those no version takes);
    // S3's failures, by the name the function gives them, are tried again, nothing else of
    // the function's.
    let processor = &map["ItemProcessor"]["States"];
    let partial = &processor[map["ItemProcessor"]["StartAt"].as_str().unwrap()];
    assert_eq!(partial["Type"], "Task");
    assert_eq!(partial["Resource"], "arn:aws:states:::lambda:invoke");
    assert_eq!(
        partial["Parameters"]["FunctionName"],
        "${FileStatsFunctionArn}"
    );
    assert_eq!(partial["Parameters"]["Payload.$"], "$");
    let retried: Vec<&str> = partial["Retry"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|r| r["ErrorEquals"].as_array().unwrap())
        .filter_map(Value::as_str)
        .filter(|e| e.starts_with("FileStats."))
        .collect();
    let s3_failure = catalog_stats::fanout::FanOutError::S3(String::new());
    assert_eq!(retried, [s3_failure.kind()]);
    assert_eq!(
        machine["DefinitionSubstitutions"]["FileStatsFunctionArn"],
        serde_json::json!({"!GetAtt": "CatalogFileStatsFunction.Arn"})
    );

    let function = json(&template["Resources"]["CatalogFileStatsFunction"]);
    assert_eq!(
        function["Metadata"]["BuildProperties"]["Binary"],
        "catalog-file-stats"
    );
    assert_eq!(function["Properties"]["Timeout"], 900);
    // Every permission of the function's role, as (action, resource) pairs, over every policy
    // and statement: reads of staging/ and stats/, writes of stats/ only, and nothing else.
    let list = |v: &Value| match v {
        Value::Array(all) => all.clone(),
        one => vec![one.clone()],
    };
    let mut granted = std::collections::BTreeSet::new();
    for policy in function["Properties"]["Policies"].as_array().unwrap() {
        for statement in policy["Statement"].as_array().expect("inline statements") {
            assert_eq!(statement["Effect"], "Allow");
            for action in list(&statement["Action"]) {
                for resource in list(&statement["Resource"]) {
                    granted.insert((action.as_str().unwrap().to_owned(), resource.to_string()));
                }
            }
        }
    }
    let object =
        |prefix: &str| serde_json::json!({ "!Sub": format!("${{DataBucket.Arn}}/{prefix}*") });
    let (staging, results) = (
        catalog_stats::fanout::STAGING,
        catalog_stats::fanout::RESULTS,
    );
    let expected: std::collections::BTreeSet<(String, String)> = [
        ("s3:GetObject", object(staging)),
        ("s3:GetObject", object(results)),
        (
            "s3:ListBucket",
            serde_json::json!({ "!GetAtt": "DataBucket.Arn" }),
        ),
        ("s3:PutObject", object(results)),
    ]
    .into_iter()
    .map(|(a, r)| (a.to_owned(), r.to_string()))
    .collect();
    assert_eq!(granted, expected);
}

/// `stage publish --partials` of a version with splits is refused, nothing published: a
/// split's histograms have the bins of its own bounds, which the version's partials (counted
/// into the version's bins) cannot give; the same version publishes without `--partials`.
#[tokio::test(flavor = "multi_thread")]
async fn partials_refuse_a_version_with_splits() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-scale-splits-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let parts = write_table(&dir);
    let bucket = stack.target.bucket.clone();
    let mut keys = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let split = if i < 4 { "train" } else { "test" };
        let key = format!("staging/splits/{split}/part-{i}.parquet");
        put(&stack, &key, part).await;
        keys.push(key);
    }
    let env = stack.function_env();
    let edges = dir.join("edges.json");
    let staged = format!("s3://{bucket}/staging/splits/");
    run(
        &["stats", "edges", &staged, "--out", edges.to_str().unwrap()],
        &env,
    );
    put(&stack, "stats/splits/edges.json", &edges).await;
    for key in &keys {
        let task = catalog_stats::fanout::FileTask::parse(serde_json::json!({
            "prefix": "staging/splits/", "key": key,
            "edges": "stats/splits/edges.json", "results": "stats/splits/partials/",
        }))
        .unwrap();
        catalog_stats::fanout::run(&stack.s3, &bucket, &task)
            .await
            .unwrap();
    }
    let publish = |slug: &str, extra: &[&str]| {
        let mut args = vec!["stage", "publish", staged.as_str(), "--slug", slug];
        args.extend_from_slice(&META);
        args.extend_from_slice(extra);
        admin(&stack, &args, &[])
    };
    let partials = format!("s3://{bucket}/stats/splits/partials/");
    let out = publish("splits-merged", &["--partials", &partials]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--partials: a version with splits needs each split's histograms"),
        "{stderr}"
    );
    assert_eq!(metadata(&stack, "splits-merged").await.status(), 404);
    ok(&publish("splits-read", &[]));
    let _ = std::fs::remove_dir_all(&dir);
}
