//! `catalog-seed <samples-dir>`: creates the tables and the bucket if needed, publishes every
//! sample dataset of `<samples-dir>/manifest.json`, creates a read-scoped API key and prints it.
//! Configured like the functions: DATASETS_TABLE, KEYS_TABLE, DATA_BUCKET and the SDK's own
//! variables (AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_S3, AWS_REGION, credentials).

use std::path::PathBuf;

use catalog::config::DataConfig;
use catalog::domain::Scope;
use catalog_dev::{ensure_resources, read_manifest, seed_dataset, store_key, DevError, Target};

#[tokio::main]
async fn main() -> Result<(), DevError> {
    let samples: PathBuf = std::env::args_os()
        .nth(1)
        .ok_or("usage: catalog-seed <samples-dir>")?
        .into();
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
    ensure_resources(&dynamo, &s3, &target).await?;
    let now = chrono::Utc::now();
    for sample in read_manifest(&samples)?.datasets {
        let id = seed_dataset(&dynamo, &s3, &target, &samples, &sample, now, None).await?;
        let window = match sample.keyless_offset_hours {
            None => "gated".to_owned(),
            Some(h) if h > 0 => format!("keyless for {h} more hours"),
            Some(h) => format!("keyless window closed {} hours ago", -h),
        };
        eprintln!("seeded {:<20} {id}  ({window})", sample.slug);
    }
    let key = catalog_dev::generate_key();
    store_key(
        &dynamo,
        &target,
        &key,
        vec![Scope::Read],
        "local read key",
        now,
        None,
    )
    .await?;
    // The one place a key is shown: to the operator who created it.
    println!("{key}");
    Ok(())
}
