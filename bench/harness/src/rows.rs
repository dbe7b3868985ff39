//! The rows API's reader (`catalog-preview`) against s3s-fs, the S3 server the tests use (it
//! checks SigV4): synthetic Parquet files of about 10 MB and 1 GB (bench/rows/gen.py, pyarrow),
//! several row-group sizes (one file of 250 MB in a single row group), with and without a page
//! index, and a wide file of 2,000 columns.
//! For each file, a page of 100 rows at offset 0 (the first read, footer included), the same
//! page again (warm), a page in the middle and the last page: S3 requests, bytes read, latency,
//! and the peak resident memory of the reading process, a child of its own (`rows-read`) so
//! that neither the generator nor this process counts.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use catalog::records::ActiveVersion;
use catalog::rows::{RowWindow, RowsError};
use catalog_preview::{ParquetRows, S3Source};
use catalog_tests::stack::Stack;
use serde_json::{json, Value};

use crate::lambda::proc_status_kb;

struct Case {
    name: &'static str,
    rows: u64,
    group: u64,
    page_index: bool,
    /// Columns of the wide file (doubles), instead of the five of the others.
    wide: Option<u32>,
}

fn cases(large: bool) -> Vec<Case> {
    let case = |name, rows, group, page_index, wide| Case {
        name,
        rows,
        group,
        page_index,
        wide,
    };
    let mut all = vec![
        case("10 MB", 110_000, 10_000, false, None),
        case("10 MB", 110_000, 10_000, true, None),
        case("10 MB", 110_000, 1_000_000, false, None),
        case("10 MB", 110_000, 1_000_000, true, None),
        case("wide (2,000 columns)", 5_000, 5_000, false, Some(2_000)),
    ];
    if large {
        all.extend([
            case("1 GB", 11_000_000, 1_000_000, false, None),
            case("1 GB", 11_000_000, 1_000_000, true, None),
            // One huge row group. Not 1 GB: pyarrow holds a row group's table and its encoded
            // chunks in memory until it is written (2 GB or more for 1 GB), too much for a
            // shared machine; 3,000,000 rows already put 120 MB in one column chunk.
            case("250 MB", 3_000_000, 3_000_000, false, None),
            case("250 MB", 3_000_000, 3_000_000, true, None),
        ]);
    }
    all
}

pub async fn run(large: bool) -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| ".venv/bin/python".into());
    let generator = Path::new(env!("CARGO_MANIFEST_DIR")).join("../rows/gen.py");
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-bench-rows-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let result = run_cases(&stack, &python, &generator, &exe, &dir, large).await;
    let _ = std::fs::remove_dir_all(&dir);
    result
}

async fn run_cases(
    stack: &Stack,
    python: &str,
    generator: &Path,
    exe: &Path,
    dir: &Path,
    large: bool,
) -> Result<(), String> {
    println!(
        "| file | size | row groups × columns | page index | read | offset | S3 requests | \
         bytes read | of the file | ms | peak RSS of the reader |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for (n, case) in cases(large).iter().enumerate() {
        let path: PathBuf = dir.join(format!("{n}.parquet"));
        let started = Instant::now();
        let mut gen = Command::new(python);
        gen.arg(generator)
            .arg(&path)
            .args([case.rows.to_string(), case.group.to_string()])
            .arg(if case.page_index { "1" } else { "0" });
        if let Some(columns) = case.wide {
            gen.args(["--wide", &columns.to_string()]);
        }
        let out = gen.output().map_err(|e| format!("{python}: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "gen.py: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let shape = String::from_utf8_lossy(&out.stdout)
            .trim()
            .replace(' ', " × ");
        let size = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        let generated = started.elapsed();
        let key = format!("bench/rows/{n}.parquet");
        let body = aws_sdk_s3::primitives::ByteStream::from_path(&path)
            .await
            .map_err(|e| e.to_string())?;
        stack
            .s3
            .put_object()
            .bucket(&stack.target.bucket)
            .key(&key)
            .body(body)
            .send()
            .await
            .map_err(|e| format!("upload: {e:?}"))?;
        let _ = std::fs::remove_file(&path);
        eprintln!(
            "rows: {} {} rows/group, page index {}: {size} bytes, generated in {:.1?}, uploaded in {:.1?}",
            case.name,
            case.group,
            case.page_index,
            generated,
            started.elapsed() - generated
        );
        let out = Command::new(exe)
            .args(["rows-read", "--endpoint", &stack.s3_url])
            .args(["--bucket", &stack.target.bucket, "--key", &key])
            .args([
                "--size",
                &size.to_string(),
                "--rows",
                &case.rows.to_string(),
            ])
            .output()
            .map_err(|e| e.to_string())?;
        let _ = stack
            .s3
            .delete_object()
            .bucket(&stack.target.bucket)
            .key(&key)
            .send()
            .await;
        if !out.status.success() {
            return Err(format!(
                "rows-read: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let report: Value =
            serde_json::from_slice(&out.stdout).map_err(|e| format!("rows-read: {e}"))?;
        let hwm = report["hwm_kb"].as_u64().unwrap_or(0);
        let baseline = report["baseline_hwm_kb"].as_u64().unwrap_or(0);
        for read in report["reads"].as_array().into_iter().flatten() {
            let bytes = read["bytes"].as_u64().unwrap_or(0);
            let requests = read["requests"]
                .as_u64()
                .map_or("—".to_owned(), |n| n.to_string());
            let outcome = match read["error"].as_str() {
                Some(e) => format!("refused: {}", e.chars().take(60).collect::<String>()),
                None => format!("{}", read["ms"].as_f64().unwrap_or(0.0)),
            };
            println!(
                "| {} | {:.1} MB | {shape} | {} | {} | {} | {} | {bytes} | {:.3}% | {outcome} | {:.1} MB (before reading {:.1} MB) |",
                case.name,
                size as f64 / 1e6,
                if case.page_index { "yes" } else { "no" },
                read["label"].as_str().unwrap_or(""),
                read["offset"],
                requests,
                100.0 * bytes as f64 / size as f64,
                hwm as f64 / 1024.0,
                baseline as f64 / 1024.0,
            );
        }
    }
    println!();
    println!(
        "ms: debug or release as built; each read is 100 rows; a refused read's requests are \
         not counted (the first one read the footer); `first` includes the footer's \
         GET; the later reads find the footer cached. Peak RSS is the reading child's VmHWM \
         after all four reads (before reading: its VmHWM once the S3 client is built)."
    );
    Ok(())
}

/// The child process: reads the four pages of one object and prints what they cost as JSON.
pub async fn read(args: &[String]) -> Result<(), String> {
    let arg = |name: &str| crate::args::option(args, name).ok_or(format!("--{name} is required"));
    let number = |name: &str| -> Result<u64, String> {
        arg(name)?.parse().map_err(|e| format!("--{name}: {e}"))
    };
    let (endpoint, bucket, key) = (arg("endpoint")?, arg("bucket")?, arg("key")?);
    let (size, rows) = (number("size")?, number("rows")?);
    let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
        .http_client(catalog_aws::aws::http_client(
            catalog_aws::aws::RootCertificates::Platform,
        ))
        .region(aws_config::Region::new(catalog_tests::stack::REGION))
        .credentials_provider(
            aws_credential_types::provider::SharedCredentialsProvider::new(
                catalog_tests::stack::credentials(),
            ),
        )
        .load()
        .await;
    let client = aws_sdk_s3::Client::from_conf(
        aws_sdk_s3::config::Builder::from(&sdk)
            .endpoint_url(endpoint)
            .force_path_style(true)
            .build(),
    );
    let reader = ParquetRows::new(S3Source::new(client, bucket));
    let version = ActiveVersion {
        version: 1,
        s3_key: key,
        size,
        row_count: rows,
        columns: Vec::new(),
        sha256: String::new(),
        published_at: chrono::Utc::now(),
        files: None,
        ingested: None,
    };
    let pid = std::process::id();
    let baseline = proc_status_kb(pid, "VmHWM:")?;
    let last = rows.saturating_sub(100);
    let mut reads = Vec::new();
    for (label, offset) in [
        ("first", 0),
        ("warm", 0),
        ("middle", rows / 2),
        ("end", last),
    ] {
        let window = RowWindow::parse(Some(&offset.to_string()), Some("100"))
            .map_err(|e| format!("{e:?}"))?;
        let started = Instant::now();
        let result = reader.read_counted(&version, window).await;
        let ms = (started.elapsed().as_secs_f64() * 10_000.0).round() / 10.0;
        reads.push(match result {
            Ok((page, cost)) => json!({
                "label": label, "offset": offset, "ms": ms, "rows": page.rows.len(),
                "requests": cost.requests, "bytes": cost.bytes,
            }),
            Err(RowsError::TooLarge(e)) => json!({
                "label": label, "offset": offset, "ms": ms, "requests": null, "bytes": 0,
                "error": format!("TooLarge: {e}"),
            }),
            Err(e) => return Err(format!("{label}: {e}")),
        });
    }
    let (footers, footer_bytes) = reader.footers_held();
    let report = json!({
        "baseline_hwm_kb": baseline,
        "hwm_kb": proc_status_kb(pid, "VmHWM:")?,
        "footers": footers,
        "footer_bytes": footer_bytes,
        "reads": reads,
    });
    println!("{report}");
    Ok(())
}
