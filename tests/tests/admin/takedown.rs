//! Taking data down through the CLI: `datasets unpublish` and `restore`, `datasets delete`,
//! `versions delete`. After each, every route answers as documented, the catalog list, the
//! facet lists, their counters and the facet counts are exactly what the stored datasets give
//! (`catalog_tests::facets`), and `datasets reindex` finds nothing to repair.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_http::testing::V2Event;
use catalog_tests::facets::{assert_facet_lists_consistent, scan_all, text};
use catalog_tests::faults::{start_proxy, Fault, Proxy};

/// Publishes `file` as `slug` through the CLI, in `category`, with `tags`.
fn publish_as(stack: &Stack, file: &str, slug: &str, category: &str, tags: &[&str]) {
    let path = sample(file);
    let mut args = vec![
        "publish",
        path.to_str().unwrap(),
        "--slug",
        slug,
        "--name",
        "Taken down",
        "--license",
        "CC0-1.0",
        "--source",
        "tests",
        "--category",
        category,
    ];
    for tag in tags {
        args.extend(["--tag", tag]);
    }
    ok(&admin(stack, &args, &[]));
}

/// The slugs a listing answers, newest first.
async fn slugs(stack: &Stack, query: &str) -> Vec<String> {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?page_size=100&{query}"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    let body = json_body(&resp);
    assert_eq!(resp.status(), 200, "{body}");
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap().to_owned())
        .collect()
}

/// `datasets reindex` finds nothing to repair: no catalog entry moved, no facet entry written.
fn assert_nothing_to_repair(stack: &Stack) {
    let out = ok(&admin(stack, &["datasets", "reindex"], &[]));
    assert!(
        out.contains("(0 entries written or removed; 0 catalog entries moved or removed)"),
        "{out}"
    );
}

/// Every route's answer for `slug` (or its id): (route, status, code).
async fn every_route(stack: &Stack, named: &str, key: &str) -> Vec<(&'static str, u16, String)> {
    let catalog = stack.catalog();
    let signer = stack.signer(Duration::from_secs(900));
    let now = Utc::now();
    let with_key = [("x-api-key", key)];
    let path = |tail: &str| format!("/api/v1/datasets/{named}{tail}");
    let answers = [
        (
            "metadata",
            api::metadata(&v2_request(&path(""), &[]), &catalog, now).await,
        ),
        (
            "croissant",
            api::croissant(&v2_request(&path("/croissant"), &[]), &catalog, now).await,
        ),
        (
            "data",
            api::data(
                &v2_request(&path("/data"), &with_key),
                &catalog,
                &signer,
                now,
            )
            .await,
        ),
        (
            "download",
            api::download(
                &v2_request(&path("/download"), &with_key),
                &catalog,
                &signer,
                now,
            )
            .await,
        ),
        (
            "rows",
            api::rows(
                &v2_request(&path("/rows"), &with_key),
                &catalog,
                &stack.rows(),
                now,
            )
            .await,
        ),
    ];
    let mut out: Vec<(&'static str, u16, String)> = answers
        .into_iter()
        .map(|(route, resp)| {
            let status = resp.status().as_u16();
            let code = match status {
                200..=399 => String::new(),
                _ => json_body(&resp)["code"].as_str().unwrap_or("").to_owned(),
            };
            (route, status, code)
        })
        .collect();
    let query = V2Event::new(
        "POST",
        &format!("/api/v1/delta-sharing/shares/catalog/schemas/datasets/tables/{named}/query"),
    )
    .header("authorization", &format!("Bearer {key}"))
    .body("{}");
    let resp = api::sharing(&query.request(), &catalog, &signer, now).await;
    let status = resp.status().as_u16();
    let code = match status {
        200..=399 => String::new(),
        _ => json_body(&resp)["errorCode"]
            .as_str()
            .unwrap_or("")
            .to_owned(),
    };
    out.push(("delta sharing query", status, code));
    out
}

fn all(status: u16, code: &str, sharing: (u16, &str)) -> Vec<(&'static str, u16, String)> {
    ["metadata", "croissant", "data", "download", "rows"]
        .into_iter()
        .map(|r| (r, status, code.to_owned()))
        .chain([("delta sharing query", sharing.0, sharing.1.to_owned())])
        .collect()
}

/// Every route serving: the download route answers its redirect.
fn served() -> Vec<(&'static str, u16, String)> {
    let mut answers = all(200, "", (200, ""));
    answers[3].1 = 302;
    answers
}

fn the_id(stack: &Stack, slug: &str) -> String {
    let out = ok(&admin(stack, &["datasets", "show", slug], &[]));
    let shown: Value = serde_json::from_str(&out).unwrap();
    shown["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn unpublishing_hides_a_dataset_everywhere_and_restoring_lists_it_again() {
    let stack = Stack::start().await;
    publish_as(
        &stack,
        "river-levels",
        "ds-0",
        "Water",
        &["rivers", "daily"],
    );
    publish_as(&stack, "city-bikes", "ds-1", "water", &["rivers", "bikes"]);
    publish_as(&stack, "bird-sightings", "ds-2", "air", &["daily"]);
    publish_as(&stack, "air-quality-hourly", "ds-3", "water", &["daily"]);
    let key = create_key(&stack);
    let id = the_id(&stack, "ds-1");
    assert_eq!(every_route(&stack, "ds-1", &key).await, served());

    // WHEN the second dataset is unpublished
    let out = ok(&admin(&stack, &["datasets", "unpublish", "ds-1"], &[]));
    assert!(out.contains("ds-1: unpublished"), "{out}");

    // THEN every route answers 410 `unpublished`, by slug and by id; Delta Sharing, whose
    // protocol has no 410, answers 404 saying so
    let gone = all(410, "unpublished", (404, "RESOURCE_DOES_NOT_EXIST"));
    assert_eq!(every_route(&stack, "ds-1", &key).await, gone);
    assert_eq!(every_route(&stack, &id, &key).await, gone);
    let resp = metadata(&stack, "ds-1").await;
    assert!(
        json_body(&resp)["error"]
            .as_str()
            .unwrap()
            .contains("unpublished by the catalog's operators"),
        "{}",
        json_body(&resp)
    );
    // AND it left the catalog, its filters and its counts; the others keep their order
    assert_eq!(slugs(&stack, "").await, ["ds-3", "ds-2", "ds-0"]);
    assert_eq!(slugs(&stack, "category=water").await, ["ds-3", "ds-0"]);
    assert_eq!(slugs(&stack, "tag=rivers").await, ["ds-0"]);
    assert!(slugs(&stack, "tag=bikes").await.is_empty());
    assert_eq!(slugs(&stack, "sort=name&q=taken").await.len(), 3);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
    // AND its versions are kept
    let out = ok(&admin(&stack, &["versions", "list", "ds-1"], &[]));
    assert!(out.starts_with("* v1 "), "{out}");

    // WHEN someone publishes to it, or unpublishes it again
    let path = sample("city-bikes");
    let refused = admin(
        &stack,
        &["publish", path.to_str().unwrap(), "--slug", "ds-1"],
        &[],
    );
    // THEN the publish is refused before anything is uploaded, saying what to do; a second
    // unpublish changes nothing
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("datasets restore ds-1"), "{stderr}");
    let out = ok(&admin(&stack, &["versions", "list", "ds-1"], &[]));
    assert_eq!(out.lines().count(), 1, "no version reserved: {out}");
    ok(&admin(&stack, &["datasets", "unpublish", "ds-1"], &[]));
    assert_eq!(slugs(&stack, "").await, ["ds-3", "ds-2", "ds-0"]);

    // WHEN it is restored
    let out = ok(&admin(&stack, &["datasets", "restore", "ds-1"], &[]));
    assert!(out.contains("ds-1: listed again"), "{out}");
    // THEN every route serves it again, and it is listed as newly published
    assert_eq!(every_route(&stack, "ds-1", &key).await, served());
    assert_eq!(slugs(&stack, "").await, ["ds-1", "ds-3", "ds-2", "ds-0"]);
    assert_eq!(slugs(&stack, "tag=rivers").await, ["ds-1", "ds-0"]);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
    // AND restoring what is published is refused
    let again = admin(&stack, &["datasets", "restore", "ds-1"], &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is not unpublished"));
}

/// A proxy to DynamoDB that refuses the catalog list's mark, and only it: a take-down's
/// transaction passes, the renumbering after it fails.
async fn refusing_the_catalog_mark(stack: &Stack) -> Proxy {
    let proxy = start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for_requests(
        "UpdateItem",
        &["\"REBUILD\"", "SET #mark"],
        Fault::InternalServerError,
    );
    proxy
}

// The proxy runs on the test's runtime while the CLI runs: two worker threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unpublish_interrupted_after_its_transaction_is_completed_by_reindex() {
    let stack = Stack::start().await;
    for (i, file) in ["river-levels", "city-bikes", "bird-sightings"]
        .iter()
        .enumerate()
    {
        publish_as(&stack, file, &format!("ds-{i}"), "water", &["daily"]);
    }
    // GIVEN DynamoDB refusing the catalog list's mark (and only it)
    let proxy = refusing_the_catalog_mark(&stack).await;
    // WHEN the first dataset is unpublished through it
    let out = admin(
        &stack,
        &["datasets", "unpublish", "ds-0"],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    // THEN the CLI exits 1 asking for reindex, and the dataset is already gone from the routes
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("run `catalog-admin datasets reindex`"),
        "{stderr}"
    );
    assert_eq!(metadata(&stack, "ds-0").await.status(), 410);
    // WHEN the operator runs reindex
    let out = ok(&admin(&stack, &["datasets", "reindex"], &[]));
    // THEN the catalog list closes the gap, and the lists are exact
    assert!(out.contains("3 catalog entries moved or removed"), "{out}");
    assert_eq!(slugs(&stack, "").await, ["ds-2", "ds-1"]);
    assert_eq!(slugs(&stack, "category=water").await, ["ds-2", "ds-1"]);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
}

// The proxy runs on the test's runtime while the CLI runs: two worker threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_interrupted_after_its_transaction_is_finished_by_deleting_again() {
    let stack = Stack::start().await;
    publish_as(&stack, "river-levels", "ds-0", "water", &["daily"]);
    publish_as(&stack, "city-bikes", "ds-0", "water", &["daily"]);
    publish_as(&stack, "bird-sightings", "ds-1", "water", &["daily"]);
    assert_eq!(objects(&stack, "datasets/ds-0/").await.len(), 2);
    // GIVEN DynamoDB refusing the catalog list's mark (and only it)
    let proxy = refusing_the_catalog_mark(&stack).await;
    // WHEN the first dataset is deleted through it
    let out = admin(
        &stack,
        &["datasets", "delete", "ds-0", "--yes"],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );
    // THEN the CLI exits 1 asking for the delete to be run again (reindex alone would leave
    // its versions and files), and the dataset is already gone from the routes
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("run `catalog-admin datasets delete ds-0 --yes` again"),
        "{stderr}"
    );
    assert_eq!(metadata(&stack, "ds-0").await.status(), 404);
    assert_eq!(objects(&stack, "datasets/ds-0/").await.len(), 2);
    // WHEN the operator runs it again
    let out = ok(&admin(
        &stack,
        &["datasets", "delete", "ds-0", "--yes"],
        &[],
    ));
    // THEN it finishes: the versions' records and files are gone, the lists exact
    assert!(out.contains("ds-0: deleted (2 versions, 2 files)"), "{out}");
    assert!(objects(&stack, "datasets/ds-0/").await.is_empty());
    let left = scan_all(&stack.dynamo, &stack.target.datasets_table)
        .await
        .iter()
        .filter(|i| text(i, "pk") == "DS#ds-0")
        .count();
    assert_eq!(left, 0);
    assert_eq!(slugs(&stack, "").await, ["ds-1"]);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
}

/// The bucket's keys under `prefix`.
async fn objects(stack: &Stack, prefix: &str) -> Vec<String> {
    stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix(prefix)
        .send()
        .await
        .unwrap()
        .contents()
        .iter()
        .filter_map(|o| o.key().map(str::to_owned))
        .collect()
}

/// The presigned URL the data endpoint hands out for `slug`.
async fn handed_out(stack: &Stack, slug: &str, key: &str) -> String {
    let resp = data(stack, slug, Some(key)).await;
    assert_eq!(resp.status(), 200);
    json_body(&resp)["url"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn deleting_a_dataset_removes_its_items_lists_and_files() {
    let stack = Stack::start().await;
    publish_as(&stack, "river-levels", "keep-a", "water", &["daily"]);
    publish_as(&stack, "city-bikes", "doomed", "water", &["daily", "bikes"]);
    publish_as(
        &stack,
        "bird-sightings",
        "doomed",
        "water",
        &["daily", "bikes"],
    );
    publish_as(&stack, "air-quality-hourly", "keep-b", "air", &["daily"]);
    let key = create_key(&stack);
    let id = the_id(&stack, "doomed");
    let url = handed_out(&stack, "doomed", &key).await;
    assert_eq!(http_get(&url).await.0, 200);
    assert_eq!(objects(&stack, "datasets/doomed/").await.len(), 2);

    // WHEN the operator deletes it without confirming (no terminal to ask on)
    let out = admin(&stack, &["datasets", "delete", "doomed"], &[]);
    // THEN nothing is deleted
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--yes"), "{stderr}");
    assert_eq!(metadata(&stack, "doomed").await.status(), 200);

    // WHEN they confirm
    let out = ok(&admin(
        &stack,
        &["datasets", "delete", "doomed", "--yes"],
        &[],
    ));
    assert!(out.contains("doomed: deleted (2 versions"), "{out}");
    // THEN every route answers 404, by slug and by id
    let not_found = all(404, "not_found", (404, "RESOURCE_DOES_NOT_EXIST"));
    assert_eq!(every_route(&stack, "doomed", &key).await, not_found);
    assert_eq!(every_route(&stack, &id, &key).await, not_found);
    // AND no item names it, its files are gone, and the URL handed out fails at once
    let left: Vec<String> = scan_all(&stack.dynamo, &stack.target.datasets_table)
        .await
        .iter()
        .filter(|i| {
            text(i, "slug") == "doomed" || text(i, "pk").contains("doomed") || text(i, "id") == id
        })
        .map(|i| format!("{} {}", text(i, "pk"), text(i, "sk")))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    assert!(objects(&stack, "datasets/doomed/").await.is_empty());
    assert_eq!(http_get(&url).await.0, 404, "the URL handed out");
    // AND the lists and counts are exact
    assert_eq!(slugs(&stack, "").await, ["keep-b", "keep-a"]);
    assert!(slugs(&stack, "tag=bikes").await.is_empty());
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
    // AND the slug may be published anew: a new dataset, version 1, another id
    publish_as(&stack, "city-bikes", "doomed", "air", &[]);
    let out = ok(&admin(&stack, &["versions", "list", "doomed"], &[]));
    assert!(
        out.starts_with("* v1 ") && out.lines().count() == 1,
        "{out}"
    );
    assert_ne!(the_id(&stack, "doomed"), id);
    assert_facet_lists_consistent(&stack).await;

    // AND deleting what does not exist says so
    let out = admin(&stack, &["datasets", "delete", "never-was", "--yes"], &[]);
    assert_eq!(out.status.code(), Some(2));
    // (the records of the dataset deleted above are gone: its own versions are not found)
    assert_eq!(
        data(&stack, "keep-a", Some(&key)).await.status(),
        200,
        "the others still serve"
    );
}

#[tokio::test]
async fn deleting_a_version_removes_its_record_and_file_and_never_the_active_one_alone() {
    let stack = Stack::start().await;
    for file in ["river-levels", "city-bikes", "bird-sightings"] {
        publish_as(&stack, file, "history", "water", &["daily"]);
    }
    publish_as(&stack, "air-quality-hourly", "other", "water", &["daily"]);
    let key = create_key(&stack);
    let versions = || ok(&admin(&stack, &["versions", "list", "history"], &[]));
    let numbers = |out: String| -> Vec<String> {
        out.lines()
            .map(|l| {
                l.split_whitespace()
                    .find(|w| w.starts_with('v'))
                    .unwrap()
                    .to_owned()
            })
            .collect()
    };
    assert_eq!(numbers(versions()), ["v1", "v2", "v3"]);
    let files = |v: u64| format!("datasets/history/v{v}/");

    // WHEN the operator deletes the active version alone
    let out = admin(&stack, &["versions", "delete", "history", "3"], &[]);
    // THEN it is refused, and nothing changes
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--activate"), "{stderr}");
    assert_eq!(numbers(versions()), ["v1", "v2", "v3"]);
    assert_eq!(objects(&stack, &files(3)).await.len(), 1);

    // WHEN they delete version 2 (not active)
    ok(&admin(&stack, &["versions", "delete", "history", "2"], &[]));
    // THEN its record and its file are gone; version 3 still serves
    assert_eq!(numbers(versions()), ["v1", "v3"]);
    assert!(objects(&stack, &files(2)).await.is_empty());
    assert_eq!(json_body(&metadata(&stack, "history").await)["version"], 3);

    // WHEN they delete version 3 while activating version 1 in the same step
    let url = handed_out(&stack, "history", &key).await;
    let out = ok(&admin(
        &stack,
        &["versions", "delete", "history", "3", "--activate", "1"],
        &[],
    ));
    assert!(out.contains("version 1 is active"), "{out}");
    // THEN version 1 serves, version 3's file is gone, and its URL fails at once
    assert_eq!(numbers(versions()), ["v1"]);
    assert!(objects(&stack, &files(3)).await.is_empty());
    assert_eq!(http_get(&url).await.0, 404);
    let resp = data(&stack, "history", Some(&key)).await;
    assert_eq!(json_body(&resp)["version"], 1);
    assert_eq!(
        http_get(json_body(&resp)["url"].as_str().unwrap()).await.0,
        200
    );
    // AND a version that is not there is reported as such
    let out = admin(&stack, &["versions", "delete", "history", "2"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no version 2"));
    // AND the lists are exact: the dataset kept its place
    assert_eq!(slugs(&stack, "").await, ["other", "history"]);
    assert_facet_lists_consistent(&stack).await;
    assert_nothing_to_repair(&stack);
    // (the item keeps the dataset item's attributes it had)
    let item = stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("DS#history".into()))
        .key("sk", AttributeValue::S("DATASET".into()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(
        text(&item, "latest_version"),
        "3",
        "numbers are never reused"
    );
}
