//! Accounts against moto (DynamoDB and Cognito) and s3s-fs, through the local API: the JWT
//! authorizer's checks as API Gateway makes them, then the keys function's handler. A person
//! signs up, confirms, signs in, mints a key, downloads with it, sees it listed with its last
//! use, revokes it, and is refused.

use std::process::Command;

use catalog::accounts::{KeyRequest, MAX_ACTIVE_KEYS};

use catalog::dynamo::accounts::DynamoAccounts;
use catalog::keys::{generate_key, Owner};
use catalog::ports::{AccountKeyStore, Created};
use catalog_dev::cognito::{sign_in, sign_up_confirmed, Tokens, UserPool};
use catalog_tests::{
    admin_command, http_request, http_send, read_parquet, run_admin, start_local_api_with, tool,
    Stack,
};
use chrono::Utc;
use serde_json::{json, Value};

const PASSWORD: &str = "Correct-horse-9-battery";

struct Site {
    stack: Stack,
    pool: UserPool,
    base: String,
    _api: catalog_tests::Guard,
}

impl Site {
    async fn start() -> Self {
        let stack = Stack::start().await;
        stack.seed_samples(Utc::now()).await;
        let pool = stack.user_pool().await;
        let (base, api) = start_local_api_with(&stack, Some(&pool));
        Self {
            stack,
            pool,
            base,
            _api: api,
        }
    }

    /// Signs a new person up, confirms and signs them in.
    async fn person(&self, email: &str) -> (String, Tokens) {
        let cognito = self.stack.cognito();
        let sub = sign_up_confirmed(&cognito, &self.pool, email, PASSWORD)
            .await
            .expect("sign up");
        let tokens = sign_in(&cognito, &self.pool, email, PASSWORD)
            .await
            .expect("sign in");
        (sub, tokens)
    }

    async fn call(&self, method: &str, path: &str, token: &str, body: &str) -> (u16, Value) {
        let (status, headers, bytes) = self.call_raw(method, path, token, body).await;
        assert_eq!(
            headers.get("cache-control").and_then(|v| v.to_str().ok()),
            Some("no-store"),
            "{method} {path} is never cached"
        );
        let value = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).expect("a JSON body")
        };
        (status, value)
    }

    async fn call_raw(
        &self,
        method: &str,
        path: &str,
        token: &str,
        body: &str,
    ) -> (u16, hyper::HeaderMap, bytes::Bytes) {
        let auth = format!("Bearer {token}");
        let mut headers = vec![("content-type", "application/json")];
        if !token.is_empty() {
            headers.push(("authorization", auth.as_str()));
        }
        http_send(
            method,
            &format!("{}{path}", self.base),
            &headers,
            body.as_bytes(),
        )
        .await
    }

    async fn create(&self, token: &str, label: &str) -> (u16, Value) {
        self.call(
            "POST",
            "/account/keys",
            token,
            &json!({ "label": label }).to_string(),
        )
        .await
    }

    /// The data endpoint's status with this key, and (on 200) the downloaded file's row count.
    async fn download(&self, slug: &str, key: &str) -> (u16, Option<u64>) {
        let (status, _, body) = http_request(
            "GET",
            &format!("{}/datasets/{slug}/data", self.base),
            &[("x-api-key", key)],
        )
        .await;
        if status != 200 {
            return (status, None);
        }
        let descriptor: Value = serde_json::from_slice(&body).expect("JSON");
        let url = descriptor["url"].as_str().expect("url");
        let (file_status, bytes) = catalog_tests::http_get(url).await;
        assert_eq!(file_status, 200, "the presigned URL downloads");
        let (rows, _, read) = read_parquet(bytes);
        assert_eq!(rows, read);
        (status, Some(rows))
    }
}

/// The gated sample (no keyless window) the downloads ask for.
const GATED: &str = "air-quality-hourly";

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

    // Methods the routes do not take.
    let (status, error) = site.call("PUT", "/account/keys", token, "{}").await;
    assert_eq!(
        (status, error["code"].as_str()),
        (405, Some("method_not_allowed"))
    );
    let (status, _) = site
        .call("GET", &format!("/account/keys/{id}"), token, "")
        .await;
    assert_eq!(status, 405);
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
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.serialize(true);
    let client = aws_sdk_dynamodb::Client::from_conf(
        aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
            .endpoint_url(&proxy.url)
            .build(),
    );
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

/// A token signed with moto's own key (from its package), with these claims.
fn mint(claims: &Value) -> String {
    let script = r#"
import gzip, json, sys, pathlib, moto
from joserfc import jwt, jwk
raw = (pathlib.Path(moto.__file__).parent / "cognitoidp/resources/jwks-private.json.gz").read_bytes()
key = jwk.RSAKey.import_key(json.loads(gzip.decompress(raw)))
print(jwt.encode({"alg": "RS256", "kid": "dummy"}, json.loads(sys.argv[1]), key))
"#;
    let out = Command::new(tool("PYTHON", ".venv/bin/python"))
        .args(["-c", script, &claims.to_string()])
        .output()
        .expect("run python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

#[tokio::test]
async fn every_bad_token_is_refused_as_api_gateway_refuses_it() {
    let site = Site::start().await;
    let (sub, tokens) = site.person("ada@example.com").await;
    let now = Utc::now().timestamp();
    let issuer = format!(
        "https://cognito-idp.us-east-1.amazonaws.com/{}",
        site.pool.pool_id
    );
    let claims = |changes: Value| {
        let mut c = json!({
            "iss": issuer, "sub": sub, "client_id": site.pool.client_id,
            "token_use": "access", "iat": now, "exp": now + 600,
        });
        for (k, v) in changes.as_object().unwrap() {
            c[k] = v.clone();
        }
        c
    };
    // A token minted here with the pool's key and the right claims passes: the checks below
    // fail for the one claim each changes.
    let good = mint(&claims(json!({})));
    assert_eq!(site.call("GET", "/account/keys", &good, "").await.0, 200);

    let (status, headers, body) = site.call_raw("GET", "/account/keys", "", "").await;
    assert_eq!(status, 401);
    assert_eq!(headers["www-authenticate"], "Bearer");
    assert_eq!(&body[..], br#"{"message":"Unauthorized"}"#);

    let mut tampered = tokens.access_token.clone();
    let payload_start = tampered.find('.').unwrap() + 1;
    let flipped = if &tampered[payload_start + 5..payload_start + 6] == "A" {
        "B"
    } else {
        "A"
    };
    tampered.replace_range(payload_start + 5..payload_start + 6, flipped);
    let cases = [
        ("garbage", "not-a-jwt".to_owned(), "the token is invalid"),
        ("tampered", tampered, "the token's signature is invalid"),
        (
            "expired",
            mint(&claims(json!({"exp": now - 5}))),
            "the token has expired",
        ),
        (
            "wrong audience",
            mint(&claims(json!({"client_id": "someone-elses-client"}))),
            "the token does not have a valid audience",
        ),
        (
            "wrong issuer",
            mint(&claims(
                json!({"iss": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_other"}),
            )),
            "the token does not have a valid issuer",
        ),
        (
            "not yet valid",
            mint(&claims(json!({"nbf": now + 600}))),
            "the token is not valid yet",
        ),
    ];
    for (what, token, description) in cases {
        for (method, path) in [
            ("GET", "/account/keys"),
            ("POST", "/account/keys"),
            ("DELETE", "/account/keys/key_0000000000000000"),
        ] {
            let (status, headers, body) = site
                .call_raw(method, path, &token, "{\"label\":\"x\"}")
                .await;
            assert_eq!(status, 401, "{what} {method}");
            assert_eq!(
                headers["www-authenticate"],
                format!(
                    "Bearer scope=\"\" error=\"invalid_token\" error_description=\"{description}\""
                )
                .as_str(),
                "{what}"
            );
            assert_eq!(&body[..], br#"{"message":"Unauthorized"}"#, "{what}");
        }
    }

    // An ID token passes the authorizer (its `aud` is the client) but opens nothing: the
    // handler takes access tokens only.
    let (status, headers, body) = site
        .call_raw("GET", "/account/keys", &tokens.id_token, "")
        .await;
    assert_eq!(status, 401);
    let error: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(error["code"], "invalid_token");
    assert!(headers["www-authenticate"]
        .to_str()
        .unwrap()
        .contains("error=\"invalid_token\""));
    // Nothing was created by any of these.
    let (_, listed) = site
        .call("GET", "/account/keys", &tokens.access_token, "")
        .await;
    assert_eq!(listed["keys"], json!([]));
}

#[tokio::test]
async fn a_disabled_account_loses_its_keys_and_its_sign_in() {
    let site = Site::start().await;
    let (sub, tokens) = site.person("eve@example.com").await;
    let (_, created) = site.create(&tokens.access_token, "eve's").await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert_eq!(site.download(GATED, &secret).await.0, 200);

    let env = || {
        let mut cmd = admin_command();
        cmd.envs(site.stack.function_env())
            .env("USER_POOL_ID", &site.pool.pool_id)
            .env(
                "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
                &site.stack.dynamo_url,
            );
        cmd
    };
    let out = run_admin(env().args(["accounts", "disable", "eve@example.com"]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&sub) && said.contains("1 key(s) revoked"),
        "{said}"
    );

    assert_eq!(
        site.download(GATED, &secret).await.0,
        401,
        "its keys are revoked"
    );
    let cognito = site.stack.cognito();
    assert!(
        sign_in(&cognito, &site.pool, "eve@example.com", PASSWORD)
            .await
            .is_err(),
        "sign-in is blocked"
    );
    // An access token issued before stays valid until it expires; it mints nothing.
    let (status, error) = site.create(&tokens.access_token, "after").await;
    assert_eq!(
        (status, error["code"].as_str()),
        (403, Some("account_disabled")),
        "{error}"
    );

    let out = run_admin(env().args(["accounts", "show", "eve@example.com"]));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(
        shown.contains("enabled   false") && shown.contains("revoked"),
        "{shown}"
    );

    let out = run_admin(env().args(["accounts", "enable", "eve@example.com"]));
    assert!(out.status.success());
    let tokens = sign_in(&cognito, &site.pool, "eve@example.com", PASSWORD)
        .await
        .expect("sign-in works again");
    assert_eq!(
        site.download(GATED, &secret).await.0,
        401,
        "revoked keys stay revoked"
    );
    assert_eq!(site.create(&tokens.access_token, "new").await.0, 201);

    let out = run_admin(env().args(["accounts", "disable", "nobody@example.com"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no account with the email nobody@example.com"));
}

/// template.yaml against what the keys function does: its two routes are the ones its router
/// accepts, both behind the JWT authorizer (and no catalog route is); its policy allows every
/// DynamoDB operation it sends, over create (a full account included), list and revoke; the
/// data function may update `last_used_at` alone.
#[tokio::test]
async fn the_template_gives_the_keys_function_its_routes_and_only_its_operations() {
    use catalog::api::account::AccountRoute;
    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let resources = &template["Resources"];
    let events = resources["CatalogKeysFunction"]["Properties"]["Events"]
        .as_mapping()
        .unwrap();
    let mut paths = Vec::new();
    for event in events.values() {
        let p = &event["Properties"];
        assert_eq!(p["Method"].as_str(), Some("ANY"));
        assert_eq!(p["Auth"]["Authorizer"].as_str(), Some("AccountJwt"));
        let path = p["Path"].as_str().unwrap();
        let concrete = path.replace("{id}", "key_0123456789abcdef");
        assert!(AccountRoute::parse(&concrete).is_some(), "{path}");
        paths.push(path.to_owned());
    }
    paths.sort();
    assert_eq!(paths, ["/api/v1/account/keys", "/api/v1/account/keys/{id}"]);
    for function in [
        "CatalogListFunction",
        "CatalogMetadataFunction",
        "CatalogDataFunction",
    ] {
        for event in resources[function]["Properties"]["Events"]
            .as_mapping()
            .unwrap()
            .values()
        {
            assert!(
                event["Properties"]["Auth"].is_null(),
                "{function}: no authorizer"
            );
        }
    }
    let jwt = &resources["HttpApi"]["Properties"]["Auth"]["Authorizers"]["AccountJwt"];
    assert_eq!(
        jwt["IdentitySource"].as_str(),
        Some("$request.header.Authorization")
    );
    assert!(resources["HttpApi"]["Properties"]["Auth"]["DefaultAuthorizer"].is_null());

    // Every operation the keys store sends...
    let stack = Stack::start().await;
    let wire = catalog_tests::Wire::default();
    let accounts = DynamoAccounts::new(stack.dynamo_client(&wire), &stack.target.keys_table);
    let owner = Owner::parse("7a0c2e4f-1111-4222-8333-944455556666").unwrap();
    let request = KeyRequest {
        label: "x".into(),
        expires_in_days: 1,
        datasets: None,
    };
    let then = Utc::now() - chrono::Duration::days(2);
    for _ in 0..MAX_ACTIVE_KEYS {
        let key = request.key_for(&generate_key(), owner.clone(), then);
        accounts.create_key(&key, then).await.unwrap();
    }
    let now = Utc::now();
    let key = request.key_for(&generate_key(), owner.clone(), now);
    assert_eq!(
        accounts.create_key(&key, now).await.unwrap(),
        Created::Created
    );
    accounts.list_keys(&owner).await.unwrap();
    assert!(accounts.revoke_key(&owner, &key.id, now).await.unwrap());
    let mut sent: Vec<String> = wire
        .take_calls()
        .into_iter()
        .map(|c| c.operation.replace("DynamoDB.", ""))
        .collect();
    sent.sort();
    sent.dedup();
    assert_eq!(
        sent,
        ["GetItem", "Query", "TransactWriteItems", "UpdateItem"]
    );
    // ...is allowed: a transaction needs the actions of its parts (Put, Update).
    let mut allowed = Vec::new();
    for policy in resources["CatalogKeysFunction"]["Properties"]["Policies"]
        .as_sequence()
        .unwrap()
    {
        for statement in policy["Statement"].as_sequence().into_iter().flatten() {
            for action in statement["Action"].as_sequence().into_iter().flatten() {
                allowed.push(action.as_str().unwrap().to_owned());
            }
        }
    }
    for needed in ["GetItem", "Query", "PutItem", "UpdateItem"] {
        assert!(
            allowed.contains(&format!("dynamodb:{needed}")),
            "dynamodb:{needed} is not in the keys function's policy: {allowed:?}"
        );
    }
    assert!(!allowed
        .iter()
        .any(|a| a.contains("Scan") || a.contains("Delete")));

    // The data function: an UpdateItem of last_used_at alone.
    let statements = resources["CatalogDataPolicy"]["Properties"]["PolicyDocument"]["Statement"]
        .as_sequence()
        .unwrap();
    let update: Vec<_> = statements
        .iter()
        .filter(|s| {
            s["Action"]
                .as_sequence()
                .into_iter()
                .flatten()
                .any(|a| a.as_str() == Some("dynamodb:UpdateItem"))
        })
        .collect();
    assert_eq!(update.len(), 1);
    let attributes: Vec<&str> = update[0]["Condition"]["ForAllValues:StringEquals"]
        ["dynamodb:Attributes"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(attributes, ["key_hash", "last_used_at"]);
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
            .read_item(catalog::dynamo::layout::api_key_key(hash.as_str()))
            .await
            .unwrap()
            .expect("the key's item");
        catalog::dynamo::attr::get_time_opt(&item, "last_used_at").unwrap()
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
        .read_item(catalog::dynamo::layout::api_key_key(unknown.as_str()))
        .await
        .unwrap();
    assert!(none.is_none(), "recording a use creates no item");
}
