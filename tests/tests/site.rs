//! The web site in a real browser: `tests/browser/site.py` (Playwright driving Debian's headless
//! Chromium) against the local stack — the API, the site on the same origin, moto's DynamoDB and
//! Cognito, s3s-fs — with the four test samples and the showcase catalog published through
//! `catalog-admin`, as `dev/run` publishes them, and `edge-values` (`tests/browser/edge_values.py`).
//! Screenshots land in `target/site-screenshots` (SCREENSHOTS_DIR overrides) and are kept: the
//! README's two, each page at 390 px, and one per failed step.

use std::path::PathBuf;
use std::process::Command;

use catalog_tests::{
    admin_command, publish_showcase, repo_root, run_admin, start_local_api_with, tool, Stack,
};
use chrono::Utc;

fn browser_python() -> PathBuf {
    tool("BROWSER_PYTHON", ".venv-browser/bin/python")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_site_works_end_to_end_in_a_real_browser() {
    // GIVEN the test samples and the showcase catalog (more than two pages of it)
    let stack = Stack::start().await;
    stack.seed_samples(Utc::now()).await;
    // AND a keyless dataset of values a page may show wrongly (integers past 2^53, nulls beside
    // "–" and "null" strings, long strings), published before the showcase (so that it lies
    // past the catalog's first page)
    let edge = std::env::temp_dir().join(format!("edge-values-{}.parquet", uuid::Uuid::new_v4()));
    let made = Command::new(browser_python())
        .arg(repo_root().join("tests/browser/edge_values.py"))
        .arg(&edge)
        .output()
        .expect("run tests/browser/edge_values.py");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    for args in [
        vec![
            "publish",
            &edge.to_string_lossy(),
            "--slug",
            "edge-values",
            "--name",
            "Edge values",
            "--license",
            "CC0-1.0",
            "--source",
            "The site's test",
            "--category",
            "testing",
        ],
        vec!["keyless", "set", "edge-values", "--until", "+2h"],
    ] {
        let out = run_admin(admin_command().envs(stack.function_env()).args(&args));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_file(&edge);
    let showcase = std::env::temp_dir().join(format!("catalog-showcase-{}", uuid::Uuid::new_v4()));
    publish_showcase(&stack.function_env(), &showcase);
    let _ = std::fs::remove_dir_all(&showcase);

    // AND the local API serving the site, with the account routes behind the JWT checks
    let pool = stack.user_pool().await;
    let (base, _api) = start_local_api_with(&stack, Some(&pool));
    // AND an operator's account (in the operators' group)
    let cognito = stack.cognito();
    let (operator, password) = ("olga@example.com", "Operator-password-1");
    catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, operator, password)
        .await
        .expect("sign the operator up");
    catalog_dev::cognito::make_operator(&cognito, &pool.pool_id, operator)
        .await
        .expect("add to the operators' group");
    // AND an invited person: `catalog-admin accounts invite`, then the temporary password the
    // invitation email would carry (the emulator sends none)
    let (invited, temporary) = ("guest@example.com", "Temporary-password-1");
    let out = run_admin(
        admin_command()
            .envs(stack.function_env())
            .env("USER_POOL_ID", &pool.pool_id)
            .args(["accounts", "invite", invited]),
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    cognito
        .admin_set_user_password()
        .user_pool_id(&pool.pool_id)
        .username(invited)
        .password(temporary)
        .permanent(false)
        .send()
        .await
        .expect("set the temporary password");
    let site = base.trim_end_matches("/api/v1").to_owned();
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));

    // WHEN the browser walks through the site
    let out = Command::new(browser_python())
        .arg(repo_root().join("tests/browser/site.py"))
        .arg(&site)
        .arg(&shots)
        .env("OPERATOR_EMAIL", operator)
        .env("OPERATOR_PASSWORD", password)
        .env("INVITED_EMAIL", invited)
        .env("INVITED_TEMPORARY_PASSWORD", temporary)
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .expect("run tests/browser/site.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");

    // THEN every step passed, with no error in the pages' console
    assert!(out.status.success(), "the browser test failed:\n{report}");
    assert!(report.contains("38 of 38 steps passed"), "{report}");
    assert!(shots.join("catalog.png").exists() && shots.join("dataset.png").exists());
}
