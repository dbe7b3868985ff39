//! The OpenAPI document (openapi.yaml) against the behaviour: schemathesis generates requests
//! from the document as the local API serves it (/api/v1/openapi.json), valid and invalid, and
//! checks every response against it: no server error, every status, header and body as
//! documented. The local API runs the same handlers as the Lambda functions, against moto and
//! s3s-fs.

use std::process::{Command, Stdio};

use catalog_tests::{tool, Stack, EVENTS_READ_KEY};
use chrono::Utc;

/// Examples per operation and mode: bounded, so the test command stays fast.
const MAX_EXAMPLES: &str = "40";

fn schemathesis(base: &str, config: &str, headers: &[String], only: &[&str]) -> (bool, String) {
    schemathesis_on(&format!("{base}/openapi.json"), base, config, headers, only)
}

fn schemathesis_on(
    document: &str,
    base: &str,
    config: &str,
    headers: &[String],
    only: &[&str],
) -> (bool, String) {
    let mut cmd = Command::new(tool("SCHEMATHESIS", ".venv-checks/bin/schemathesis"));
    let config = catalog_tests::repo_root().join("tests").join(config);
    cmd.arg("--config-file")
        .arg(config)
        .args(["run", document, "--url", base])
        .args([
            "--checks",
            "all",
            "--max-examples",
            MAX_EXAMPLES,
            "--seed",
            "20261122",
        ])
        .args(["--workers", "2", "--no-color", "--warnings", "off"])
        .env("SCHEMATHESIS_TELEMETRY", "false")
        .stdin(Stdio::null());
    for header in headers {
        cmd.args(["-H", header]);
    }
    cmd.args(only);
    let out = cmd.output().expect("run schemathesis");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[tokio::test]
async fn the_running_api_matches_its_openapi_document() {
    // GIVEN the sample catalog behind the local API, and a read key
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);

    // WHEN schemathesis runs every check, without a key and with one, with the list filters
    // drawn from the sample catalog and then free
    for config in ["schemathesis.toml", "schemathesis-unpinned.toml"] {
        for headers in [vec![], vec![format!("x-api-key: {EVENTS_READ_KEY}")]] {
            // The account, operators' and organisations' routes need a user pool: the test
            // below runs them.
            let (ok, report) = schemathesis(
                &base,
                config,
                &headers,
                &["--exclude-path-regex", "^/(account|operator|orgs)(/|$)"],
            );
            println!("{report}");
            // THEN it finds no server error and no response the document does not describe
            assert!(
                ok,
                "schemathesis found failures ({config}, headers {headers:?}):\n{report}"
            );
            assert!(report.contains("No issues found"), "{report}");
        }
    }
}

#[tokio::test]
async fn the_account_routes_match_their_openapi_document() {
    // GIVEN the local API with its account routes behind the JWT authorizer, and a person
    // signed in to the emulated user pool
    let stack = Stack::start().await;
    let pool = stack.user_pool().await;
    let (base, _api) = catalog_tests::start_local_api_with(&stack, Some(&pool));
    let cognito = stack.cognito();
    let password = "Contract-test-password-1";
    catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, "contract@example.com", password)
        .await
        .expect("sign up");
    // ... who is an operator too, so that the operators' routes answer beyond their 403
    catalog_dev::cognito::make_operator(&cognito, &pool.pool_id, "contract@example.com")
        .await
        .expect("add to the operators' group");
    let tokens = catalog_dev::cognito::sign_in(&cognito, &pool, "contract@example.com", password)
        .await
        .expect("sign in");

    // WHEN schemathesis runs every check on the account and operators' operations with the
    // access token
    let header = format!("Authorization: Bearer {}", tokens.access_token);
    let (ok, report) = schemathesis(
        &base,
        "schemathesis-unpinned.toml",
        &[header],
        &["--include-path-regex", "^/(account|operator|orgs)(/|$)"],
    );
    println!("{report}");
    // THEN every answer (created keys, the limit's 409s, 404s for unknown ids and datasets,
    // 400s for bad bodies and decisions, 401s without the token) is as documented
    assert!(
        ok,
        "schemathesis found failures on the account routes:\n{report}"
    );
    assert!(report.contains("No issues found"), "{report}");
}

#[tokio::test]
async fn the_delta_sharing_routes_match_their_openapi_document() {
    // GIVEN the sample catalog behind the local API, and a read key
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);

    // WHEN schemathesis runs every check on openapi-delta-sharing.yaml, with the key as the
    // bearer token (and, for its authentication checks, without it)
    let header = format!("Authorization: Bearer {EVENTS_READ_KEY}");
    let (ok, report) = schemathesis_on(
        &format!("{base}/openapi-delta-sharing.json"),
        &format!("{base}/delta-sharing"),
        "schemathesis-unpinned.toml",
        &[header],
        &[],
    );
    println!("{report}");
    // THEN every answer is as documented, errors in the protocol's shape
    assert!(
        ok,
        "schemathesis found failures on the Delta Sharing routes:\n{report}"
    );
    assert!(report.contains("No issues found"), "{report}");
}
