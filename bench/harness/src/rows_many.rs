//! The rows API over a version of many files (issue 38): a version of 100,000 files recorded
//! in moto as `catalog-admin publish` records it (`DynamoWriter::publish_files`: the manifest's
//! chunk items, the version item with its summary, activation), its files on s3s-fs. Every
//! file of the version is the same Parquet file (pyarrow, three columns, a page index), and only
//! the files the measured pages read are uploaded (the others are never asked for: a missing
//! one would fail the page). For a page of 100 rows at offset 0, across the first manifest
//! chunk's end, near the end and past it, read through the rows route's handler
//! (`catalog_http::api::rows`, the gate included) with a reader of its own (no footer cached),
//! then the same page again (warm): the DynamoDB round trips and the bytes of their answers, the
//! S3 GETs and their bytes, and the time.

use std::sync::Arc;
use std::time::Instant;

use catalog::files::{FileInput, ManifestInput, RelPath, CHUNK_FILES};
use catalog::input::Slug;
use catalog_http::api;
use catalog_tests::stack::Stack;
use catalog_tests::{json_body, v2_request, Call, Wire};
use catalog_writer::WriteError;
use chrono::Utc;

use crate::synthetic::{record, Version};

const READ_KEY: &str = "dcat_bench_rows_many_read_key_00000000000000000000000000000000000";

/// The file every entry of the manifest is: `rows` rows of `id`, `value` and `label`.
struct File {
    bytes: Vec<u8>,
    sha256: String,
}

fn write_file(python: &str, rows: u64) -> Result<File, String> {
    let dir = std::env::temp_dir().join(format!("catalog-bench-rows-many-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join(format!("{rows}.parquet"));
    let script = "import sys, hashlib, pyarrow as pa, pyarrow.parquet as pq\n\
        path, n = sys.argv[1], int(sys.argv[2])\n\
        t = pa.table({'id': pa.array(range(n), pa.int64()),\n\
        \x20             'value': pa.array([i / 4 for i in range(n)], pa.float64()),\n\
        \x20             'label': pa.array(['label %d' % i for i in range(n)], pa.string())})\n\
        pq.write_table(t, path, write_page_index=True)\n\
        print(hashlib.sha256(open(path, 'rb').read()).hexdigest())\n";
    let out = std::process::Command::new(python)
        .args(["-c", script])
        .arg(&path)
        .arg(rows.to_string())
        .output()
        .map_err(|e| format!("{python}: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(File {
        bytes,
        sha256: String::from_utf8_lossy(&out.stdout).trim().to_owned(),
    })
}

fn path_of(i: u64) -> String {
    format!("part-{i:06}.parquet")
}

/// Records version 1 of `slug`: `files` files of `rows` rows, each `file`; uploads the files of
/// `needed` only.
async fn publish(
    stack: &Stack,
    slug: &Slug,
    files: u64,
    rows: u64,
    file: &File,
    needed: &[u64],
) -> Result<(), String> {
    let size = file.bytes.len() as u64;
    let input = ManifestInput {
        files: (0..files)
            .map(|i| FileInput {
                path: RelPath::parse(&path_of(i)).expect("a valid path"),
                split: None,
                rows,
                size,
                sha256: file.sha256.clone(),
                stats: Vec::new(),
            })
            .collect(),
        columns: vec!["id".into(), "value".into(), "label".into()],
        ..Default::default()
    };
    let version = Version {
        columns: &["id", "value", "label"],
        schema_json: "[]".into(),
        name: "Rows over many files",
        source: "catalog-bench rows-many",
    };
    let (s3, bucket) = (&stack.s3, &stack.target.bucket);
    record(stack, slug, input, version, |prefix| async move {
        for i in needed {
            s3.put_object()
                .bucket(bucket)
                .key(format!("{prefix}{}", path_of(*i)))
                .body(file.bytes.clone().into())
                .send()
                .await
                .map_err(|e| WriteError::Invalid(format!("upload: {e:?}")))?;
        }
        Ok(())
    })
    .await
}

/// One read of a page: its answer's length, the DynamoDB calls and the S3 GETs, the time.
struct Measured {
    length: u64,
    dynamo: Vec<Call>,
    s3: Vec<Call>,
    ms: f64,
}

async fn read_page(
    stack: &Stack,
    rows: &catalog_preview::ParquetRows<catalog_preview::S3Source>,
    s3: &Wire,
    path: &str,
) -> Result<Measured, String> {
    let dynamo = Wire::default();
    let (catalog, _) = stack.wired(&dynamo, &Wire::default());
    s3.take_calls();
    let started = Instant::now();
    let resp = api::rows(
        &v2_request(path, &[("x-api-key", READ_KEY)]),
        &catalog,
        rows,
        Utc::now(),
    )
    .await;
    let ms = started.elapsed().as_secs_f64() * 1e3;
    let body = json_body(&resp);
    if resp.status() != 200 {
        return Err(format!("{path}: {} {body}", resp.status()));
    }
    Ok(Measured {
        length: body["length"].as_u64().unwrap_or(0),
        dynamo: dynamo.take_calls(),
        s3: s3.take_calls(),
        ms,
    })
}

fn ops(calls: &[Call]) -> String {
    let mut out: Vec<(String, usize)> = Vec::new();
    for c in calls {
        let name = c
            .operation
            .split('.')
            .nth(1)
            .unwrap_or(&c.operation)
            .to_owned();
        match out.last_mut() {
            Some((last, n)) if *last == name => *n += 1,
            _ => out.push((name, 1)),
        }
    }
    out.iter()
        .map(|(op, n)| {
            if *n > 1 {
                format!("{op} ×{n}")
            } else {
                op.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn run(files: u64, row_counts: &[u64]) -> Result<(), String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| ".venv/bin/python".into());
    let stack = Stack::start().await;
    stack.add_key(READ_KEY, &["read"], Utc::now(), None).await;
    println!(
        "| files × rows | page | read | rows shown | DynamoDB round trips | DynamoDB bytes | \
         S3 GETs | S3 bytes | files read | ms (debug) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &rows in row_counts {
        let file = write_file(&python, rows)?;
        let total = files * rows;
        let chunk_end = (CHUNK_FILES as u64).min(files) * rows;
        let pages = [
            ("offset 0", 0),
            ("across chunk 0's end", chunk_end.saturating_sub(50)),
            ("near the end", total.saturating_sub(100)),
            ("past the end", total),
        ];
        // The files the pages read (past the end: the last file's footer).
        let mut needed: Vec<u64> = pages
            .iter()
            .flat_map(|&(_, offset)| {
                let first = (offset / rows).min(files - 1);
                let last = ((offset + 99) / rows).min(files - 1);
                first..=last
            })
            .collect();
        needed.sort_unstable();
        needed.dedup();
        let slug = Slug::parse(&format!("bench-rows-many-{rows}")).expect("a slug");
        let started = Instant::now();
        publish(&stack, &slug, files, rows, &file, &needed).await?;
        eprintln!(
            "{files} files of {rows} rows recorded in {:.1} s ({} uploaded, {} bytes each)",
            started.elapsed().as_secs_f64(),
            needed.len(),
            file.bytes.len()
        );
        // A key's first use is recorded once an hour: not part of a page's cost.
        let warmup = Wire::default();
        read_page(
            &stack,
            &stack.rows_wired(&warmup),
            &warmup,
            &format!("/api/v1/datasets/{slug}/rows?length=1"),
        )
        .await?;
        for (name, offset) in pages {
            let s3 = Wire::default();
            let reader = Arc::new(stack.rows_wired(&s3));
            let path = format!("/api/v1/datasets/{slug}/rows?offset={offset}&length=100");
            for read in ["cold", "warm"] {
                let m = read_page(&stack, &reader, &s3, &path).await?;
                let files_read = if m.length > 0 {
                    (offset + m.length - 1) / rows - offset / rows + 1
                } else {
                    0
                };
                println!(
                    "| {files} × {rows} | {name} ({offset}) | {read} | {} | {} ({}) | {} | {} | {} | {} | {:.1} |",
                    m.length,
                    m.dynamo.len(),
                    ops(&m.dynamo),
                    m.dynamo.iter().map(|c| c.bytes).sum::<usize>(),
                    m.s3.len(),
                    m.s3.iter().map(|c| c.bytes).sum::<usize>(),
                    files_read,
                    m.ms
                );
            }
        }
    }
    Ok(())
}
