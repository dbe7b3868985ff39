//! `GET /api/v1/datasets/{slug}/data`: composition root only; the logic is in `catalog::api::data`.

use std::convert::Infallible;

use catalog::config::DataConfig;
use catalog::dynamo::DynamoCatalog;
use catalog::s3::S3Signer;
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(
    catalog: &DynamoCatalog,
    signer: &S3Signer,
    req: Request,
) -> Result<Response<Body>, Infallible> {
    Ok(catalog::api::data(&req, catalog, signer, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::tracing::init_default_subscriber();
    let config = DataConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let credentials = catalog::aws::signing_credentials(&sdk, &config)
        .await
        .ok_or("no AWS credentials provider configured")?;
    let signer = S3Signer::new(
        catalog::aws::s3_config(&sdk, config.s3_force_path_style),
        credentials,
        config.bucket,
        config.url_ttl,
    );
    let catalog = DynamoCatalog::with_keys(
        aws_sdk_dynamodb::Client::new(&sdk),
        config.datasets_table,
        config.keys_table,
    );
    catalog::lambda::run(service_fn(|req| handle(&catalog, &signer, req))).await
}
