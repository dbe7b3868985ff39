//! The rows API over a version of many files, on the real stack (published with the real CLI,
//! the manifest in DynamoDB on moto, the files on s3s-fs read with ranged GETs): every page
//! against pyarrow reading the files in manifest order (split, then path) with their Hive
//! partition values; pages across a file's end and a manifest chunk's end; `split`; what a page
//! costs at offset 0 and near the end; the gate.

use std::path::{Path, PathBuf};
use std::process::Command;

use catalog_tests::{admin_command, run_admin, tool, Call, Wire};

use super::*;

fn python() -> PathBuf {
    tool("PYTHON", ".venv/bin/python")
}

/// A file to write: its path under the root, its first `id`, its rows, and whether its columns
/// are written in another order.
type Spec<'a> = (&'a str, i64, u64, bool);

/// Writes the files with pyarrow: `id` (int64) from the first id, `value` (double, `id / 4`,
/// null every seventh row) and `label` (string), in that order or reversed.
fn write_files(root: &Path, files: &[Spec]) {
    let script = r#"
import json, os, sys
import pyarrow as pa, pyarrow.parquet as pq
root, files = sys.argv[1], json.loads(sys.argv[2])
for rel, start, rows, reordered in files:
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    ids = list(range(start, start + rows))
    columns = {"id": pa.array(ids, pa.int64()),
               "value": pa.array([None if i % 7 == 0 else i / 4 for i in ids], pa.float64()),
               "label": pa.array(["label %d" % i for i in ids], pa.string())}
    if reordered:
        columns = dict(reversed(list(columns.items())))
    pq.write_table(pa.table(columns), path, row_group_size=4)
"#;
    let spec = serde_json::to_string(files).unwrap();
    let out = Command::new(python())
        .args(["-c", script, root.to_str().unwrap(), &spec])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "writing the files failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// pyarrow's reading of the files under `root` (each with `pq.read_table`, its Hive partition
/// values added as columns), concatenated in manifest order: by split (the top-level directory
/// when `splits`), then path, compared as bytes; only `split`'s files when given. Each row as
/// a JSON object.
fn pyarrow_rows(root: &Path, splits: bool, split: Option<&str>) -> Vec<Value> {
    let script = r#"
import json, os, sys
import pyarrow.parquet as pq
root, splits, only = sys.argv[1], sys.argv[2] == "1", sys.argv[3] or None
files = []
for d, _, names in os.walk(root):
    for n in names:
        if n.endswith(".parquet"):
            rel = os.path.relpath(os.path.join(d, n), root).replace(os.sep, "/")
            split = rel.split("/")[0] if splits else ""
            files.append((split.encode(), rel.encode(), split, rel))
rows = []
for _, _, split, rel in sorted(files):
    if only is not None and split != only:
        continue
    parts = {}
    for seg in rel.split("/")[:-1]:
        if "=" in seg:
            k, v = seg.split("=", 1)
            parts[k] = int(v)
    for row in pq.read_table(os.path.join(root, rel)).to_pylist():
        row.update(parts)
        rows.append(row)
print(json.dumps(rows))
"#;
    let out = Command::new(python())
        .args([
            "-c",
            script,
            root.to_str().unwrap(),
            if splits { "1" } else { "0" },
            split.unwrap_or(""),
        ])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("pyarrow's rows as JSON")
}

fn publish_dir(g: &Given, root: &Path, slug: &str) {
    let out = run_admin(admin_command().envs(g.stack.function_env()).args([
        "publish",
        root.to_str().unwrap(),
        "--slug",
        slug,
        "--name",
        slug,
        "--license",
        "CC0-1.0",
        "--source",
        "tests",
        "--category",
        "testing",
    ]));
    assert!(
        out.status.success(),
        "publish {slug}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn temp_root(what: &str) -> PathBuf {
    let root = std::env::temp_dir().join(format!("catalog-{what}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&root).unwrap();
    root
}

/// Asserts that `body` (a 200's) is rows `offset..` of `expected`, as many as `length` allows,
/// with the row indexes, total and next offset that go with them.
fn assert_page(body: &Value, expected: &[Value], offset: u64, length: u64, what: &str) {
    let total = expected.len() as u64;
    let end = offset
        .saturating_add(length)
        .min(total)
        .max(offset.min(total));
    let rows = body["rows"].as_array().expect("rows");
    assert_eq!(rows.len() as u64, end - offset.min(total), "{what}: {body}");
    assert_eq!(body["length"], rows.len(), "{what}");
    assert_eq!(body["offset"], offset, "{what}");
    assert_eq!(body["num_rows_total"], total, "{what}");
    let next = if !rows.is_empty() && end < total {
        serde_json::json!(end)
    } else {
        Value::Null
    };
    assert_eq!(body["next_offset"], next, "{what}");
    for (i, row) in rows.iter().enumerate() {
        let at = offset + i as u64;
        assert_eq!(row["row_idx"], at, "{what}");
        assert_eq!(row["row"], expected[at as usize], "{what}: row {at}");
        assert_eq!(row["truncated_cells"], serde_json::json!([]), "{what}");
    }
}

/// Files of 7, 13, 1, 40, 25, 9 and 30 rows in two splits, partitioned by year; one written
/// with its columns in the other order.
const SPLIT_FILES: [Spec; 7] = [
    ("test/year=2024/part-0.parquet", 0, 7, false),
    ("test/year=2025/part-0.parquet", 100, 13, true),
    ("test/year=2025/part-1.parquet", 200, 1, false),
    ("train/year=2023/part-0.parquet", 300, 40, false),
    ("train/year=2024/part-0.parquet", 400, 25, false),
    ("train/year=2024/part-1.parquet", 500, 9, true),
    ("train/year=2025/part-0.parquet", 600, 30, false),
];

#[tokio::test(flavor = "multi_thread")]
async fn pages_of_a_many_file_version_equal_pyarrow_over_a_split_or_the_whole_version() {
    // GIVEN a version of 7 files in two splits, partitioned by year, published with the CLI
    let g = given().await;
    let root = temp_root("rows-many");
    write_files(&root, &SPLIT_FILES);
    publish_dir(&g, &root, "many-rows");
    let key = [("x-api-key", READ_KEY)];
    for split in [None, Some("train"), Some("test")] {
        let expected = pyarrow_rows(&root, true, split);
        let total = expected.len() as u64;
        assert_eq!(
            total,
            match split {
                None => 125,
                Some("train") => 104,
                _ => 21,
            }
        );
        let param = split.map(|s| format!("&split={s}")).unwrap_or_default();
        // WHEN pages are read at the start, within a file, across one file's end and several
        // (a one-row file among them), at the end and past it
        for (offset, length) in [
            (0, 100),
            (0, 1),
            (3, 5),
            (5, 4),
            (6, 10),
            (18, 30),
            (20, 100),
            (total / 2, 37),
            (total - 1, 100),
            (total, 100),
            (total + 7, 3),
        ] {
            let path =
                format!("/api/v1/datasets/many-rows/rows?offset={offset}&length={length}{param}");
            let resp = g.rows_answer(&path, &key).await;
            let body = json_body(&resp);
            assert_eq!(resp.status(), 200, "{path}: {body}");
            // THEN the rows are pyarrow's, in manifest order, the partition column included,
            // numbered over the split (or the version)
            assert_page(&body, &expected, offset, length, &path);
            // AND the columns are the files' (as the first file has them) then the partition
            // column, typed as the metadata types them
            let columns: Vec<(String, String)> = body["columns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| {
                    (
                        c["name"].as_str().unwrap().to_owned(),
                        c["type"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names.len(), 4, "{path}: {body}");
            assert_eq!(names[3], "year", "{path}");
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, ["id", "label", "value", "year"], "{path}");
            for (name, dtype) in &columns {
                let want = match name.as_str() {
                    "id" | "year" => "int64",
                    "value" => "double",
                    _ => "string",
                };
                assert_eq!(dtype, want, "{path}: {name}");
            }
        }
    }

    // AND a split the version does not have is an empty page of no rows in all
    for split in ["validation", "Train", "no_such_split", ""] {
        let path = format!("/api/v1/datasets/many-rows/rows?split={split}");
        let resp = g.rows_answer(&path, &key).await;
        let body = json_body(&resp);
        assert_eq!(resp.status(), 200, "{path}: {body}");
        assert_eq!(body["rows"], serde_json::json!([]), "{path}");
        assert_eq!(body["num_rows_total"], 0, "{path}");
        assert_eq!(body["next_offset"], Value::Null, "{path}");
    }
    // AND `split` twice is a 400, as any parameter given twice
    let resp = g
        .rows_answer(
            "/api/v1/datasets/many-rows/rows?split=train&split=test",
            &key,
        )
        .await;
    assert_eq!(resp.status(), 400);
    assert_eq!(json_body(&resp)["code"], "bad_request");

    // AND a version of one file answers as before, and a split names nothing there
    let one = json_body(
        &g.rows_answer("/api/v1/datasets/air-quality-hourly/rows?length=3", &key)
            .await,
    );
    assert_eq!(one["length"], 3);
    let resp = g
        .rows_answer("/api/v1/datasets/air-quality-hourly/rows?split=train", &key)
        .await;
    let body = json_body(&resp);
    assert_eq!(resp.status(), 200, "{body}");
    assert_eq!(body["rows"], serde_json::json!([]));
    assert_eq!(body["num_rows_total"], 0);
    assert_eq!(body["version"], one["version"]);

    // AND the gate is the data endpoint's: no key 401, a key limited to other datasets 403
    let resp = g
        .rows_answer("/api/v1/datasets/many-rows/rows?split=train", &[])
        .await;
    assert_eq!(resp.status(), 401);
    assert_eq!(json_body(&resp)["code"], "missing_key");
    let other = "dcat_integration_other_key_0000000000000000000000000000000000000";
    let mut limited = catalog::keys::NewKey::for_secret(
        other,
        vec![catalog::keys::Scope::Read],
        "rows",
        Utc::now(),
        None,
    );
    limited.datasets = Some(vec![
        catalog::input::Slug::parse("air-quality-hourly").unwrap()
    ]);
    g.stack.writer().put_key(&limited).await.expect("put key");
    let resp = g
        .rows_answer(
            "/api/v1/datasets/many-rows/rows?split=train",
            &[("x-api-key", other)],
        )
        .await;
    assert_eq!(resp.status(), 403, "{}", json_body(&resp));
    let resp = g
        .rows_answer(
            "/api/v1/datasets/air-quality-hourly/rows?length=1",
            &[("x-api-key", other)],
        )
        .await;
    assert_eq!(resp.status(), 200, "the key reads the dataset it names");
    let _ = std::fs::remove_dir_all(&root);
}

/// What one page cost: the DynamoDB operations, the S3 GETs and their bytes.
struct Cost {
    dynamo: Vec<String>,
    gets: usize,
    bytes: usize,
}

/// Reads `path` with a reader of its own (no footer cached), counting its requests.
async fn read_counted(g: &Given, path: &str) -> (Value, Cost) {
    let (dynamo, s3) = (Wire::default(), Wire::default());
    let (catalog, _) = g.stack.wired(&dynamo, &Wire::default());
    let rows = g.stack.rows_wired(&s3);
    let resp = api::rows(
        &v2_request(path, &[("x-api-key", READ_KEY)]),
        &catalog,
        &rows,
        Utc::now(),
    )
    .await;
    let body = json_body(&resp);
    assert_eq!(resp.status(), 200, "{path}: {body}");
    let gets: Vec<Call> = s3.take_calls();
    assert!(
        gets.iter().all(|c| c.operation == "S3.GetObject"),
        "{gets:?}"
    );
    let cost = Cost {
        dynamo: dynamo.take(),
        gets: gets.len(),
        bytes: gets.iter().map(|c| c.bytes).sum(),
    };
    (body, cost)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_page_costs_the_same_at_offset_0_near_the_end_and_across_a_manifest_chunk() {
    // GIVEN a version of 1,005 files of 3 rows (two manifest chunks: files 0-999 and
    // 1,000-1,004, rows 0-2,999 and 3,000-3,014), published with the CLI
    let g = given().await;
    let root = temp_root("rows-chunks");
    let names: Vec<String> = (0..1005).map(|i| format!("part-{i:04}.parquet")).collect();
    let specs: Vec<Spec> = names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), 3 * i as i64, 3, false))
        .collect();
    write_files(&root, &specs);
    publish_dir(&g, &root, "many-chunks");
    let expected = pyarrow_rows(&root, false, None);
    assert_eq!(expected.len(), 3015);
    // (A key's first use is recorded once an hour, by whichever request comes first.)
    read_counted(&g, "/api/v1/datasets/many-chunks/rows?length=1").await;

    // WHEN a page is read across the chunks' boundary, THEN it is pyarrow's rows 2,950-3,049
    let (across, across_cost) = read_counted(
        &g,
        "/api/v1/datasets/many-chunks/rows?offset=2950&length=100",
    )
    .await;
    assert_page(&across, &expected, 2950, 100, "across the chunks");
    // WHEN a page of 34 files is read at offset 0, and another of 34 files near the end
    let (first, first_cost) =
        read_counted(&g, "/api/v1/datasets/many-chunks/rows?offset=0&length=100").await;
    assert_page(&first, &expected, 0, 100, "offset 0");
    let (last, last_cost) = read_counted(
        &g,
        "/api/v1/datasets/many-chunks/rows?offset=2910&length=100",
    )
    .await;
    assert_page(&last, &expected, 2910, 100, "near the end");
    // THEN each costs what a page of a one-file dataset behind the same gate costs, and one
    // BatchGetItem of the manifest more, the page across the chunks included (both chunks in
    // the one BatchGetItem)
    let (_, one_file) = read_counted(&g, "/api/v1/datasets/air-quality-hourly/rows").await;
    let mut gate_and_manifest = one_file.dynamo.clone();
    gate_and_manifest.push("DynamoDB.BatchGetItem".into());
    assert_eq!(first_cost.dynamo, gate_and_manifest);
    assert_eq!(last_cost.dynamo, gate_and_manifest);
    assert_eq!(across_cost.dynamo, gate_and_manifest);
    // AND the same S3 GETs (each of the 34 files: its footer, in one GET as the file is
    // smaller than the prefetch, and its rows), about the same bytes
    assert_eq!(first_cost.gets, last_cost.gets);
    assert_eq!(first_cost.gets, 2 * 34, "a footer and the rows per file");
    assert!(
        first_cost.bytes.abs_diff(last_cost.bytes) * 10 < first_cost.bytes,
        "{} and {} bytes",
        first_cost.bytes,
        last_cost.bytes
    );
    // AND past the end: no rows, the columns from the last file's footer, one BatchGetItem
    let (past, past_cost) = read_counted(&g, "/api/v1/datasets/many-chunks/rows?offset=3015").await;
    assert_page(&past, &expected, 3015, 100, "past the end");
    assert_eq!(past["columns"].as_array().unwrap().len(), 3, "{past}");
    assert_eq!(past_cost.dynamo, first_cost.dynamo);
    assert_eq!(past_cost.gets, 1, "the last file's footer only");
    let _ = std::fs::remove_dir_all(&root);
}
