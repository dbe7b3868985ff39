//! `GET /api/v1/datasets/{slug}/rows`: composition root only; the rules are in
//! `catalog_http::api::rows` and the reader in `catalog_preview`. The catalog is also the
//! `ManifestReader` of a version of many files (its manifest chunks, in the datasets table).

use std::convert::Infallible;

use catalog_aws::config::RowsConfig;
use catalog_aws::dynamo::DynamoCatalog;
use catalog_preview::{ParquetRows, S3Source};
use lambda_http::{service_fn, Body, Error, Request, Response};

async fn handle(
    catalog: &DynamoCatalog,
    rows: &ParquetRows<S3Source>,
    req: Request,
) -> Result<Response<Body>, Infallible> {
    Ok(catalog_http::api::rows(&req, catalog, rows, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = RowsConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let catalog = DynamoCatalog::new(
        aws_sdk_dynamodb::Client::new(&sdk),
        &config.datasets_table,
        &config.keys_table,
    );
    let rows = ParquetRows::new(S3Source::from_sdk(
        &sdk,
        &config.bucket,
        config.s3_force_path_style,
    ));
    catalog_http::lambda::run(service_fn(|req| handle(&catalog, &rows, req))).await
}
