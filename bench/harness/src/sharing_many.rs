//! Delta Sharing's query of a table of many files (issue 38, §5): a version of 100,000 files
//! (`year=2020..2024/month=01..12/part-<i>.parquet`, 60 Hive partitions, files in order, each
//! with statistics of three columns: `id` its own range of 1,000, `value`, `label`) recorded in
//! moto as `catalog-admin publish` records it (`DynamoWriter::publish_files`). No file is
//! uploaded: a query signs its URLs locally and reads no object. Each query asked of the sharing
//! route's handler (`catalog_http::api::sharing`, the gate included), in process, cold (new
//! DynamoDB and S3 clients) and warm (the same clients, the median of `rounds`): the files
//! returned, the manifest chunks read, the DynamoDB round trips and their bytes, the answer's
//! bytes, the wall and CPU time.

use std::time::Instant;

use catalog::files::{ColumnRange, FileInput, ManifestInput, RelPath, StatValue};
use catalog::input::Slug;
use catalog_http::api;
use catalog_http::testing::V2Event;
use catalog_tests::stack::Stack;
use catalog_tests::{Call, Wire};
use chrono::Utc;
use serde_json::{json, Value};

use crate::synthetic::{cpu_ms, digest, hive_path, median, record, Version};

const READ_KEY: &str = "dcat_bench_sharing_many_read_key_0000000000000000000000000000000";

/// Records version 1 of `slug`: `files` files of 1,000 rows and 100 KB each, with statistics.
async fn publish(stack: &Stack, slug: &Slug, files: u64) -> Result<(), String> {
    let (rows, size) = (1_000u64, 100_000u64);
    let range = |min: StatValue, max: StatValue| ColumnRange {
        min: Some(min),
        max: Some(max),
        null_count: Some(0),
    };
    let input = ManifestInput {
        files: (0..files)
            .map(|i| {
                let first = (i * rows) as i64;
                FileInput {
                    path: RelPath::parse(&hive_path(i, files, true)).expect("a valid path"),
                    split: None,
                    rows,
                    size,
                    sha256: digest(i),
                    stats: vec![
                        (
                            "id".into(),
                            range(StatValue::Int(first), StatValue::Int(first + 999)),
                        ),
                        (
                            "value".into(),
                            range(StatValue::Float(0.5), StatValue::Float(99.5)),
                        ),
                        (
                            "label".into(),
                            range(
                                StatValue::Text(format!("l{first}")),
                                StatValue::Text(format!("l{}", first + 999)),
                            ),
                        ),
                    ],
                }
            })
            .collect(),
        columns: vec!["id".into(), "value".into(), "label".into()],
        ..Default::default()
    };
    let schema = json!([
        {"name": "id", "dtype": "int64"},
        {"name": "value", "dtype": "double"},
        {"name": "label", "dtype": "string"},
        {"name": "year", "dtype": "int64"},
        {"name": "month", "dtype": "int64"},
    ])
    .to_string();
    let version = Version {
        columns: &["id", "value", "label", "year", "month"],
        schema_json: schema,
        name: "A Delta Sharing table of many files",
        source: "catalog-bench sharing-many",
    };
    record(stack, slug, input, version, |_| async { Ok(()) }).await
}

/// One answer: its files and bytes, the DynamoDB calls, the wall and CPU time.
struct Measured {
    status: u16,
    files: usize,
    next: Option<String>,
    body_bytes: usize,
    dynamo: Vec<Call>,
    wall_ms: f64,
    cpu_ms: f64,
}

async fn ask(
    catalog: &catalog_search::listing::IndexedCatalog,
    signer: &catalog_aws::s3::S3Signer,
    dynamo: &Wire,
    path: &str,
    body: &str,
) -> Measured {
    dynamo.take_calls();
    let event = V2Event::new("POST", &format!("/api/v1/delta-sharing{path}"))
        .body(body)
        .header("authorization", &format!("Bearer {READ_KEY}"));
    let (wall, cpu) = (Instant::now(), cpu_ms());
    let resp = api::sharing(&event.request(), catalog, signer, Utc::now()).await;
    let (wall_ms, cpu_ms) = (wall.elapsed().as_secs_f64() * 1e3, cpu_ms() - cpu);
    let text = String::from_utf8_lossy(resp.body().as_ref()).into_owned();
    let lines: Vec<Value> = text
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Measured {
        status: resp.status().as_u16(),
        files: lines.iter().filter(|l| l.get("file").is_some()).count(),
        next: lines
            .last()
            .and_then(|l| l.pointer("/endStreamAction/nextPageToken"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        body_bytes: text.len(),
        dynamo: dynamo.take_calls(),
        wall_ms,
        cpu_ms,
    }
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

fn equal(column: &str, ty: &str, value: &str) -> Value {
    json!({"op": "equal", "children": [
        {"op": "column", "name": column, "valueType": ty},
        {"op": "literal", "value": value, "valueType": ty}]})
}

pub async fn run(files: u64, rounds: usize) -> Result<(), String> {
    let stack = Stack::start().await;
    stack.add_key(READ_KEY, &["read"], Utc::now(), None).await;
    let slug = Slug::parse("bench-sharing-many").expect("a slug");
    let started = Instant::now();
    publish(&stack, &slug, files).await?;
    eprintln!(
        "{files} files recorded in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    let path = format!("/shares/catalog/schemas/datasets/tables/{slug}/query");
    // A key's first use is recorded once an hour: not part of a query's cost.
    let (catalog, signer) = stack.wired(&Wire::default(), &Wire::default());
    ask(&catalog, &signer, &Wire::default(), &path, "{}").await;
    let month = json!({"op": "and", "children": [
        equal("year", "int", "2023"), equal("month", "int", "6")]})
    .to_string();
    let year = equal("year", "int", "2022").to_string();
    let ids = json!({"op": "lessThan", "children": [
        {"op": "column", "name": "id", "valueType": "long"},
        {"op": "literal", "value": "5000", "valueType": "long"}]})
    .to_string();
    let queries = [
        (
            "year=2023 AND month=6 (jsonPredicateHints), no paging",
            json!({ "jsonPredicateHints": month }),
        ),
        (
            "year=2022, maxFiles=1000 (first page)",
            json!({ "jsonPredicateHints": year, "maxFiles": 1000 }),
        ),
        (
            "year=2022, no paging (refused: too large)",
            json!({ "jsonPredicateHints": year }),
        ),
        (
            "id < 5000 (file statistics), no paging",
            json!({ "jsonPredicateHints": ids }),
        ),
        (
            "year=2023 AND month=6, limitHint=10000",
            json!({ "jsonPredicateHints": month, "limitHint": 10_000 }),
        ),
        (
            "no predicate, maxFiles=1000 (first page)",
            json!({ "maxFiles": 1000 }),
        ),
    ];
    println!(
        "| query | read | status | files | answer bytes | DynamoDB round trips | DynamoDB bytes | wall ms | CPU ms |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for (name, body) in &queries {
        let body = body.to_string();
        let dynamo = Wire::default();
        let (catalog, signer) = stack.wired(&dynamo, &Wire::default());
        let cold = ask(&catalog, &signer, &dynamo, &path, &body).await;
        let mut warm = Vec::new();
        for _ in 0..rounds {
            warm.push(ask(&catalog, &signer, &dynamo, &path, &body).await);
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
                "| {name} | {read} | {} | {} | {} | {}: {} | {} | {wall:.1} | {cpu:.1} |",
                m.status,
                m.files,
                m.body_bytes,
                m.dynamo.len(),
                calls(&m.dynamo),
                m.dynamo.iter().map(|c| c.bytes).sum::<usize>()
            );
        }
    }

    // Every page of year=2022 (20,000 files), 1,000 at a time: round trips and time in all.
    let body = |token: &Option<String>| {
        let mut b = json!({ "jsonPredicateHints": year, "maxFiles": 1000 });
        if let Some(t) = token {
            b["pageToken"] = json!(t);
        }
        b.to_string()
    };
    let dynamo = Wire::default();
    let (catalog, signer) = stack.wired(&dynamo, &Wire::default());
    let (mut pages, mut total, mut trips, mut bytes, mut wall) = (0, 0, 0, 0, 0.0);
    let mut token = None;
    loop {
        let m = ask(&catalog, &signer, &dynamo, &path, &body(&token)).await;
        pages += 1;
        total += m.files;
        trips += m.dynamo.len();
        bytes += m.body_bytes;
        wall += m.wall_ms;
        token = m.next;
        if token.is_none() || pages > 200 {
            break;
        }
    }
    println!();
    println!(
        "Every page of year=2022, maxFiles=1000: {pages} pages, {total} files, {trips} DynamoDB \
         round trips, {bytes} answer bytes, {wall:.0} ms in all"
    );
    Ok(())
}
