//! `catalog-local-init`: creates the tables and the bucket on the local emulators, as
//! template.yaml declares them, unless they exist. Configured like the functions: DATASETS_TABLE,
//! KEYS_TABLE, DATA_BUCKET and the SDK's own variables (AWS_ENDPOINT_URL_DYNAMODB,
//! AWS_ENDPOINT_URL_S3, ...). Datasets and keys are then written with `catalog-admin`.

use catalog::config::DataConfig;
use catalog_dev::{ensure_resources, DevError, Target};

#[tokio::main]
async fn main() -> Result<(), DevError> {
    let config = DataConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let s3 =
        aws_sdk_s3::Client::from_conf(catalog::aws::s3_config(&sdk, config.s3_force_path_style));
    let target = Target {
        datasets_table: config.datasets_table,
        keys_table: config.keys_table,
        bucket: config.bucket,
    };
    ensure_resources(&dynamo, &s3, &target).await
}
