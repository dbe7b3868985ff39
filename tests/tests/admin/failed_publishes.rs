//! A publish that fails at any step leaves the previous version serving.

use super::*;

#[tokio::test]
async fn a_failed_upload_leaves_the_previous_version_serving() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "gauges", Some(&key)).await);

    // S3 unreachable mid-publish (after the statistics, before the version record).
    let dead = format!("http://127.0.0.1:{}", catalog_tests::free_port());
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_S3", &dead)],
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("upload"));

    let after = json_body(&data(&stack, "gauges", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let versions = ok(&admin(&stack, &["versions", "list", "gauges"], &[]));
    assert_eq!(
        versions.lines().count(),
        1,
        "no record of the failed version: {versions}"
    );
    // The next publish works and gets a fresh version number.
    let out = ok(&publish(&stack, &sample("city-bikes"), "gauges"));
    assert!(out.contains("version 3"), "{out}");
}

/// A TCP proxy to `target` that cuts every connection after `limit` bytes from the client: an
/// upload cut off midway, at the transport under the real SDK client.
async fn cutting_proxy(target: String, limit: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let target = target.clone();
            tokio::spawn(async move {
                let Ok(mut server) = tokio::net::TcpStream::connect(&target).await else {
                    return;
                };
                let (mut cr, mut cw) = client.split();
                let (mut sr, mut sw) = server.split();
                let upstream = async {
                    let mut sent = 0;
                    let mut buf = vec![0u8; 64 * 1024];
                    loop {
                        let n = match cr.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => n,
                        };
                        let n = n.min(limit - sent);
                        if sw.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                        sent += n;
                        if sent >= limit {
                            return; // cut: both halves drop
                        }
                    }
                };
                let downstream = tokio::io::copy(&mut sr, &mut cw);
                tokio::select! {
                    _ = upstream => {}
                    _ = downstream => {}
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_upload_cut_off_midway_leaves_the_previous_version_serving() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "cut"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "cut", Some(&key)).await);

    // Every connection to S3 dies after 4 KiB: the upload starts and never completes.
    let s3 = stack.s3_url.trim_start_matches("http://").to_owned();
    let proxy = cutting_proxy(s3, 4096).await;
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "cut",
        ],
        &[("AWS_ENDPOINT_URL_S3", &proxy)],
    );
    assert!(!out.status.success(), "the publish must fail");
    assert!(String::from_utf8_lossy(&out.stderr).contains("upload"));

    let after = json_body(&data(&stack, "cut", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let (code, _) = http_get(after["url"].as_str().unwrap()).await;
    assert_eq!(code, 200, "the previous version still downloads");
    let versions = ok(&admin(&stack, &["versions", "list", "cut"], &[]));
    assert_eq!(
        versions.lines().count(),
        1,
        "no record of the cut version: {versions}"
    );
    let listed = stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .prefix("datasets/cut/v2/")
        .send()
        .await
        .unwrap();
    assert_eq!(
        listed.key_count(),
        Some(0),
        "no object at the new version's key"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dynamodb_failure_at_activation_leaves_the_previous_version_serving() {
    // GIVEN version 1 serving, and DynamoDB failing every transaction (the activation) with
    // 500s behind a proxy, while reads and single writes pass
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let before = json_body(&data(&stack, "gauges", Some(&key)).await);
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for(
        "TransactWriteItems",
        catalog_tests::faults::Fault::InternalServerError,
    );

    // WHEN a new version is published through it
    let out = admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    );

    // THEN the CLI fails, and version 1 still serves, unchanged
    assert!(!out.status.success(), "publish must fail");
    assert!(
        proxy.take_requests() > 0,
        "the publish went through the proxy"
    );
    let after = json_body(&data(&stack, "gauges", Some(&key)).await);
    assert_eq!(after["row_count"], before["row_count"]);
    assert_eq!(after["columns"], before["columns"]);
    let meta = json_body(&metadata(&stack, "gauges").await);
    assert_eq!(meta["row_count"], before["row_count"]);
    // AND once DynamoDB is healthy, publishing works again
    proxy.set(catalog_tests::faults::Fault::Healthy);
    let out = ok(&admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    ));
    assert!(out.contains("version 3"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_version_record_whose_answer_was_lost_is_not_a_false_conflict() {
    // GIVEN version 1 serving, and a proxy that lets the next version's record through to
    // DynamoDB but loses its answer once (the SDK retries, and meets the record it made)
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let key = create_key(&stack);
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.set_for_requests(
        "PutItem",
        &["V#0000000002"],
        catalog_tests::faults::Fault::LoseResponseOnce,
    );

    // WHEN version 2 is published through it
    let out = ok(&admin(
        &stack,
        &[
            "publish",
            sample("city-bikes").to_str().unwrap(),
            "--slug",
            "gauges",
        ],
        &[("AWS_ENDPOINT_URL_DYNAMODB", &proxy.url)],
    ));

    // THEN the publish succeeds and version 2 serves
    assert!(out.contains("version 2"), "{out}");
    let served = json_body(&data(&stack, "gauges", Some(&key)).await);
    assert_eq!(served["version"], 2);

    // AND the retry reserved nothing more: two versions, as published
    let writer = stack.writer();
    let versions = writer
        .list_versions(&catalog::input::Slug::parse("gauges").unwrap())
        .await
        .unwrap();
    assert_eq!(versions.len(), 2);
}
