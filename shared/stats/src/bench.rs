//! Figures for many files (not a test: ignored, run by `bench/stats_many.py`): the statistics
//! or the per-file ranges of every `*.parquet` file under `CATALOG_STATS_BENCH_DIR` (sorted by
//! path), timed, with the process's peak memory (VmHWM). One JSON line on standard output.

use std::time::Instant;

use super::*;

fn peak_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

#[test]
#[ignore = "figures: run by bench/stats_many.py"]
fn figures() {
    let dir = std::env::var("CATALOG_STATS_BENCH_DIR").expect("CATALOG_STATS_BENCH_DIR");
    let step = std::env::var("CATALOG_STATS_BENCH_STEP").unwrap_or_else(|_| "summarize".into());
    let mut paths: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    paths.sort();
    let bytes: u64 = paths
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();
    let before = peak_mib();
    let start = Instant::now();
    let (rows, detail) = match step.as_str() {
        "summarize" => {
            let stats = summarize_files(&paths).unwrap();
            let approximate = stats.columns.iter().filter(|c| c.approximate).count();
            (
                stats.row_count,
                serde_json::json!({"passes": stats.passes, "columns": stats.columns.len(),
                    "approximate_columns": approximate}),
            )
        }
        "scan" => {
            let scanned = scan_files(&paths).unwrap();
            let computed: usize = scanned.files.iter().map(|f| f.computed.len()).sum();
            (
                scanned.files.iter().map(|f| f.row_count).sum(),
                serde_json::json!({"columns_computed_from_data": computed}),
            )
        }
        other => panic!("CATALOG_STATS_BENCH_STEP: summarize or scan, not {other}"),
    };
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "step": step, "files": paths.len(), "bytes": bytes, "rows": rows,
            "wall_s": (seconds * 1000.0).round() / 1000.0,
            "peak_mib": (peak_mib() * 10.0).round() / 10.0,
            "peak_mib_before": (before * 10.0).round() / 10.0,
            "threads": std::thread::available_parallelism().map_or(1, |n| n.get()),
            "detail": detail,
        })
    );
}
