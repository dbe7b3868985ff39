//! The account routes (an account's own keys) and the data endpoint's record of a key's use.

use super::*;
use catalog::accounts::MAX_ACTIVE_KEYS;
use catalog_memory::MemoryAccounts;

const ADA: &str = "6b1c2a9e-3b7d-4c5e-9a8f-0d1e2f3a4b5c";
const BOB: &str = "0e2d4c6b-8a9f-4e1d-b2c3-a4b5c6d7e8f9";

fn as_user(event: V2Event, sub: &str) -> Request {
    event
        .claims([("sub", sub), ("token_use", "access")])
        .request()
}

async fn call(store: &MemoryAccounts, req: Request) -> Response<Body> {
    catalog_http::api::account::account_keys(&req, store, now()).await
}

async fn create(store: &MemoryAccounts, sub: &str, body: &str) -> Response<Body> {
    call(
        store,
        as_user(V2Event::new("POST", "/api/v1/account/keys").body(body), sub),
    )
    .await
}

#[tokio::test]
async fn only_verified_claims_name_the_caller() {
    let store = MemoryAccounts::default();
    // No authorizer claims: whatever the headers say, there is no caller.
    let forged = V2Event::get("/api/v1/account/keys")
        .header(
            "authorization",
            "Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.",
        )
        .header("x-amzn-oidc-identity", ADA)
        .request();
    let resp = call(&store, forged).await;
    assert_error(&resp, 401, "invalid_token");
    assert!(resp.headers()["www-authenticate"]
        .to_str()
        .unwrap()
        .starts_with("Bearer realm=\"dataset-catalog\", error=\"invalid_token\""));
    // An ID token's claims open nothing.
    let id_token = V2Event::get("/api/v1/account/keys")
        .claims([("sub", ADA), ("token_use", "id")])
        .request();
    assert_error(&call(&store, id_token).await, 401, "invalid_token");
}

#[tokio::test]
async fn a_created_key_is_shown_once_and_listed_without_its_secret() {
    let store = MemoryAccounts::default();
    let resp = create(&store, ADA, r#"{"label": "notebook"}"#).await;
    assert_eq!(resp.status(), 201);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let created = body(&resp);
    let secret = created["secret"].as_str().unwrap();
    let id = created["key"]["id"].as_str().unwrap();
    assert_eq!(
        resp.headers()["location"],
        format!("/api/v1/account/keys/{id}").as_str()
    );
    assert_eq!(created["key"]["expires_at"], "2026-08-30T12:00:00Z");

    let listed = call(&store, as_user(V2Event::get("/api/v1/account/keys"), ADA)).await;
    assert_eq!(listed.status(), 200);
    let listed = body(&listed);
    assert_eq!(listed["keys"][0]["id"], id);
    assert!(!listed.to_string().contains(secret));
    let others = call(&store, as_user(V2Event::get("/api/v1/account/keys"), BOB)).await;
    assert_eq!(body(&others)["keys"], json!([]));
}

#[tokio::test]
async fn the_eleventh_active_key_is_refused() {
    let store = MemoryAccounts::default();
    for n in 0..MAX_ACTIVE_KEYS {
        let resp = create(&store, ADA, &format!(r#"{{"label": "k{n}"}}"#)).await;
        assert_eq!(resp.status(), 201);
    }
    let message = assert_error(
        &create(&store, ADA, r#"{"label": "one more"}"#).await,
        409,
        "key_limit_reached",
    );
    assert!(message.contains("at most 10 active keys"), "{message}");
    // The limit is per account.
    assert_eq!(create(&store, BOB, r#"{"label": "x"}"#).await.status(), 201);
}

#[tokio::test]
async fn revoking_is_idempotent_and_private() {
    let store = MemoryAccounts::default();
    let created = body(&create(&store, ADA, r#"{"label": "x"}"#).await);
    let id = created["key"]["id"].as_str().unwrap();
    let path = format!("/api/v1/account/keys/{id}");
    let bob = call(&store, as_user(V2Event::new("DELETE", &path), BOB)).await;
    assert_error(&bob, 404, "key_not_found");
    for _ in 0..2 {
        let resp = call(&store, as_user(V2Event::new("DELETE", &path), ADA)).await;
        assert_eq!(resp.status(), 204);
        assert!(resp.body().is_empty());
    }
    let resp = call(&store, as_user(V2Event::new("POST", &path), ADA)).await;
    assert_error(&resp, 405, "method_not_allowed");
    assert_eq!(resp.headers()["allow"], "DELETE");
}

#[tokio::test]
async fn a_bad_body_is_a_400_naming_its_field() {
    let store = MemoryAccounts::default();
    let message = assert_error(
        &create(&store, ADA, r#"{"label": "x", "expires_in_days": 400}"#).await,
        400,
        "invalid_expiry",
    );
    assert!(message.contains("expires_in_days"), "{message}");
    assert_error(&create(&store, ADA, "nope").await, 400, "invalid_body");
    assert_error(
        &create(&store, ADA, r#"{"label": 3}"#).await,
        400,
        "invalid_label",
    );
}

#[tokio::test]
async fn a_key_s_use_is_recorded_at_most_once_an_hour() {
    let c = catalog();
    let hash = KeyHash::of(READ_KEY);
    assert_eq!(c.key(&hash).unwrap().last_used_at, None);
    let resp = data_with(
        &c,
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(c.key(&hash).unwrap().last_used_at, Some(now()));

    // Recorded a minute ago: not written again.
    let mut record = c.key(&hash).unwrap();
    record.last_used_at = Some(now() - Duration::minutes(1));
    c.insert_key(hash.clone(), record);
    data_with(
        &c,
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(
        c.key(&hash).unwrap().last_used_at,
        Some(now() - Duration::minutes(1))
    );

    // An hour ago: written.
    let mut record = c.key(&hash).unwrap();
    record.last_used_at = Some(now() - Duration::hours(1));
    c.insert_key(hash.clone(), record);
    data_with(
        &c,
        "/api/v1/datasets/gated/data",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(c.key(&hash).unwrap().last_used_at, Some(now()));

    // A refused request records nothing.
    let revoked = KeyHash::of(REVOKED_KEY);
    data_with(
        &c,
        "/api/v1/datasets/gated/data",
        &[("x-api-key", REVOKED_KEY)],
    )
    .await;
    assert_eq!(c.key(&revoked).unwrap().last_used_at, None);
}
