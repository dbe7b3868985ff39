//! What each known start-up cost weighs, each measured in a fresh process (they are one-time
//! costs per process), with the environment Lambda gives a function. The probes run this same
//! binary (`catalog-bench probe <name>`), built with the release profile.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::stats::{median, us};

/// (name, what it measures, whether the functions pay it, and when)
const PROBES: &[(&str, &str, &str)] = &[
    (
        "tokio-runtime",
        "build the multi-thread tokio runtime (#[tokio::main])",
        "yes, init",
    ),
    (
        "logging",
        "catalog::logging::init_logging(): fmt subscriber, one level filter",
        "yes, init",
    ),
    (
        "tracing-env-filter",
        "lambda_http::tracing::init_default_subscriber() (EnvFilter), for comparison",
        "no (not linked since 2026-11-26)",
    ),
    (
        "sdk-config",
        "catalog_aws::aws::load_sdk_config(): region and credentials taken from the environment",
        "yes, init",
    ),
    (
        "sdk-config-default-chains",
        "aws-config's default region and credential chains (the SDK's usual setup)",
        "no (skipped when the environment has both)",
    ),
    (
        "sdk-config-explicit",
        "SdkConfig built by hand from the environment (no chains), for comparison",
        "no",
    ),
    (
        "http-client",
        "catalog_aws::aws::http_client(catalog_aws::aws::RootCertificates::Aws): hyper + rustls (ring)",
        "yes, init",
    ),
    (
        "dynamodb-client",
        "aws_sdk_dynamodb::Client::new(&sdk): builds the TLS connector, trusting the compiled-in Amazon roots",
        "yes, init",
    ),
    (
        "dynamodb-client-platform-roots",
        "the same with the platform's trust store (the SDK's default): reads every certificate on disk",
        "no (only when SSL_CERT_FILE or SSL_CERT_DIR is set)",
    ),
    (
        "ring-first-random",
        "first 32 random bytes from ring (the crypto the functions link)",
        "on the first TLS handshake only",
    ),
    (
        "aws-lc-first-random",
        "first 32 random bytes from aws-lc-rs (the SDK's default crypto; entropy start-up)",
        "no: aws-lc is not linked",
    ),
];

/// Runs one probe in this process and prints its duration in nanoseconds.
pub fn probe(name: &str) -> Result<(), String> {
    let elapsed = match name {
        "tokio-runtime" => {
            let t = Instant::now();
            let rt = tokio::runtime::Builder::new_multi_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            let d = t.elapsed();
            drop(rt);
            d
        }
        "logging" => {
            let t = Instant::now();
            catalog::logging::init_logging();
            t.elapsed()
        }
        "tracing-env-filter" => {
            let t = Instant::now();
            lambda_http::tracing::init_default_subscriber();
            t.elapsed()
        }
        other => runtime()?.block_on(async_probe(other))?,
    };
    println!("{}", elapsed.as_nanos());
    Ok(())
}

fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())
}

async fn async_probe(name: &str) -> Result<Duration, String> {
    Ok(match name {
        "sdk-config" => {
            let t = Instant::now();
            let sdk = catalog_aws::aws::load_sdk_config().await;
            let d = t.elapsed();
            if sdk.credentials_provider().is_none() || sdk.region().is_none() {
                return Err("no credentials or region".into());
            }
            d
        }
        "sdk-config-default-chains" => {
            let t = Instant::now();
            let sdk = aws_config::defaults(aws_config::BehaviorVersion::latest())
                .http_client(catalog_aws::aws::http_client(
                    catalog_aws::aws::RootCertificates::Aws,
                ))
                .load()
                .await;
            let d = t.elapsed();
            drop(sdk);
            d
        }
        "sdk-config-explicit" => {
            let t = Instant::now();
            let region = std::env::var("AWS_REGION").map_err(|e| e.to_string())?;
            let sdk = aws_config::SdkConfig::builder()
                .behavior_version(aws_config::BehaviorVersion::latest())
                .region(aws_config::Region::new(region))
                .credentials_provider(
                    aws_credential_types::provider::SharedCredentialsProvider::new(
                        aws_config::environment::EnvironmentVariableCredentialsProvider::new(),
                    ),
                )
                .http_client(catalog_aws::aws::http_client(
                    catalog_aws::aws::RootCertificates::Aws,
                ))
                .build();
            let d = t.elapsed();
            drop(sdk);
            d
        }
        "http-client" => {
            let t = Instant::now();
            let client = catalog_aws::aws::http_client(catalog_aws::aws::RootCertificates::Aws);
            let d = t.elapsed();
            drop(client);
            d
        }
        "dynamodb-client" => {
            let sdk = catalog_aws::aws::load_sdk_config().await;
            let t = Instant::now();
            let client = aws_sdk_dynamodb::Client::new(&sdk);
            let d = t.elapsed();
            drop(client);
            d
        }
        "dynamodb-client-platform-roots" => {
            let sdk = catalog_aws::aws::load_sdk_config()
                .await
                .into_builder()
                .http_client(catalog_aws::aws::http_client(
                    catalog_aws::aws::RootCertificates::Platform,
                ))
                .build();
            let t = Instant::now();
            let client = aws_sdk_dynamodb::Client::new(&sdk);
            let d = t.elapsed();
            drop(client);
            d
        }
        "ring-first-random" => {
            use ring::rand::SecureRandom;
            let mut buf = [0u8; 32];
            let t = Instant::now();
            ring::rand::SystemRandom::new()
                .fill(&mut buf)
                .map_err(|_| "ring random failed".to_string())?;
            t.elapsed()
        }
        "aws-lc-first-random" => {
            let mut buf = [0u8; 32];
            let t = Instant::now();
            aws_lc_rs::rand::fill(&mut buf).map_err(|_| "aws-lc random failed".to_string())?;
            t.elapsed()
        }
        other => return Err(format!("unknown probe {other}")),
    })
}

/// Runs every probe `rounds` times, interleaved, each in a fresh process; prints the table.
/// `no_jitter` is this harness built with `AWS_LC_SYS_NO_JITTER_ENTROPY=1`: its aws-lc probe
/// is run in the same rounds.
pub fn run(rounds: usize, no_jitter: Option<&Path>) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let home = std::env::temp_dir().join(format!("catalog-bench-home-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&home).map_err(|e| e.to_string())?;
    let mut results: Vec<Vec<Duration>> = PROBES.iter().map(|_| Vec::new()).collect();
    let mut no_jitter_results = Vec::new();
    for _ in 0..rounds {
        for (i, (name, _, _)) in PROBES.iter().enumerate() {
            results[i].push(run_probe(&exe, name, &home)?);
        }
        if let Some(other) = no_jitter {
            no_jitter_results.push(run_probe(other, "aws-lc-first-random", &home)?);
        }
    }
    let _ = std::fs::remove_dir_all(&home);
    println!(
        "Start-up costs: each probe in a fresh process, {rounds} rounds interleaved, medians."
    );
    println!();
    println!("| cost | median | min | what | paid by the functions |");
    println!("|---|---|---|---|---|");
    for ((name, what, paid), runs) in PROBES.iter().zip(results) {
        let min = runs.iter().min().copied().unwrap_or_default();
        println!(
            "| {name} | {} | {} | {what} | {paid} |",
            us(median(runs)),
            us(min)
        );
    }
    if !no_jitter_results.is_empty() {
        let min = no_jitter_results.iter().min().copied().unwrap_or_default();
        println!(
            "| aws-lc-first-random, no jitter | {} | {} | the same, aws-lc built with AWS_LC_SYS_NO_JITTER_ENTROPY=1 | no: aws-lc is not linked |",
            us(median(no_jitter_results)),
            us(min)
        );
    }
    Ok(())
}

fn run_probe(exe: &Path, name: &str, home: &Path) -> Result<Duration, String> {
    let out = Command::new(exe)
        .args(["probe", name])
        .env_clear()
        .env("HOME", home)
        .env("PATH", "/usr/local/bin:/usr/bin/:/bin")
        .env("AWS_REGION", catalog_tests::REGION)
        .env("AWS_DEFAULT_REGION", catalog_tests::REGION)
        .env("AWS_ACCESS_KEY_ID", catalog_tests::ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", catalog_tests::SECRET_KEY)
        .env("AWS_SESSION_TOKEN", "bench-session-token")
        .env("AWS_LAMBDA_FUNCTION_NAME", "probe")
        .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("probe {name}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "probe {name} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let nanos: u64 = String::from_utf8_lossy(&out.stdout)
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .ok_or_else(|| format!("probe {name}: no figure"))?;
    Ok(Duration::from_nanos(nanos))
}
