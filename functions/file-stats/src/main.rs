//! One staged Parquet file's partial statistics, off the request path: invoked once per file by
//! the stack's Distributed Map (`FileStatsStateMachine`, docs/scaling.md) with the map's item,
//! it writes the partial under `stats/` for `catalog-admin stats merge`. Composition root only:
//! the item's rules and the work are `catalog_stats::fanout`.

use catalog_aws::config::FileStatsConfig;
use catalog_stats::fanout::{self, FileTask};
use lambda_http::lambda_runtime::{self, service_fn, Error, LambdaEvent};
use serde_json::Value;

async fn handle(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    event: LambdaEvent<Value>,
) -> Result<Value, Error> {
    let task = FileTask::parse(event.payload)?;
    let done = fanout::run(s3, bucket, &task).await?;
    tracing::info!(
        key = %task.key,
        partial = %done.partial,
        rows = done.row_count,
        read_requests = done.read_requests,
        read_bytes = done.read_bytes,
        "partial statistics written"
    );
    Ok(serde_json::to_value(done)?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = FileStatsConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let s3 = aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
        &sdk,
        config.s3_force_path_style,
    ));
    lambda_runtime::run(service_fn(|event| handle(&s3, &config.bucket, event))).await
}
