//! `GET /api/v1/datasets/{slug}/data` and its redirecting twin `GET /api/v1/datasets/{slug}/download`:
//! composition root only; the logic is in `catalog::api::data` and `catalog::api::download`.

use std::convert::Infallible;

use catalog::api::{request_path, Route};
use catalog::aws::DataClients;
use catalog::config::DataConfig;
use catalog::dynamo::DynamoCatalog;
use catalog::s3::S3Signer;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(
    catalog: &DynamoCatalog,
    signer: &S3Signer,
    req: Request,
) -> Result<Response<Body>, Infallible> {
    let now = chrono::Utc::now();
    Ok(match Route::parse(request_path(&req)) {
        Some(Route::Download(_)) => catalog::api::download(&req, catalog, signer, now).await,
        _ => catalog::api::data(&req, catalog, signer, now).await,
    })
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::lambda::init_logging();
    let config = DataConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let DataClients { catalog, signer } = DataClients::from_config(&sdk, &config).await?;
    catalog::lambda::run(service_fn(|req| handle(&catalog, &signer, req))).await
}
