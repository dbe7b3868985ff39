//! A bounded load test: a fixed number of requests, from this process, at a fixed concurrency,
//! against the local API (the same handlers as the functions, over moto and s3s-fs), mixing
//! every endpoint and key case. Counts wrong statuses and transport errors, and the local API's
//! memory before and after.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use catalog_tests::{free_port, wait_for_port, Guard, Stack, EVENTS_READ_KEY};
use tokio::sync::Semaphore;

use crate::lambda::proc_status_kb;
use crate::stats::{ms, percentile};

pub struct Options {
    pub api: PathBuf,
    pub requests: usize,
    pub concurrency: usize,
}

const NO_READ: &str = "dcat_load_noread_00000000000000000000000000000000000000000000000";
const REVOKED: &str = "dcat_load_revoked_0000000000000000000000000000000000000000000000";

/// (name, method, path and query, headers, expected status)
type Case = (
    &'static str,
    &'static str,
    String,
    Vec<(&'static str, String)>,
    u16,
);

fn cases() -> Vec<Case> {
    let key = || vec![("x-api-key", EVENTS_READ_KEY.to_owned())];
    vec![
        ("list", "GET", "/api/v1/datasets".into(), vec![], 200),
        (
            "list, page 2 of 2",
            "GET",
            "/api/v1/datasets?page=2&page_size=2".into(),
            vec![],
            200,
        ),
        (
            "list, bad page",
            "GET",
            "/api/v1/datasets?page=0".into(),
            vec![],
            400,
        ),
        (
            "metadata",
            "GET",
            "/api/v1/datasets/air-quality-hourly".into(),
            vec![],
            200,
        ),
        (
            "metadata, unknown",
            "GET",
            "/api/v1/datasets/no-such-dataset".into(),
            vec![],
            404,
        ),
        (
            "data, x-api-key",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            key(),
            200,
        ),
        (
            "data, Bearer",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            vec![("authorization", format!("Bearer {EVENTS_READ_KEY}"))],
            200,
        ),
        (
            "data, keyless window",
            "GET",
            "/api/v1/datasets/city-bikes/data".into(),
            vec![],
            200,
        ),
        (
            "data, no key",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            vec![],
            401,
        ),
        (
            "data, unknown key",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            vec![("x-api-key", "dcat_unknown".into())],
            401,
        ),
        (
            "data, revoked key",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            vec![("x-api-key", REVOKED.into())],
            401,
        ),
        (
            "data, no read scope",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data".into(),
            vec![("x-api-key", NO_READ.into())],
            403,
        ),
        (
            "data, format=csv",
            "GET",
            "/api/v1/datasets/air-quality-hourly/data?format=csv".into(),
            key(),
            400,
        ),
        ("POST", "POST", "/api/v1/datasets".into(), vec![], 405),
    ]
}

#[derive(Default, Clone)]
struct Tally {
    sent: usize,
    wrong: usize,
    errors: usize,
    latencies: Vec<Duration>,
}

pub async fn run(opts: Options) -> Result<(), String> {
    let stack = Stack::start().await;
    let now = chrono::Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    stack.add_key(NO_READ, &["write"], now, None).await;
    stack.add_key(REVOKED, &["read"], now, None).await;
    stack
        .writer()
        .revoke_key(&catalog::keys::KeyHash::of(REVOKED), now)
        .await
        .map_err(|e| e.to_string())?;
    let port = free_port();
    let mut api = Guard(
        Command::new(&opts.api)
            .envs(stack.function_env())
            .env("LOCAL_API_ADDR", format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("start {}: {e}", opts.api.display()))?,
    );
    wait_for_port(port, &mut api.0, "local API");
    let pid = api.0.id();
    let base = format!("http://127.0.0.1:{port}");
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(opts.concurrency)
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .map_err(|e| e.to_string())?;
    let cases = Arc::new(cases());

    // Warm-up: every case a few times, then the memory baseline.
    let warm = send_all(&client, &base, &cases, cases.len() * 10, opts.concurrency).await?;
    if warm.iter().any(|t| t.wrong + t.errors > 0) {
        return Err("wrong answers during warm-up".into());
    }
    // Two halves, with the memory read after each: growth in the second half is what a leak
    // would show once the allocator has settled.
    let rss_before = proc_status_kb(pid, "VmRSS:")?;
    let start = Instant::now();
    let half = opts.requests / 2;
    let mut tallies = send_all(&client, &base, &cases, half, opts.concurrency).await?;
    let rss_half = proc_status_kb(pid, "VmRSS:")?;
    let second = send_all(
        &client,
        &base,
        &cases,
        opts.requests - half,
        opts.concurrency,
    )
    .await?;
    for (t, s) in tallies.iter_mut().zip(second) {
        t.sent += s.sent;
        t.wrong += s.wrong;
        t.errors += s.errors;
        t.latencies.extend(s.latencies);
    }
    let elapsed = start.elapsed();
    let rss_after = proc_status_kb(pid, "VmRSS:")?;
    let hwm = proc_status_kb(pid, "VmHWM:")?;

    println!(
        "{} requests at {} concurrent, {:.1} s, {:.0} requests/s (moto answers every store read).",
        opts.requests,
        opts.concurrency,
        elapsed.as_secs_f64(),
        opts.requests as f64 / elapsed.as_secs_f64()
    );
    println!();
    println!("| case | expected | sent | wrong status | errors | p50 | p99 |");
    println!("|---|---|---|---|---|---|---|");
    let (mut wrong, mut errors) = (0, 0);
    for ((name, _, _, _, expected), t) in cases.iter().zip(&tallies) {
        let mut lat = t.latencies.clone();
        lat.sort();
        wrong += t.wrong;
        errors += t.errors;
        println!(
            "| {name} | {expected} | {} | {} | {} | {} | {} |",
            t.sent,
            t.wrong,
            t.errors,
            ms(percentile(&lat, 50.0)),
            ms(percentile(&lat, 99.0))
        );
    }
    println!();
    println!(
        "Local API memory: RSS {rss_before} KiB after warm-up, {rss_half} KiB after {half} requests, {rss_after} KiB after {} (second half {:+} KiB), peak {hwm} KiB.",
        opts.requests,
        rss_after as i64 - rss_half as i64
    );
    println!("Wrong statuses: {wrong}. Errors: {errors}.");
    if wrong + errors > 0 {
        return Err(format!("{wrong} wrong statuses, {errors} errors"));
    }
    Ok(())
}

async fn send_all(
    client: &reqwest::Client,
    base: &str,
    cases: &Arc<Vec<Case>>,
    requests: usize,
    concurrency: usize,
) -> Result<Vec<Tally>, String> {
    let permits = Arc::new(Semaphore::new(concurrency));
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..requests {
        let permit = permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let client = client.clone();
        let cases = cases.clone();
        let base = base.to_owned();
        tasks.spawn(async move {
            let which = i % cases.len();
            let (_, method, path, headers, expected) = &cases[which];
            let t = Instant::now();
            let outcome = match reqwest::Method::from_bytes(method.as_bytes()) {
                Ok(method) => {
                    let mut req = client.request(method, format!("{base}{path}"));
                    for (k, v) in headers {
                        req = req.header(*k, v);
                    }
                    match req.send().await {
                        Ok(resp) => {
                            let status = resp.status().as_u16();
                            let body = resp.bytes().await;
                            let json_ok = body
                                .as_ref()
                                .ok()
                                .and_then(|b| serde_json::from_slice::<serde_json::Value>(b).ok())
                                .is_some();
                            Some(status == *expected && json_ok)
                        }
                        Err(_) => None,
                    }
                }
                Err(_) => None,
            };
            drop(permit);
            (which, outcome, t.elapsed())
        });
    }
    let mut tallies = vec![Tally::default(); cases.len()];
    while let Some(done) = tasks.join_next().await {
        let (which, outcome, latency) = done.map_err(|e| e.to_string())?;
        let t = &mut tallies[which];
        t.sent += 1;
        t.latencies.push(latency);
        match outcome {
            Some(true) => {}
            Some(false) => t.wrong += 1,
            None => t.errors += 1,
        }
    }
    Ok(tallies)
}
