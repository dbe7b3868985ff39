//! `GET /api/v1/datasets`: composition root only; the logic is in `catalog::api::list`.

use std::convert::Infallible;

use catalog::config::CatalogConfig;
use catalog::dynamo::DynamoCatalog;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(catalog: &DynamoCatalog, req: Request) -> Result<Response<Body>, Infallible> {
    Ok(catalog::api::list(&req, catalog, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::tracing::init_default_subscriber();
    let config = CatalogConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let catalog = DynamoCatalog::new(aws_sdk_dynamodb::Client::new(&sdk), config.datasets_table);
    catalog::lambda::run(service_fn(|req| handle(&catalog, req))).await
}
