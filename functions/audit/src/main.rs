//! The download log and counts, off the request path: a CloudWatch Logs subscription on the
//! data, rows and Delta Sharing functions' log groups delivers their download events, recorded
//! once each; the daily schedule sets each dataset's last 30 days of downloads. Composition
//! root only: the logic is in `catalog_writer::ingest` and `catalog_writer::downloads`.

use catalog_aws::config::AuditConfig;
use catalog_writer::downloads::DownloadLog;
use catalog_writer::ingest::{self, AuditEvent};
use catalog_writer::DynamoWriter;
use lambda_http::lambda_runtime::{self, service_fn, Error, LambdaEvent};
use serde_json::{json, Value};

async fn handle(
    log: &DownloadLog,
    writer: &DynamoWriter,
    retention_days: u32,
    event: LambdaEvent<Value>,
) -> Result<Value, Error> {
    match ingest::parse(&event.payload)? {
        AuditEvent::Logs(events) => {
            let downloads = ingest::downloads(&events);
            let recorded = log.record(&downloads, retention_days).await?;
            tracing::info!(
                events = events.len(),
                downloads = downloads.len(),
                recorded,
                "recorded downloads"
            );
            Ok(json!({"events": events.len(), "downloads": downloads.len(), "recorded": recorded}))
        }
        AuditEvent::Daily => {
            let now = chrono::Utc::now();
            let done = writer.roll_up_downloads(log, now.date_naive(), now).await?;
            tracing::info!(
                checked = done.checked,
                changed = done.changed,
                failed = done.failed.len(),
                "counted downloads"
            );
            if !done.failed.is_empty() {
                // An error, so that the function's Errors alarm says so; the next run retries.
                return Err(format!("counts not set: {}", done.failed.join(", ")).into());
            }
            Ok(json!({"checked": done.checked, "changed": done.changed}))
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = AuditConfig::from_env()?;
    let dynamo = aws_sdk_dynamodb::Client::new(&catalog_aws::aws::load_sdk_config().await);
    let log = DownloadLog::new(dynamo.clone(), &config.downloads_table);
    // Within the function's 300 s: a count that other writers hold up (a long `reindex`) gives
    // up with a named error, which the Errors alarm shows, and the next run sets it.
    let writer = DynamoWriter::new(dynamo, &config.datasets_table, &config.keys_table)
        .with_shared_wait(std::time::Duration::from_secs(60));
    let retention = config.retention_days;
    lambda_runtime::run(service_fn(|event| handle(&log, &writer, retention, event))).await
}
