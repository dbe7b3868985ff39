//! An account's own keys: minted, used, listed and revoked by their owner only, within the
//! limits (label, expiry, ten active keys, even under concurrent creation), and a key's last
//! use written at most once an hour.

use super::*;

#[tokio::test]
async fn a_person_mints_uses_lists_and_revokes_their_own_key() {
    let site = Site::start().await;
    let (sub, tokens) = site.person("ada@example.com").await;
    let token = &tokens.access_token;

    let (status, created) = site
        .call(
            "POST",
            "/account/keys",
            token,
            r#"{"label": "laptop", "expires_in_days": 30}"#,
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let secret = created["secret"].as_str().expect("the secret, shown once");
    assert!(secret.starts_with("dcat_") && secret.len() == 69);
    let key = &created["key"];
    let id = key["id"].as_str().expect("id");
    assert_eq!(key["label"], "laptop");
    assert_eq!(key["scopes"], json!(["read"]));
    assert_eq!(key["status"], "active");
    assert_eq!(key["prefix"].as_str(), Some(&secret[..9]));
    assert_eq!(key["last_used_at"], Value::Null);
    let created_at =
        chrono::DateTime::parse_from_rfc3339(key["created_at"].as_str().unwrap()).unwrap();
    let expires_at =
        chrono::DateTime::parse_from_rfc3339(key["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires_at - created_at, chrono::Duration::days(30));
    assert!(
        key.get("key_hash").is_none() && key.get("hash").is_none() && key.get("owner").is_none()
    );
    assert_eq!(key["datasets"], Value::Null, "not limited");

    // An account's key is a read key like any other.
    let (status, rows) = site.download(GATED, secret).await;
    assert_eq!(status, 200);
    assert!(rows.unwrap() > 0);

    let (status, listed) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["active"], 1);
    assert_eq!(listed["max_active"], MAX_ACTIVE_KEYS);
    let keys = listed["keys"].as_array().unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["id"], id);
    let last_used = keys[0]["last_used_at"]
        .as_str()
        .expect("last_used_at after a download");
    let last_used = chrono::DateTime::parse_from_rfc3339(last_used).unwrap();
    assert!(last_used >= created_at);
    let listed_text = listed.to_string();
    assert!(!listed_text.contains(secret), "the secret is never listed");
    assert!(!listed_text.contains(&catalog::keys::KeyHash::of(secret).as_str().to_owned()));

    // The owner is the token's sub, as operators see it.
    let out = run_admin(
        admin_command()
            .envs(site.stack.function_env())
            .args(["keys", "list"]),
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(id))
        .expect("the key in keys list");
    assert!(line.contains(&sub), "{line}");

    let (status, body) = site
        .call("DELETE", &format!("/account/keys/{id}"), token, "")
        .await;
    assert_eq!((status, body), (204, Value::Null));
    assert_eq!(
        site.download(GATED, secret).await.0,
        401,
        "a revoked key is refused"
    );
    // Revoking twice changes nothing.
    assert_eq!(
        site.call("DELETE", &format!("/account/keys/{id}"), token, "")
            .await
            .0,
        204
    );
    let (_, listed) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!(listed["active"], 0);
    assert_eq!(listed["keys"][0]["status"], "revoked");
    assert!(listed["keys"][0]["revoked_at"].is_string());
}

#[tokio::test]
async fn accounts_neither_see_nor_revoke_each_others_keys() {
    let site = Site::start().await;
    let (_, ada) = site.person("ada@example.com").await;
    let (_, bob) = site.person("bob@example.com").await;
    let (_, created) = site.create(&ada.access_token, "ada's").await;
    let id = created["key"]["id"].as_str().unwrap().to_owned();
    let secret = created["secret"].as_str().unwrap().to_owned();

    let (status, listed) = site
        .call("GET", "/account/keys", &bob.access_token, "")
        .await;
    assert_eq!(status, 200);
    assert_eq!(listed["keys"], json!([]));

    // Another account's key is answered exactly as an unknown one: 404, never 403.
    let (status, theirs) = site
        .call(
            "DELETE",
            &format!("/account/keys/{id}"),
            &bob.access_token,
            "",
        )
        .await;
    let (status_unknown, unknown) = site
        .call(
            "DELETE",
            "/account/keys/key_0000000000000000",
            &bob.access_token,
            "",
        )
        .await;
    assert_eq!((status, status_unknown), (404, 404));
    assert_eq!(theirs["code"], "key_not_found");
    assert_eq!(unknown["code"], "key_not_found");
    let (status, malformed) = site
        .call(
            "DELETE",
            "/account/keys/not-a-key-id",
            &bob.access_token,
            "",
        )
        .await;
    assert_eq!(
        (status, malformed["code"].as_str()),
        (404, Some("key_not_found"))
    );

    assert_eq!(
        site.download(GATED, &secret).await.0,
        200,
        "ada's key still works"
    );
}

#[tokio::test]
async fn the_limits_hold_with_clear_errors() {
    let site = Site::start().await;
    let (_, tokens) = site.person("ada@example.com").await;
    let token = &tokens.access_token;

    let bad = [
        ("", "invalid_body"),
        ("not json", "invalid_body"),
        ("[]", "invalid_body"),
        (r#"{"label": "x", "scopes": ["write"]}"#, "invalid_body"),
        ("{}", "invalid_label"),
        (r#"{"label": ""}"#, "invalid_label"),
        (r#"{"label": "line\nbreak"}"#, "invalid_label"),
        (
            &format!(r#"{{"label": "{}"}}"#, "x".repeat(65)),
            "invalid_label",
        ),
        (r#"{"label": "x", "expires_in_days": 0}"#, "invalid_expiry"),
        (
            r#"{"label": "x", "expires_in_days": 366}"#,
            "invalid_expiry",
        ),
        (
            r#"{"label": "x", "expires_in_days": "90"}"#,
            "invalid_expiry",
        ),
    ];
    for (body, code) in bad {
        let (status, error) = site.call("POST", "/account/keys", token, body).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (400, Some(code)),
            "{body}"
        );
        assert!(error["error"].is_string() && error["request_id"].is_string());
    }
    let (status, error) = site.call("POST", "/account/keys", token, "{}").await;
    assert_eq!(status, 400);
    assert!(
        error["error"].as_str().unwrap().contains("label"),
        "{error}"
    );

    // The default expiry is 90 days; a label may be any 64 printable characters.
    let (status, first) = site.create(token, &"é".repeat(64)).await;
    assert_eq!(status, 201, "{first}");
    let created_at =
        chrono::DateTime::parse_from_rfc3339(first["key"]["created_at"].as_str().unwrap()).unwrap();
    let expires_at =
        chrono::DateTime::parse_from_rfc3339(first["key"]["expires_at"].as_str().unwrap()).unwrap();
    assert_eq!(expires_at - created_at, chrono::Duration::days(90));

    for n in 2..=MAX_ACTIVE_KEYS {
        assert_eq!(site.create(token, &format!("key {n}")).await.0, 201);
    }
    let (status, error) = site.create(token, "one too many").await;
    assert_eq!(
        (status, error["code"].as_str()),
        (409, Some("key_limit_reached")),
        "{error}"
    );

    // Revoking one frees its place.
    let id = first["key"]["id"].as_str().unwrap();
    assert_eq!(
        site.call("DELETE", &format!("/account/keys/{id}"), token, "")
            .await
            .0,
        204
    );
    assert_eq!(site.create(token, "in its place").await.0, 201);
    assert_eq!(site.create(token, "again too many").await.0, 409);
    let (_, listed) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!(listed["active"], MAX_ACTIVE_KEYS);
    assert_eq!(
        listed["keys"].as_array().unwrap().len(),
        MAX_ACTIVE_KEYS + 1
    );

    // Methods the routes do not take: 405 naming the methods they do take, never cached.
    let (status, error) = site.call("PUT", "/account/keys", token, "{}").await;
    assert_eq!(
        (status, error["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    let (status, headers, _) = site.call_raw("PUT", "/account/keys", token, "{}").await;
    assert_eq!(status, 405);
    assert_eq!(headers["allow"], "GET, POST");
    let (status, _) = site
        .call("GET", &format!("/account/keys/{id}"), token, "")
        .await;
    assert_eq!(status, 405);
    let (status, headers, _) = site
        .call_raw("GET", &format!("/account/keys/{id}"), token, "")
        .await;
    assert_eq!(status, 405);
    assert_eq!(headers["allow"], "DELETE");
}

#[tokio::test]
async fn expired_keys_free_their_place() {
    let stack = Stack::start().await;
    let accounts = stack.writer().accounts();
    let owner = Owner::parse("0b0e6a52-5f41-4e1c-8f55-4a8b4f2f3c10").unwrap();
    let request = KeyRequest {
        label: "short".into(),
        expires_in_days: 1,
        datasets: None,
    };
    let then = Utc::now() - chrono::Duration::days(2);
    for _ in 0..MAX_ACTIVE_KEYS {
        let key = request.key_for(&generate_key(), owner.clone(), then);
        assert_eq!(
            accounts.create_key(&key, then).await.unwrap(),
            Created::Created
        );
    }
    let now = Utc::now();
    let key = request.key_for(&generate_key(), owner.clone(), now);
    assert_eq!(
        accounts.create_key(&key, now).await.unwrap(),
        Created::Created,
        "ten expired keys hold no place"
    );
}

#[tokio::test]
async fn concurrent_creates_never_pass_the_limit() {
    let stack = Stack::start().await;
    // DynamoDB applies each request atomically; moto's threads do not, so the requests go
    // through a proxy that forwards one at a time.
    let (client, _proxy) = stack.serialized_client().await;
    let accounts = DynamoAccounts::new(client, &stack.target.keys_table);
    let owner = Owner::parse("9f7a1c2e-0000-4000-8000-000000000001").unwrap();
    let request = KeyRequest {
        label: "race".into(),
        expires_in_days: 90,
        datasets: None,
    };
    let now = Utc::now();
    let attempts: Vec<_> = (0..2 * MAX_ACTIVE_KEYS)
        .map(|_| {
            let accounts = accounts.clone();
            let key = request.key_for(&generate_key(), owner.clone(), now);
            tokio::spawn(async move { accounts.create_key(&key, now).await.unwrap() })
        })
        .collect();
    let mut created = 0;
    for attempt in attempts {
        if attempt.await.unwrap() == Created::Created {
            created += 1;
        }
    }
    assert_eq!(created, MAX_ACTIVE_KEYS);
    let listed = stack.writer().accounts().list_keys(&owner).await.unwrap();
    assert_eq!(
        listed.len(),
        MAX_ACTIVE_KEYS,
        "no key was stored beyond the limit"
    );
}

/// The data function's write of `last_used_at`, against DynamoDB: a use is recorded, a second
/// within the hour is refused by the write's condition (a concurrent instance's write is a
/// no-op), one an hour later is recorded; a key that does not exist is never created.
#[tokio::test]
async fn last_use_is_written_at_most_once_an_hour_by_the_condition() {
    use catalog::ports::KeyUsage;
    let stack = Stack::start().await;
    let now = Utc::now();
    let secret = generate_key();
    let hash = stack.add_key(&secret, &["read"], now, None).await;
    let catalog = stack.catalog();
    let last_used = || async {
        let item = stack
            .writer()
            .accounts()
            .read_item(catalog_aws::dynamo::layout::api_key_key(hash.as_str()))
            .await
            .unwrap()
            .expect("the key's item");
        catalog_aws::dynamo::attr::get_time_opt(&item, "last_used_at").unwrap()
    };
    let at = |minutes: i64| {
        let t = now + chrono::Duration::minutes(minutes);
        chrono::DateTime::parse_from_rfc3339(&catalog::time::format_time(&t))
            .unwrap()
            .with_timezone(&Utc)
    };
    assert_eq!(last_used().await, None);
    catalog.record_use(&hash, at(0)).await.unwrap();
    assert_eq!(last_used().await, Some(at(0)));
    catalog.record_use(&hash, at(30)).await.unwrap();
    assert_eq!(
        last_used().await,
        Some(at(0)),
        "within the hour: not written"
    );
    catalog.record_use(&hash, at(61)).await.unwrap();
    assert_eq!(last_used().await, Some(at(61)));

    let unknown = catalog::keys::KeyHash::of(&generate_key());
    catalog.record_use(&unknown, at(0)).await.unwrap();
    let none = stack
        .writer()
        .accounts()
        .read_item(catalog_aws::dynamo::layout::api_key_key(unknown.as_str()))
        .await
        .unwrap();
    assert!(none.is_none(), "recording a use creates no item");
}

#[tokio::test]
async fn a_person_limits_a_key_to_named_datasets() {
    let site = Site::start().await;
    let (_, tokens) = site.person("lin@example.com").await;
    let token = &tokens.access_token;
    // WHEN a person asks for a key limited to one dataset
    let (status, created) = site
        .call(
            "POST",
            "/account/keys",
            token,
            &format!(r#"{{"label": "one dataset", "datasets": ["{GATED}"]}}"#),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["key"]["datasets"], json!([GATED]));
    let secret = created["secret"].as_str().unwrap();
    // THEN it reads that dataset and nothing else, even a dataset every read key reads
    assert_eq!(site.download(GATED, secret).await.0, 200);
    assert_eq!(site.download("bird-sightings", secret).await.0, 403);
    let (status, listed) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!(status, 200);
    assert_eq!(listed["keys"][0]["datasets"], json!([GATED]));
    // AND a bad list is refused, naming the field
    for body in [
        r#"{"label": "x", "datasets": []}"#,
        r#"{"label": "x", "datasets": ["Not a slug"]}"#,
        r#"{"label": "x", "datasets": "air-quality-hourly"}"#,
    ] {
        let (status, error) = site.call("POST", "/account/keys", token, body).await;
        assert_eq!(
            (status, error["code"].as_str()),
            (400, Some("invalid_datasets")),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_preflight_on_the_account_routes_is_answered_before_the_authorizer() {
    // GIVEN the local API with its account routes behind the JWT authorizer
    let site = Site::start().await;
    for path in ["/account/keys", "/account/keys/key_0123456789abcdef"] {
        // WHEN a browser sends a CORS preflight (no token: browsers never send one)
        let (status, headers, body) = http_send(
            "OPTIONS",
            &format!("{}{path}", site.base),
            &[
                ("origin", "https://example.org"),
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "authorization"),
            ],
            b"",
        )
        .await;
        // THEN it gets the CORS answer every path gets, not the authorizer's 401
        assert_eq!(status, 204, "{path}: {}", String::from_utf8_lossy(&body));
        let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
        assert_eq!(header("access-control-allow-origin"), Some("*"), "{path}");
        assert!(
            header("access-control-allow-headers").is_some_and(|h| h.contains("authorization")),
            "{path}"
        );
        assert!(body.is_empty());
    }
}

/// A create–revoke loop is capped: an account creates at most MAX_KEYS_PER_DAY keys a UTC day,
/// whatever it revokes; the next is a 429 that says when to try again.
#[tokio::test]
async fn an_account_creates_at_most_its_daily_number_of_keys() {
    let site = Site::start().await;
    let (_, tokens) = site.person("loop@example.com").await;
    let token = &tokens.access_token;
    for i in 0..catalog::accounts::MAX_KEYS_PER_DAY {
        let (status, created) = site.create(token, &format!("loop {i}")).await;
        assert_eq!(status, 201, "creation {i}: {created}");
        let id = created["key"]["id"].as_str().unwrap();
        let (status, _) = site
            .call("DELETE", &format!("/account/keys/{id}"), token, "")
            .await;
        assert_eq!(status, 204);
    }
    let (status, headers, body) = site
        .call_raw(
            "POST",
            "/account/keys",
            token,
            r#"{"label": "one too many"}"#,
        )
        .await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (status, body["code"].as_str()),
        (429, Some("daily_key_limit")),
        "{body}"
    );
    let retry_after: u64 = headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=86_400).contains(&retry_after), "{retry_after}");
    // Another account is not affected.
    let (_, other) = site.person("other@example.com").await;
    assert_eq!(site.create(&other.access_token, "mine").await.0, 201);
}

/// A creation the client retries (its answer lost, a 503 or a timeout) with the same
/// `Idempotency-Key` gets the same key back — same id, label and expiry — with a new secret:
/// the first secret, which the client never saw, stops working, and the account holds one key,
/// not two. Another body with the same key is refused; so is a malformed key.
#[tokio::test]
async fn a_retried_creation_with_the_same_idempotency_key_gets_the_same_key_once() {
    let site = Site::start().await;
    let (_, tokens) = site.person("retry@example.com").await;
    let token = &tokens.access_token;
    let create = |key: &'static str, body: &'static str| {
        let auth = format!("Bearer {token}");
        let base = site.base.clone();
        async move {
            let (status, headers, bytes) = http_send(
                "POST",
                &format!("{base}/account/keys"),
                &[
                    ("authorization", auth.as_str()),
                    ("content-type", "application/json"),
                    ("idempotency-key", key),
                ],
                body.as_bytes(),
            )
            .await;
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            (status, headers, value)
        }
    };
    let body = r#"{"label": "pipeline", "expires_in_days": 30}"#;
    let (status, headers, first) = create("9f1c6c1e-retry", body).await;
    assert_eq!(status, 201, "{first}");
    assert!(headers.get("idempotent-replayed").is_none());
    let (status, headers, again) = create("9f1c6c1e-retry", body).await;
    assert_eq!(status, 201, "{again}");
    assert_eq!(headers["idempotent-replayed"], "true");
    assert_eq!(again["key"]["id"], first["key"]["id"]);
    assert_eq!(again["key"]["created_at"], first["key"]["created_at"]);
    assert_eq!(again["key"]["expires_at"], first["key"]["expires_at"]);
    let (old, new) = (
        first["secret"].as_str().unwrap(),
        again["secret"].as_str().unwrap(),
    );
    assert_ne!(old, new);
    assert_eq!(again["key"]["prefix"].as_str(), Some(&new[..9]));
    // The first secret no longer works; the one the client holds does.
    assert_eq!(site.download(GATED, old).await.0, 401);
    assert_eq!(site.download(GATED, new).await.0, 200);
    // One key, one place.
    let (_, listed) = site.call("GET", "/account/keys", token, "").await;
    assert_eq!(listed["keys"].as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed["active"], 1);

    // The same Idempotency-Key with another request; a malformed one.
    let (status, _, other) = create("9f1c6c1e-retry", r#"{"label": "something else"}"#).await;
    assert_eq!(
        (status, other["code"].as_str()),
        (409, Some("idempotency_conflict")),
        "{other}"
    );
    let (status, _, bad) = create("has space", body).await;
    assert_eq!(
        (status, bad["code"].as_str()),
        (400, Some("invalid_idempotency_key")),
        "{bad}"
    );

    // Once the key is revoked, a retry does not bring it back.
    let id = first["key"]["id"].as_str().unwrap();
    let (status, _) = site
        .call("DELETE", &format!("/account/keys/{id}"), token, "")
        .await;
    assert_eq!(status, 204);
    let (status, _, revoked) = create("9f1c6c1e-retry", body).await;
    assert_eq!(
        (status, revoked["code"].as_str()),
        (409, Some("idempotency_conflict")),
        "{revoked}"
    );
}

/// The key list is paged, newest first, as the catalog's list is (`page`, `page_size` up to
/// 100, default 20), with the account's `total` and `active` counts on every page.
#[tokio::test]
async fn an_accounts_key_list_is_paged_newest_first() {
    let site = Site::start().await;
    let (_, tokens) = site.person("many@example.com").await;
    let token = &tokens.access_token;
    let mut ids = Vec::new();
    for i in 0..25 {
        let (status, created) = site.create(token, &format!("key {i:02}")).await;
        assert_eq!(status, 201, "{created}");
        let id = created["key"]["id"].as_str().unwrap().to_owned();
        // Revoked, but for the last three: the account stays under its ten active keys.
        if i < 22 {
            let (status, _) = site
                .call("DELETE", &format!("/account/keys/{id}"), token, "")
                .await;
            assert_eq!(status, 204);
        }
        ids.push(id);
        // Creation times are whole seconds apart only by chance: order is by time, then id.
    }
    let page = |query: &'static str| site.call("GET", query, token, "");
    let (status, first) = page("/account/keys").await;
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        (
            first["total"].as_u64(),
            first["page"].as_u64(),
            first["page_size"].as_u64()
        ),
        (Some(25), Some(1), Some(20))
    );
    assert_eq!(first["active"], 3);
    assert_eq!(first["keys"].as_array().unwrap().len(), 20);
    let (_, second) = page("/account/keys?page=2").await;
    assert_eq!(second["keys"].as_array().unwrap().len(), 5);
    assert_eq!(second["active"], 3, "counted over every key, not the page");
    let (_, past) = page("/account/keys?page=3").await;
    assert_eq!(past["keys"], json!([]));
    assert_eq!(past["total"], 25);
    // Every key once, newest first.
    let listed: Vec<&Value> = first["keys"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["keys"].as_array().unwrap())
        .collect();
    let mut seen: Vec<&str> = listed.iter().map(|k| k["id"].as_str().unwrap()).collect();
    let created: Vec<&str> = listed
        .iter()
        .map(|k| k["created_at"].as_str().unwrap())
        .collect();
    assert!(created.windows(2).all(|w| w[0] >= w[1]), "{created:?}");
    seen.sort();
    let mut all: Vec<&str> = ids.iter().map(String::as_str).collect();
    all.sort();
    assert_eq!(seen, all);
    let (_, big) = page("/account/keys?page_size=500").await;
    assert_eq!(
        (
            big["page_size"].as_u64(),
            big["keys"].as_array().unwrap().len()
        ),
        (Some(100), 25)
    );
    let (status, bad) = page("/account/keys?page=0").await;
    assert_eq!(
        (status, bad["code"].as_str()),
        (400, Some("bad_request")),
        "{bad}"
    );
}

/// Two tries of one creation sent at the same instant (the same Idempotency-Key): one creates,
/// the other finds the idempotency item its transaction could not put, and re-issues the same
/// key; the account holds one key.
#[tokio::test]
async fn two_tries_at_once_with_one_idempotency_key_make_one_key() {
    let stack = Stack::start().await;
    // DynamoDB applies each request atomically; moto's threads do not, so the requests go
    // through a proxy that forwards one at a time.
    let (client, _proxy) = stack.serialized_client().await;
    let accounts = DynamoAccounts::new(client, &stack.target.keys_table);
    let owner = Owner::parse("9f7a1c2e-0000-4000-8000-000000000002").unwrap();
    let request = KeyRequest {
        label: "once".into(),
        expires_in_days: 30,
        datasets: None,
    };
    let replay = catalog::accounts::Replay::new("same-key", &request).unwrap();
    let now = Utc::now();
    let tries: Vec<_> = (0..2)
        .map(|_| {
            let accounts = accounts.clone();
            let replay = replay.clone();
            let key = request.key_for(&generate_key(), owner.clone(), now);
            tokio::spawn(async move { accounts.create_key_once(&key, &replay, now).await.unwrap() })
        })
        .collect();
    let mut ids = Vec::new();
    for attempt in tries {
        match attempt.await.unwrap() {
            Created::Created => ids.push(None),
            Created::Replayed(first) => ids.push(Some(first.id.clone())),
            other => panic!("{other:?}"),
        }
    }
    let listed = accounts.list_keys(&owner).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert!(ids.contains(&None), "one try created the key");
    assert!(
        ids.contains(&Some(listed[0].id.clone())),
        "the other re-issued the same key: {ids:?}"
    );
}

/// A revocation that meets a key's item a re-issue has just replaced (the owner index can show
/// the old item for a moment) looks again rather than failing, and revokes the key that works.
#[tokio::test]
async fn revoking_a_key_just_reissued_revokes_the_new_secret() {
    let stack = Stack::start().await;
    let accounts = DynamoAccounts::new(
        stack.dynamo_client(&Default::default()),
        &stack.target.keys_table,
    );
    let owner = Owner::parse("9f7a1c2e-0000-4000-8000-000000000003").unwrap();
    let request = KeyRequest {
        label: "re-issued".into(),
        expires_in_days: 30,
        datasets: None,
    };
    let replay = catalog::accounts::Replay::new("reissue-then-revoke", &request).unwrap();
    let now = Utc::now();
    let first = request.key_for(&generate_key(), owner.clone(), now);
    assert_eq!(
        accounts
            .create_key_once(&first, &replay, now)
            .await
            .unwrap(),
        Created::Created
    );
    let old_item = accounts
        .read_item(catalog_aws::dynamo::layout::api_key_key(
            first.hash.as_str(),
        ))
        .await
        .unwrap()
        .expect("the first secret's item");
    let second = request.key_for(&generate_key(), owner.clone(), now);
    assert!(matches!(
        accounts
            .create_key_once(&second, &replay, now)
            .await
            .unwrap(),
        Created::Replayed(_)
    ));
    // The item as a lagging index would still show it: gone, said so, not an error.
    assert!(!accounts.revoke_item(&old_item, now).await.unwrap());
    assert!(accounts.revoke_key(&owner, &first.id, now).await.unwrap());
    let listed = accounts.list_keys(&owner).await.unwrap();
    assert_eq!(listed.len(), 1);
    assert!(
        listed[0].revoked_at.is_some(),
        "the re-issued key is revoked"
    );
}
