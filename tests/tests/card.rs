//! The dataset card (its Markdown README) on the dataset page in a real browser:
//! `tests/browser/card.py` (Playwright driving Debian's headless Chromium) against the local
//! stack, with a dataset whose card (`tests/browser/card.md`, set by `catalog-admin publish
//! --readme`) holds safe Markdown and XSS payloads, and one without a card. The safe Markdown
//! renders as elements; no payload runs; a page without a card loads neither library.
//! Screenshots land in `target/site-screenshots` (SCREENSHOTS_DIR overrides).

use std::path::PathBuf;
use std::process::Command;

use catalog_tests::{
    admin_command, repo_root, run_admin, samples_dir, start_local_api, tool, Stack,
};

#[tokio::test(flavor = "multi_thread")]
async fn the_card_renders_its_markdown_and_no_payload_in_it_runs() {
    // GIVEN a dataset whose card holds Markdown and XSS payloads, and one without a card
    let stack = Stack::start().await;
    let card = repo_root().join("tests/browser/card.md");
    let sample = |name: &str| {
        samples_dir()
            .join(format!("{name}.parquet"))
            .to_string_lossy()
            .into_owned()
    };
    let meta = [
        "--license",
        "CC0-1.0",
        "--source",
        "The card's test",
        "--category",
        "testing",
    ];
    let gauges = sample("river-levels");
    let bikes = sample("city-bikes");
    let card_path = card.to_string_lossy();
    for args in [
        vec![
            "publish",
            &gauges,
            "--slug",
            "gauges",
            "--name",
            "River gauges",
            "--description",
            "Hourly river levels, with a card.",
            "--readme",
            &card_path,
        ],
        vec![
            "publish",
            &bikes,
            "--slug",
            "bikes",
            "--name",
            "City bikes",
            "--description",
            "No card.",
        ],
    ] {
        let out = run_admin(
            admin_command()
                .envs(stack.function_env())
                .args(args.iter().chain(meta.iter())),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // AND the local API serving the site
    let (base, _api) = start_local_api(&stack);
    let site = base.trim_end_matches("/api/v1").to_owned();
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));

    // WHEN the browser opens both pages
    let out = Command::new(tool("BROWSER_PYTHON", ".venv-browser/bin/python"))
        .arg(repo_root().join("tests/browser/card.py"))
        .arg(&site)
        .arg(&shots)
        .env("CARD_SLUG", "gauges")
        .env("PLAIN_SLUG", "bikes")
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .expect("run tests/browser/card.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");

    // THEN every step passed, with no error in the pages' console
    assert!(out.status.success(), "the browser test failed:\n{report}");
    assert!(report.contains("6 of 6 steps passed"), "{report}");
    assert!(shots.join("card.png").exists());
}
