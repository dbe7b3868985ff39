//! The dataset page for an organisation's members, in a real browser: `tests/browser/members.py`
//! (Playwright driving Debian's headless Chromium) against the local stack — the API and the
//! site on one origin, moto's DynamoDB and Cognito, s3s-fs. `acme~ledger` has two versions (the
//! river-levels sample, then the air-quality one: other rows, other columns); `acme~vault` is
//! private. The organisation `acme` (made with `catalog-admin orgs`) has Alice as admin, Bob as
//! editor and Carol as member; Dave belongs to none. Carol sees the history and what changed, no
//! edit or rollback; Bob edits the description and the card (an XSS payload runs neither in the
//! preview nor on the page), rolls back to version 1; Carol sees the private dataset, Dave
//! neither it nor the panel. Bob publishes a version from the page (the file hashed and sent in
//! parts to the data bucket's presigned URLs through the CORS rule's front; a stand-in for the
//! EventBridge rule runs the publishing function's code on each object uploaded), resumes an
//! upload cut off after its first part, and sees a file that is neither Parquet nor CSV refused
//! with its reason. Screenshots land in `target/site-screenshots` (SCREENSHOTS_DIR
//! overrides).

use std::path::PathBuf;
use std::process::Command;

use catalog_aws::dynamo::uploads::DynamoUploads;
use catalog_publish_core::publish::Publisher;
use catalog_publish_core::site::publish_upload;
use catalog_tests::{
    admin_command, manifest, repo_root, run_admin, samples_dir, start_local_api_with, tool, Stack,
};
use chrono::Utc;

/// What the EventBridge rule does when deployed: each object created under `uploads/` is handed
/// to the publishing function's code (which deletes it, published or failed).
fn publish_uploads_as_they_arrive(stack: &Stack) -> tokio::task::JoinHandle<()> {
    let publisher = Publisher {
        writer: stack.writer(),
        s3: stack.s3.clone(),
        bucket: stack.target.bucket.clone(),
    };
    let store = DynamoUploads::new(stack.dynamo.clone(), stack.target.keys_table.clone());
    let (s3, bucket) = (stack.s3.clone(), stack.target.bucket.clone());
    tokio::spawn(async move {
        loop {
            let listed = s3
                .list_objects_v2()
                .bucket(&bucket)
                .prefix("uploads/")
                .send()
                .await;
            for object in listed
                .map(|l| l.contents.unwrap_or_default())
                .unwrap_or_default()
            {
                let Some(key) = object.key else { continue };
                if let Err(error) = publish_upload(&publisher, &store, &key, None, Utc::now()).await
                {
                    eprintln!("publishing {key}: {error}");
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        }
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn an_organisations_members_read_a_datasets_versions_and_its_editors_describe_and_roll_it_back(
) {
    // GIVEN acme~ledger published twice (river-levels, then air-quality-hourly) and acme~vault
    // (river-levels) private
    let stack = Stack::start_with_s3_cors().await;
    let sample = |name: &str, slug: &str| {
        let mut copy = manifest()
            .datasets
            .into_iter()
            .find(|d| d.slug.as_str() == name)
            .expect("the sample");
        copy.slug = catalog::input::Slug::parse(slug).expect("a slug");
        copy.keyless_offset_hours = None;
        copy
    };
    for (name, slug) in [
        ("river-levels", "acme~ledger"),
        ("air-quality-hourly", "acme~ledger"),
        ("river-levels", "acme~vault"),
    ] {
        stack
            .seed_one(&samples_dir(), &sample(name, slug), Utc::now())
            .await;
    }
    // AND the local API serving the site, with the account routes behind the JWT checks
    let pool = stack.user_pool().await;
    let (base, _api) = start_local_api_with(&stack, Some(&pool));
    // AND four people with confirmed accounts, three of them in acme
    let cognito = stack.cognito();
    let password = "Members-page-password-1";
    let people = [
        ("ALICE_EMAIL", "alice@example.com"),
        ("EDITOR_EMAIL", "bob@example.com"),
        ("MEMBER_EMAIL", "carol@example.com"),
        ("STRANGER_EMAIL", "dave@example.com"),
    ];
    for (_, email) in people {
        catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, email, password)
            .await
            .expect("sign up");
    }
    let admin = |args: &[&str]| {
        let out = run_admin(
            admin_command()
                .envs(stack.function_env())
                .env("USER_POOL_ID", &pool.pool_id)
                .env("CATALOG_OPERATOR", "ops@example.com")
                .args(args),
        );
        assert!(
            out.status.success(),
            "catalog-admin {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    admin(&["access", "level", "acme~vault", "private"]);
    admin(&["orgs", "create", "acme", "--admin", "alice@example.com"]);
    admin(&["orgs", "add", "acme", "bob@example.com", "--role", "editor"]);
    admin(&["orgs", "add", "acme", "carol@example.com"]);
    let site = base.trim_end_matches("/api/v1").to_owned();
    stack.allow_site_origin(&site);
    let publishing = publish_uploads_as_they_arrive(&stack);
    let shots = std::env::var_os("SCREENSHOTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target/site-screenshots"));

    // WHEN the browser walks through the members' journey
    let out = Command::new(tool("BROWSER_PYTHON", ".venv-browser/bin/python"))
        .arg(repo_root().join("tests/browser/members.py"))
        .arg(&site)
        .arg(&shots)
        .envs(people)
        .env("PASSWORD", password)
        .env(
            "CHROMIUM",
            std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into()),
        )
        .output()
        .expect("run tests/browser/members.py");
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{report}");
    publishing.abort();

    // THEN every step passed, with no error in the pages' console
    assert!(out.status.success(), "the browser test failed:\n{report}");
    assert!(report.contains("10 of 10 steps passed"), "{report}");
    assert!(shots.join("dataset-members.png").exists());
}
