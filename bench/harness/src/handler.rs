//! The handlers' own cost per request, without I/O: the lib crate's handlers over the in-memory
//! catalog and the real S3 signer (which signs locally), timed in thread CPU time on one thread.
//! Each request is the whole path a warm invocation takes in process: parse the API Gateway
//! event JSON into a request, route and validate it, read the store, sign, build the JSON
//! response, format the request's JSON log line, and serialize the response document Lambda
//! gets back.

use std::time::Duration;

use aws_credential_types::provider::SharedCredentialsProvider;
use aws_credential_types::Credentials;
use catalog::input::Slug;
use catalog::keys::{KeyHash, KeyRecord, Scope};
use catalog::records::{ActiveVersion, Card, DatasetMeta, DatasetRecord};
use catalog_aws::s3::S3Signer;
use catalog_memory::MemoryCatalog;
use catalog_tests::{v2_event, EVENTS_READ_KEY};
use chrono::{TimeDelta, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::stats::{median, us};

const TARGET: Duration = Duration::from_micros(50);

fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through a valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

fn record(i: usize) -> DatasetRecord {
    let now = Utc::now();
    let columns: Vec<String> = (0..8).map(|c| format!("column_{c}")).collect();
    let schema: Vec<serde_json::Value> = columns
        .iter()
        .map(|name| {
            serde_json::json!({
                "name": name, "dtype": "double", "null_percent": 0.5, "unique_count": 1000,
                "mean": 1.5, "std": 0.5, "min": 0.0, "max": 3.0, "median": 1.5,
                "sample_values": [1.0, 2.0, 3.0], "top_values": [{"value": 1.0, "count": 10}]
            })
        })
        .collect();
    DatasetRecord {
        id: Uuid::new_v4(),
        slug: Slug::parse(&format!("dataset-{i}")).expect("a slug"),
        meta: DatasetMeta {
            readme: None,
            access: Default::default(),
            card: Card {
                access_level: Default::default(),
                name: format!("Dataset {i}"),
                description: Some("A dataset for the handler benchmark.".into()),
                category: "bench".into(),
                tags: vec!["bench".into(), "hourly".into()],
                license: "CC-BY-4.0".into(),
            },
            source: "https://example.com".into(),
            insights: "Nothing to see.".into(),
            discussions: vec![],
        },
        schema: RawValue::from_string(serde_json::Value::from(schema).to_string()).expect("json"),
        keyless_until: (i == 0).then(|| now + TimeDelta::days(30)),
        created_at: now,
        updated_at: now,
        unpublished_at: None,
        downloads: 0,
        active: Some(ActiveVersion {
            version: 3,
            s3_key: format!("datasets/dataset-{i}/v3/data.parquet"),
            size: 123_456_789,
            row_count: 1_000_000,
            columns,
            sha256: "0".repeat(64),
            published_at: now,
            files: None,
            ingested: None,
        }),
    }
}

pub async fn run(requests: usize) -> Result<(), String> {
    // The functions' logging, as configured in Lambda (JSON), written nowhere: formatting each
    // request's log line is part of the handler's cost, the write is I/O.
    std::env::set_var("AWS_LAMBDA_LOG_FORMAT", "JSON");
    lambda_http::tracing::init_default_subscriber_with_writer(std::io::sink);
    let catalog = MemoryCatalog::default();
    for i in 0..20 {
        catalog.insert_dataset(record(i));
    }
    catalog.insert_key(
        KeyHash::of(EVENTS_READ_KEY),
        KeyRecord {
            owner: None,
            datasets: None,
            id: "bench".into(),
            scopes: vec![Scope::parse("read")],
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
    );
    let signer = S3Signer::new(
        aws_sdk_s3::Config::builder()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .region(aws_sdk_s3::config::Region::new("us-east-1"))
            .build(),
        SharedCredentialsProvider::new(Credentials::new("AKID", "SECRET", None, None, "bench")),
        "catalog-data",
        Duration::from_secs(900),
    );

    let cases: Vec<(&str, String)> = vec![
        (
            "list, page 1",
            v2_event("/api/v1/datasets", &[]).to_string(),
        ),
        (
            "metadata by slug",
            v2_event("/api/v1/datasets/dataset-5", &[]).to_string(),
        ),
        (
            "data with a key (signs a URL)",
            v2_event(
                "/api/v1/datasets/dataset-5/data",
                &[("x-api-key", EVENTS_READ_KEY)],
            )
            .to_string(),
        ),
        (
            "data, keyless window (signs a URL)",
            v2_event("/api/v1/datasets/dataset-0/data", &[]).to_string(),
        ),
        (
            "data, missing key (401)",
            v2_event("/api/v1/datasets/dataset-5/data", &[]).to_string(),
        ),
    ];

    println!(
        "Handler CPU per request (in-memory store, real signer, {requests} requests per part and case, one thread):"
    );
    println!();
    println!("| request | event parse (lambda_http) | handler | response document | whole invocation | invocations/s on one core (1 / whole) | target (handler) | met |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut misses = 0;
    for (name, event) in &cases {
        // Warm up, and check the case answers what it says.
        let status = one(name, event, &catalog, &signer, Stage::Document).await?;
        let expected = if name.contains("401") { 401 } else { 200 };
        if status != expected {
            return Err(format!("{name}: status {status}"));
        }
        // Three loops, each doing one more stage; the differences are each stage's cost. Five
        // rounds of the three, interleaved; the median of each.
        const ROUNDS: usize = 5;
        let per_round = (requests / ROUNDS).max(1);
        let mut samples: [Vec<Duration>; 3] = Default::default();
        for _ in 0..ROUNDS {
            for (i, stage) in [Stage::Parse, Stage::Handler, Stage::Document]
                .into_iter()
                .enumerate()
            {
                let start = thread_cpu();
                for _ in 0..per_round {
                    one(name, event, &catalog, &signer, stage).await?;
                }
                samples[i].push((thread_cpu() - start) / per_round as u32);
            }
        }
        let cost = samples.map(median);
        let parse = cost[0];
        let handler = cost[1].saturating_sub(cost[0]);
        let document = cost[2].saturating_sub(cost[1]);
        let met = handler <= TARGET;
        if !met {
            misses += 1;
        }
        println!(
            "| {name} | {} | {} | {} | {} | {:.0} | ≤ {} | {} |",
            us(parse),
            us(handler),
            us(document),
            us(cost[2]),
            1.0 / cost[2].as_secs_f64(),
            us(TARGET),
            if met { "yes" } else { "NO" }
        );
    }
    println!();
    println!(
        "event parse: the API Gateway JSON into a request (lambda_http); handler: the lib crate's"
    );
    println!(
        "handler, store read and signing included, and its log line; response document: the JSON"
    );
    println!(
        "Lambda gets back (statusCode, headers, body; built here the way lambda_http builds it)."
    );
    println!("Differences of three loops, CPU time.");
    println!();
    if misses > 0 {
        return Err(format!("{misses} case(s) over {}", us(TARGET)));
    }
    Ok(())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Parse,
    Handler,
    Document,
}

async fn one(
    name: &str,
    event: &str,
    catalog: &MemoryCatalog,
    signer: &S3Signer,
    stage: Stage,
) -> Result<u16, String> {
    let req = lambda_http::request::from_str(event).map_err(|e| format!("{name}: {e}"))?;
    if stage == Stage::Parse {
        std::hint::black_box(&req);
        return Ok(0);
    }
    let now = Utc::now();
    let resp = if name.starts_with("list") {
        catalog_http::api::list(&req, catalog, now).await
    } else if name.starts_with("metadata") {
        catalog_http::api::metadata(&req, catalog, now).await
    } else {
        catalog_http::api::data(&req, catalog, signer, now).await
    };
    let status = resp.status().as_u16();
    if stage == Stage::Handler {
        std::hint::black_box(&resp);
        return Ok(status);
    }
    let headers: serde_json::Map<String, serde_json::Value> = resp
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                serde_json::Value::from(v.to_str().unwrap_or_default()),
            )
        })
        .collect();
    let body = std::str::from_utf8(resp.body().as_ref()).unwrap_or_default();
    let document = serde_json::json!({
        "statusCode": status, "headers": headers, "body": body, "isBase64Encoded": false
    });
    std::hint::black_box(serde_json::to_vec(&document).map_err(|e| e.to_string())?);
    Ok(status)
}
