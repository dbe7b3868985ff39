//! `GET /api/v1/datasets/{slug}/data` and its redirecting twin `GET /api/v1/datasets/{slug}/download`:
//! composition root only; the logic is in `catalog_http::api::data` and `catalog_http::api::download`.

use std::convert::Infallible;

use catalog_aws::aws::DataClients;
use catalog_aws::config::DataConfig;
use catalog_aws::dynamo::DynamoCatalog;
use catalog_aws::s3::S3Signer;
use catalog_http::api::{request_path, Route};
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(
    catalog: &DynamoCatalog,
    signer: &S3Signer,
    req: Request,
) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Download(_)) => catalog_http::api::download(&req, catalog, signer, now).await,
        _ => catalog_http::api::data(&req, catalog, signer, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = DataConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let DataClients { catalog, signer } = DataClients::from_config(&sdk, &config).await?;
    catalog_http::lambda::run(service_fn(|req| handle(&catalog, &signer, req))).await
}
