//! `GET /api/v1/datasets/{slug}` and its Croissant document `GET /api/v1/datasets/{slug}/croissant`:
//! composition root only; the logic is in `catalog_http::api::metadata` and `catalog_http::api::croissant`.

use std::convert::Infallible;

use catalog_aws::config::MetadataConfig;
use catalog_aws::dynamo::DynamoCatalog;
use catalog_http::api::{request_path, Route};
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(catalog: &DynamoCatalog, req: Request) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Croissant(_)) => catalog_http::api::croissant(&req, catalog, now).await,
        _ => catalog_http::api::metadata(&req, catalog, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = MetadataConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    // The keys table: a key sent for an `approval` dataset's statistics is read, never written.
    let catalog = DynamoCatalog::new(
        aws_sdk_dynamodb::Client::new(&sdk),
        config.datasets_table,
        config.keys_table,
    );
    catalog_http::lambda::run(service_fn(|req| handle(&catalog, req))).await
}
