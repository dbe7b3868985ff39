//! `catalog-admin inspect` against an independent pandas/pyarrow reference
//! (`tests/stats_reference.py`) on files with nulls, NaN, all-null columns, integers, floats,
//! decimals, strings, booleans, dates, timestamps, dictionaries and several row groups.

use std::path::PathBuf;
use std::process::Command;

use catalog_tests::{built_binary, repo_root};

fn python() -> PathBuf {
    std::env::var_os("PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"))
}

#[test]
fn statistics_match_the_pandas_reference() {
    let dir = std::env::temp_dir().join(format!("catalog-stats-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = repo_root().join("tests/stats_reference.py");
    let generated = Command::new(python())
        .arg(&script)
        .arg("generate")
        .arg(&dir)
        .output()
        .expect("run the reference generator");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let files: Vec<String> = String::from_utf8_lossy(&generated.stdout)
        .lines()
        .filter(|l| l.ends_with(".parquet"))
        .map(str::to_owned)
        .collect();
    assert!(files.len() >= 2, "generated: {files:?}");
    let mut failures = Vec::new();
    for file in &files {
        let inspected = Command::new(built_binary("catalog-admin"))
            .args(["inspect", file])
            .output()
            .expect("run catalog-admin inspect");
        assert!(
            inspected.status.success(),
            "{file}: {}",
            String::from_utf8_lossy(&inspected.stderr)
        );
        let json = dir.join(format!(
            "{}.json",
            PathBuf::from(file).file_stem().unwrap().to_string_lossy()
        ));
        std::fs::write(&json, &inspected.stdout).unwrap();
        let compared = Command::new(python())
            .arg(&script)
            .arg("compare")
            .arg(file)
            .arg(&json)
            .output()
            .expect("run the reference comparison");
        if !compared.status.success() {
            failures.push(format!(
                "{file}:\n{}{}",
                String::from_utf8_lossy(&compared.stdout),
                String::from_utf8_lossy(&compared.stderr)
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn beyond_the_exact_limits_statistics_are_estimates_flagged_approximate() {
    let dir = std::env::temp_dir().join(format!("catalog-approx-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("many.parquet");
    // 1.2 million distinct integers, more than the 2^20 counted exactly.
    let script = "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
                  n = 1_200_000\n\
                  pq.write_table(pa.table({'id': pa.array(range(n), pa.int64()), 'few': pa.array([i % 7 for i in range(n)], pa.int64())}), sys.argv[1])\n";
    let status = Command::new(python())
        .args(["-c", script])
        .arg(&file)
        .status()
        .expect("python");
    assert!(status.success());
    let out = Command::new(built_binary("catalog-admin"))
        .args(["inspect", file.to_str().unwrap()])
        .output()
        .expect("inspect");
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = &json["schema"][0];
    assert_eq!(id["approximate"], true);
    let unique = id["unique_count"].as_f64().unwrap();
    assert!(
        (unique - 1.2e6).abs() / 1.2e6 < 0.03,
        "HyperLogLog estimate {unique}"
    );
    assert_eq!(id["min"], 0);
    assert_eq!(id["max"], 1_199_999);
    let mean = id["mean"].as_f64().unwrap();
    assert!((mean - 599_999.5).abs() < 1e-6, "mean stays exact: {mean}");
    let few = &json["schema"][1];
    assert_eq!(few["approximate"], false, "a small column stays exact");
    assert_eq!(few["unique_count"], 7);
    let _ = std::fs::remove_dir_all(&dir);
}
