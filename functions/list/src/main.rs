//! `GET /api/v1/datasets`, the DCAT catalog `GET /api/v1/catalog`, and the `$default` route:
//! composition root only; the logic is in `catalog::api::list` and `catalog::api::catalog`.

use std::convert::Infallible;

use catalog::api::{request_path, Route};
use catalog::config::CatalogConfig;
use catalog::dynamo::DynamoCatalog;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(catalog: &DynamoCatalog, req: Request) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Catalog) => catalog::api::catalog(&req, catalog, now).await,
        _ => catalog::api::list(&req, catalog, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::lambda::init_logging();
    let config = CatalogConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let catalog = DynamoCatalog::new(aws_sdk_dynamodb::Client::new(&sdk), config.datasets_table);
    catalog::lambda::run(service_fn(|req| handle(&catalog, req))).await
}
