//! The data endpoint's listing of a version of many files (issue 38, §5): a version of 100,000
//! files (`year=2020..2024/month=1..12/part-<i>.parquet`, 60 partitions, files in order)
//! recorded in moto as `catalog-admin publish` records it (`DynamoWriter::publish_files`: the
//! manifest's chunk items, the version item with its summary, activation). No file is uploaded:
//! a listing signs its URLs locally and reads no object. For each page asked of the data route's
//! handler (`catalog_http::api::data`, the gate included), in process: cold (new DynamoDB and S3
//! clients, so new connections and the signer's first credentials) and then warm (the same
//! clients, the median of `rounds`): the DynamoDB round trips and the bytes of their answers,
//! the answer's bytes, the wall time and the process's CPU time (`CLOCK_PROCESS_CPUTIME_ID`:
//! the handler, the SDK and the HTTP client on every thread; moto runs in its own process).
//! Then the CPU of signing 1,000 URLs alone.

use std::time::Instant;

use catalog::files::{FileInput, ManifestInput, RelPath};
use catalog::input::Slug;
use catalog::ports::UrlSigner;
use catalog_http::api;
use catalog_tests::stack::Stack;
use catalog_tests::{json_body, v2_request, Call, Wire};
use chrono::Utc;

use crate::synthetic::{cpu_ms, digest, hive_path, median, record, Version};

const READ_KEY: &str = "dcat_bench_data_listing_read_key_000000000000000000000000000000";

/// Records version 1 of `slug`: `files` files of 1,000 rows and 100 KB each, no split, Hive
/// partitions by year and month.
async fn publish(stack: &Stack, slug: &Slug, files: u64) -> Result<(), String> {
    let (rows, size) = (1_000u64, 100_000u64);
    let input = ManifestInput {
        files: (0..files)
            .map(|i| FileInput {
                path: RelPath::parse(&hive_path(i, files, false)).expect("a valid path"),
                split: None,
                rows,
                size,
                sha256: digest(i),
                stats: Vec::new(),
            })
            .collect(),
        columns: vec!["id".into(), "value".into(), "label".into()],
        ..Default::default()
    };
    let version = Version {
        columns: &["id", "value", "label", "year", "month"],
        schema_json: "[]".into(),
        name: "A listing of many files",
        source: "catalog-bench data-listing",
    };
    record(stack, slug, input, version, |_| async { Ok(()) }).await
}

/// One answer: its files and bytes, the DynamoDB calls, the wall and CPU time.
struct Measured {
    files: usize,
    file_count: u64,
    body_bytes: usize,
    next: Option<String>,
    dynamo: Vec<Call>,
    wall_ms: f64,
    cpu_ms: f64,
}

async fn ask(
    catalog: &catalog_search::listing::IndexedCatalog,
    signer: &catalog_aws::s3::S3Signer,
    dynamo: &Wire,
    path: &str,
) -> Result<Measured, String> {
    dynamo.take_calls();
    let (wall, cpu) = (Instant::now(), cpu_ms());
    let resp = api::data(
        &v2_request(path, &[("x-api-key", READ_KEY)]),
        catalog,
        signer,
        Utc::now(),
    )
    .await;
    let (wall_ms, cpu_ms) = (wall.elapsed().as_secs_f64() * 1e3, cpu_ms() - cpu);
    let body = json_body(&resp);
    if resp.status() != 200 {
        return Err(format!("{path}: {} {body}", resp.status()));
    }
    Ok(Measured {
        files: body["files"].as_array().map_or(0, Vec::len),
        file_count: body["file_count"].as_u64().unwrap_or(0),
        body_bytes: resp.body().len(),
        next: body["next_page_token"].as_str().map(str::to_owned),
        dynamo: dynamo.take_calls(),
        wall_ms,
        cpu_ms,
    })
}

fn calls(calls: &[Call]) -> String {
    calls
        .iter()
        .map(|c| {
            format!(
                "{} ({} items, {} B)",
                c.operation.split('.').nth(1).unwrap_or(&c.operation),
                c.items,
                c.bytes
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub async fn run(files: u64, rounds: usize) -> Result<(), String> {
    let stack = Stack::start().await;
    stack.add_key(READ_KEY, &["read"], Utc::now(), None).await;
    let slug = Slug::parse("bench-data-listing").expect("a slug");
    let started = Instant::now();
    publish(&stack, &slug, files).await?;
    eprintln!(
        "{files} files recorded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let base = format!("/api/v1/datasets/{slug}/data");
    // A key's first use is recorded once an hour: not part of a page's cost. And the token of
    // the middle page, by following the pages.
    let (catalog, signer) = stack.wired(&Wire::default(), &Wire::default());
    let middle = files / 1_000 / 2;
    let mut token = None;
    for _ in 0..middle {
        let path = match &token {
            None => base.clone(),
            Some(t) => format!("{base}?page_token={t}"),
        };
        token = ask(&catalog, &signer, &Wire::default(), &path).await?.next;
    }
    let token = token.ok_or("no middle page")?;
    let pages = [
        ("page 1, no filter".to_owned(), base.clone()),
        (
            format!("page {}, by its token", middle + 1),
            format!("{base}?page_token={token}"),
        ),
        (
            "page 1 of year=2023 AND month=6".to_owned(),
            format!("{base}?partition=year=2023&partition=month=6"),
        ),
        (
            "page 1 of year=2022".to_owned(),
            format!("{base}?partition=year=2022"),
        ),
        (
            "page 1, page_size=100".to_owned(),
            format!("{base}?page_size=100"),
        ),
        (
            "a filter naming nothing (year=1999)".to_owned(),
            format!("{base}?partition=year=1999"),
        ),
    ];
    println!(
        "| page | read | files (of) | answer bytes | DynamoDB round trips | DynamoDB bytes | wall ms | CPU ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (name, path) in &pages {
        let dynamo = Wire::default();
        let (catalog, signer) = stack.wired(&dynamo, &Wire::default());
        let cold = ask(&catalog, &signer, &dynamo, path).await?;
        let mut warm = Vec::new();
        for _ in 0..rounds {
            warm.push(ask(&catalog, &signer, &dynamo, path).await?);
        }
        for (read, m, wall, cpu) in [
            ("cold", &cold, cold.wall_ms, cold.cpu_ms),
            (
                "warm (median)",
                &warm[0],
                median(warm.iter().map(|m| m.wall_ms).collect()),
                median(warm.iter().map(|m| m.cpu_ms).collect()),
            ),
        ] {
            println!(
                "| {name} | {read} | {} ({}) | {} | {}: {} | {} | {wall:.1} | {cpu:.1} |",
                m.files,
                m.file_count,
                m.body_bytes,
                m.dynamo.len(),
                calls(&m.dynamo),
                m.dynamo.iter().map(|c| c.bytes).sum::<usize>()
            );
        }
    }

    // Signing alone: 1,000 URLs with a warm signer.
    let (_, signer) = stack.wired(&Wire::default(), &Wire::default());
    let now = Utc::now();
    signer
        .sign("datasets/x/v1/files/a.parquet", "a.parquet", now)
        .await
        .map_err(|e| e.to_string())?;
    let mut per_page = Vec::new();
    for _ in 0..rounds.max(3) {
        let cpu = cpu_ms();
        for i in 0..1_000u64 {
            let path = hive_path(i, files, false);
            signer
                .sign(&format!("datasets/{slug}/v1/files/{path}"), &path, now)
                .await
                .map_err(|e| e.to_string())?;
        }
        per_page.push(cpu_ms() - cpu);
    }
    println!();
    println!(
        "Signing 1,000 URLs alone (a warm S3Signer, median of {}): {:.1} ms CPU",
        per_page.len(),
        median(per_page)
    );
    Ok(())
}
