//! `GET /api/v1/datasets/{slug}` and its Croissant document `GET /api/v1/datasets/{slug}/croissant`:
//! composition root only; the logic is in `catalog::api::metadata` and `catalog::api::croissant`.

use std::convert::Infallible;

use catalog::api::{request_path, Route};
use catalog::config::MetadataConfig;
use catalog::dynamo::DynamoCatalog;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(catalog: &DynamoCatalog, req: Request) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Croissant(_)) => catalog::api::croissant(&req, catalog, now).await,
        _ => catalog::api::metadata(&req, catalog, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::lambda::init_logging();
    let config = MetadataConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    // The keys table: a key sent for an `approval` dataset's statistics is read, never written.
    let catalog = DynamoCatalog::with_keys(
        aws_sdk_dynamodb::Client::new(&sdk),
        config.datasets_table,
        config.keys_table,
    );
    catalog::lambda::run(service_fn(|req| handle(&catalog, req))).await
}
