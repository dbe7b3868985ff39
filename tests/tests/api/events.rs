//! Every file in events/ through the compiled Lambda binaries, run under cargo-lambda's runtime
//! emulator (`cargo lambda watch --only-lambda-apis`) and invoked with `cargo lambda invoke`,
//! against the emulated DynamoDB and S3.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use catalog::policy::{AccessLevel, Approval, ApprovalPolicy};
use catalog_tests::{
    built_binary, emf, free_port, http_get, read_parquet, repo_root, wait_for_port, Guard, Stack,
    EVENTS_READ_KEY,
};
use chrono::Utc;
use serde_json::Value;

/// Each event file: the function that receives it and the status it must get.
const EXPECTED: &[(&str, &str, u16)] = &[
    ("list.json", "catalog-list", 200),
    ("list-paged.json", "catalog-list", 200),
    ("list-bad-page.json", "catalog-list", 400),
    ("list-rest-api-v1.json", "catalog-list", 200),
    ("list-filtered.json", "catalog-list", 200),
    // A CORS preflight, as a function URL or the local API brings it
    ("preflight.json", "catalog-list", 204),
    ("metadata-by-slug.json", "catalog-metadata", 200),
    ("metadata-by-uuid.json", "catalog-metadata", 200),
    ("metadata-unknown.json", "catalog-metadata", 404),
    // HEAD: the GET answer's status and headers, no body
    ("metadata-head.json", "catalog-metadata", 200),
    // The $default route: every other path and method reaches the list function, JSON 404
    ("root-not-found.json", "catalog-list", 404),
    // A rawPath no URL can start with: lambda_http 1.3 would panic converting it (and abort
    // the process in release); catalog_http::lambda::Guard answers 400, and the next event below
    // reaches the same process.
    ("data-malformed-path.json", "catalog-data", 400),
    ("data-x-api-key.json", "catalog-data", 200),
    ("data-bearer.json", "catalog-data", 200),
    ("data-keyless-no-key.json", "catalog-data", 200),
    ("data-function-url.json", "catalog-data", 200),
    ("data-gated-no-key.json", "catalog-data", 401),
    ("data-window-closed-no-key.json", "catalog-data", 401),
    ("data-bad-key.json", "catalog-data", 401),
    ("data-format-csv.json", "catalog-data", 400),
    // The rows API, through the rows function (which reads the objects from s3s-fs)
    ("rows-x-api-key.json", "catalog-rows", 200),
    ("rows-keyless-no-key.json", "catalog-rows", 200),
    ("rows-gated-no-key.json", "catalog-rows", 401),
    ("rows-past-the-end.json", "catalog-rows", 200),
    ("rows-bad-offset.json", "catalog-rows", 400),
    // The linked-data documents: Croissant (the metadata function), the DCAT catalog in both
    // formats (the list function, through the $default route), and the download route a
    // Croissant client follows, with the key as HTTP Basic's password (the data function)
    ("croissant.json", "catalog-metadata", 200),
    ("catalog-turtle.json", "catalog-list", 200),
    ("catalog-jsonld.json", "catalog-list", 200),
    ("download-basic-auth.json", "catalog-data", 302),
    ("download-gated-no-key.json", "catalog-data", 401),
    // The Delta Sharing server, as its Python connector calls it
    ("sharing-list-tables.json", "catalog-sharing", 200),
    ("sharing-query.json", "catalog-sharing", 200),
    ("sharing-no-token.json", "catalog-sharing", 401),
    ("sharing-changes.json", "catalog-sharing", 400),
    // The account routes, with the claims API Gateway's JWT authorizer passes on
    ("account-create-key.json", "catalog-keys", 201),
    // A verified token whose user the pool does not hold (deleted, or signed out everywhere):
    // key creation asks Cognito (GetUser with the token), which refuses it: 401 account_unknown
    ("account-create-key-unknown-user.json", "catalog-keys", 401),
    ("account-list-keys.json", "catalog-keys", 200),
    ("account-create-bad-label.json", "catalog-keys", 400),
    ("account-revoke-unknown.json", "catalog-keys", 404),
    // An ID token's claims, and a request with no verified claims at all: 401
    ("account-id-token.json", "catalog-keys", 401),
    ("account-no-authorizer.json", "catalog-keys", 401),
    // Access requests (bird-sightings at the approval level, approved automatically), and the
    // operators' routes with and without the operators' group in the claims
    ("account-ask-access.json", "catalog-keys", 201),
    ("account-list-access.json", "catalog-keys", 200),
    ("account-withdraw-none.json", "catalog-keys", 404),
    ("operator-list-granted.json", "catalog-keys", 200),
    ("operator-decide-not-member.json", "catalog-keys", 403),
    ("operator-revoke.json", "catalog-keys", 200),
    // The user pool's pre-sign-up trigger (ALLOWED_DOMAINS=example.com), with Cognito's event:
    // 200 is "accepted" (the event back, unchanged), 400 "refused" (an error Cognito passes on)
    ("signup-allowed-domain.json", "catalog-signup", 200),
    ("signup-other-domain.json", "catalog-signup", 400),
    ("signup-invited.json", "catalog-signup", 200),
    ("signup-capitals.json", "catalog-signup", 400),
    ("signup-email-change-allowed.json", "catalog-signup", 200),
    (
        "signup-email-change-other-domain.json",
        "catalog-signup",
        400,
    ),
    // The download log: a CloudWatch Logs subscription batch (one download event, one other
    // line), delivered twice (recorded once), and the daily schedule
    ("audit-logs.json", "catalog-audit", 200),
    ("audit-logs.json", "catalog-audit", 200),
    ("audit-daily.json", "catalog-audit", 200),
    // One staged file's partial statistics, as the Distributed Map's item brings it (the map's
    // listing gives size and ETag; without them, a HeadObject): 200 is "the partial written",
    // 400 "refused" (an error Step Functions sees), here a file outside the staged prefix
    ("file-stats.json", "catalog-file-stats", 200),
    ("file-stats-outside-staging.json", "catalog-file-stats", 400),
    // The mailer's schedule: the pending notices sent through SES (moto's), here a request's
    // digest to the deciders
    ("mailer-schedule.json", "catalog-mailer", 200),
    // An organisation's datasets, asked by an account that is none of its members: the 404 of
    // a name that names nothing (its membership read from the keys table)
    ("editor-org-datasets-stranger.json", "catalog-editor", 404),
    // A file uploaded from the site, completed (S3's Object Created event through
    // EventBridge): the publishing function publishes it, here a CSV as acme~levels version 1
    ("publish-upload.json", "catalog-publish", 200),
];

const FUNCTIONS: [&str; 12] = [
    "catalog-list",
    "catalog-metadata",
    "catalog-data",
    "catalog-keys",
    "catalog-signup",
    "catalog-rows",
    "catalog-sharing",
    "catalog-audit",
    "catalog-file-stats",
    "catalog-mailer",
    "catalog-editor",
    "catalog-publish",
];

/// The mailer's sender and deciders in this test.
const MAIL_SENDER: &str = "catalog@example.org";
const DESK: &str = "access-desk@example.org";

/// A pending request's notice, as asking writes it, and SES's sender identity in moto: what
/// events/mailer-schedule.json's run sends.
async fn pending_request_for_the_mailer(stack: &Stack) {
    let ses = aws_sdk_sesv2::Client::from_conf(
        aws_sdk_sesv2::config::Builder::from(&stack.sdk)
            .endpoint_url(&stack.dynamo_url)
            .build(),
    );
    ses.create_email_identity()
        .email_identity(MAIL_SENDER)
        .send()
        .await
        .expect("the sender's identity");
    let record = catalog::grants::AccessRecord {
        slug: "river-levels".into(),
        dataset: uuid::Uuid::new_v4(),
        grantee: "7a0c2e4f-1111-4222-8333-944455556666".into(),
        email: Some("asker@example.org".into()),
        status: catalog::grants::AccessStatus::Pending,
        requested_at: Some(Utc::now()),
        answers: Default::default(),
        terms_accepted: false,
        expires_at: None,
        decided_by: None,
        decided_at: None,
        reason: None,
        rev: 1,
    };
    let notice = catalog::notices::Notice::for_record(&record, Utc::now()).unwrap();
    stack
        .dynamo
        .put_item()
        .table_name(&stack.target.keys_table)
        .set_item(Some(catalog_aws::dynamo::access::notices::notice_item(
            &notice,
        )))
        .send()
        .await
        .expect("a pending notice");
}

/// The emails moto's SES sent: (to, subject).
async fn sent_emails(stack: &Stack) -> Vec<(String, String)> {
    let (status, bytes) = http_get(&format!("{}/moto-api/data.json", stack.dynamo_url)).await;
    assert_eq!(status, 200);
    let data: Value = serde_json::from_slice(&bytes).unwrap();
    data["ses"]["Message"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|m| {
            (
                m["destinations"]["ToAddresses"][0]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
                m["subject"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// What events/file-stats.json names: a sample's Parquet file staged as
/// `staging/events/part-0.parquet`, and its edges under `stats/events/`. The file's partial
/// statistics computed here, from disk, which the function's must equal.
async fn stage_for_file_stats(stack: &Stack) -> Value {
    let sample = &catalog_tests::manifest().datasets[0];
    let path = catalog_tests::samples_dir().join(&sample.file);
    let edges = catalog_stats::partial::edges(std::slice::from_ref(&path)).expect("edges");
    let bucket = &stack.target.bucket;
    for (key, body) in [
        (
            "staging/events/part-0.parquet",
            std::fs::read(&path).unwrap(),
        ),
        (
            "stats/events/edges.json",
            serde_json::to_vec(&edges).unwrap(),
        ),
    ] {
        stack
            .s3
            .put_object()
            .bucket(bucket)
            .key(key)
            .body(body.into())
            .send()
            .await
            .expect("staged");
    }
    let partial = catalog_stats::partial::file_partial(&path, &edges).expect("partial");
    serde_json::to_value(partial).unwrap()
}

/// What events/publish-upload.json names: a CSV uploaded from the site under its key, and its
/// upload's record, completed (publishing) with the file's size and SHA-256.
async fn uploaded_for_publishing(stack: &Stack) {
    use catalog::uploads::{Upload, UploadState, UploadStore};
    use sha2::Digest;
    let csv = b"city,level\nyork,1.5\nleeds,2.25\n".to_vec();
    let now = Utc::now();
    let upload = Upload {
        id: "0123456789abcdef0123456789abcdef".into(),
        org: catalog::orgs::OrgName::parse("acme").unwrap(),
        dataset: "levels".into(),
        filename: "levels.csv".into(),
        size: csv.len() as u64,
        sha256: hex::encode(sha2::Sha256::digest(&csv)),
        by: "events".into(),
        created_at: now,
        updated_at: now,
        state: UploadState::Publishing,
        s3_upload_id: "events".into(),
        part_size: catalog::uploads::Limits::MIN_PART_SIZE,
        version: None,
        reason: None,
    };
    stack
        .s3
        .put_object()
        .bucket(&stack.target.bucket)
        .key(upload.key())
        .body(csv.into())
        .send()
        .await
        .expect("the uploaded object");
    catalog_aws::dynamo::uploads::DynamoUploads::new(
        stack.dynamo.clone(),
        &stack.target.keys_table,
    )
    .create_upload(&upload)
    .await
    .expect("the upload's record");
}

fn cargo_lambda() -> PathBuf {
    let path = std::env::var_os("CARGO_LAMBDA")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".venv/bin/cargo-lambda"));
    assert!(
        path.exists(),
        "cargo-lambda not found at {}: run dev/test or set CARGO_LAMBDA",
        path.display()
    );
    path
}

fn invoke(port: u16, function: &str, event: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = Command::new(cargo_lambda())
            .args(["lambda", "invoke", function, "--data-file", event])
            .args(["-A", "127.0.0.1", "-P", &port.to_string(), "-o", "json"])
            .current_dir(repo_root())
            .output()
            .expect("run cargo lambda invoke");
        if out.status.success() {
            return serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
                panic!(
                    "{event}: invoke printed no JSON ({e}): {}",
                    String::from_utf8_lossy(&out.stdout)
                )
            });
        }
        assert!(
            Instant::now() < deadline,
            "{event}: cargo lambda invoke failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Invokes an event the function refuses (after an accepted one reached the same function, so
/// it is attached): what `cargo lambda invoke` printed of the error.
fn invoke_refused(port: u16, function: &str, event: &str) -> String {
    let out = Command::new(cargo_lambda())
        .args(["lambda", "invoke", function, "--data-file", event])
        .args(["-A", "127.0.0.1", "-P", &port.to_string(), "-o", "json"])
        .current_dir(repo_root())
        .output()
        .expect("run cargo lambda invoke");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{event}: accepted: {text}");
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn every_event_file_gets_its_expected_status_from_the_compiled_functions() {
    // GIVEN the events directory holds exactly the events this test knows
    let on_disk: Vec<String> = std::fs::read_dir(repo_root().join("events"))
        .expect("events/")
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let known: Vec<String> = EXPECTED
        .iter()
        .map(|(f, _, _)| f.to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        on_disk, known,
        "every events/ file has an expected status here"
    );

    // AND the emulators, seeded, with the key the events carry
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    stack
        .writer()
        .set_access(
            &catalog::input::Slug::parse("bird-sightings").unwrap(),
            AccessLevel::Approval,
            &ApprovalPolicy {
                approval: Approval::Automatic,
                ..ApprovalPolicy::default()
            },
            now,
        )
        .await
        .expect("bird-sightings at the approval level");

    // AND cargo-lambda's runtime emulator with the three binaries attached
    let port = free_port();
    let mut watch = Guard(
        Command::new(cargo_lambda())
            .args(["lambda", "watch", "--only-lambda-apis", "--timeout", "30"])
            .args(["-A", "127.0.0.1", "-P", &port.to_string()])
            .current_dir(repo_root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start cargo lambda watch"),
    );
    wait_for_port(port, &mut watch.0, "cargo lambda watch");
    let mut functions = Vec::new();
    let mut logs: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for name in FUNCTIONS {
        let mut cmd = Command::new(built_binary(name));
        cmd.envs(stack.function_env())
            .env(
                "AWS_LAMBDA_RUNTIME_API",
                format!("http://127.0.0.1:{port}/.rt/{name}"),
            )
            .env("ALLOWED_DOMAINS", "example.com")
            .env("AWS_LAMBDA_FUNCTION_NAME", name)
            .env("AWS_LAMBDA_FUNCTION_VERSION", "1")
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", "256")
            .env("RUST_LOG", "info")
            // As the template's LoggingConfig (LogFormat: JSON) has Lambda set it.
            .env("AWS_LAMBDA_LOG_FORMAT", "JSON")
            .env("METRICS_NAMESPACE", METRICS_NAMESPACE)
            // The mailer's configuration (the others read none of it).
            .env("MAIL_SENDER", MAIL_SENDER)
            .env("OPERATORS_EMAIL", DESK)
            .env("SITE_URL", "https://data.example.org")
            .env("SES_ENDPOINT_URL", &stack.dynamo_url);
        let (log, stdout, stderr) = catalog_tests::kept_log(name);
        logs.insert(name, log);
        cmd.stdout(stdout).stderr(stderr);
        functions.push(Guard(cmd.spawn().expect("start function binary")));
    }

    // WHEN every event is invoked THEN each gets its status, as JSON
    let mut statuses = BTreeMap::new();
    // Key creation asks Cognito whether it still knows the caller (GetUser with the bearer
    // token): the creation event is sent with the token of a person signed in on the
    // emulator's pool (the file's own token names nobody, as its `-unknown-user` copy shows).
    let pool = stack.user_pool().await;
    let cognito = stack.cognito();
    let password = "Correct-horse-9-battery";
    catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, "events@example.com", password)
        .await
        .expect("sign up");
    let signed_in = catalog_dev::cognito::sign_in(&cognito, &pool, "events@example.com", password)
        .await
        .expect("sign in");
    let with_token = std::env::temp_dir().join(format!(
        "account-create-key-{}-{}.json",
        std::process::id(),
        port
    ));
    let mut create: Value = serde_json::from_str(
        &std::fs::read_to_string(repo_root().join("events/account-create-key.json")).unwrap(),
    )
    .unwrap();
    create["headers"]["authorization"] =
        Value::String(format!("Bearer {}", signed_in.access_token));
    std::fs::write(&with_token, create.to_string()).unwrap();
    let mut batches = 0;
    let from_disk = stage_for_file_stats(&stack).await;
    for (file, function, expected) in EXPECTED {
        let event = if *file == "account-create-key.json" {
            with_token.to_string_lossy().into_owned()
        } else {
            format!("events/{file}")
        };
        if *function == "catalog-audit" {
            let answer = invoke(port, function, &event);
            if file.contains("logs") {
                // The same batch twice: its download is recorded the first time only.
                batches += 1;
                let recorded = if batches == 1 { 1 } else { 0 };
                assert_eq!(
                    answer,
                    serde_json::json!({"events": 2, "downloads": 1, "recorded": recorded}),
                    "{file}"
                );
            } else {
                assert!(
                    answer["checked"].is_u64() && answer["changed"].is_u64(),
                    "{file}: {answer}"
                );
            }
            statuses.insert(*file, *expected);
            continue;
        }
        if *function == "catalog-file-stats" {
            if *expected == 200 {
                // The partial, written where the answer says, is the file's from disk.
                let answer = invoke(port, function, &event);
                assert_eq!(
                    answer["partial"], "stats/events/partials/part-0.parquet.json",
                    "{file}: {answer}"
                );
                let written = stack
                    .s3
                    .get_object()
                    .bucket(&stack.target.bucket)
                    .key("stats/events/partials/part-0.parquet.json")
                    .send()
                    .await
                    .expect("the partial")
                    .body
                    .collect()
                    .await
                    .unwrap()
                    .into_bytes();
                let mut written: Value = serde_json::from_slice(&written).unwrap();
                assert_eq!(
                    written["file"],
                    format!("s3://{}/staging/events/part-0.parquet", stack.target.bucket)
                );
                // Read under the object's ETag (a HeadObject's: the event gives none).
                assert!(
                    written["etag"].as_str().is_some_and(|e| e.len() > 2),
                    "{written}"
                );
                written["file"] = from_disk["file"].clone();
                written.as_object_mut().unwrap().remove("etag");
                assert_eq!(written, from_disk, "{file}");
                assert_eq!(answer["row_count"], from_disk["row_count"], "{file}");
            } else {
                let refusal = invoke_refused(port, function, &event);
                // By the name Step Functions sees (and does not retry), with the reason.
                assert!(refusal.contains("FileStats.Task"), "{file}: {refusal}");
                assert!(
                    refusal.contains(
                        "key: 'datasets/city-bikes/v1/data.parquet' is not under staging/events/"
                    ),
                    "{file}: {refusal}"
                );
            }
            statuses.insert(*file, *expected);
            continue;
        }
        if *function == "catalog-publish" {
            uploaded_for_publishing(&stack).await;
            let answer = invoke(port, function, &event);
            assert_eq!(
                answer,
                serde_json::json!({"published": "acme~levels", "version": 1}),
                "{file}"
            );
            statuses.insert(*file, *expected);
            continue;
        }
        if *function == "catalog-mailer" {
            pending_request_for_the_mailer(&stack).await;
            let answer = invoke(port, function, &event);
            assert_eq!(answer["digests"], 1, "{file}: {answer}");
            assert_eq!(answer["failed"], 0, "{file}: {answer}");
            assert_eq!(
                sent_emails(&stack).await,
                [(
                    DESK.to_owned(),
                    "Access request for river-levels".to_owned()
                )],
                "{file}"
            );
            statuses.insert(*file, *expected);
            continue;
        }
        if *function == "catalog-signup" {
            let sent: Value = serde_json::from_str(
                &std::fs::read_to_string(repo_root().join(&event)).expect("event file"),
            )
            .expect("JSON event");
            if *expected == 200 {
                // Accepted: Cognito's event back, unchanged (the person still confirms).
                assert_eq!(invoke(port, function, &event), sent, "{file}");
            } else {
                let refusal = invoke_refused(port, function, &event);
                let why = if file.contains("capitals") {
                    "sign up with the email address in lowercase"
                } else if file.contains("email-change") {
                    "an account's email can change only to an address at the email domains"
                } else {
                    "sign-up is limited to the email domains this catalog serves"
                };
                assert!(refusal.contains(why), "{file}: {refusal}");
                assert!(!refusal.contains("example.com"), "{file}: names no domain");
            }
            statuses.insert(*file, *expected);
            continue;
        }
        let response = invoke(port, function, &event);
        let status = response["statusCode"].as_u64().unwrap_or(0) as u16;
        if *file == "account-create-key-unknown-user.json" {
            let body: Value =
                serde_json::from_str(response["body"].as_str().unwrap_or("null")).unwrap();
            assert_eq!(body["code"], "account_unknown", "{file}: {response}");
        }
        if status == 204 {
            assert_eq!(status, *expected, "{file}");
            assert_eq!(response["body"].as_str().unwrap_or_default(), "", "{file}");
            assert_eq!(
                response["headers"]["access-control-allow-methods"], "GET, OPTIONS",
                "{file}"
            );
            statuses.insert(*file, status);
            continue;
        }
        if file.contains("head") {
            assert_eq!(status, *expected, "{file}");
            assert_eq!(response["body"].as_str().unwrap_or_default(), "", "{file}");
            assert_eq!(
                response["headers"]["content-type"], "application/json",
                "{file}"
            );
            statuses.insert(*file, status);
            continue;
        }
        if *file == "sharing-query.json" {
            // NDJSON: the protocol, the metadata and the file, whose URL fetches the file.
            assert_eq!(status, *expected, "{file}: {response}");
            assert_eq!(response["headers"]["delta-table-version"], "1", "{file}");
            // lambda_http sends an application/x-ndjson body base64-encoded; API Gateway
            // decodes it before it reaches the client.
            assert_eq!(response["isBase64Encoded"], true, "{file}");
            let decoded =
                aws_smithy_types::base64::decode(response["body"].as_str().expect("a body"))
                    .expect("base64");
            let text = String::from_utf8(decoded).expect("UTF-8");
            let lines: Vec<Value> = text
                .lines()
                .map(|l| serde_json::from_str(l).expect("a JSON line"))
                .collect();
            assert_eq!(lines.len(), 3, "{file}: {text}");
            let (code, bytes) = http_get(lines[2]["file"]["url"].as_str().expect("url")).await;
            assert_eq!(code, 200, "{file}");
            let (rows, _, _) = read_parquet(bytes);
            assert_eq!(lines[1]["metaData"]["version"], 1, "{file}");
            assert_eq!(
                serde_json::from_str::<Value>(lines[2]["file"]["stats"].as_str().unwrap()).unwrap()
                    ["numRecords"],
                rows,
                "{file}"
            );
            statuses.insert(*file, status);
            continue;
        }
        if *file == "catalog-turtle.json" {
            // Turtle, with the links API Gateway's host makes, two datasets and the next page
            assert_eq!(status, *expected, "{file}: {response}");
            assert_eq!(
                response["headers"]["content-type"], "text/turtle; charset=utf-8",
                "{file}"
            );
            let text = response["body"].as_str().expect("a body");
            let base = "https://abc123.execute-api.us-east-1.amazonaws.com/api/v1";
            assert!(
                text.contains(&format!("<{base}/catalog> a dcat:Catalog")),
                "{file}: {text}"
            );
            assert_eq!(
                text.matches(" a dcat:Dataset ;").count(),
                2,
                "{file}: {text}"
            );
            assert!(
                text.contains(&format!("hydra:next <{base}/catalog?page=2&page_size=2>")),
                "{file}: {text}"
            );
            statuses.insert(*file, status);
            continue;
        }
        let body: Value = serde_json::from_str(response["body"].as_str().unwrap_or("null"))
            .unwrap_or_else(|e| panic!("{file}: body is not JSON ({e}): {response}"));
        statuses.insert(*file, status);
        if *file == "download-basic-auth.json" {
            // A redirect to the file the descriptor names
            assert_eq!(status, *expected, "{file}: {body}");
            let location = response["headers"]["location"].as_str().expect("Location");
            assert_eq!(location, body["url"], "{file}");
            let (code, bytes) = http_get(location).await;
            assert_eq!(code, 200, "{file}");
            let (rows, _, _) = read_parquet(bytes);
            assert_eq!(body["row_count"], rows, "{file}");
            continue;
        }
        if *file == "croissant.json" {
            assert_eq!(status, *expected, "{file}: {body}");
            assert_eq!(
                response["headers"]["content-type"], "application/ld+json",
                "{file}"
            );
            assert_eq!(
                body["conformsTo"], "http://mlcommons.org/croissant/1.1",
                "{file}"
            );
            assert_eq!(
                body["distribution"][0]["contentUrl"],
                "https://abc123.execute-api.us-east-1.amazonaws.com/api/v1/datasets/city-bikes/download?version=1",
                "{file}"
            );
            continue;
        }
        if *file == "catalog-jsonld.json" {
            assert_eq!(status, *expected, "{file}: {body}");
            let datasets = body["@graph"]
                .as_array()
                .expect("@graph")
                .iter()
                .filter(|n| n["@type"][0] == "http://www.w3.org/ns/dcat#Dataset")
                .count();
            assert_eq!(datasets, 4, "{file}: every sample on the first page");
            continue;
        }
        assert_eq!(status, *expected, "{file}: {body}");
        if status >= 400 {
            // The catalog's error body, or, from the Delta Sharing server, the protocol's.
            let message = if *function == "catalog-sharing" {
                &body["message"]
            } else {
                &body["error"]
            };
            assert!(message.is_string(), "{file}: error body {body}");
        }
        if *file == "list-filtered.json" {
            // category=Environment&sort=name: both environment datasets, A to Z
            let names: Vec<&str> = body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| {
                    assert_eq!(i["category"], "environment", "{file}");
                    i["name"].as_str().unwrap()
                })
                .collect();
            assert_eq!(body["total"], 2, "{file}");
            let mut sorted = names.clone();
            sorted.sort_by_key(|n| n.to_lowercase());
            assert_eq!(names, sorted, "{file}");
        }
        if *file == "account-create-key.json" {
            assert!(
                body["secret"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("dcat_")),
                "{file}"
            );
            assert_eq!(body["key"]["label"], "notebook", "{file}");
        }
        if *file == "account-list-keys.json" {
            // the key account-create-key.json made, for the sub both events' claims name
            assert_eq!(
                body["keys"].as_array().map(Vec::len),
                Some(1),
                "{file}: {body}"
            );
            assert_eq!(body["keys"][0]["label"], "notebook", "{file}");
        }
        if *file == "account-ask-access.json" {
            assert_eq!(body["access"]["status"], "granted", "{file}: {body}");
        }
        if *file == "account-list-access.json" || *file == "operator-list-granted.json" {
            // the grant account-ask-access.json made, for the sub the claims name
            assert_eq!(
                body["access"].as_array().map(Vec::len),
                Some(1),
                "{file}: {body}"
            );
            assert_eq!(body["access"][0]["dataset"], "bird-sightings", "{file}");
        }
        if *file == "sharing-list-tables.json" {
            assert_eq!(
                body["items"].as_array().map(Vec::len),
                Some(4),
                "{file}: {body}"
            );
        }
        if *file == "sharing-changes.json" {
            assert_eq!(body["errorCode"], "UNSUPPORTED_OPERATION", "{file}: {body}");
        }
        if *file == "operator-revoke.json" {
            assert_eq!(body["access"]["status"], "revoked", "{file}: {body}");
        }
        // AND rows come as asked: the window, or none past the end
        if *function == "catalog-rows" && status == 200 {
            let rows = body["rows"].as_array().expect("rows");
            match *file {
                "rows-x-api-key.json" => assert_eq!(rows.len(), 20, "{file}"),
                "rows-keyless-no-key.json" => {
                    assert_eq!(rows.len(), 5, "{file}");
                    assert_eq!(rows[0]["row_idx"], 10, "{file}");
                }
                _ => assert!(rows.is_empty() && body["next_offset"].is_null(), "{file}"),
            }
        }
        // AND every download URL fetches the Parquet file it describes
        if *function == "catalog-data" && status == 200 {
            let (code, bytes) = http_get(body["url"].as_str().expect("url")).await;
            assert_eq!(code, 200, "{file}: download");
            let (rows, columns, _) = read_parquet(bytes);
            assert_eq!(rows, body["row_count"].as_u64().unwrap(), "{file}");
            assert_eq!(
                serde_json::to_value(columns).unwrap(),
                body["columns"],
                "{file}"
            );
        }
    }

    // AND the same binaries answer plain HTTP through cargo-lambda's function URLs, which carry
    // no path parameters: the handlers route from the raw path
    let base = format!("http://127.0.0.1:{port}/lambda-url");
    let (code, body) = http_get(&format!("{base}/catalog-list/api/v1/datasets?page_size=3")).await;
    assert_eq!(code, 200);
    let page: Value = serde_json::from_slice(&body).expect("JSON page");
    assert_eq!(page["total"], 4);
    assert_eq!(page["items"].as_array().map(Vec::len), Some(3));
    let (code, _) = http_get(&format!(
        "{base}/catalog-metadata/api/v1/datasets/river-levels"
    ))
    .await;
    assert_eq!(code, 200);
    let (code, body) = http_get(&format!(
        "{base}/catalog-data/api/v1/datasets/city-bikes/data"
    ))
    .await;
    assert_eq!(code, 200);
    let descriptor: Value = serde_json::from_slice(&body).expect("JSON descriptor");
    assert_eq!(http_get(descriptor["url"].as_str().unwrap()).await.0, 200);
    let (code, _) = http_get(&format!(
        "{base}/catalog-data/api/v1/datasets/river-levels/data"
    ))
    .await;
    assert_eq!(code, 401);

    // AND the download log is built from the data function's own log lines: every URL it
    // handed out, delivered to the audit function as CloudWatch Logs would, is recorded, and
    // the daily count shows on the list
    let data_log = std::fs::read_to_string(&logs["catalog-data"]).expect("the data function's log");
    let now = Utc::now().timestamp_millis();
    let lines: Vec<catalog_writer::ingest::LogEvent> = data_log
        .lines()
        .filter(|l| l.starts_with('{'))
        .enumerate()
        .map(|(i, l)| catalog_writer::ingest::LogEvent {
            id: format!("data-{i}"),
            timestamp: now,
            message: l.to_owned(),
        })
        .collect();
    let downloads = catalog_writer::ingest::downloads(&lines);
    let handed_out = downloads.len();
    // Each dataset's count takes one download per requester (the key, or without one the
    // address's digest) and day.
    let requesters: std::collections::BTreeSet<(String, Option<String>, Option<String>)> =
        downloads
            .iter()
            .map(|(_, d)| (d.slug.clone(), d.key_id.clone(), d.client.clone()))
            .collect();
    assert_eq!(
        handed_out, 6,
        "every URL the data function handed out: {data_log}"
    );
    let batch = std::env::temp_dir().join(format!("audit-batch-{port}.json"));
    std::fs::write(
        &batch,
        catalog_writer::ingest::batch("/aws/lambda/catalog-data", &lines).to_string(),
    )
    .unwrap();
    let answer = invoke(port, "catalog-audit", batch.to_str().unwrap());
    assert_eq!(answer["recorded"], handed_out as u64, "{answer}");
    let answer = invoke(port, "catalog-audit", "events/audit-daily.json");
    assert!(answer["changed"].as_u64() > Some(0), "{answer}");
    let _ = std::fs::remove_file(&batch);
    let listed = catalog_http::api::list(
        &catalog_tests::v2_request("/api/v1/datasets", &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    let body: Value = serde_json::from_slice(listed.body().as_ref()).unwrap();
    let counted: u64 = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["downloads"].as_u64().unwrap())
        .sum();
    assert_eq!(counted, requesters.len() as u64, "{body}");
    drop(functions);
    drop(watch);

    // AND each binary wrote its metrics as embedded-metric-format lines CloudWatch Logs can
    // read, in the namespace it was given, each a metric the code declares (and the template's
    // alarms and dashboard read: metrics.rs)
    let points = |name: &str| {
        let log = std::fs::read_to_string(&logs[name]).expect("the function's log");
        let points = emf::points(&log);
        emf::assert_declared(&points, METRICS_NAMESPACE);
        points
    };
    let data = points("catalog-data");
    for route in ["data", "download"] {
        assert!(
            emf::has(&data, "UrlsIssued", &[("Route", route)]),
            "{route}: {data:?}"
        );
    }
    let issued = |p: &[emf::Point]| {
        p.iter()
            .filter(|p| p.name == "UrlsIssued" && p.dimensions.is_empty())
            .count()
    };
    // data-x-api-key, data-bearer, data-keyless-no-key, data-function-url, download-basic-auth
    // and the function URL's request: six URLs, each counted once
    assert_eq!(issued(&data), 6, "{data:?}");
    for code in ["missing_key", "invalid_key", "bad_request"] {
        assert!(
            emf::has(&data, "Refusals", &[("Code", code)]),
            "{code}: {data:?}"
        );
    }
    let sharing = points("catalog-sharing");
    assert!(
        emf::has(&sharing, "UrlsIssued", &[("Route", "sharing")]),
        "{sharing:?}"
    );
    assert_eq!(issued(&sharing), 1);
    assert!(emf::has(&sharing, "Refusals", &[]), "{sharing:?}");
    let rows = points("catalog-rows");
    let read: f64 = rows
        .iter()
        .filter(|p| p.name == "RowsBytesRead")
        .map(|p| p.value)
        .sum();
    assert!(read > 0.0, "{rows:?}");
    assert!(
        emf::has(&rows, "Refusals", &[("Code", "missing_key")]),
        "{rows:?}"
    );
    let list = points("catalog-list");
    assert!(
        emf::has(&list, "Refusals", &[("Code", "not_found")]),
        "{list:?}"
    );
    assert!(
        emf::has(&list, "Refusals", &[("Code", "bad_request")]),
        "{list:?}"
    );
}

/// The namespace the functions are given here (the stack gives `DatasetCatalog/<stack>`).
const METRICS_NAMESPACE: &str = "DatasetCatalog/events-test";
