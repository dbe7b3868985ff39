//! Cold start, warm latency, throughput and memory of the release bootstraps, each run as Lambda
//! runs it: a fresh process per cold start, the environment Lambda gives a `provided.al2023`
//! function (Runtime API address, credentials and region in the environment, no `~/.aws`), and
//! the AWS endpoints pointed at the emulators through connection-counting proxies.
//!
//! Every function and the hello-world floor are measured in the same rounds, interleaved, so
//! the figures are side by side and quoted as medians and ratios to the floor.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use catalog_tests::{v2_event, Stack, EVENTS_READ_KEY};
use tokio::process::{Child, Command};

use crate::proxy::Counting;
use crate::runtime::RuntimeApi;
use crate::stats::{median, ms, percentile};

const SIGNING_ROLE: &str = "arn:aws:iam::123456789012:role/catalog-url-signing";

pub struct Options {
    pub bootstraps: PathBuf,
    pub rounds: usize,
    pub warm: usize,
}

pub(crate) struct Function {
    pub(crate) name: &'static str,
    pub(crate) bootstrap: PathBuf,
    pub(crate) event: Bytes,
    pub(crate) extra_env: Vec<(String, String)>,
}

/// The endpoints the functions may reach, each behind a counter. S3 and instance metadata
/// are sinks: the functions sign URLs locally and never call either.
pub(crate) struct Net {
    dynamo: Counting,
    sts: Counting,
    s3: Counting,
    imds: Counting,
}

impl Net {
    /// DynamoDB and STS forwarded to the stack's moto; S3 and instance metadata, sinks.
    pub(crate) async fn start(stack: &Stack) -> Result<Self, String> {
        let moto = stack
            .dynamo_url
            .trim_start_matches("http://")
            .parse()
            .map_err(|e| format!("moto address: {e}"))?;
        Ok(Self {
            dynamo: Counting::forward(moto).await.map_err(|e| e.to_string())?,
            sts: Counting::forward(moto).await.map_err(|e| e.to_string())?,
            s3: Counting::sink().await.map_err(|e| e.to_string())?,
            imds: Counting::sink().await.map_err(|e| e.to_string())?,
        })
    }

    fn connections_between(&self, from: Instant, to: Instant) -> usize {
        [&self.dynamo, &self.sts, &self.s3, &self.imds]
            .iter()
            .map(|c| c.connections_between(from, to))
            .sum()
    }
}

struct Cold {
    init: Duration,
    first: Duration,
    warm: Duration,
    net_during_init: usize,
}

struct Sustained {
    requests: usize,
    elapsed: Duration,
    latencies: Vec<Duration>,
    /// VmRSS after the first quarter, half, three quarters and all of the requests.
    rss_kb: [u64; 4],
    hwm_kb: u64,
    failures: usize,
}

pub async fn run(opts: Options) -> Result<(), String> {
    let stack = Stack::start().await;
    let now = chrono::Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let net = Net::start(&stack).await?;
    let home = std::env::temp_dir().join(format!("catalog-bench-home-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let base = lambda_env(&stack, &net, &home);
    let run_start = Instant::now();

    let event = |path: &str, headers: &[(&str, &str)]| {
        Bytes::from(v2_event(path, headers).to_string().into_bytes())
    };
    let bootstrap = |name: &str| opts.bootstraps.join(name).join("bootstrap");
    let functions = vec![
        Function {
            name: "floor (hello)",
            bootstrap: bootstrap("bench-hello"),
            event: event("/api/v1/datasets", &[]),
            extra_env: vec![],
        },
        Function {
            name: "catalog-list",
            bootstrap: bootstrap("catalog-list"),
            event: event("/api/v1/datasets", &[]),
            extra_env: vec![],
        },
        Function {
            name: "catalog-metadata",
            bootstrap: bootstrap("catalog-metadata"),
            event: event("/api/v1/datasets/air-quality-hourly", &[]),
            extra_env: vec![],
        },
        Function {
            name: "catalog-data",
            bootstrap: bootstrap("catalog-data"),
            event: event(
                "/api/v1/datasets/air-quality-hourly/data",
                &[("x-api-key", EVENTS_READ_KEY)],
            ),
            extra_env: vec![("SIGNING_ROLE_ARN".into(), SIGNING_ROLE.into())],
        },
        Function {
            name: "catalog-rows",
            bootstrap: bootstrap("catalog-rows"),
            event: event(
                "/api/v1/datasets/air-quality-hourly/rows",
                &[("x-api-key", EVENTS_READ_KEY)],
            ),
            // The one function that reads S3: straight to s3s-fs, past the sink that proves
            // the others never call it.
            extra_env: vec![("AWS_ENDPOINT_URL_S3".into(), stack.s3_url.clone())],
        },
        Function {
            name: "catalog-sharing",
            bootstrap: bootstrap("catalog-sharing"),
            // Delta Sharing's query, as its connector sends it: the table, its key and a
            // presigned URL (signed with the role, as the data function signs).
            event: Bytes::from(
                catalog_http::testing::V2Event::new(
                    "POST",
                    "/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables/air-quality-hourly/query",
                )
                .header("authorization", &format!("Bearer {EVENTS_READ_KEY}"))
                .body("{}")
                .json()
                .to_string()
                .into_bytes(),
            ),
            extra_env: vec![("SIGNING_ROLE_ARN".into(), SIGNING_ROLE.into())],
        },
        Function {
            name: "catalog-keys",
            bootstrap: bootstrap("catalog-keys"),
            // An account's list, with the claims API Gateway's JWT authorizer passes on.
            event: Bytes::from(
                catalog_http::testing::V2Event::get("/api/v1/account/keys")
                    .claims([
                        ("sub", "5d7c9e1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a"),
                        ("token_use", "access"),
                    ])
                    .json()
                    .to_string()
                    .into_bytes(),
            ),
            extra_env: vec![],
        },
        Function {
            name: "catalog-signup",
            bootstrap: bootstrap("catalog-signup"),
            // Cognito's pre-sign-up event, for an address at an allowed domain.
            event: Bytes::from(
                std::fs::read(catalog_tests::repo_root().join("events/signup-allowed-domain.json"))
                    .map_err(|e| format!("events/signup-allowed-domain.json: {e}"))?,
            ),
            extra_env: vec![("ALLOWED_DOMAINS".into(), "example.com".into())],
        },
        Function {
            name: "catalog-audit",
            bootstrap: bootstrap("catalog-audit"),
            // A CloudWatch Logs subscription batch with one download event (recorded the
            // first time, found already recorded after).
            event: Bytes::from(
                std::fs::read(catalog_tests::repo_root().join("events/audit-logs.json"))
                    .map_err(|e| format!("events/audit-logs.json: {e}"))?,
            ),
            extra_env: vec![],
        },
    ];
    for f in &functions {
        if !f.bootstrap.exists() {
            return Err(format!("{} not built: {}", f.name, f.bootstrap.display()));
        }
    }

    println!(
        "Cold start: {} rounds, each function and the floor spawned once per round, interleaved.",
        opts.rounds
    );
    let mut colds: Vec<Vec<Cold>> = functions.iter().map(|_| Vec::new()).collect();
    for _ in 0..opts.rounds {
        for (i, f) in functions.iter().enumerate() {
            colds[i].push(cold(f, &base, &net).await?);
        }
    }
    let floor_init = median(colds[0].iter().map(|c| c.init).collect());
    println!();
    println!(
        "| function | init (median) | init / floor | first response | warm response | connections during init |"
    );
    println!("|---|---|---|---|---|---|");
    for (f, runs) in functions.iter().zip(&colds) {
        let init = median(runs.iter().map(|c| c.init).collect());
        let first = median(runs.iter().map(|c| c.first).collect());
        let warm = median(runs.iter().map(|c| c.warm).collect());
        let net = runs.iter().map(|c| c.net_during_init).max().unwrap_or(0);
        println!(
            "| {} | {} | {:.2}× | {} | {} | {} |",
            f.name,
            ms(init),
            init.as_secs_f64() / floor_init.as_secs_f64(),
            ms(first),
            ms(warm),
            net
        );
    }
    println!();
    println!("init = spawn to the first GET /runtime/invocation/next (Lambda's Init Duration);");
    println!("first response = spawn to the first answer, including the first connections (and,");
    println!("for catalog-data, the STS AssumeRole of the signing role); warm = the next request.");

    println!();
    println!(
        "Warm: {} sequential requests per function on one instance (as Lambda sends them).",
        opts.warm
    );
    println!();
    println!(
        "| function | requests/s | p50 | p99 | RSS after {} | after {} | after {} | after {} | peak RSS | growth, 2nd half | failures |",
        opts.warm / 4,
        opts.warm / 2,
        opts.warm * 3 / 4,
        opts.warm
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for f in &functions {
        let s = sustained(f, &base, opts.warm).await?;
        let rps = s.requests as f64 / s.elapsed.as_secs_f64();
        let mut lat = s.latencies.clone();
        lat.sort();
        println!(
            "| {} | {:.0} | {} | {} | {} KiB | {} KiB | {} KiB | {} KiB | {} KiB | {:+} KiB | {} |",
            f.name,
            rps,
            ms(percentile(&lat, 50.0)),
            ms(percentile(&lat, 99.0)),
            s.rss_kb[0],
            s.rss_kb[1],
            s.rss_kb[2],
            s.rss_kb[3],
            s.hwm_kb,
            s.rss_kb[3] as i64 - s.rss_kb[1] as i64,
            s.failures
        );
    }
    let _ = std::fs::remove_dir_all(&home);
    let far = Instant::now() + Duration::from_secs(3600);
    let s3 = net.s3.connections_between(run_start, far);
    let imds = net.imds.connections_between(run_start, far);
    println!();
    println!("Connections to S3 over the whole run: {s3}; to instance metadata: {imds}.");
    if s3 + imds > 0 {
        return Err("a function called S3 or instance metadata".into());
    }
    Ok(())
}

/// The environment Lambda gives a `provided.al2023` function, with the AWS endpoints pointed at
/// the emulators through the counters, and an empty home (no shared config or credentials file).
pub(crate) fn lambda_env(stack: &Stack, net: &Net, home: &Path) -> Vec<(String, String)> {
    let mut env: Vec<(String, String)> = stack
        .function_env()
        .into_iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "AWS_ENDPOINT_URL_DYNAMODB" | "AWS_ENDPOINT_URL_S3" | "AWS_EC2_METADATA_DISABLED"
            )
        })
        .collect();
    let fixed = [
        ("AWS_ENDPOINT_URL_DYNAMODB", net.dynamo.url()),
        ("AWS_ENDPOINT_URL_STS", net.sts.url()),
        ("AWS_ENDPOINT_URL_S3", net.s3.url()),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", net.imds.url()),
        ("AWS_DEFAULT_REGION", catalog_tests::REGION.into()),
        ("AWS_SESSION_TOKEN", "bench-session-token".into()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256".into()),
        ("AWS_LAMBDA_FUNCTION_VERSION", "$LATEST".into()),
        ("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand".into()),
        ("AWS_LAMBDA_LOG_FORMAT", "Text".into()),
        (
            "AWS_LAMBDA_LOG_STREAM_NAME",
            "2026/11/22/[$LATEST]bench".into(),
        ),
        ("AWS_XRAY_DAEMON_ADDRESS", "169.254.79.129:2000".into()),
        ("LAMBDA_TASK_ROOT", "/var/task".into()),
        ("LAMBDA_RUNTIME_DIR", "/var/runtime".into()),
        ("_HANDLER", "bootstrap".into()),
        ("LANG", "en_US.UTF-8".into()),
        ("TZ", ":UTC".into()),
        ("PATH", "/usr/local/bin:/usr/bin/:/bin:/opt/bin".into()),
        ("HOME", home.display().to_string()),
    ];
    env.extend(fixed.into_iter().map(|(k, v)| (k.to_owned(), v)));
    env
}

pub(crate) fn spawn(
    f: &Function,
    base: &[(String, String)],
    api: &RuntimeApi,
) -> Result<Child, String> {
    Command::new(&f.bootstrap)
        .env_clear()
        .envs(base.iter().cloned())
        .envs(f.extra_env.iter().cloned())
        .env("AWS_LAMBDA_FUNCTION_NAME", f.name)
        .env(
            "AWS_LAMBDA_LOG_GROUP_NAME",
            format!("/aws/lambda/{}", f.name),
        )
        .env("AWS_LAMBDA_RUNTIME_API", api.addr.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("spawn {}: {e}", f.bootstrap.display()))
}

async fn within<T>(
    what: &str,
    fut: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(Duration::from_secs(15), fut)
        .await
        .map_err(|_| format!("{what}: timed out"))?
}

fn check(name: &str, response: &serde_json::Value) -> Result<(), String> {
    // The sign-up function is Cognito's trigger: it accepts by answering the event back.
    if response.get("triggerSource").is_some() {
        return Ok(());
    }
    // The audit function answers what it read of a log batch.
    if response.get("events").is_some_and(|e| e.is_u64()) {
        return Ok(());
    }
    match response.get("statusCode").and_then(|s| s.as_u64()) {
        Some(200) => Ok(()),
        _ => Err(format!("{name} answered {response}")),
    }
}

async fn cold(f: &Function, base: &[(String, String)], net: &Net) -> Result<Cold, String> {
    let mut api = RuntimeApi::start().await.map_err(|e| e.to_string())?;
    let start = Instant::now();
    let mut child = spawn(f, base, &api)?;
    let ready = within(f.name, api.next_request()).await?;
    // Any connection made during init was opened before the first event existed: count those
    // accepted between spawn and the first event, once the first answer is in.
    let first_event = Instant::now();
    let first = within(f.name, api.invoke(f.event.clone())).await?;
    let first_at = start.elapsed();
    check(f.name, &first)?;
    let warm_start = Instant::now();
    let second = within(f.name, api.invoke(f.event.clone())).await?;
    let warm = warm_start.elapsed();
    check(f.name, &second)?;
    let _ = child.kill().await;
    Ok(Cold {
        init: ready - start,
        first: first_at,
        warm,
        net_during_init: net.connections_between(start, first_event),
    })
}

async fn sustained(
    f: &Function,
    base: &[(String, String)],
    requests: usize,
) -> Result<Sustained, String> {
    let mut api = RuntimeApi::start().await.map_err(|e| e.to_string())?;
    let mut child = spawn(f, base, &api)?;
    let pid = child.id().ok_or("no pid")?;
    within(f.name, api.next_request()).await?;
    check(f.name, &within(f.name, api.invoke(f.event.clone())).await?)?;
    let mut latencies = Vec::with_capacity(requests);
    let mut failures = 0;
    let mut rss_kb = [0; 4];
    let start = Instant::now();
    for i in 0..requests {
        let t = Instant::now();
        let response = within(f.name, api.invoke(f.event.clone())).await?;
        latencies.push(t.elapsed());
        if check(f.name, &response).is_err() {
            failures += 1;
        }
        for (q, rss) in rss_kb.iter_mut().enumerate().take(3) {
            if i + 1 == requests * (q + 1) / 4 {
                *rss = proc_status_kb(pid, "VmRSS:")?;
            }
        }
    }
    let elapsed = start.elapsed();
    rss_kb[3] = proc_status_kb(pid, "VmRSS:")?;
    let hwm_kb = proc_status_kb(pid, "VmHWM:")?;
    let _ = child.kill().await;
    Ok(Sustained {
        requests,
        elapsed,
        latencies,
        rss_kb,
        hwm_kb,
        failures,
    })
}

/// A figure in kB from /proc/<pid>/status.
pub fn proc_status_kb(pid: u32, field: &str) -> Result<u64, String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| format!("no {field} in /proc/{pid}/status"))
}
