//! Keys, keyless windows, listing and showing datasets, help, and pinned versions.

use super::*;

#[tokio::test]
async fn keys_create_list_revoke_take_effect_on_the_next_request() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    let key = create_key(&stack);
    assert!(key.starts_with("dcat_") && key.len() >= 5 + 32, "{key}");
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 200);

    let listed = ok(&admin(&stack, &["keys", "list"], &[]));
    assert!(!listed.contains(&key), "the secret is never listed");
    assert!(listed.contains(&key[..9]), "the prefix is: {listed}");
    let id = listed
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().next())
        .unwrap()
        .to_owned();
    ok(&admin(&stack, &["keys", "revoke", &id], &[]));
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 401);
    let listed = ok(&admin(&stack, &["keys", "list"], &[]));
    assert!(
        listed.lines().nth(1).unwrap().contains('T'),
        "revoked time shown: {listed}"
    );
}

#[tokio::test]
async fn keyless_set_and_clear_take_effect_on_the_next_request() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "river"));
    assert_eq!(data(&stack, "river", None).await.status(), 401);
    ok(&admin(
        &stack,
        &["keyless", "set", "river", "--until", "+1h"],
        &[],
    ));
    assert_eq!(data(&stack, "river", None).await.status(), 200);
    let item = &list(&stack).await["items"][0];
    assert_eq!(item["keyless"], true, "the list shows the window too");
    ok(&admin(&stack, &["keyless", "clear", "river"], &[]));
    assert_eq!(data(&stack, "river", None).await.status(), 401);
    assert_eq!(
        json_body(&metadata(&stack, "river").await)["keyless_until"],
        Value::Null
    );
}

#[test]
fn every_command_explains_itself_with_an_example() {
    for args in [
        vec!["--help"],
        vec!["keys", "--help"],
        vec!["keyless", "--help"],
        vec!["datasets", "--help"],
        vec!["versions", "--help"],
        vec!["publish", "--help"],
        vec!["inspect", "--help"],
        vec!["keys", "create", "--help"],
        vec!["keys", "list", "--help"],
        vec!["keys", "revoke", "--help"],
        vec!["keyless", "set", "--help"],
        vec!["keyless", "clear", "--help"],
        vec!["datasets", "list", "--help"],
        vec!["datasets", "show", "--help"],
        vec!["versions", "list", "--help"],
        vec!["versions", "activate", "--help"],
    ] {
        let out = run_admin(admin_command().args(&args));
        assert!(out.status.success(), "{args:?}");
        let help = String::from_utf8_lossy(&out.stdout);
        assert!(help.contains("Example: catalog-admin"), "{args:?}: {help}");
    }
}

#[tokio::test]
async fn datasets_list_and_show_and_expiring_keys() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("bird-sightings"), "birds"));
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    let listed = ok(&admin(&stack, &["datasets", "list"], &[]));
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines[0], "2 datasets");
    assert!(
        lines[1].starts_with("bikes") && lines[2].starts_with("birds"),
        "{listed}"
    );
    let shown: Value =
        serde_json::from_str(&ok(&admin(&stack, &["datasets", "show", "birds"], &[]))).unwrap();
    let meta = json_body(&metadata(&stack, "birds").await);
    for field in [
        "id",
        "name",
        "row_count",
        "column_count",
        "size",
        "schema",
        "insights",
    ] {
        assert_eq!(shown[field], meta[field], "{field}");
    }
    assert_eq!(shown["active_version"], 1);
    let missing = admin(&stack, &["datasets", "show", "nope"], &[]);
    assert_eq!(missing.status.code(), Some(2));

    // A key created to expire in 2 seconds works, then stops working.
    let out = ok(&admin(
        &stack,
        &["keys", "create", "--scope", "read", "--expires", "+2s"],
        &[],
    ));
    let key = out.trim().to_owned();
    assert_eq!(data(&stack, "birds", Some(&key)).await.status(), 200);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(data(&stack, "birds", Some(&key)).await.status(), 401);
    let past = admin(
        &stack,
        &[
            "keys",
            "create",
            "--scope",
            "read",
            "--expires",
            "2000-01-01T00:00:00Z",
        ],
        &[],
    );
    assert_eq!(past.status.code(), Some(2));
    let scope = admin(&stack, &["keys", "create", "--scope", "write"], &[]);
    assert_eq!(scope.status.code(), Some(2));
}

/// The data endpoint with a query string, signing URLs valid for `ttl`.
async fn data_query(stack: &Stack, path_and_query: &str, key: &str, ttl: Duration) -> Value {
    let resp = api::data(
        &v2_request(path_and_query, &[("x-api-key", key)]),
        &stack.catalog(),
        &stack.signer(ttl),
        Utc::now(),
    )
    .await;
    let mut body = json_body(&resp);
    body["status"] = resp.status().as_u16().into();
    body
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn a_pinned_version_downloads_the_same_file_after_expiry_and_never_a_newer_one() {
    let stack = Stack::start().await;
    let key = create_key(&stack);
    let first = std::fs::read(sample("river-levels")).unwrap();
    let second = std::fs::read(sample("bird-sightings")).unwrap();
    ok(&publish(&stack, &sample("river-levels"), "pinned"));

    // GIVEN the metadata names version 1 and its digest
    let meta = json_body(&metadata(&stack, "pinned").await);
    assert_eq!(meta["version"], 1);
    assert_eq!(meta["sha256"], sha256_hex(&first));

    // WHEN a client pins it and its URL expires
    let short = Duration::from_secs(1);
    let d = data_query(
        &stack,
        "/api/v1/datasets/pinned/data?version=1",
        &key,
        short,
    )
    .await;
    assert_eq!(d["status"], 200, "{d}");
    assert_eq!(d["version"], 1);
    assert_eq!(d["sha256"], sha256_hex(&first));
    assert_eq!(d["size_bytes"], first.len() as u64);
    assert_eq!(d["published_at"], meta["published_at"]);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let (code, _) = http_get(d["url"].as_str().unwrap()).await;
    assert_eq!(code, 403, "S3 refuses the expired URL");

    // THEN refreshing with the same pin gets the same file
    let long = Duration::from_secs(900);
    let again = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    let (code, bytes) = http_get(again["url"].as_str().unwrap()).await;
    assert_eq!(code, 200);
    assert_eq!(sha256_hex(&bytes), sha256_hex(&first));

    // WHEN version 2 is published
    ok(&publish(&stack, &sample("bird-sightings"), "pinned"));
    // THEN the old pin is a 404 naming the active version, never the newer file
    let stale = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    assert_eq!(stale["status"], 404, "{stale}");
    assert_eq!(stale["code"], "not_found");
    assert_eq!(
        stale["error"],
        "version 1 of 'pinned' is not available: its active version is 2"
    );
    // AND the new pin, or no pin, serves version 2 and its digest matches the bytes
    for path in [
        "/api/v1/datasets/pinned/data?version=2",
        "/api/v1/datasets/pinned/data",
    ] {
        let d = data_query(&stack, path, &key, long).await;
        assert_eq!(d["version"], 2, "{path}");
        let (code, bytes) = http_get(d["url"].as_str().unwrap()).await;
        assert_eq!(code, 200);
        assert_eq!(bytes.as_ref(), second.as_slice());
        assert_eq!(d["sha256"], sha256_hex(&bytes));
        assert_eq!(d["size_bytes"], bytes.len() as u64);
    }
    assert_eq!(json_body(&metadata(&stack, "pinned").await)["version"], 2);

    // AND after a rollback, version 1 is served again, byte for byte
    ok(&admin(
        &stack,
        &["versions", "activate", "pinned", "1"],
        &[],
    ));
    let back = data_query(&stack, "/api/v1/datasets/pinned/data?version=1", &key, long).await;
    let (_, bytes) = http_get(back["url"].as_str().unwrap()).await;
    assert_eq!(bytes.as_ref(), first.as_slice());
    let gone = data_query(&stack, "/api/v1/datasets/pinned/data?version=2", &key, long).await;
    assert_eq!(gone["status"], 404);
}

#[tokio::test]
async fn revoke_finds_a_key_among_more_keys_than_one_scan_page_holds() {
    use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    // GIVEN 5,000 other keys, about 1.5 MB: more than one 1 MB Scan page...
    let s = |v: String| AttributeValue::S(v);
    for batch in 0..200u64 {
        let requests: Vec<WriteRequest> = (0..25u64)
            .map(|i| {
                let n = batch * 25 + i;
                let put = PutRequest::builder()
                    .item("key_hash", s(format!("{n:064x}")))
                    .item("id", s(format!("key_filler{n:06}")))
                    .item("prefix", s("dcat_fill".into()))
                    .item("label", s("x".repeat(200)))
                    .item("scopes", AttributeValue::L(vec![s("read".into())]))
                    .item("created_at", s("2026-01-01T00:00:00Z".into()))
                    .build()
                    .unwrap();
                WriteRequest::builder().put_request(put).build()
            })
            .collect();
        let out = stack
            .dynamo
            .batch_write_item()
            .request_items(&stack.target.keys_table, requests)
            .send()
            .await
            .unwrap();
        assert!(out.unprocessed_items.unwrap_or_default().is_empty());
    }
    // ... AND the key to revoke, created after them
    let created = admin(
        &stack,
        &["keys", "create", "--scope", "read", "--label", "last"],
        &[],
    );
    let key = ok(&created).trim().to_owned();
    let stderr = String::from_utf8_lossy(&created.stderr);
    let id = stderr
        .split_whitespace()
        .nth(1)
        .map(|w| w.trim_end_matches(';'))
        .expect("created <id>;")
        .to_owned();
    assert!(id.starts_with("key_"), "{stderr}");
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 200);
    // WHEN it is revoked by id, THEN the next request with it is refused
    ok(&admin(&stack, &["keys", "revoke", &id], &[]));
    assert_eq!(data(&stack, "bikes", Some(&key)).await.status(), 401);
}

/// Every string an attribute holds, through lists, maps and sets.
fn strings_in(value: &aws_sdk_dynamodb::types::AttributeValue, out: &mut Vec<String>) {
    use aws_sdk_dynamodb::types::AttributeValue as A;
    match value {
        A::S(s) | A::N(s) => out.push(s.clone()),
        A::Ss(v) | A::Ns(v) => out.extend(v.iter().cloned()),
        A::L(v) => v.iter().for_each(|v| strings_in(v, out)),
        A::M(m) => m.values().for_each(|v| strings_in(v, out)),
        A::B(b) => out.push(String::from_utf8_lossy(b.as_ref()).into_owned()),
        _ => {}
    }
}

#[tokio::test]
async fn the_keys_table_holds_only_the_hash_of_each_key() {
    let stack = Stack::start().await;
    // GIVEN two keys created through the CLI
    let keys = [create_key(&stack), create_key(&stack)];
    let table = &stack.target.keys_table;
    let described = stack
        .dynamo
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let partition_key = described
        .table()
        .unwrap()
        .key_schema()
        .iter()
        .find(|k| k.key_type() == &aws_sdk_dynamodb::types::KeyType::Hash)
        .unwrap()
        .attribute_name()
        .to_owned();
    // WHEN the keys table is read item by item
    let items = catalog_tests::facets::scan_all(&stack.dynamo, table).await;
    assert_eq!(items.len(), 2);
    for key in &keys {
        // THEN each key's item is keyed by the SHA-256 (hex) of the secret, computed here...
        let hash = sha256_hex(key.as_bytes());
        let item = items
            .iter()
            .find(|i| i.get(&partition_key).and_then(|v| v.as_s().ok()) == Some(&hash))
            .unwrap_or_else(|| panic!("no item keyed by {hash}: {items:?}"));
        // ... and no attribute of any item holds the secret, nor more of it than the
        // 9-character prefix `keys list` shows
        for item in &items {
            let mut strings = Vec::new();
            item.values().for_each(|v| strings_in(v, &mut strings));
            for s in &strings {
                let longest = (0..key.len())
                    .flat_map(|i| (i + 1..=key.len()).map(move |j| (i, j)))
                    .filter(|(i, j)| s.contains(&key[*i..*j]))
                    .map(|(i, j)| j - i)
                    .max()
                    .unwrap_or(0);
                assert!(longest <= 9, "{longest} characters of a key in {s:?}");
            }
        }
        assert_eq!(
            item.get("prefix").and_then(|v| v.as_s().ok()),
            Some(&key[..9].to_owned())
        );
    }
}

#[tokio::test]
async fn keyless_set_until_a_past_time_says_the_window_is_already_closed() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "river"));
    // WHEN the window is set to end in the past
    let out = ok(&admin(
        &stack,
        &["keyless", "set", "river", "--until", "2000-01-01T00:00:00Z"],
        &[],
    ));
    // THEN the CLI says it is already closed, and a key is still required
    assert_eq!(
        out.trim(),
        "river is keyless until 2000-01-01T00:00:00Z (already past: the window is closed)"
    );
    assert_eq!(data(&stack, "river", None).await.status(), 401);
    assert_eq!(
        json_body(&metadata(&stack, "river").await)["keyless"],
        false
    );
    // AND a window ending in the future is not said to be closed
    let out = ok(&admin(
        &stack,
        &["keyless", "set", "river", "--until", "+1h"],
        &[],
    ));
    assert!(!out.contains("closed"), "{out}");
    assert_eq!(data(&stack, "river", None).await.status(), 200);
}

#[tokio::test]
async fn keys_that_stopped_working_carry_when_they_leave_the_table() {
    use catalog::keys::{KeyHash, Scope, RETENTION};
    use catalog_aws::dynamo::layout::{api_key_key, name::PURGE_AT};
    // GIVEN the keys table as the stack creates it, with its time to live on purge_at, as
    // template.yaml declares it
    let stack = Stack::start().await;
    let ttl = stack
        .dynamo
        .describe_time_to_live()
        .table_name(&stack.target.keys_table)
        .send()
        .await
        .expect("describe the time to live");
    let ttl = ttl.time_to_live_description().expect("a time to live");
    assert_eq!(ttl.attribute_name(), Some(PURGE_AT));
    let template = std::fs::read_to_string(repo_root().join("template.yaml")).unwrap();
    assert!(template.contains(&format!("AttributeName: {PURGE_AT}\n        Enabled: true")));
    let writer = stack.writer();
    let accounts = writer.accounts();
    let purge_of = |secret: &'static str| {
        let accounts = accounts.clone();
        async move {
            let item = accounts
                .read_item(api_key_key(KeyHash::of(secret).as_str()))
                .await
                .unwrap()
                .expect("the key's item");
            item.get(PURGE_AT)
                .map(|v| v.as_n().expect("a number").parse::<i64>().unwrap())
        }
    };
    let now = Utc::now();
    // WHEN a key that expires and one that does not are stored
    let expiring = "dcat_purge_expiring_00000000000000000000000000000000000000000000";
    let lasting = "dcat_purge_lasting_000000000000000000000000000000000000000000000";
    let expires_at = now + chrono::Duration::days(30);
    for (secret, expiry) in [(expiring, Some(expires_at)), (lasting, None)] {
        let key = catalog_writer::NewKey::for_secret(secret, vec![Scope::Read], "t", now, expiry);
        writer.put_key(&key).await.expect("put key");
    }
    // THEN the expiring one leaves RETENTION after its expiry, the lasting one not yet
    assert_eq!(
        purge_of(expiring).await,
        Some((expires_at + RETENTION).timestamp())
    );
    assert_eq!(purge_of(lasting).await, None);
    // AND once revoked, RETENTION after its revocation
    let revoked_at = now + chrono::Duration::minutes(5);
    writer
        .revoke_key(&KeyHash::of(lasting), revoked_at)
        .await
        .expect("revoke");
    assert_eq!(
        purge_of(lasting).await,
        Some((revoked_at + RETENTION).timestamp())
    );
}
