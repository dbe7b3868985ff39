//! Accounts against moto (DynamoDB and Cognito) and s3s-fs, through the local API: the JWT
//! authorizer's checks as API Gateway makes them, then the keys function's handler. A person
//! signs up, confirms, signs in, mints a key, downloads with it, sees it listed with its last
//! use, revokes it, and is refused.

use std::process::Command;

use catalog::accounts::{KeyRequest, MAX_ACTIVE_KEYS};

use catalog::keys::{generate_key, Owner};
use catalog::ports::{AccountKeyStore, Created};
use catalog_aws::dynamo::accounts::DynamoAccounts;
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

mod access_requests;
mod deleted;
mod notices;
mod orgs;
mod own_keys;
mod template;
mod tokens;
mod uploads;
