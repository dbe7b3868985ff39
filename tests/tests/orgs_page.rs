//! Organisations on the site in a real browser: `tests/browser/orgs.py` (Playwright driving
//! Debian's headless Chromium) against the local stack — the API and the site on one origin,
//! moto's DynamoDB and Cognito, s3s-fs — with two datasets shared by approval: `acme~trials`, of
//! the organisation `acme` the operator creates on the page, and `river-levels`, the catalog's.
//! An operator creates `acme` and invites Alice as admin; Alice accepts on her account page and
//! invites Bob; Bob accepts, sees the members and nothing an admin sees; Alice makes him an
//! editor, he leaves; a stranger gets "not found"; Alice decides acme's requests on the
//! operators' page and sees no other's. Screenshots land in `target/site-screenshots`
//! (SCREENSHOTS_DIR overrides).

use std::path::PathBuf;
use std::process::Command;

use catalog_tests::{
    admin_command, manifest, repo_root, run_admin, samples_dir, start_local_api_with, tool, Stack,
};
use chrono::Utc;

#[tokio::test(flavor = "multi_thread")]
async fn an_organisation_is_managed_from_its_page_and_its_admins_decide_its_requests() {
    // GIVEN the river-levels sample published twice: as the catalog's `river-levels` and as
    // `acme~trials`, both shared by approval (the organisation is made later, on the page)
    let stack = Stack::start().await;
    let sample = manifest()
        .datasets
        .into_iter()
        .find(|d| d.slug.as_str() == "river-levels")
        .expect("the river-levels sample");
    for slug in ["river-levels", "acme~trials"] {
        let mut copy = sample.clone();
        copy.slug = catalog::input::Slug::parse(slug).expect("a slug");
        copy.keyless_offset_hours = None;
        stack.seed_one(&samples_dir(), &copy, Utc::now()).await;
        let out = run_admin(admin_command().envs(stack.function_env()).args([
            "access",
            "level",
            slug,
            "approval",
            "--approval",
            "manual",
        ]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // AND the local API serving the site, with the account routes behind the JWT checks
    let pool = stack.user_pool().await;
    let (base, _api) = start_local_api_with(&stack, Some(&pool));
    // AND an operator, and four people with confirmed accounts
    let cognito = stack.cognito();
    let password = "Orgs-page-password-1";
    let people = [
        ("OPERATOR_EMAIL", "olga@example.com"),
        ("ALICE_EMAIL", "alice@example.com"),
        ("BOB_EMAIL", "bob@example.com"),
        ("CAROL_EMAIL", "carol@example.com"),
        ("DAVE_EMAIL", "dave@example.com"),
    ];
    for (_, email) in people {
        catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, email, password)
            .await
            .expect("sign up");
    }
    catalog_dev::cognito::make_operator(&cognito, &pool.pool_id, people[0].1)
        .await
        .expect("add to the operators' group");
    let site = base.trim_end_matches("/api/v1").to_owned();
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));

    // WHEN the browser walks through the organisation's journey
    let out = Command::new(tool("BROWSER_PYTHON", ".venv-browser/bin/python"))
        .arg(repo_root().join("tests/browser/orgs.py"))
        .arg(&site)
        .arg(&shots)
        .envs(people)
        .env("PASSWORD", password)
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .expect("run tests/browser/orgs.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");

    // THEN every step passed, with no error in the pages' console
    assert!(out.status.success(), "the browser test failed:\n{report}");
    assert!(report.contains("12 of 12 steps passed"), "{report}");
    assert!(shots.join("org.png").exists());
}
