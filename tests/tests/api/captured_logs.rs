//! No key, key hash or URL signature in any log: every endpoint and case answered by the local
//! API (the functions' handlers, with the real S3 signer against s3s-fs, logging at INFO as
//! Lambda does), its log captured and scanned here; and `dev/check-logs`, which scans every
//! log a test run captured (the binaries', the local API's, and catalog-admin's output), shown
//! to catch what it must.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use catalog::keys::KeyHash;
use catalog_tests::{
    built_binary, free_port, http_request, repo_root, wait_for_port, Guard, Stack,
    EVENTS_DATASET_ID,
};
use chrono::Utc;
use serde_json::Value;
use uuid::Uuid;

const KEY: &str = "dcat_logs_read_key_0123456789abcdef0123456789abcdef0123456789abcd";
const REVOKED: &str = "dcat_logs_revoked_0123456789abcdef0123456789abcdef0123456789abcd";
const EXPIRED: &str = "dcat_logs_expired_0123456789abcdef0123456789abcdef0123456789abcd";
const NO_READ: &str = "dcat_logs_noread_0123456789abcdef0123456789abcdef0123456789abcde";
const UNKNOWN: &str = "dcat_logs_unknown_0123456789abcdef0123456789abcdef0123456789abcd";

/// A request (method, URL, headers) and the status it gets.
type Case = (&'static str, String, Vec<(&'static str, String)>, u16);

/// Where the local API's log goes: a file under `$CATALOG_TEST_LOGS` (so that dev/check-logs
/// scans it too) or, without it, under the temporary directory.
fn log_path() -> PathBuf {
    let dir = std::env::var_os("CATALOG_TEST_LOGS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("catalog-logs-test"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!(
        "catalog-local-api-every-case-{}.log",
        Uuid::new_v4()
    ))
}

fn start_api(stack: &Stack, log: &Path) -> (String, Guard) {
    let port = free_port();
    let file = std::fs::File::create(log).unwrap();
    let mut api = Guard(
        Command::new(built_binary("catalog-local-api"))
            .envs(stack.function_env())
            .env("LOCAL_API_ADDR", format!("127.0.0.1:{port}"))
            .env_remove("RUST_LOG")
            .env_remove("AWS_LAMBDA_LOG_LEVEL")
            .stdout(file.try_clone().unwrap())
            .stderr(file)
            .spawn()
            .expect("start catalog-local-api"),
    );
    wait_for_port(port, &mut api.0, "catalog-local-api");
    (format!("http://127.0.0.1:{port}/api/v1"), api)
}

fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}

/// What dev/check-logs looks for, without a regex engine: `dcat_` and 4 or more word
/// characters, 64 hex digits in a row, a SigV4 query parameter, `Bearer ` and a word character.
fn secret_like(line: &str) -> Option<String> {
    let b = line.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    for (i, _) in line.match_indices("dcat_") {
        let n = b[i + 5..].iter().take_while(|c| word(**c)).count();
        if n >= 4 {
            return Some(line[i..i + 5 + n].to_owned());
        }
    }
    let mut run = 0;
    for (i, c) in b.iter().enumerate() {
        run = if c.is_ascii_hexdigit() { run + 1 } else { 0 };
        if run == 64 {
            return Some(line[i + 1 - 64..=i].to_owned());
        }
    }
    for (i, _) in line.match_indices("Bearer ") {
        if b.get(i + 7).is_some_and(|c| word(*c)) {
            return Some(line[i..].to_owned());
        }
    }
    ["X-Amz-Signature", "X-Amz-Credential"]
        .into_iter()
        .find(|s| line.contains(s))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread")]
async fn no_key_hash_or_signature_in_the_logs_of_any_endpoint_and_case() {
    // GIVEN the sample catalog (air-quality-hourly gated, city-bikes keyless, river-levels's
    // window closed), keys of every kind, and the local API logging at INFO into a file
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(KEY, &["read"], now, None).await;
    stack.add_key(REVOKED, &["read"], now, None).await;
    stack
        .add_key(
            EXPIRED,
            &["read"],
            now,
            Some(now - chrono::Duration::hours(1)),
        )
        .await;
    stack.add_key(NO_READ, &["write"], now, None).await;
    stack
        .writer()
        .revoke_key(&KeyHash::of(REVOKED), now)
        .await
        .unwrap();
    let log = log_path();
    let (base, api) = start_api(&stack, &log);

    let bearer = |k: &str| format!("Bearer {k}");
    let gated = format!("{base}/datasets/air-quality-hourly/data");
    let keyless = format!("{base}/datasets/city-bikes/data");
    let by_id = format!("{base}/datasets/{EVENTS_DATASET_ID}");
    let key_in_query = format!("{gated}?api_key={KEY}");
    let cases: Vec<Case> = vec![
        ("GET", format!("{base}/datasets"), vec![], 200),
        (
            "GET",
            format!("{base}/datasets?q=river&sort=name"),
            vec![],
            200,
        ),
        ("HEAD", format!("{base}/datasets"), vec![], 200),
        (
            "OPTIONS",
            format!("{base}/datasets"),
            vec![
                ("origin", "https://example.org".into()),
                ("access-control-request-method", "GET".into()),
            ],
            204,
        ),
        ("GET", format!("{base}/datasets?page=0"), vec![], 400),
        ("GET", format!("{base}/nowhere"), vec![], 404),
        ("POST", format!("{base}/datasets"), vec![], 405),
        ("GET", format!("{base}/datasets/river-levels"), vec![], 200),
        ("GET", by_id.clone(), vec![("x-api-key", KEY.into())], 200),
        (
            "GET",
            format!("{base}/datasets/no-such-dataset"),
            vec![],
            404,
        ),
        ("GET", format!("{base}/datasets/Bad_Slug"), vec![], 400),
        // Data: every key case, on a gated and on a keyless dataset
        ("GET", gated.clone(), vec![("x-api-key", KEY.into())], 200),
        (
            "GET",
            gated.clone(),
            vec![("authorization", bearer(KEY))],
            200,
        ),
        (
            "GET",
            format!("{by_id}/data"),
            vec![("x-api-key", KEY.into())],
            200,
        ),
        (
            "GET",
            format!("{gated}?version=1"),
            vec![("x-api-key", KEY.into())],
            200,
        ),
        ("GET", gated.clone(), vec![], 401),
        (
            "GET",
            gated.clone(),
            vec![("x-api-key", UNKNOWN.into())],
            401,
        ),
        (
            "GET",
            gated.clone(),
            vec![("authorization", bearer(UNKNOWN))],
            401,
        ),
        (
            "GET",
            gated.clone(),
            vec![("x-api-key", REVOKED.into())],
            401,
        ),
        (
            "GET",
            gated.clone(),
            vec![("x-api-key", EXPIRED.into())],
            401,
        ),
        (
            "GET",
            gated.clone(),
            vec![("x-api-key", NO_READ.into())],
            403,
        ),
        (
            "GET",
            gated.clone(),
            vec![("authorization", format!("Basic {KEY}"))],
            401,
        ),
        (
            "GET",
            gated.clone(),
            vec![
                ("x-api-key", UNKNOWN.into()),
                ("authorization", bearer(KEY)),
            ],
            400,
        ),
        ("GET", key_in_query, vec![], 401),
        (
            "GET",
            format!("{gated}?version=2"),
            vec![("x-api-key", KEY.into())],
            404,
        ),
        (
            "GET",
            format!("{gated}?version=x"),
            vec![("x-api-key", KEY.into())],
            400,
        ),
        (
            "GET",
            format!("{gated}?format=csv"),
            vec![("x-api-key", KEY.into())],
            400,
        ),
        ("GET", keyless.clone(), vec![], 200),
        ("GET", keyless.clone(), vec![("x-api-key", KEY.into())], 200),
        (
            "GET",
            keyless.clone(),
            vec![("x-api-key", REVOKED.into())],
            401,
        ),
        (
            "GET",
            format!("{base}/datasets/river-levels/data"),
            vec![],
            401,
        ),
        (
            "GET",
            format!("{base}/datasets/no-such-dataset/data"),
            vec![("x-api-key", KEY.into())],
            404,
        ),
    ];
    let mut signatures = Vec::new();
    for (method, url, headers, status) in &cases {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let (got, _, body) = http_request(method, url, &headers).await;
        assert_eq!(got, *status, "{method} {url} {headers:?}");
        // Every URL issued is a real SigV4 URL that S3 accepts
        if url.split('?').next().unwrap().ends_with("/data") && got == 200 {
            let descriptor: Value = serde_json::from_slice(&body).unwrap();
            let signed = descriptor["url"].as_str().unwrap();
            let signature = signed
                .split("X-Amz-Signature=")
                .nth(1)
                .expect("a signed URL")
                .split('&')
                .next()
                .unwrap()
                .to_owned();
            assert_eq!(catalog_tests::http_get(signed).await.0, 200, "{signed}");
            signatures.push(signature);
        }
    }
    assert_eq!(signatures.len(), 6);

    // WHEN the API has stopped (its log complete)
    drop(api);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let text = std::fs::read_to_string(&log).unwrap();

    // THEN every case was logged: each success and each rejection, by status
    assert_eq!(
        text.matches("issued download URL").count(),
        signatures.len(),
        "{text}"
    );
    for status in [400, 401, 403, 404, 405] {
        assert!(
            text.contains(&format!("status={status}")),
            "a {status} was logged: {text}"
        );
    }
    // AND nothing secret: no key sent, nor its hash, nor any signature issued, nor the S3
    // credentials, nor anything check-logs would take for one
    for secret in [KEY, REVOKED, EXPIRED, NO_READ, UNKNOWN] {
        assert!(!text.contains(secret), "key {secret} in the log:\n{text}");
        let hash = sha256_hex(secret);
        assert!(
            !text.contains(&hash),
            "hash of {secret} in the log:\n{text}"
        );
        assert_eq!(hash, KeyHash::of(secret).as_str(), "the stored hash");
    }
    for signature in &signatures {
        assert!(!text.contains(signature.as_str()), "signature in the log");
    }
    assert!(
        !text.contains(catalog_tests::SECRET_KEY),
        "S3 secret in the log"
    );
    let flagged: Vec<(String, &str)> = text
        .lines()
        .filter_map(|l| secret_like(l).map(|s| (s, l)))
        .collect();
    assert!(flagged.is_empty(), "{flagged:#?}");
}

/// A key a client puts in a list parameter by mistake never reaches the log (found by this
/// test): messages, which are logged, repeat nothing of a value holding an API key, and filter
/// values are not logged at all (a value no dataset has is an empty 200).
#[tokio::test(flavor = "multi_thread")]
async fn a_key_sent_in_a_filter_or_paging_parameter_is_not_logged() {
    let stack = Stack::start().await;
    stack.seed_samples(Utc::now()).await;
    let log = log_path();
    let (base, api) = start_api(&stack, &log);
    for (query, status) in [
        (format!("category={KEY}"), 200),
        (format!("tag={KEY}"), 200),
        (format!("license={KEY}"), 200),
        (format!("page={KEY}"), 400),
        (format!("page_size={KEY}"), 400),
        (format!("sort={KEY}"), 400),
        (format!("q={KEY}"), 200),
    ] {
        let (got, _, _) = http_request("GET", &format!("{base}/datasets?{query}"), &[]).await;
        assert_eq!(got, status, "{query}");
    }
    drop(api);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let text = std::fs::read_to_string(&log).unwrap();
    let flagged: Vec<(String, &str)> = text
        .lines()
        .filter_map(|l| secret_like(l).map(|s| (s, l)))
        .collect();
    assert!(flagged.is_empty(), "{flagged:#?}");
}

/// dev/check-logs on a directory of made-up logs: its exit status and what it printed.
fn check_logs(files: &[(&str, &str)]) -> (bool, String) {
    let dir = std::env::temp_dir().join(format!("catalog-check-logs-{}", Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let out = Command::new("bash")
        .arg(repo_root().join("dev/check-logs"))
        .arg(&dir)
        .output()
        .expect("run dev/check-logs");
    let _ = std::fs::remove_dir_all(&dir);
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

#[test]
fn check_logs_fails_on_any_secret_and_allows_only_the_clis_digests_and_key_prefixes() {
    let digest = sha256_hex("a file");
    let key = "dcat_5f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";
    let hash = sha256_hex(key);
    let cli_ok = format!(
        "$ catalog-admin publish x.parquet --slug x\n\
         published x version 1 (10 rows, 2 columns, 1.2 kB, sha256 {digest})\n\
         $ catalog-admin inspect x.parquet\n  \"sha256\": \"{digest}\",\n\
         $ catalog-admin download x\n\
         error: the downloaded file's SHA-256 is {hash}, not {digest} as the API states\n\
         $ catalog-admin keys list\n\
         key_0123456789abcdef   dcat_5f1e  read   2026-01-01T00:00:00Z\n"
    );
    let function_ok = "INFO issued download URL slug=x key_id=key_0123456789abcdef\n";
    // GIVEN logs with nothing secret THEN the scan passes, and says what it scanned
    let (ok, out) = check_logs(&[
        ("catalog-admin-1.log", &cli_ok),
        ("catalog-data-1.log", function_ok),
    ]);
    assert!(ok, "{out}");
    assert!(
        out.contains("from 2 processes (1 catalog-admin runs)"),
        "{out}"
    );

    // GIVEN any secret anywhere, even in the CLI's output THEN it fails
    for (file, leak) in [
        ("catalog-admin-2.log", format!("created {key}\n")),
        ("catalog-admin-2.log", format!("key hash {hash}\n")),
        ("catalog-admin-2.log", format!("sha256 {hash}{hash}\n")),
        ("catalog-admin-2.log", format!("\"key_hash\": \"{hash}\"\n")),
        ("catalog-admin-2.log", "dcat_5f1e2\n".to_owned()),
        (
            "catalog-admin-2.log",
            "https://s3/x?X-Amz-Signature=ab\n".to_owned(),
        ),
        ("catalog-data-2.log", format!("sha256 {digest}\n")),
        ("catalog-data-2.log", "prefix dcat_5f1e\n".to_owned()),
        (
            "catalog-data-2.log",
            "authorization: Bearer abc\n".to_owned(),
        ),
        (
            "catalog-local-api-2.log",
            "X-Amz-Credential=AKIA\n".to_owned(),
        ),
    ] {
        let (ok, out) = check_logs(&[("catalog-admin-1.log", &cli_ok), (file, leak.as_str())]);
        assert!(!ok, "{file}: {leak:?} passed: {out}");
        assert!(out.contains("1 with a key, hash or URL signature"), "{out}");
    }
    // GIVEN no log at all THEN it fails: nothing was scanned
    assert!(!check_logs(&[]).0);
}
