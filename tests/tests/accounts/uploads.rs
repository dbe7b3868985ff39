//! Publishing from the site through its routes (issue 40 §3 and §5), against the local API,
//! Cognito, moto and s3s-fs: who may begin an upload, the limits, a file sent through the
//! presigned part URLs the routes hand out, resumed, completed, then published by the
//! publishing function's code; and aborting.

use catalog_aws::dynamo::uploads::DynamoUploads;
use catalog_publish_core::publish::Publisher;
use catalog_publish_core::site::{publish_upload, Outcome};
use sha2::{Digest, Sha256};

use catalog_tests::samples_dir;

use super::access_requests::code;
use super::*;

fn new_upload(dataset: &str, size: u64, sha256: &str) -> String {
    json!({"dataset": dataset, "filename": "file.parquet", "size": size, "sha256": sha256})
        .to_string()
}

#[tokio::test]
async fn an_editor_uploads_resumes_and_publishes_and_no_one_else_may() {
    let site = Site::start().await;
    let (_, _alice) = site.person("alice@example.com").await;
    let (_, bob) = site.person("bob@example.com").await;
    let (_, carol) = site.person("carol@example.com").await;
    let (_, dave) = site.person("dave@example.com").await;
    let (_, eve) = site.person("eve@example.com").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "alice@example.com"]);
    site.admin_ok(&["orgs", "add", "acme", "bob@example.com", "--role", "editor"]);
    site.admin_ok(&["orgs", "add", "acme", "carol@example.com"]);
    site.admin_ok(&["orgs", "create", "beta", "--admin", "eve@example.com"]);
    let (bob, carol, dave, eve) = (
        bob.access_token.as_str(),
        carol.access_token.as_str(),
        dave.access_token.as_str(),
        eve.access_token.as_str(),
    );
    let bytes = std::fs::read(samples_dir().join("river-levels.parquet")).unwrap();
    let sha = hex::encode(Sha256::digest(&bytes));
    let asked = new_upload("levels", bytes.len() as u64, &sha);

    // A stranger and another organisation's admin: the 404 of an unknown organisation; a
    // member: 403. Nothing is begun.
    for (who, expected) in [
        (dave, (404, "not_found")),
        (eve, (404, "not_found")),
        (carol, (403, "not_an_editor")),
    ] {
        let (status, body) = site.call("POST", "/orgs/acme/uploads", who, &asked).await;
        assert_eq!((status, code(&body)), expected, "{body}");
    }
    // Past the limit: 413, naming the CLI; bad input: 400 naming the field.
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/uploads",
            bob,
            &new_upload("levels", 6 << 30, &sha),
        )
        .await;
    assert_eq!((status, code(&body)), (413, "upload_too_large"), "{body}");
    assert!(body["error"]
        .as_str()
        .unwrap()
        .contains("catalog-admin publish"));
    let (status, body) = site
        .call(
            "POST",
            "/orgs/acme/uploads",
            bob,
            &new_upload("Bad Name", 10, &sha),
        )
        .await;
    assert_eq!((status, code(&body)), (400, "invalid_upload"), "{body}");
    assert!(
        body["error"].as_str().unwrap().starts_with("dataset"),
        "{body}"
    );

    // The editor begins it: the part URLs are plain HTTP PUTs, as a browser sends them.
    let (status, begun) = site.call("POST", "/orgs/acme/uploads", bob, &asked).await;
    assert_eq!(status, 201, "{begun}");
    let id = begun["upload"]["id"].as_str().unwrap().to_owned();
    assert_eq!(begun["upload"]["state"], "uploading");
    assert_eq!(begun["parts"], 1);
    let url = begun["urls"][0]["url"].as_str().unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let put = http.put(url).body(bytes.clone()).send().await.unwrap();
    assert!(put.status().is_success(), "{}", put.status());
    let etag = put.headers()["etag"].to_str().unwrap().to_owned();

    // Resuming: the upload lists the part S3 holds, and no URL is left to send.
    let path = format!("/orgs/acme/uploads/{id}");
    let (status, read) = site.call("GET", &path, bob, "").await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["held"][0]["number"], 1, "{read}");
    assert_eq!(read["urls"], json!([]), "{read}");
    // Another organisation's admin cannot see it either.
    let (status, body) = site.call("GET", &path, eve, "").await;
    assert_eq!((status, code(&body)), (404, "not_found"), "{body}");

    // Completing needs every part.
    let complete = format!("{path}/complete");
    let (status, body) = site.call("POST", &complete, bob, r#"{"parts": []}"#).await;
    assert_eq!((status, code(&body)), (400, "invalid_upload"), "{body}");
    let parts = json!({"parts": [{"number": 1, "etag": etag}]}).to_string();
    let (status, body) = site.call("POST", &complete, bob, &parts).await;
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["upload"]["state"], "publishing");
    // Once completed it can be neither completed again nor aborted.
    let (status, body) = site.call("POST", &complete, bob, &parts).await;
    assert_eq!(
        (status, code(&body)),
        (409, "upload_not_uploading"),
        "{body}"
    );
    let (status, body) = site.call("DELETE", &path, bob, "").await;
    assert_eq!(
        (status, code(&body)),
        (409, "upload_not_uploading"),
        "{body}"
    );

    // The object's creation starts the publishing function (EventBridge on AWS): its code here.
    let key = format!("uploads/acme/{id}/file.parquet");
    let publisher = Publisher {
        writer: site.stack.writer(),
        s3: site.stack.s3.clone(),
        bucket: site.stack.target.bucket.clone(),
    };
    let store = DynamoUploads::new(site.stack.dynamo.clone(), &site.stack.target.keys_table);
    let outcome = publish_upload(&publisher, &store, &key, None, Utc::now())
        .await
        .unwrap();
    assert_eq!(
        outcome,
        Outcome::Published {
            slug: "acme~levels".into(),
            version: 1
        }
    );
    let (status, read) = site.call("GET", &path, bob, "").await;
    assert_eq!(status, 200, "{read}");
    assert_eq!(read["upload"]["state"], "published");
    assert_eq!(read["upload"]["version"], 1);
    assert!(read.get("urls").is_none(), "{read}");

    // Aborting an upload still uploading: 204, then it is gone (404), as an unknown id is.
    let (_, other) = site.call("POST", "/orgs/acme/uploads", bob, &asked).await;
    let other_path = format!(
        "/orgs/acme/uploads/{}",
        other["upload"]["id"].as_str().unwrap()
    );
    let (status, _) = site.call("DELETE", &other_path, bob, "").await;
    assert_eq!(status, 204);
    let (status, body) = site.call("GET", &other_path, bob, "").await;
    assert_eq!((status, code(&body)), (404, "upload_not_found"), "{body}");
    let (status, body) = site
        .call(
            "GET",
            "/orgs/acme/uploads/0123456789abcdef0123456789abcdef",
            bob,
            "",
        )
        .await;
    assert_eq!((status, code(&body)), (404, "upload_not_found"), "{body}");
    let (status, body) = site.call("PUT", &path, bob, "").await;
    assert_eq!((status, code(&body)), (405, "method_not_allowed"), "{body}");
}

#[tokio::test]
async fn a_csv_sent_in_three_parts_is_resumed_through_the_routes_and_published() {
    let site = Site::start().await;
    let (_, bob) = site.person("bob@example.com").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "bob@example.com"]);
    let bob = bob.access_token.as_str();
    // About 17 MiB of CSV: three parts of 8 MiB.
    let mut csv = String::from("id,station,level\n");
    let mut row = 0u64;
    while csv.len() < 17 * 1024 * 1024 {
        csv.push_str(&format!(
            "{row},station-{:05},{}.25\n",
            row % 5000,
            row % 977
        ));
        row += 1;
    }
    let bytes = csv.into_bytes();
    let sha = hex::encode(Sha256::digest(&bytes));
    let asked = json!({"dataset": "levels", "filename": "levels.csv", "size": bytes.len(),
                       "sha256": sha})
    .to_string();
    let (status, begun) = site.call("POST", "/orgs/acme/uploads", bob, &asked).await;
    assert_eq!(status, 201, "{begun}");
    assert_eq!(begun["parts"], 3);
    let part_size = begun["upload"]["part_size"].as_u64().unwrap() as usize;
    let id = begun["upload"]["id"].as_str().unwrap().to_owned();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let put = |url: String, number: usize| {
        let body = bytes[(number - 1) * part_size..(number * part_size).min(bytes.len())].to_vec();
        let http = http.clone();
        async move {
            let sent = http.put(url).body(body).send().await.unwrap();
            assert!(
                sent.status().is_success(),
                "part {number}: {}",
                sent.status()
            );
            sent.headers()["etag"].to_str().unwrap().to_owned()
        }
    };
    // Two parts sent, then the page is reloaded: the upload lists them and hands out the third.
    let url = |n: usize| begun["urls"][n - 1]["url"].as_str().unwrap().to_owned();
    let etags = [put(url(1), 1).await, put(url(2), 2).await];
    let path = format!("/orgs/acme/uploads/{id}");
    let (status, read) = site.call("GET", &path, bob, "").await;
    assert_eq!(status, 200, "{read}");
    let held: Vec<u64> = read["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["number"].as_u64().unwrap())
        .collect();
    assert_eq!(held, [1, 2], "{read}");
    assert_eq!(read["urls"].as_array().unwrap().len(), 1, "{read}");
    assert_eq!(read["urls"][0]["number"], 3);
    let third = put(read["urls"][0]["url"].as_str().unwrap().to_owned(), 3).await;
    let parts: Vec<Value> = etags
        .iter()
        .chain([&third])
        .enumerate()
        .map(|(i, etag)| json!({"number": i + 1, "etag": etag}))
        .collect();
    let (status, body) = site
        .call(
            "POST",
            &format!("{path}/complete"),
            bob,
            &json!({ "parts": parts }).to_string(),
        )
        .await;
    assert_eq!(status, 202, "{body}");

    let publisher = Publisher {
        writer: site.stack.writer(),
        s3: site.stack.s3.clone(),
        bucket: site.stack.target.bucket.clone(),
    };
    let store = DynamoUploads::new(site.stack.dynamo.clone(), &site.stack.target.keys_table);
    let key = format!("uploads/acme/{id}/levels.csv");
    let outcome = publish_upload(&publisher, &store, &key, None, Utc::now())
        .await
        .unwrap();
    assert_eq!(
        outcome,
        Outcome::Published {
            slug: "acme~levels".into(),
            version: 1
        }
    );
    let (_, read) = site.call("GET", &path, bob, "").await;
    assert_eq!(read["upload"]["state"], "published", "{read}");
    let record = site
        .stack
        .writer()
        .dataset_meta(&catalog::input::Slug::parse("acme~levels").unwrap())
        .await
        .unwrap()
        .expect("the dataset");
    assert_eq!(record.card.name, "levels");
    let versions = site
        .call("GET", "/orgs/acme/datasets/levels/versions", bob, "")
        .await;
    assert_eq!(versions.0, 200, "{}", versions.1);
    assert_eq!(
        versions.1["versions"][0]["row_count"], row,
        "{}",
        versions.1
    );
}

/// dev/run's local API (LOCAL_PUBLISH_UPLOADS=1) publishes a completed upload itself, as S3's
/// event starts the publishing function in the stack: the page's poll sees it published.
#[tokio::test]
async fn the_local_api_publishes_a_completed_upload_as_the_stack_does() {
    // nextest runs each test in a process of its own: the local API started below inherits it.
    std::env::set_var("LOCAL_PUBLISH_UPLOADS", "1");
    let site = Site::start().await;
    let (_, bob) = site.person("bob@example.com").await;
    site.admin_ok(&["orgs", "create", "acme", "--admin", "bob@example.com"]);
    let bob = bob.access_token.as_str();
    let csv = b"city,level\nyork,1.5\nleeds,2.25\n".to_vec();
    let asked = json!({"dataset": "local", "filename": "local.csv", "size": csv.len(),
                       "sha256": hex::encode(Sha256::digest(&csv))})
    .to_string();
    let (status, begun) = site.call("POST", "/orgs/acme/uploads", bob, &asked).await;
    assert_eq!(status, 201, "{begun}");
    let url = begun["urls"][0]["url"].as_str().unwrap();
    let http = reqwest::Client::builder().no_proxy().build().unwrap();
    let sent = http.put(url).body(csv.clone()).send().await.unwrap();
    let etag = sent.headers()["etag"].to_str().unwrap().to_owned();
    let path = format!(
        "/orgs/acme/uploads/{}",
        begun["upload"]["id"].as_str().unwrap()
    );
    let parts = json!({"parts": [{"number": 1, "etag": etag}]}).to_string();
    let (status, body) = site
        .call("POST", &format!("{path}/complete"), bob, &parts)
        .await;
    assert_eq!(status, 202, "{body}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let read = loop {
        let (_, read) = site.call("GET", &path, bob, "").await;
        if read["upload"]["state"] != "publishing" || std::time::Instant::now() > deadline {
            break read;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    assert_eq!(read["upload"]["state"], "published", "{read}");
    assert_eq!(read["upload"]["version"], 1, "{read}");
}
