//! The rows API on the real stack (DynamoDB on moto, the Parquet objects on s3s-fs, read with
//! ranged GETs): every value against pyarrow reading the same file (`tests/rows_reference.py`),
//! at row-group boundaries and past the end; what a read costs; hostile parameters; the gate it
//! shares with the data endpoint; a pinned version while the dataset is re-published.

use std::path::{Path, PathBuf};
use std::process::Command;

use catalog::input::DatasetRef;
use catalog::ports::DownloadReader;
use catalog::rows::RowWindow;
use catalog_tests::{admin_command, repo_root, run_admin, tool, Call, Wire};

use super::*;

fn python() -> PathBuf {
    tool("PYTHON", ".venv/bin/python")
}

/// The reference files (every dtype the statistics tests cover, long cells, a file of 140 row
/// groups with and without a page index), written into `dir`.
fn generate(dir: &Path) -> Vec<PathBuf> {
    let out = Command::new(python())
        .arg(repo_root().join("tests/rows_reference.py"))
        .arg("generate")
        .arg(dir)
        .output()
        .expect("run tests/rows_reference.py");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// A slug for a reference file: `row_groups_no_index.parquet` is `ref-row-groups-no-index`.
fn slug_of(file: &Path) -> String {
    let stem = file
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .replace('_', "-");
    format!("ref-{stem}")
}

fn publish(g: &Given, file: &Path, slug: &str) {
    let out = run_admin(admin_command().envs(g.stack.function_env()).args([
        "publish",
        &file.to_string_lossy(),
        "--slug",
        slug,
        "--name",
        slug,
        "--license",
        "CC0-1.0",
        "--source",
        "tests/rows_reference.py",
        "--category",
        "testing",
    ]));
    assert!(
        out.status.success(),
        "publish {slug}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test]
async fn rows_equal_pyarrow_for_every_dtype_at_boundaries_and_past_the_end() {
    // GIVEN the reference files published
    let g = given().await;
    let dir = std::env::temp_dir().join(format!("catalog-rows-{}", uuid::Uuid::new_v4()));
    let files = generate(&dir);
    assert!(files.len() >= 8, "{files:?}");
    let mut checked = 0;
    for file in &files {
        let slug = slug_of(file);
        publish(&g, file, &slug);
        let total = json_body(&g.metadata(&format!("/api/v1/datasets/{slug}")).await)["row_count"]
            .as_u64()
            .unwrap();
        // WHEN pages are read from the start, across and at row-group boundaries (the files'
        // row groups are 5, 7 or 1,000 rows), in the middle and at the end
        let windows = [
            (0, 100),
            (3, 9),
            (995, 10),
            (1000, 100),
            (total / 2, 37),
            (total.saturating_sub(30), 100),
        ];
        let mut answers = Vec::new();
        for (offset, length) in windows {
            if offset >= total {
                continue;
            }
            let path = format!("/api/v1/datasets/{slug}/rows?offset={offset}&length={length}");
            let resp = g.rows_answer(&path, &[("x-api-key", READ_KEY)]).await;
            let body = json_body(&resp);
            assert_eq!(resp.status(), 200, "{path}: {body}");
            assert_eq!(resp.headers()["cache-control"], "no-store");
            let shown = length.min(total - offset);
            assert_eq!(body["length"], shown, "{path}");
            assert_eq!(
                body["next_offset"],
                if offset + shown < total {
                    serde_json::json!(offset + shown)
                } else {
                    Value::Null
                },
                "{path}"
            );
            let answer = dir.join(format!("{slug}-{offset}-{length}.json"));
            // The body as sent (serde_json's default parser may round a float's last digit).
            std::fs::write(&answer, resp.body().as_ref()).unwrap();
            answers.push(answer);
        }
        // THEN every value, type and cut flag is pyarrow's, as the reference writes it
        let out = Command::new(python())
            .arg(repo_root().join("tests/rows_reference.py"))
            .arg("compare")
            .arg(file)
            .args(&answers)
            .output()
            .expect("run the comparison");
        assert!(
            out.status.success(),
            "{}: {}{}",
            slug,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        checked += answers.len();

        // AND at or past the end: 200, the columns, no rows, no next page
        for offset in [total, total + 5, u64::MAX] {
            let path = format!("/api/v1/datasets/{slug}/rows?offset={offset}");
            let resp = g.rows_answer(&path, &[("x-api-key", READ_KEY)]).await;
            let body = json_body(&resp);
            assert_eq!(resp.status(), 200, "{path}: {body}");
            assert_eq!(body["rows"], serde_json::json!([]), "{path}");
            assert_eq!(body["length"], 0, "{path}");
            assert_eq!(body["num_rows_total"], total, "{path}");
            assert_eq!(body["next_offset"], Value::Null, "{path}");
            assert!(!body["columns"].as_array().unwrap().is_empty(), "{path}");
        }
    }
    assert!(checked > 30, "{checked} answers checked");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The active version of `slug`, as the gate reads it.
async fn active(g: &Given, slug: &str) -> catalog::records::ActiveVersion {
    let (target, _) = g
        .catalog
        .get_download(&DatasetRef::parse(slug).unwrap(), None)
        .await
        .expect("read the dataset");
    target.and_then(|t| t.active).expect("an active version")
}

#[tokio::test]
async fn a_page_reads_only_what_covers_it_and_the_footer_once() {
    // GIVEN a file of 140 row groups of 1,000 rows, with and without a page index
    let g = given().await;
    let dir = std::env::temp_dir().join(format!("catalog-rows-cost-{}", uuid::Uuid::new_v4()));
    let files = generate(&dir);
    let file = |name: &str| {
        files
            .iter()
            .find(|f| f.file_name().unwrap() == name)
            .unwrap()
            .clone()
    };
    publish(&g, &file("row_groups.parquet"), "indexed");
    publish(&g, &file("row_groups_no_index.parquet"), "unindexed");
    let rows = g.stack.rows();
    let indexed = active(&g, "indexed").await;
    let unindexed = active(&g, "unindexed").await;

    // WHEN the first page is read, THEN the footer comes in one GET with the pages
    let (first, first_cost) = rows
        .read_counted(&indexed, RowWindow::new(0, 100))
        .await
        .expect("read");
    assert_eq!(first.rows.len(), 100);
    assert_eq!(rows.footers_held().0, 1);
    // AND a page near the end costs about what the first cost, without the footer again
    let (last, last_cost) = rows
        .read_counted(&indexed, RowWindow::new(139_000, 100))
        .await
        .expect("read");
    assert_eq!(last.rows[0].row_idx, 139_000);
    assert_eq!(rows.footers_held().0, 1, "the footer is cached");
    assert!(
        last_cost.requests < first_cost.requests,
        "no footer read the second time: {first_cost:?} then {last_cost:?}"
    );
    assert!(
        last_cost.bytes * 20 < indexed.size,
        "a page reads a small part of the file: {last_cost:?} of {} bytes",
        indexed.size
    );
    let (_, again) = rows
        .read_counted(&indexed, RowWindow::new(70_500, 100))
        .await
        .expect("read");
    assert!(
        again.bytes <= last_cost.bytes * 3 && last_cost.bytes <= again.bytes * 3,
        "pages cost alike wherever they are: {last_cost:?}, {again:?}"
    );

    // WHEN the file has no page index, THEN whole column chunks of the row group are read:
    // more than with the index, still only that row group's
    rows.read_counted(&unindexed, RowWindow::new(0, 1))
        .await
        .expect("read the footer");
    let (_, whole) = rows
        .read_counted(&unindexed, RowWindow::new(139_000, 100))
        .await
        .expect("read");
    assert!(whole.bytes > last_cost.bytes, "{whole:?} vs {last_cost:?}");
    assert!(whole.bytes * 20 < unindexed.size, "{whole:?}");
    assert_eq!(rows.footers_held().0, 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_file_whose_row_groups_exceed_the_budget_is_refused_with_a_422() {
    // GIVEN a reader whose budget is smaller than one column chunk of a file without a page
    // index (as a 1 GB row group would be for a 256 MB function)
    let g = given().await;
    let dir = std::env::temp_dir().join(format!("catalog-rows-big-{}", uuid::Uuid::new_v4()));
    let files = generate(&dir);
    let file = files
        .iter()
        .find(|f| f.file_name().unwrap() == "row_groups_no_index.parquet")
        .unwrap();
    publish(&g, file, "unindexed");
    let tight = catalog_preview::plan::Budget {
        group_bytes: 1024,
        column_bytes: 2048,
        request_bytes: 1 << 20,
    };
    let rows = g.stack.rows_with_budget(tight);
    let resp = api::rows(
        &v2_request(
            "/api/v1/datasets/unindexed/rows",
            &[("x-api-key", READ_KEY)],
        ),
        &g.catalog,
        &rows,
        Utc::now(),
    )
    .await;
    // THEN a 422 saying why and what to do, having read nothing but the footer
    let body = json_body(&resp);
    assert_eq!(resp.status(), 422, "{body}");
    assert_eq!(body["code"], "preview_unavailable");
    let message = body["error"].as_str().unwrap();
    assert!(
        message.contains("page index") && message.contains("download"),
        "{message}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn hostile_parameters_get_a_400_and_lengths_are_capped() {
    let g = given().await;
    let key = [("x-api-key", READ_KEY)];
    for (query, status) in [
        ("offset=-1", 400),
        ("offset=abc", 400),
        ("offset=1e3", 400),
        ("offset=%201", 400),
        ("offset=", 400),
        ("length=0", 400),
        ("length=-5", 400),
        ("length=1.5", 400),
        ("offset=1&offset=2", 400),
        ("length=1&length=2", 400),
        ("version=0", 400),
        ("version=x", 400),
        ("offset=99999999999999999999999999", 200),
        ("length=100000", 200),
        ("unknown=1", 200),
    ] {
        let path = format!("/api/v1/datasets/air-quality-hourly/rows?{query}");
        let resp = g.rows_answer(&path, &key).await;
        let body = json_body(&resp);
        assert_eq!(resp.status(), status, "{query}: {body}");
        if status == 400 {
            assert_eq!(body["code"], "bad_request", "{query}");
        }
    }
    let resp = g
        .rows_answer(
            "/api/v1/datasets/air-quality-hourly/rows?length=100000",
            &key,
        )
        .await;
    assert_eq!(json_body(&resp)["length"], RowWindow::MAX_LENGTH);
    // A key in the query string is never read
    let resp = g
        .rows_answer(
            &format!("/api/v1/datasets/air-quality-hourly/rows?api_key={READ_KEY}"),
            &[],
        )
        .await;
    assert_eq!(json_body(&resp)["code"], "missing_key");
}

#[tokio::test]
async fn rows_and_data_pass_the_same_gate_at_the_same_cost() {
    // GIVEN clients whose every DynamoDB request is recorded
    let g = given().await;
    let dynamo = Wire::default();
    let s3 = Wire::default();
    let (catalog, signer) = g.stack.wired(&dynamo, &s3);
    let rows = g.stack.rows();
    // (A key's first use is recorded once an hour, by whichever route comes first.)
    api::data(
        &v2_request(
            "/api/v1/datasets/air-quality-hourly/data",
            &[("x-api-key", READ_KEY)],
        ),
        &catalog,
        &signer,
        Utc::now(),
    )
    .await;
    dynamo.take_calls();
    let cases: [(&str, Option<&str>); 7] = [
        ("air-quality-hourly", Some(READ_KEY)),
        ("air-quality-hourly", None),
        ("air-quality-hourly", Some(WRITE_KEY)),
        (
            "air-quality-hourly",
            Some("dcat_unknown_key_0000000000000000000000"),
        ),
        ("city-bikes", None),
        ("river-levels", None),
        ("no-such-dataset", Some(READ_KEY)),
    ];
    for (slug, key) in cases {
        let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
        // WHEN the same request goes to both routes
        let data = api::data(
            &v2_request(&format!("/api/v1/datasets/{slug}/data"), &headers),
            &catalog,
            &signer,
            Utc::now(),
        )
        .await;
        let data_calls: Vec<Call> = dynamo.take_calls();
        let rows_resp = api::rows(
            &v2_request(&format!("/api/v1/datasets/{slug}/rows"), &headers),
            &catalog,
            &rows,
            Utc::now(),
        )
        .await;
        let rows_calls: Vec<Call> = dynamo.take_calls();
        // THEN both answer alike, after the same DynamoDB round trips
        assert_eq!(rows_resp.status(), data.status(), "{slug} {key:?}");
        if data.status() != 200 {
            assert_eq!(
                json_body(&rows_resp)["code"],
                json_body(&data)["code"],
                "{slug} {key:?}"
            );
        } else {
            assert_eq!(
                json_body(&rows_resp)["version"],
                json_body(&data)["version"],
                "{slug}"
            );
        }
        assert_eq!(rows_calls, data_calls, "{slug} {key:?}");
    }
}

/// Writes `versions` small Parquet files whose every row says which version it belongs to
/// (`v`), in 4 row groups: `v1.parquet`, `v2.parquet`, …
fn version_files(dir: &Path, versions: u32) -> Vec<PathBuf> {
    std::fs::create_dir_all(dir).unwrap();
    let script = "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
        out, n = sys.argv[1], int(sys.argv[2])\n\
        for v in range(1, n + 1):\n\
        \x20   t = pa.table({'i': pa.array(range(400), pa.int64()), 'v': pa.array([v] * 400, pa.int64())})\n\
        \x20   pq.write_table(t, f'{out}/v{v}.parquet', row_group_size=100, write_page_index=True)\n";
    let out = Command::new(python())
        .args(["-c", script])
        .arg(dir)
        .arg(versions.to_string())
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (1..=versions)
        .map(|v| dir.join(format!("v{v}.parquet")))
        .collect()
}

#[tokio::test]
async fn one_answer_never_mixes_versions_and_a_pin_holds_while_the_dataset_is_republished() {
    // GIVEN a dataset at version 1, and versions 2 and 3 about to be published
    let g = given().await;
    let dir = std::env::temp_dir().join(format!("catalog-rows-pin-{}", uuid::Uuid::new_v4()));
    let files = version_files(&dir, 3);
    publish(&g, &files[0], "moving");
    let env = g.stack.function_env();
    let later = files[1..].to_vec();
    // WHEN they are published while pages are read, pinned to version 1 and not
    let publisher = std::thread::spawn(move || {
        for file in later {
            let out = run_admin(admin_command().envs(env.clone()).args([
                "publish",
                &file.to_string_lossy(),
                "--slug",
                "moving",
            ]));
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
    let key = [("x-api-key", READ_KEY)];
    let (mut seen, mut pinned_ok) = (std::collections::BTreeSet::new(), 0);
    let mut n = 0u64;
    while !publisher.is_finished() || n < 10 {
        let offset = (n * 37) % 400;
        n += 1;
        // THEN every unpinned answer's rows all come from the version it names
        let resp = g
            .rows_answer(
                &format!("/api/v1/datasets/moving/rows?offset={offset}&length=100"),
                &key,
            )
            .await;
        let body = json_body(&resp);
        assert_eq!(resp.status(), 200, "{body}");
        let version = body["version"].as_u64().unwrap();
        seen.insert(version);
        for row in body["rows"].as_array().unwrap() {
            assert_eq!(row["row"]["v"].as_u64(), Some(version), "{body}");
        }
        // AND a pinned answer is version 1's rows, or a 404 once version 1 is replaced
        let resp = g
            .rows_answer(
                &format!("/api/v1/datasets/moving/rows?offset={offset}&version=1"),
                &key,
            )
            .await;
        let body = json_body(&resp);
        match resp.status().as_u16() {
            200 => {
                pinned_ok += 1;
                assert_eq!(body["version"], 1);
                for row in body["rows"].as_array().unwrap() {
                    assert_eq!(row["row"]["v"], 1, "{body}");
                }
            }
            404 => {
                assert_eq!(body["code"], "not_found");
                assert!(
                    body["error"]
                        .as_str()
                        .unwrap()
                        .contains("active version is"),
                    "{body}"
                );
            }
            other => panic!("pinned: {other} {body}"),
        }
        assert!(n < 10_000, "the publisher never finished");
    }
    publisher.join().expect("publisher");
    assert!(pinned_ok > 0, "version 1 was read while it was active");
    assert!(seen.contains(&3), "{seen:?}");
    // AND once version 3 is active, a pin to it reads it, a pin to 1 is a 404
    let resp = g
        .rows_answer("/api/v1/datasets/moving/rows?version=3&length=1", &key)
        .await;
    assert_eq!(json_body(&resp)["rows"][0]["row"]["v"], 3);
    let resp = g
        .rows_answer("/api/v1/datasets/moving/rows?version=1", &key)
        .await;
    assert_eq!(resp.status(), 404);
    let _ = std::fs::remove_dir_all(&dir);
}
