//! `POST|GET /api/v1/account/keys`, `DELETE /api/v1/account/keys/{id}`: composition root only;
//! the logic is in `catalog::api::account`. API Gateway's JWT authorizer verifies the caller's
//! token before this function runs; it reads the verified claims from the request context.

use std::convert::Infallible;

use catalog::config::KeysConfig;
use catalog::dynamo::accounts::DynamoAccounts;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(accounts: &DynamoAccounts, req: Request) -> Result<Response<Body>, Infallible> {
    Ok(catalog::api::account::account_keys(&req, accounts, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::tracing::init_default_subscriber();
    let config = KeysConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let accounts = DynamoAccounts::new(aws_sdk_dynamodb::Client::new(&sdk), config.keys_table);
    catalog::lambda::run(service_fn(|req| handle(&accounts, req))).await
}
