//! Publishes a file uploaded from the site (docs/organisations.md, publishing from the site):
//! invoked by EventBridge for each object created under the data bucket's `uploads/` (the
//! complete route's CompleteMultipartUpload), it runs
//! `catalog_publish_core::site::publish_upload`, the code `catalog-admin publish` runs.
//! Composition root only. A refusal (not Parquet or CSV, a wrong SHA-256, a bad file) is an
//! outcome, recorded on the upload, not an error; an error is a failure of S3 or DynamoDB,
//! which Lambda's asynchronous invocation retries.

use catalog_aws::aws::Patience;
use catalog_aws::config::FileStatsConfig;
use catalog_aws::dynamo::uploads::DynamoUploads;
use catalog_publish_core::publish::Publisher;
use catalog_publish_core::site::{publish_upload, Outcome};
use catalog_writer::DynamoWriter;
use lambda_http::lambda_runtime::{self, service_fn, Diagnostic, Error, LambdaEvent};
use serde_json::{json, Value};

struct App {
    publisher: Publisher,
    uploads: DynamoUploads,
}

/// The object's key in an S3 event as EventBridge delivers it (`detail.object.key`).
fn object_key(event: &Value) -> Option<&str> {
    event.pointer("/detail/object/key")?.as_str()
}

async fn handle(app: &App, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let Some(key) = object_key(&event.payload) else {
        tracing::error!("not an S3 Object Created event: no detail.object.key");
        return Err(Diagnostic {
            error_type: "Publish.Event".into(),
            error_message: "not an S3 Object Created event: no detail.object.key".into(),
        });
    };
    let outcome = publish_upload(&app.publisher, &app.uploads, key, None, chrono::Utc::now())
        .await
        .map_err(|e| {
            tracing::error!(key, error = %e, "publishing failed");
            Diagnostic {
                error_type: "Publish.Failed".into(),
                error_message: e.to_string(),
            }
        })?;
    Ok(match outcome {
        Outcome::Published { slug, version } => {
            tracing::info!(key, slug, version, "published");
            json!({"published": slug, "version": version})
        }
        Outcome::Failed { reason } => {
            tracing::warn!(key, reason, "refused");
            json!({"failed": reason})
        }
        Outcome::Skipped { why } => {
            tracing::info!(key, why, "skipped");
            json!({"skipped": why})
        }
    })
}

fn required(name: &str) -> Result<String, Error> {
    std::env::var(name).map_err(|_| format!("{name} is not set").into())
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let s3_config = FileStatsConfig::from_env()?;
    let (datasets_table, keys_table) = (required("DATASETS_TABLE")?, required("KEYS_TABLE")?);
    let sdk = catalog_aws::aws::load_sdk_config_with(Patience::BATCH).await;
    let s3 = aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
        &sdk,
        s3_config.s3_force_path_style,
    ));
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let app = App {
        publisher: Publisher {
            writer: DynamoWriter::new(dynamo.clone(), &datasets_table, &keys_table),
            s3,
            bucket: s3_config.bucket,
        },
        uploads: DynamoUploads::new(dynamo, keys_table),
    };
    lambda_runtime::run(service_fn(|event| handle(&app, event))).await
}
