//! Private datasets in no public list (docs/organisations.md, docs/data-model.md): published
//! private, made public and private again through `catalog-admin access level`, and given new
//! versions, an organisation's private dataset is never listed, counted in facets, found by
//! search, sorted, in DCAT or in Delta Sharing's list of tables; the catalog list stays
//! numbered 1..=total, and `datasets reindex` finds nothing to repair after each step. The
//! refusals name their rule. The organisation's index lists its datasets, private included.

use super::*;
use catalog::slug::OrgName;
use catalog_aws::dynamo::DatasetsTable;
use catalog_http::testing::V2Event;
use catalog_tests::facets::{assert_facet_lists_consistent, scan_all, text, Stored};
use catalog_tests::faults::{start_proxy, Fault};

/// Publishes `file` as `slug` in category `water` with the tag `rivers`, named `name`, at
/// `level` (through a metadata file, as an operator gives one): what the CLI answered.
fn publish_at(stack: &Stack, file: &str, slug: &str, name: &str, level: &str) -> Output {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let meta = std::env::temp_dir().join(format!("private-meta-{}-{n}.json", std::process::id()));
    std::fs::write(
        &meta,
        serde_json::json!({ "access": { "level": level } }).to_string(),
    )
    .unwrap();
    let path = sample(file);
    let out = admin(
        stack,
        &[
            "publish",
            path.to_str().unwrap(),
            "--slug",
            slug,
            "--metadata",
            meta.to_str().unwrap(),
            "--name",
            name,
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "water",
            "--tag",
            "rivers",
        ],
        &[],
    );
    let _ = std::fs::remove_file(&meta);
    out
}

/// A listing's answer: its slugs, newest first (or in the order asked), and its `total`.
async fn listing(stack: &Stack, query: &str) -> (Vec<String>, u64) {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?page_size=100&{query}"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    let body = json_body(&resp);
    assert_eq!(resp.status(), 200, "{body}");
    let slugs = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap().to_owned())
        .collect();
    (slugs, body["total"].as_u64().unwrap_or(0))
}

/// The facet counts the list answers: (facet, value as shown, count).
async fn facet_counts(stack: &Stack) -> Vec<(String, String, u64)> {
    let resp = api::list(
        &v2_request("/api/v1/datasets?facets=true", &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    let body = json_body(&resp);
    let mut counts = Vec::new();
    for (facet, values) in body["facets"].as_object().expect("facets") {
        for value in values.as_array().unwrap() {
            counts.push((
                facet.clone(),
                value["value"].as_str().unwrap().to_owned(),
                value["count"].as_u64().unwrap(),
            ));
        }
    }
    counts.sort();
    counts
}

/// What DCAT's catalog and Delta Sharing's list of tables (read with `key`) answer, as text.
async fn protocol_lists(stack: &Stack, key: &str) -> (String, String) {
    let catalog = stack.catalog();
    let dcat = api::catalog(&v2_request("/api/v1/catalog", &[]), &catalog, Utc::now()).await;
    assert_eq!(dcat.status(), 200);
    let tables = V2Event::new(
        "GET",
        "/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables",
    )
    .header("authorization", &format!("Bearer {key}"));
    let signer = stack.signer(Duration::from_secs(900));
    let sharing = api::sharing(&tables.request(), &catalog, &signer, Utc::now()).await;
    assert_eq!(sharing.status(), 200);
    let text = |r: &lambda_http::Response<lambda_http::Body>| {
        String::from_utf8_lossy(r.body().as_ref()).into_owned()
    };
    (text(&dcat), text(&sharing))
}

/// `datasets reindex` finds nothing to repair: the lists are what a fresh build gives.
fn assert_nothing_to_repair(stack: &Stack) {
    let out = ok(&admin(stack, &["datasets", "reindex"], &[]));
    assert!(
        out.contains("(0 entries written or removed; 0 catalog entries moved or removed)"),
        "{out}"
    );
}

/// No item of any list (the catalog list, a facet list) names `slug`, and the catalog list is
/// numbered 1..=total.
async fn assert_in_no_list(stack: &Stack, slug: &str) {
    for item in scan_all(&stack.dynamo, &stack.target.datasets_table).await {
        let pk = text(&item, "pk");
        if pk == "LIST" || pk.starts_with("LIST#") {
            assert_ne!(text(&item, "slug"), slug, "{pk} {}", text(&item, "sk"));
        }
    }
    let stored = Stored::read(stack).await;
    let positions: Vec<u64> = stored.listed.iter().map(|(p, _, _)| *p).collect();
    let total = stored.listed_total.unwrap_or(0);
    assert_eq!(positions, (1..=total).collect::<Vec<_>>());
}

/// Everything public about the catalog shows exactly `listed` (newest first), counting them
/// only: the list and its total, a filter, the facet counts, search, a kept order, DCAT and
/// Delta Sharing; the lists are consistent and `reindex` has nothing to repair.
async fn assert_public(stack: &Stack, key: &str, listed: &[&str], hidden: &str) {
    let (slugs, total) = listing(stack, "").await;
    assert_eq!(slugs, listed);
    assert_eq!(total, listed.len() as u64);
    let water: Vec<&str> = listed.iter().copied().filter(|s| s.contains('~')).collect();
    assert_eq!(
        listing(stack, "category=water").await,
        (to_strings(&water), water.len() as u64)
    );
    let n = water.len() as u64;
    let counts = facet_counts(stack).await;
    for (facet, value) in [("category", "water"), ("tag", "rivers")] {
        let count = counts
            .iter()
            .find(|(f, v, _)| f == facet && v == value)
            .map_or(0, |c| c.2);
        assert_eq!(count, n, "{facet} {value}: {counts:?}");
    }
    // Search by a word only the hidden dataset's name has; two filters (the text index).
    let found = listing(stack, "q=sandpiper").await.0;
    assert_eq!(found.contains(&hidden.to_owned()), listed.contains(&hidden));
    let filtered = listing(stack, "category=water&tag=rivers").await.0;
    assert_eq!(filtered, water);
    // A kept order.
    let mut by_name = listing(stack, "sort=name").await.0;
    by_name.sort();
    let mut want = to_strings(listed);
    want.sort();
    assert_eq!(by_name, want);
    let (dcat, sharing) = protocol_lists(stack, key).await;
    assert_eq!(dcat.contains(hidden), listed.contains(&hidden), "{dcat}");
    assert_eq!(
        sharing.contains(hidden),
        listed.contains(&hidden),
        "{sharing}"
    );
    if !listed.contains(&hidden) {
        assert_in_no_list(stack, hidden).await;
    }
    assert_facet_lists_consistent(stack).await;
    assert_nothing_to_repair(stack);
}

fn to_strings(slugs: &[&str]) -> Vec<String> {
    slugs.iter().map(|s| s.to_string()).collect()
}

/// The metadata route with an operator's key: the dataset is served (not gone).
async fn served_to_operators(stack: &Stack, slug: &str, key: &str) -> u16 {
    api::metadata(
        &v2_request(&format!("/api/v1/datasets/{slug}"), &[("x-api-key", key)]),
        &stack.catalog(),
        Utc::now(),
    )
    .await
    .status()
    .as_u16()
}

fn refused(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    stderr
}

#[tokio::test]
async fn a_private_dataset_is_in_no_public_list_and_moves_in_and_out_with_its_level() {
    let stack = Stack::start().await;
    ok(&publish_at(
        &stack,
        "river-levels",
        "acme~open",
        "Open rivers",
        "registered",
    ));
    ok(&publish_at(
        &stack,
        "city-bikes",
        "acme~secret",
        "Hidden sandpiper",
        "private",
    ));
    let out = admin(
        &stack,
        &[
            "publish",
            sample("bird-sightings").to_str().unwrap(),
            "--slug",
            "plain",
            "--name",
            "Plain birds",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "air",
        ],
        &[],
    );
    ok(&out);
    let key = create_key(&stack);
    let hidden = "acme~secret";

    // THEN the private dataset is in no public list, and served to operators by its slug
    assert_public(&stack, &key, &["plain", "acme~open"], hidden).await;
    assert_eq!(served_to_operators(&stack, hidden, &key).await, 200);
    // AND its organisation's index lists both of its datasets, the private one included
    let table = DatasetsTable::new(stack.dynamo.clone(), &stack.target.datasets_table);
    let acme = table
        .org_datasets(&OrgName::parse("acme").unwrap())
        .await
        .unwrap();
    let shown: Vec<(String, &str, &str)> = acme
        .iter()
        .map(|d| (d.slug.to_string(), d.name.as_str(), d.access_level.as_str()))
        .collect();
    assert_eq!(
        shown,
        [
            ("acme~open".to_owned(), "Open rivers", "registered"),
            ("acme~secret".to_owned(), "Hidden sandpiper", "private"),
        ]
    );

    // AND operators see both through the CLI, while its catalog list has the other two
    let out = ok(&admin(&stack, &["datasets", "list", "--org", "acme"], &[]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    assert_eq!(lines[0], "2 datasets of acme");
    assert!(
        lines[1].starts_with("acme~open") && lines[1].contains(" registered "),
        "{out}"
    );
    assert!(
        lines[2].starts_with("acme~secret") && lines[2].contains(" private "),
        "{out}"
    );
    let out = ok(&admin(&stack, &["datasets", "list"], &[]));
    assert!(
        out.starts_with("2 datasets\n") && !out.contains(hidden),
        "{out}"
    );

    // WHEN it is made registered
    ok(&admin(
        &stack,
        &["access", "level", hidden, "registered"],
        &[],
    ));
    // THEN it is listed at the end (newest), counted and found
    assert_public(&stack, &key, &["acme~secret", "plain", "acme~open"], hidden).await;

    // WHEN it is made private again
    ok(&admin(&stack, &["access", "level", hidden, "private"], &[]));
    // THEN it leaves every list (the others keep their order, 1..=total), and is still served
    assert_public(&stack, &key, &["plain", "acme~open"], hidden).await;
    assert_eq!(served_to_operators(&stack, hidden, &key).await, 200);

    // WHEN a new version of it is published (its metadata kept)
    let path = sample("city-bikes");
    ok(&admin(
        &stack,
        &["publish", path.to_str().unwrap(), "--slug", hidden],
        &[],
    ));
    // THEN it stays unlisted
    let out = ok(&admin(&stack, &["versions", "list", hidden], &[]));
    assert!(out.contains("* v2 "), "{out}");
    assert_public(&stack, &key, &["plain", "acme~open"], hidden).await;

    // WHEN it is unpublished, then restored
    ok(&admin(&stack, &["datasets", "unpublish", hidden], &[]));
    assert_public(&stack, &key, &["plain", "acme~open"], hidden).await;
    let out = ok(&admin(&stack, &["datasets", "restore", hidden], &[]));
    // THEN it is served again, and still in no public list
    assert!(
        out.contains("served again (private: in no public list)"),
        "{out}"
    );
    assert_eq!(served_to_operators(&stack, hidden, &key).await, 200);
    assert_public(&stack, &key, &["plain", "acme~open"], hidden).await;

    // WHEN a listed dataset is re-published with metadata that makes it private
    ok(&publish_at(
        &stack,
        "river-levels",
        "acme~open",
        "Open rivers",
        "private",
    ));
    // THEN it leaves the lists as `access level … private` takes it out
    assert_public(&stack, &key, &["plain"], hidden).await;
    assert_in_no_list(&stack, "acme~open").await;
    // AND back at `approval` it is listed again, newest
    ok(&admin(
        &stack,
        &["access", "level", "acme~open", "approval"],
        &[],
    ));
    assert_public(&stack, &key, &["acme~open", "plain"], hidden).await;
}

#[tokio::test]
async fn private_is_refused_on_a_catalog_dataset_and_with_a_keyless_window() {
    let stack = Stack::start().await;
    ok(&publish_at(
        &stack,
        "river-levels",
        "acme~open",
        "Open rivers",
        "registered",
    ));
    ok(&publish_at(
        &stack,
        "city-bikes",
        "acme~secret",
        "Hidden sandpiper",
        "private",
    ));
    ok(&admin(
        &stack,
        &[
            "publish",
            sample("bird-sightings").to_str().unwrap(),
            "--slug",
            "plain",
            "--name",
            "Plain birds",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "air",
        ],
        &[],
    ));

    // A catalog dataset made private: refused, naming the rule; it stays listed
    let stderr = refused(&admin(
        &stack,
        &["access", "level", "plain", "private"],
        &[],
    ));
    assert!(stderr.contains("'plain' cannot be private"), "{stderr}");
    assert!(stderr.contains("org~name"), "{stderr}");
    // A catalog dataset published private: refused before anything is reserved
    let stderr = refused(&publish_at(
        &stack,
        "bird-sightings",
        "other",
        "x",
        "private",
    ));
    assert!(stderr.contains("'other' cannot be private"), "{stderr}");
    let shown = admin(&stack, &["datasets", "show", "other"], &[]);
    assert!(!shown.status.success(), "no dataset 'other' was created");
    // A keyless window on a private dataset: refused
    let stderr = refused(&admin(
        &stack,
        &["keyless", "set", "acme~secret", "--until", "+1d"],
        &[],
    ));
    assert!(stderr.contains("'acme~secret' is private"), "{stderr}");
    // Private while a window is open: refused, saying how to close it
    ok(&admin(
        &stack,
        &["keyless", "set", "acme~open", "--until", "+1d"],
        &[],
    ));
    let stderr = refused(&admin(
        &stack,
        &["access", "level", "acme~open", "private"],
        &[],
    ));
    assert!(stderr.contains("keyless window open"), "{stderr}");
    assert!(stderr.contains("keyless clear acme~open"), "{stderr}");
    // Nothing moved
    let (slugs, total) = listing(&stack, "").await;
    assert_eq!((slugs, total), (to_strings(&["plain", "acme~open"]), 2));
    // Once the window is closed, it may be made private
    ok(&admin(&stack, &["keyless", "clear", "acme~open"], &[]));
    ok(&admin(
        &stack,
        &["access", "level", "acme~open", "private"],
        &[],
    ));
    assert_eq!(listing(&stack, "").await.0, ["plain"]);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
}

// The proxy runs on the test's runtime while the CLI runs: two worker threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_level_change_interrupted_after_its_transaction_is_completed_by_reindex() {
    let stack = Stack::start().await;
    ok(&publish_at(
        &stack,
        "river-levels",
        "acme~a",
        "First",
        "registered",
    ));
    ok(&publish_at(
        &stack,
        "city-bikes",
        "acme~b",
        "Second",
        "registered",
    ));
    ok(&publish_at(
        &stack,
        "bird-sightings",
        "acme~c",
        "Third",
        "registered",
    ));
    // GIVEN DynamoDB refusing the catalog list's mark (and only it)
    let proxy = start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for_requests(
        "UpdateItem",
        &["\"REBUILD\"", "SET #mark"],
        Fault::InternalServerError,
    );
    // WHEN the first dataset is made private through it
    let out = admin(
        &stack,
        &["access", "level", "acme~a", "private"],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    // THEN the CLI exits 1 asking for reindex; the dataset is private already, and unlisted
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("catalog-admin datasets reindex"),
        "{stderr}"
    );
    assert_eq!(listing(&stack, "").await.0, ["acme~c", "acme~b"]);
    // WHEN the same command runs again
    ok(&admin(
        &stack,
        &["access", "level", "acme~a", "private"],
        &[],
    ));
    // THEN the lists are renumbered without it and exact
    assert_eq!(
        listing(&stack, "").await,
        (to_strings(&["acme~c", "acme~b"]), 2)
    );
    assert_in_no_list(&stack, "acme~a").await;
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
}
