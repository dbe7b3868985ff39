//! One staged Parquet file's partial statistics, off the request path: invoked once per object
//! by the stack's Distributed Map (`FileStatsStateMachine`, docs/scaling.md) with the map's
//! item, it writes the partial under `stats/` for `catalog-admin stats merge` and `stage
//! publish --partials`. Composition root only: the item's rules and the work are
//! `catalog_stats::fanout`. Errors reach Step Functions by name (`FileStats.S3`, retried by the
//! state machine; `FileStats.Task` and `FileStats.Partial`, not).

use catalog_aws::aws::Patience;
use catalog_aws::config::FileStatsConfig;
use catalog_stats::fanout::{self, FileTask};
use lambda_http::lambda_runtime::{self, service_fn, Diagnostic, Error, LambdaEvent};
use serde_json::{json, Value};

async fn handle(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    event: LambdaEvent<Value>,
) -> Result<Value, Diagnostic> {
    let failed = |e: fanout::FanOutError| {
        tracing::error!(kind = e.kind(), error = %e, "no partial statistics");
        Diagnostic {
            error_type: e.kind().to_owned(),
            error_message: e.to_string(),
        }
    };
    let task = FileTask::parse(event.payload).map_err(failed)?;
    let Some(done) = fanout::run(s3, bucket, &task).await.map_err(failed)? else {
        tracing::info!(key = %task.key, "not one of a version's files: skipped");
        return Ok(json!({"skipped": task.key}));
    };
    tracing::info!(
        key = %task.key,
        partial = %done.partial,
        rows = done.row_count,
        read_requests = done.read_requests,
        read_bytes = done.read_bytes,
        "partial statistics written"
    );
    Ok(json!(done))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = FileStatsConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config_with(Patience::BATCH).await;
    let s3 = aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
        &sdk,
        config.s3_force_path_style,
    ));
    lambda_runtime::run(service_fn(|event| handle(&s3, &config.bucket, event))).await
}
