//! `GET /api/v1/datasets`, the DCAT catalog `GET /api/v1/catalog`, and the `$default` route:
//! composition root only; the logic is in `catalog_http::api::list` and `catalog_http::api::catalog`.

use std::convert::Infallible;

use catalog_aws::config::CatalogConfig;
use catalog_http::api::{request_path, Route};
use catalog_search::listing::Listing;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(catalog: &Listing, req: Request) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Catalog) => catalog_http::api::catalog(&req, catalog, now).await,
        _ => catalog_http::api::list(&req, catalog, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = CatalogConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let catalog = Listing::new(aws_sdk_dynamodb::Client::new(&sdk), config.datasets_table);
    catalog_http::lambda::run(service_fn(|req| handle(&catalog, req))).await
}
