//! `catalog-admin inspect` against an independent pandas/pyarrow reference
//! (`tests/stats_reference.py`) on files with nulls, NaN, all-null columns, integers, floats,
//! decimals, strings, booleans, dates, timestamps, dictionaries, several row groups, text
//! longer than the 200 characters shown, binary and nested (list, struct, map) columns.

use std::path::{Path, PathBuf};
use std::process::Command;

use catalog_tests::{built_binary, repo_root};

fn python() -> PathBuf {
    std::env::var_os("PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/python"))
}

/// A fresh directory, named after `label`, with `name` in it written by the Python `script`
/// (which gets the file's path as its argument).
fn written_by_python(label: &str, name: &str, script: &str) -> (PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("catalog-{label}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join(name);
    let status = Command::new(python())
        .args(["-c", script])
        .arg(&file)
        .status()
        .expect("python");
    assert!(status.success(), "{script}");
    (dir, file)
}

/// Every file the reference generates, each of which is checked.
const FILES: &[&str] = &[
    "numeric.parquet",
    "text_time.parquet",
    "dictionary.parquet",
    "row_groups.parquet",
    "long_binary.parquet",
    "nested.parquet",
];

/// Generates the reference's files into a fresh directory: their paths, in order.
fn generate(dir: &Path) -> Vec<PathBuf> {
    let generated = Command::new(python())
        .arg(repo_root().join("tests/stats_reference.py"))
        .arg("generate")
        .arg(dir)
        .output()
        .expect("run the reference generator");
    assert!(
        generated.status.success(),
        "{}",
        String::from_utf8_lossy(&generated.stderr)
    );
    String::from_utf8_lossy(&generated.stdout)
        .lines()
        .map(PathBuf::from)
        .collect()
}

/// How one file compares: the reference's mismatch lines, and how many columns it checked
/// out of how many `inspect` reported.
struct Compared {
    mismatches: Vec<String>,
    checked: usize,
    columns: usize,
}

fn compare(dir: &Path, file: &Path) -> Compared {
    let inspected = Command::new(built_binary("catalog-admin"))
        .arg("inspect")
        .arg(file)
        .output()
        .expect("run catalog-admin inspect");
    assert!(
        inspected.status.success(),
        "{}: {}",
        file.display(),
        String::from_utf8_lossy(&inspected.stderr)
    );
    let stats: serde_json::Value = serde_json::from_slice(&inspected.stdout).unwrap();
    let json = dir.join(format!(
        "{}.json",
        file.file_stem().unwrap().to_string_lossy()
    ));
    std::fs::write(&json, &inspected.stdout).unwrap();
    let compared = Command::new(python())
        .arg(repo_root().join("tests/stats_reference.py"))
        .arg("compare")
        .arg(file)
        .arg(&json)
        .output()
        .expect("run the reference comparison");
    let stdout = String::from_utf8_lossy(&compared.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&compared.stderr);
    // The comparison itself ran to its end: a crash is not a mismatch
    assert!(
        stderr.is_empty() && matches!(compared.status.code(), Some(0 | 1)),
        "{}: the reference failed ({}): {stderr}",
        file.display(),
        compared.status
    );
    let mut lines: Vec<String> = stdout.lines().map(str::to_owned).collect();
    let last = lines.pop().unwrap_or_default();
    let checked = last
        .strip_suffix(" columns match")
        .or_else(|| last.strip_suffix(" columns checked"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{}: {stdout}", file.display()));
    assert_eq!(
        compared.status.success(),
        lines.is_empty(),
        "{}: {stdout}",
        file.display()
    );
    Compared {
        mismatches: lines,
        checked,
        columns: stats["schema"].as_array().map_or(0, Vec::len),
    }
}

#[test]
fn statistics_match_the_pandas_reference() {
    let dir = std::env::temp_dir().join(format!("catalog-stats-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = generate(&dir);
    let names: Vec<String> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, FILES, "the reference's files, each checked below");
    let mut failures = Vec::new();
    for file in &files {
        let compared = compare(&dir, file);
        assert!(
            compared.columns > 0 && compared.checked == compared.columns,
            "{}: {} of {} columns checked",
            file.display(),
            compared.checked,
            compared.columns
        );
        failures.extend(compared.mismatches);
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Nested and fixed-size binary columns are named as pyarrow names them (found by the
/// reference comparison above).
#[test]
fn nested_column_types_are_named_as_pyarrow_names_them() {
    let dir = std::env::temp_dir().join(format!("catalog-nested-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let files = generate(&dir);
    let nested = files
        .iter()
        .find(|f| f.ends_with("nested.parquet"))
        .unwrap();
    let compared = compare(&dir, nested);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(
        compared.mismatches.is_empty(),
        "{}",
        compared.mismatches.join("\n")
    );
}

#[test]
fn beyond_the_exact_limits_statistics_are_estimates_flagged_approximate() {
    // 4.3 million distinct integers: more values than the 2^22 listed, and more distinct ones
    // than the 2^20 counted exactly.
    let (dir, file) = written_by_python(
        "approx",
        "many.parquet",
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
         n = 4_300_000\n\
         pq.write_table(pa.table({'id': pa.array(range(n), pa.int64()), 'few': pa.array([i % 7 for i in range(n)], pa.int64())}), sys.argv[1])\n",
    );
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
        (unique - 4.3e6).abs() / 4.3e6 < 0.03,
        "HyperLogLog estimate {unique}"
    );
    assert_eq!(id["min"], 0);
    assert_eq!(id["max"], 4_299_999);
    let mean = id["mean"].as_f64().unwrap();
    assert!(
        (mean - 2_149_999.5).abs() < 1e-6,
        "mean stays exact: {mean}"
    );
    let median = id["median"].as_f64().unwrap();
    assert!(
        (median - 2_149_999.5).abs() < 0.01 * 4.3e6,
        "a sampled median: {median}"
    );
    // Past the listed values, a column of few distinct values is counted exactly, and its
    // median comes from the counts: exact at any number of rows.
    let few = &json["schema"][1];
    assert_eq!(few["approximate"], false, "a small column stays exact");
    assert_eq!(few["unique_count"], 7);
    assert_eq!(few["median"], 3.0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A column of at most 2^22 values is exact whatever its number of distinct values: 1.5 million
/// integers, 1.25 million of them distinct (more than the 2^20 that counts hold), are listed,
/// sorted and counted.
#[test]
fn up_to_the_listed_values_every_statistic_is_exact() {
    let (dir, file) = written_by_python(
        "listed",
        "listed.parquet",
        "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
         n = 1_500_000\n\
         pq.write_table(pa.table({'id': pa.array([i // 2 if i % 3 == 0 else i for i in range(n)], pa.int64())}), sys.argv[1])\n",
    );
    // The same values here: distinct count, median, the most frequent.
    let mut sorted: Vec<i64> = (0..1_500_000i64)
        .map(|i| if i % 3 == 0 { i / 2 } else { i })
        .collect();
    sorted.sort_unstable();
    let mut distinct = sorted.clone();
    distinct.dedup();
    let n = sorted.len();
    let median = (sorted[n / 2 - 1] + sorted[n / 2]) as f64 / 2.0;
    let stats = catalog_stats::summarize_within(&file, 1 << 30).unwrap();
    let id = &stats.columns[0];
    assert!(!id.approximate);
    assert_eq!(id.unique_count, distinct.len() as u64);
    assert!(distinct.len() > 1 << 20);
    assert_eq!(id.median, Some(median));
    assert_eq!(id.top_counts, [2, 2, 2, 2, 2]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every statistic is the same whatever the memory budget: a budget too small for any column's
/// counts makes each column of many values outgrow its share and be counted again in a pass of
/// its own, and the answer does not change. Run on every reference file and on a file of 40
/// columns (more than one pass reads together), 100,000 rows, mixed cardinalities.
#[test]
fn statistics_are_the_same_within_any_memory_budget() {
    use catalog_stats::{summarize_within, MEMORY_BUDGET};
    let (dir, wide) = written_by_python(
        "budget",
        "wide.parquet",
        "import sys, numpy as np, pyarrow as pa, pyarrow.parquet as pq\n\
         rng = np.random.default_rng(7)\n\
         n = 100_000\n\
         cols = {}\n\
         for i in range(10):\n\
         \x20   cols[f'id{i}'] = pa.array(np.arange(n) * (i + 1), pa.int64())\n\
         \x20   cols[f'few{i}'] = pa.array(rng.integers(0, 9, n), pa.int32())\n\
         \x20   cols[f'x{i}'] = pa.array(rng.normal(0, 1, n), mask=rng.random(n) < 0.1)\n\
         \x20   cols[f'user{i}'] = pa.array(np.char.add('u-', rng.integers(0, 200_000, n).astype(str)))\n\
         pq.write_table(pa.table(cols), sys.argv[1], row_group_size=100_000)\n",
    );
    let mut files = generate(&dir);
    files.push(wide.clone());
    for file in &files {
        let roomy = summarize_within(file, MEMORY_BUDGET).unwrap();
        // 1 KiB: no column of more than 64 distinct values keeps its counts in a shared pass.
        let tight = summarize_within(file, 1 << 10).unwrap();
        assert_eq!(tight.columns, roomy.columns, "{}", file.display());
        let counted_again =
            roomy.columns.len() > 1 && roomy.columns.iter().any(|c| c.unique_count > 64);
        if counted_again {
            assert!(
                tight.passes > roomy.passes,
                "{}: a 1 KiB budget should take more passes ({} and {})",
                file.display(),
                tight.passes,
                roomy.passes
            );
        }
    }
    // The wide file, short (100,000 rows), is read twice with the default budget: its 40
    // columns at once (the histograms come from the listed values), then its 10 text columns
    // of some 80,000 distinct values each, which outgrew their share, together.
    let roomy = summarize_within(&wide, MEMORY_BUDGET).unwrap();
    assert_eq!(roomy.columns.len(), 40);
    assert_eq!(roomy.passes, 2);
    assert!(roomy.columns[0].histogram.is_some());
    let user = roomy.columns.iter().find(|c| c.name == "user3").unwrap();
    assert!(!user.approximate);
    let _ = std::fs::remove_dir_all(&dir);
}
