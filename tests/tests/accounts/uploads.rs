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
