//! The list function's cold start and memory with its caches full, on a catalog of N datasets
//! (default 1,000,000), its bootstrap run as Lambda runs it (`crate::lambda`).
//!
//! Seeding (moto cannot take a million datasets' items, so only what a listing reads is
//! written): the sample datasets through the writer, for the templates; the text index of N
//! synthetic datasets (the text bench's catalog) built and stored by the writer's
//! `rebuild_text`, as `reindex` does; the three kept orders of N synthetic sort keys (the orders
//! bench's), built and stored with the same functions as the writer's `rebuild_orders` (without
//! the `at#` items, which only writers read); the catalog counter at N and the facet counters;
//! and the `LIST` entries of the newest [`ENTRIES`] positions, copies of a published entry with
//! the synthetic text.
//!
//! Then one bootstrap serves phases of listings meant to fill every cache: every shard of the
//! index (every two-letter start and the most common words), every order's positions, the
//! facets' shards, the matches' entries (pages of the newest matches) and the kept matches;
//! then the costliest queries again. Printed: the init, each phase's time and the process's
//! resident memory after it, and its peak (VmHWM).

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use bytes::Bytes;
use catalog_aws::dynamo::layout::name::{
    CATEGORY, DESCRIPTION, FACETS_INDEXED, LICENSE, NAME, ORDERS_INDEXED, SK, SLUG, TAGS, TOTAL,
};
use catalog_aws::dynamo::layout::{counter_key, list_sk, Item, COUNTER_PK, LIST_PK};
use catalog_search::order::{self, Sorted};
use catalog_search::orders::{chunk_items, OrderManifest};
use catalog_tests::{v2_event, Stack};

use crate::index::Rng;
use crate::lambda::{self, proc_status_kb, Function};
use crate::runtime::RuntimeApi;

/// How many of the newest positions have a `LIST` entry: more than the entries an instance
/// keeps (10,000), so that pages of the newest matches fill that cache.
const ENTRIES: u64 = 12_000;
/// The list function's peak resident memory with every cache full must stay within this
/// (issue 23), so that it fits its 512 MB.
const PEAK_TARGET_BYTES: u64 = 400_000_000;
/// How many cold starts are timed.
const COLD_STARTS: usize = 9;

pub struct Options {
    pub bootstrap: PathBuf,
    pub datasets: usize,
}

fn e(what: &str) -> impl Fn(String) -> String + '_ {
    move |err| format!("{what}: {err}")
}

pub async fn run(opts: Options) -> Result<(), String> {
    let n = opts.datasets as u64;
    if n < ENTRIES {
        return Err(format!("--datasets must be at least {ENTRIES}"));
    }
    let stack = Stack::start().await;
    let now = chrono::Utc::now();
    stack.seed_samples(now).await;
    let table = stack.target.datasets_table.clone();
    let published = catalog_aws::dynamo::requests::query_partition(&stack.dynamo, &table, LIST_PK)
        .await
        .map_err(|err| e("list entries")(err.to_string()))?;
    let template = published.first().ok_or("no published entry")?.clone();

    let started = Instant::now();
    let docs = crate::text::synthetic(opts.datasets);
    let built = stack
        .writer()
        .rebuild_text(&docs)
        .await
        .map_err(|err| e("text index")(err.to_string()))?;
    println!(
        "Seeded: the text index of {n} synthetic datasets ({} shards, {:.1} MB), built and \
         stored by the writer in {:.0} s.",
        built.shards,
        built.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let fields: Vec<_> = (1..=n)
        .map(|seq| crate::orders::synthetic(&mut rng, seq))
        .collect();
    let mut chunks_written = 0;
    for sort in Sorted::ALL {
        let chunks = order::build(
            fields
                .iter()
                .zip(1..)
                .map(|(f, seq)| (f.key(sort, seq), seq))
                .collect(),
        );
        let mut refs = Vec::with_capacity(chunks.len());
        let mut items = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            if let Some((r, written)) = chunk_items(sort, 1, "bench", i, chunk)
                .map_err(|err| e("order chunk")(err.to_string()))?
            {
                refs.push(r);
                items.extend(written);
            }
        }
        chunks_written += refs.len();
        items.push(
            OrderManifest {
                sort,
                generation: 1,
                datasets: n,
                chunks: refs,
            }
            .to_item()
            .map_err(|err| e("order manifest")(err.to_string()))?,
        );
        put_all(&stack, items).await?;
    }
    drop(fields);
    println!(
        "Seeded: the three kept orders ({chunks_written} chunks) in {:.0} s.",
        started.elapsed().as_secs_f64()
    );

    let started = Instant::now();
    let entries: Vec<Item> = (n - ENTRIES + 1..=n)
        .map(|seq| {
            let doc = &docs[seq as usize - 1];
            let mut entry = template.clone();
            let s = |v: &str| AttributeValue::S(v.to_owned());
            entry.insert(SK.into(), s(&list_sk(seq)));
            entry.insert(SLUG.into(), s(&format!("dataset-{seq}")));
            entry.insert(NAME.into(), s(&doc.name));
            match &doc.description {
                Some(d) => entry.insert(DESCRIPTION.into(), s(d)),
                None => entry.remove(DESCRIPTION),
            };
            for facet in &doc.facets {
                if let Some(c) = facet.strip_prefix("category#") {
                    entry.insert(CATEGORY.into(), s(c));
                }
                if let Some(l) = facet.strip_prefix("license#") {
                    entry.insert(LICENSE.into(), s(l));
                }
            }
            entry.insert(
                TAGS.into(),
                AttributeValue::L(doc.tags.iter().map(|t| s(t)).collect()),
            );
            entry
        })
        .collect();
    put_all(&stack, entries).await?;
    let mut counts: HashMap<String, u64> = HashMap::new();
    for doc in &docs {
        for facet in &doc.facets {
            if !facet.starts_with("tag#") {
                *counts.entry(facet.clone()).or_default() += 1;
            }
        }
    }
    drop(docs);
    let mut counters: Vec<Item> = counts
        .iter()
        .map(|(key, total)| {
            let mut item = counter_key(format!("{COUNTER_PK}#{key}"));
            item.insert(TOTAL.into(), AttributeValue::N(total.to_string()));
            item
        })
        .collect();
    let mut counter = counter_key(COUNTER_PK);
    if let Some(read) = stack
        .dynamo
        .get_item()
        .table_name(&table)
        .set_key(Some(counter.clone()))
        .send()
        .await
        .map_err(|err| e("counter")(format!("{err:?}")))?
        .item
    {
        counter = read;
    }
    counter.insert(TOTAL.into(), AttributeValue::N(n.to_string()));
    counter.insert(FACETS_INDEXED.into(), AttributeValue::Bool(true));
    counter.insert(ORDERS_INDEXED.into(), AttributeValue::Bool(true));
    counters.push(counter);
    put_all(&stack, counters).await?;
    println!(
        "Seeded: the newest {ENTRIES} list entries and {} counters in {:.0} s.\n",
        counts.len() + 1,
        started.elapsed().as_secs_f64()
    );

    measure(&stack, &opts).await
}

/// The phases of listings one instance serves, in order.
fn phases() -> Vec<(&'static str, Vec<String>)> {
    let q = |words: &str, rest: &str| format!("/api/v1/datasets?q={words}{rest}");
    let mut starts: Vec<String> = (0..200_000)
        .map(crate::text::word)
        .map(|w| w.chars().take(2).collect())
        .collect();
    starts.sort();
    starts.dedup();
    let common: Vec<String> = (0..8).map(crate::text::word).collect();
    vec![
        ("the plain listing", vec!["/api/v1/datasets".to_owned()]),
        (
            "every two-letter start, then the 300 most common words (every word shard)",
            starts
                .iter()
                .cloned()
                .chain((0..300).map(crate::text::word))
                .map(|w| q(&w, ""))
                .collect(),
        ),
        (
            "every category and license with the next (every facet shard)",
            (0..40)
                .map(|c| format!("/api/v1/datasets?category=c{c}&license=l{}", c % 8))
                .collect(),
        ),
        (
            "two filters sorted by name, update and downloads (every chunk of every order)",
            ["name", "updated", "downloads"]
                .iter()
                .map(|s| format!("/api/v1/datasets?category=c0&license=l0&sort={s}"))
                .collect(),
        ),
        (
            "the most common word sorted by name, update and downloads",
            ["name", "updated", "downloads"]
                .iter()
                .map(|s| q(&common[0], &format!("&sort={s}")))
                .collect(),
        ),
        (
            "120 pages of 100 of its newest matches (the entries kept)",
            (1..=120)
                .map(|p| q(&common[0], &format!("&sort=created&page={p}&page_size=100")))
                .collect(),
        ),
        (
            "the eight most common words, alone then together (the matches kept)",
            common
                .iter()
                .map(|w| q(w, ""))
                .chain([
                    q(&common.join("%20"), ""),
                    q(&common.join("%20"), "&sort=name"),
                ])
                .collect(),
        ),
    ]
}

async fn measure(stack: &Stack, opts: &Options) -> Result<(), String> {
    let net = lambda::Net::start(stack).await?;
    let home = std::env::temp_dir().join(format!("catalog-bench-home-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&home).map_err(|err| err.to_string())?;
    let base = lambda::lambda_env(stack, &net, &home);
    let function = Function {
        name: "catalog-list",
        bootstrap: opts.bootstrap.clone(),
        event: Bytes::new(),
        extra_env: vec![("AWS_LAMBDA_FUNCTION_MEMORY_SIZE".into(), "512".into())],
    };
    // Cold starts: spawn to the first `next`, a fresh process each (Lambda's Init Duration).
    let mut inits = Vec::new();
    for _ in 0..COLD_STARTS {
        let mut api = RuntimeApi::start().await.map_err(|err| err.to_string())?;
        let start = Instant::now();
        let mut child = lambda::spawn(&function, &base, &api)?;
        let ready = api.next_request().await?;
        inits.push(ready - start);
        let _ = child.kill().await;
    }
    inits.sort();
    let mut api = RuntimeApi::start().await.map_err(|err| err.to_string())?;
    let mut child = lambda::spawn(&function, &base, &api)?;
    let pid = child.id().ok_or("no pid")?;
    api.next_request().await?;
    let rss = |pid| proc_status_kb(pid, "VmRSS:").map(|kb| kb as f64 / 1024.0);
    println!(
        "The list function ({}), {} datasets: init {:.2} ms (median of {COLD_STARTS} cold \
         starts; {:.2} to {:.2}), resident {:.1} MiB before its first request.\n",
        opts.bootstrap.display(),
        opts.datasets,
        inits[COLD_STARTS / 2].as_secs_f64() * 1e3,
        inits[0].as_secs_f64() * 1e3,
        inits[COLD_STARTS - 1].as_secs_f64() * 1e3,
        rss(pid)?
    );
    println!("| phase | listings | words left out | time: all / slowest | resident after |");
    println!("|---|---|---|---|---|");
    for (phase, paths) in phases() {
        let started = Instant::now();
        let mut slowest = Duration::ZERO;
        let mut left_out = 0;
        for path in &paths {
            let event = Bytes::from(v2_event(path, &[]).to_string().into_bytes());
            let t = Instant::now();
            let answer = tokio::time::timeout(Duration::from_secs(120), api.invoke(event))
                .await
                .map_err(|_| format!("{path}: timed out"))??;
            slowest = slowest.max(t.elapsed());
            if answer.get("statusCode").and_then(|s| s.as_u64()) != Some(200) {
                return Err(format!("{path} answered {answer}"));
            }
            let body: serde_json::Value = answer
                .get("body")
                .and_then(|b| b.as_str())
                .and_then(|b| serde_json::from_str(b).ok())
                .unwrap_or_default();
            left_out += body["ignored_words"].as_array().map_or(0, Vec::len);
        }
        println!(
            "| {phase} | {} | {left_out} | {:.1} s / {:.0} ms | {:.1} MiB |",
            paths.len(),
            started.elapsed().as_secs_f64(),
            slowest.as_secs_f64() * 1e3,
            rss(pid)?
        );
    }
    let peak_kb = proc_status_kb(pid, "VmHWM:")?;
    let _ = child.kill().await;
    let met = peak_kb * 1024 <= PEAK_TARGET_BYTES;
    println!(
        "\nPeak resident memory (VmHWM): {:.1} MiB ({:.0} MB; target {} MB: {}).",
        peak_kb as f64 / 1024.0,
        (peak_kb * 1024) as f64 / 1e6,
        PEAK_TARGET_BYTES / 1_000_000,
        if met { "met" } else { "MISSED" }
    );
    match met {
        true => Ok(()),
        false => Err("the list function's peak memory missed its target".into()),
    }
}

/// Writes these items, 25 to a BatchWriteItem, 8 at once, each retried as the roundtrips seed does.
async fn put_all(stack: &Stack, items: Vec<Item>) -> Result<(), String> {
    let table = stack.target.datasets_table.clone();
    let mut batches = items.chunks(25).map(<[Item]>::to_vec).collect::<Vec<_>>();
    while !batches.is_empty() {
        let round: Vec<Vec<Item>> = batches.drain(..batches.len().min(8)).collect();
        let mut tasks = tokio::task::JoinSet::new();
        for batch in round {
            let client = stack.dynamo.clone();
            let table = table.clone();
            tasks.spawn(async move {
                let requests = batch
                    .into_iter()
                    .map(|item| {
                        Ok(WriteRequest::builder()
                            .put_request(PutRequest::builder().set_item(Some(item)).build()?)
                            .build())
                    })
                    .collect::<Result<Vec<_>, aws_sdk_dynamodb::error::BuildError>>()
                    .map_err(|err| err.to_string())?;
                crate::roundtrips::write_batch(&client, &table, requests).await
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.map_err(|err| err.to_string())??;
        }
    }
    Ok(())
}
