//! The dataset page's SQL console (DuckDB-WASM) in a real browser: `tests/browser/console.py`
//! (Playwright driving Debian's headless Chromium) against the local stack with the data
//! bucket's CORS rule in front of s3s-fs ([`catalog_dev::s3_cors`], as `dev/run` runs it), and
//! its answers and exports compared with DuckDB in Python (`tests/browser/console_check.py`).
//! Also: the console's Content-Security-Policy and the data bucket's CORS rule are the
//! template's.

use std::path::PathBuf;
use std::process::Command;

use catalog_tests::{admin_command, repo_root, run_admin, start_local_api, tool, Stack};
use chrono::Utc;
use sha2::{Digest, Sha256};

/// A read key the test stores, pasted on the gated dataset's page.
const READ_KEY: &str = "dcat_console000000000000000000000000000000000000000000000000000000000";

fn python(args: &[&str]) -> String {
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args(args)
        .output()
        .expect("run .venv's python");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "python {args:?} failed:\n{text}");
    text
}

#[tokio::test(flavor = "multi_thread")]
async fn the_sql_console_reads_ranges_of_the_file_and_exports_what_duckdb_answers() {
    // GIVEN the stack, the data bucket's CORS rule in front of its S3
    let stack = Stack::start_with_s3_cors().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(READ_KEY, &["read"], now, None).await;
    // AND a keyless dataset of 100,000 rows in 10 row groups, published with catalog-admin
    let work = repo_root()
        .join("target")
        .join(format!("console-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&work).expect("work directory");
    let file = work.join("sensor-readings.parquet");
    let check = repo_root().join("tests/browser/console_check.py");
    python(&[&check.to_string_lossy(), "make", &file.to_string_lossy()]);
    let slug = "sensor-readings";
    for args in [
        vec![
            "publish",
            &file.to_string_lossy(),
            "--slug",
            slug,
            "--name",
            "Sensor readings",
            "--license",
            "CC0-1.0",
            "--source",
            "The console's test",
            "--category",
            "environment",
        ],
        vec!["keyless", "set", slug, "--until", "+2h"],
    ] {
        let out = run_admin(admin_command().envs(stack.function_env()).args(&args));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let size = std::fs::metadata(&file).expect("the file").len();

    // AND the local API serving the site, whose origin the CORS rule allows
    let (base, _api) = start_local_api(&stack);
    let site = base.trim_end_matches("/api/v1").to_owned();
    stack.allow_site_origin(&site);

    // WHEN the browser opens the console and runs queries
    let out_dir = work.join("browser");
    let browser = tokio::process::Command::new(tool("BROWSER_PYTHON", ".venv-browser/bin/python"))
        .arg(repo_root().join("tests/browser/console.py"))
        .arg(&site)
        .arg(&out_dir)
        .env("SLUG", slug)
        .env("FILE_SIZE", size.to_string())
        .env("GATED_SLUG", "air-quality-hourly")
        .env("READ_KEY", READ_KEY)
        .env("S3_ORIGIN", &stack.s3_url)
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .await
        .expect("run tests/browser/console.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&browser.stdout),
        String::from_utf8_lossy(&browser.stderr)
    );
    println!("{report}");

    // THEN every step passed, with no error in the page's console
    assert!(
        browser.status.success(),
        "the browser test failed:\n{report}"
    );
    assert!(report.contains("8 of 8 steps passed"), "{report}");
    // AND the answers and the exports are DuckDB's in Python, on the same file
    let compared = python(&[
        &check.to_string_lossy(),
        "check",
        &file.to_string_lossy(),
        &out_dir.join("report.json").to_string_lossy(),
    ]);
    println!("{compared}");
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));
    let _ = std::fs::create_dir_all(&shots);
    // Kept beside the site test's: the console at 1200 px and on a 390 px phone.
    for shot in ["console.png", "console-phone.png"] {
        let _ = std::fs::copy(out_dir.join(shot), shots.join(shot));
    }
    let _ = std::fs::remove_dir_all(&work);
}

/// A version of many files on the dataset page (`tests/browser/many_files.py`): 32 files in
/// the splits `train` and `test` under Hive partitions `year=…/region=…/`, published from a
/// directory with catalog-admin, keyless and, a second time, behind a key.
#[tokio::test(flavor = "multi_thread")]
async fn a_dataset_of_many_files_shows_its_splits_files_and_rows_and_its_console_reads_only_the_partitions_asked_for(
) {
    // GIVEN the stack, the data bucket's CORS rule in front of its S3, and a read key
    let stack = Stack::start_with_s3_cors().await;
    stack.add_key(READ_KEY, &["read"], Utc::now(), None).await;
    // AND the files, published from their directory twice: keyless, and behind a key
    let work = repo_root()
        .join("target")
        .join(format!("many-files-test-{}", uuid::Uuid::new_v4()));
    let files = work.join("weather");
    let script = repo_root().join("tests/browser/many_files.py");
    python(&[&script.to_string_lossy(), "make", &files.to_string_lossy()]);
    let (slug, gated) = ("weather-shards", "weather-shards-gated");
    for (target, name) in [(slug, "Weather shards"), (gated, "Weather shards, gated")] {
        let out = run_admin(admin_command().envs(stack.function_env()).args([
            "publish",
            &files.to_string_lossy(),
            "--slug",
            target,
            "--name",
            name,
            "--license",
            "CC0-1.0",
            "--source",
            "The site's many-file test",
            "--category",
            "environment",
        ]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let out = run_admin(
        admin_command()
            .envs(stack.function_env())
            .args(["keyless", "set", slug, "--until", "+2h"]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // AND the local API serving the site, whose origin the CORS rule allows
    let (base, _api) = start_local_api(&stack);
    let site = base.trim_end_matches("/api/v1").to_owned();
    stack.allow_site_origin(&site);

    // WHEN the browser walks through the dataset page
    let out_dir = work.join("browser");
    let browser = tokio::process::Command::new(tool("BROWSER_PYTHON", ".venv-browser/bin/python"))
        .arg(&script)
        .arg(&site)
        .arg(&out_dir)
        .env("FILES_DIR", &files)
        .env("SLUG", slug)
        .env("GATED_SLUG", gated)
        .env("READ_KEY", READ_KEY)
        .env("S3_ORIGIN", &stack.s3_url)
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .await
        .expect("run tests/browser/many_files.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&browser.stdout),
        String::from_utf8_lossy(&browser.stderr)
    );
    println!("{report}");

    // THEN every step passed, with no error in the pages' console
    assert!(
        browser.status.success(),
        "the browser test failed:\n{report}"
    );
    assert!(report.contains("8 of 8 steps passed"), "{report}");
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));
    let _ = std::fs::create_dir_all(&shots);
    for shot in [
        "dataset-many-files.png",
        "dataset-many-files-phone.png",
        "console-many-files.png",
    ] {
        let _ = std::fs::copy(out_dir.join(shot), shots.join(shot));
    }
    let _ = std::fs::remove_dir_all(&work);
}

fn template() -> serde_norway::Value {
    let text = std::fs::read_to_string(repo_root().join("template.yaml")).unwrap();
    serde_norway::from_str(&text).expect("YAML")
}

/// A `!Sub "…"` or `!Ref …` value's text.
fn untagged(value: &serde_norway::Value) -> &str {
    match value {
        serde_norway::Value::Tagged(tagged) => tagged.value.as_str(),
        other => other.as_str(),
    }
    .unwrap_or_else(|| panic!("not text: {value:?}"))
}

#[test]
fn the_template_s_policies_are_the_local_server_s() {
    let template = template();
    let resources = &template["Resources"];
    let policy = |name: &str| {
        untagged(
            &resources[name]["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
                ["ContentSecurityPolicy"]["ContentSecurityPolicy"],
        )
        .to_owned()
    };
    // CloudFront's, with the region's Cognito endpoint and the data bucket's regional origin
    let cognito = "https://cognito-idp.${AWS::Region}.amazonaws.com/";
    let data = "https://${DataBucket}.s3.${AWS::Region}.${AWS::URLSuffix}";
    assert_eq!(
        policy("SiteSecurityHeaders"),
        catalog_dev::site::content_security_policy(cognito)
    );
    assert_eq!(
        policy("ConsoleSecurityHeaders"),
        catalog_dev::site::console_security_policy(cognito, Some(data))
    );
    // Each of the console's files has a behaviour with the console's policy; the vendor files
    // one of their own (the site behaviour's 404 function takes top-level files only).
    let config = &resources["SiteDistribution"]["Properties"]["DistributionConfig"];
    let behaviours = config["CacheBehaviors"].as_sequence().unwrap();
    let policy_of = |pattern: &str| {
        let behaviour = behaviours
            .iter()
            .find(|b| b["PathPattern"].as_str() == Some(pattern))
            .unwrap_or_else(|| panic!("no cache behaviour for {pattern}"));
        assert_eq!(behaviour["TargetOriginId"].as_str(), Some("site"));
        untagged(&behaviour["ResponseHeadersPolicyId"]).to_owned()
    };
    for file in catalog_dev::site::CONSOLE_FILES {
        assert_eq!(policy_of(&format!("/{file}")), "ConsoleSecurityHeaders");
    }
    assert!(catalog_dev::site::VENDOR
        .iter()
        .all(|(path, _, _)| path.starts_with("vendor/")));
    assert_eq!(policy_of("/vendor/*"), "SiteSecurityHeaders");
    assert_eq!(
        untagged(&config["DefaultCacheBehavior"]["ResponseHeadersPolicyId"]),
        "SiteSecurityHeaders"
    );
}

#[test]
fn dev_deploy_site_uploads_the_files_the_local_server_serves() {
    let script = std::fs::read_to_string(repo_root().join("dev/deploy-site")).unwrap();
    for (path, file, kind) in catalog_dev::site::VENDOR {
        let kind = kind.split(';').next().unwrap();
        assert!(
            script.contains(&format!("\"{path} {file} {kind}\"")),
            "dev/deploy-site does not upload {path}"
        );
    }
}

#[test]
fn the_import_map_s_hash_is_in_the_console_s_policy() {
    let page = std::fs::read_to_string(repo_root().join("web/dataset.html")).unwrap();
    let open = r#"<script type="importmap">"#;
    let start = page.find(open).expect("dataset.html's import map") + open.len();
    let map = &page[start..start + page[start..].find("</script>").unwrap()];
    let hash = base64(&Sha256::digest(map.as_bytes()));
    assert_eq!(
        catalog_dev::site::IMPORT_MAP_HASH,
        format!("'sha256-{hash}'")
    );
    assert_eq!(
        page.matches("<script").count(),
        2,
        "one import map, one module"
    );
}

#[test]
fn the_template_s_cors_rule_is_the_local_front_s() {
    use catalog_dev::s3_cors::rule;
    let template = template();
    let cors = &template["Resources"]["DataBucketCors"]["Properties"]["CorsRule"];
    let list = |name: &str| -> Vec<String> {
        cors[name]
            .as_sequence()
            .unwrap_or_else(|| panic!("CorsRule.{name}"))
            .iter()
            .map(|v| v.as_str().expect("string").to_owned())
            .collect()
    };
    assert_eq!(list("AllowedMethods"), rule::ALLOWED_METHODS);
    assert_eq!(list("AllowedHeaders"), rule::ALLOWED_HEADERS);
    assert_eq!(list("ExposedHeaders"), rule::EXPOSE_HEADERS);
    assert_eq!(
        cors["MaxAge"].as_u64(),
        Some(u64::from(rule::MAX_AGE_SECONDS))
    );
    // One origin: the SiteOrigin parameter, else this stack's own CloudFront site.
    let origin = format!("{:?}", cors["AllowedOrigin"]);
    assert!(
        origin.contains("HasSiteOrigin")
            && origin.contains("https://${SiteDistribution.DomainName}"),
        "{origin}"
    );
}

/// Standard base64 with padding, as a CSP hash is written.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The console's CSV export neutralises formula injection (web/csv.js, which console.js applies
/// to DuckDB's CSV before the browser saves it): `tests/browser/csv_cells.mjs` run by node
/// (which dev/setup needs already, for the site's npm files). Every cell that would start a
/// spreadsheet formula (`=`, `+`, `-`, `@`, tab, carriage return) gets a single quote in front,
/// as OWASP recommends; numbers, quoting and line ends stay as they were.
#[test]
fn the_csv_export_puts_a_quote_before_every_cell_that_would_start_a_formula() {
    let script = repo_root().join("tests/browser/csv_cells.mjs");
    let out = Command::new(std::env::var_os("NODE").unwrap_or_else(|| "node".into()))
        .arg("--no-warnings")
        .arg(&script)
        .output()
        .expect("run node (Node.js, which dev/setup needs for the site's npm files)");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{}:\n{text}", script.display());
    assert_eq!(text.trim(), "csv cells: ok");
}
