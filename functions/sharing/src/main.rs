//! `ANY /api/v1/delta-sharing/{proxy+}`: the Delta Sharing server. Composition root only; the
//! logic is in `catalog_http::api::sharing` and the protocol's shapes in `catalog_http::sharing`.
//!
//! Configured as the data function (`DataConfig`: both tables, the bucket, the URL lifetime and
//! the signing role), whose clients it builds: it reads what the data endpoint reads, plus the
//! catalog's list and an account's grants, and signs the same URLs. The `DynamoCatalog` is also
//! the `ManifestReader` of a version of many files (its manifest's chunk items, in the datasets
//! table), so a query of such a version lists its files with no other client.

use std::convert::Infallible;

use catalog_aws::aws::DataClients;
use catalog_aws::config::DataConfig;
use catalog_aws::dynamo::DynamoCatalog;
use catalog_aws::s3::S3Signer;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(
    catalog: &DynamoCatalog,
    signer: &S3Signer,
    req: Request,
) -> Result<Response<Body>, Infallible> {
    Ok(catalog_http::api::sharing(&req, catalog, signer, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = DataConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let DataClients { catalog, signer } = DataClients::from_config(&sdk, &config).await?;
    catalog_http::lambda::run(service_fn(|req| handle(&catalog, &signer, req))).await
}
