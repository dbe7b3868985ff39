//! Local stack helpers: creating the tables and the bucket, and (for the integration tests)
//! publishing the sample datasets straight through the lib crate's writer. `dev/run` seeds
//! through the operators' CLI, `catalog-admin`.

pub mod authorizer;
pub mod cognito;
pub mod download_log;
pub mod s3_cors;
pub mod site;

use std::error::Error;
use std::path::Path;

use aws_sdk_s3::primitives::ByteStream;
use catalog::input::Slug;
use catalog::keys::Scope;
use catalog::records::{ActiveVersion, DatasetMeta};
use catalog_writer::{DynamoWriter, NewKey, NewVersion, Publication, Staged};
use chrono::{DateTime, Duration, Utc};
use serde::Deserialize;

pub type DevError = Box<dyn Error + Send + Sync + 'static>;

/// `manifest.json` as written by `dev/samples.py`.
#[derive(Debug, Deserialize)]
pub struct Manifest {
    pub datasets: Vec<SampleDataset>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SampleDataset {
    pub slug: Slug,
    #[serde(flatten)]
    pub meta: DatasetMeta,
    /// None: never keyless; positive: window ends that many hours after seeding; negative: it
    /// ended that many hours before.
    pub keyless_offset_hours: Option<i64>,
    pub file: String,
    pub size: u64,
    pub sha256: String,
    pub row_count: u64,
    pub column_count: u64,
    pub columns: Vec<String>,
    pub schema: serde_json::Value,
}

pub fn read_manifest(samples_dir: &Path) -> Result<Manifest, DevError> {
    let text = std::fs::read_to_string(samples_dir.join("manifest.json"))?;
    Ok(serde_json::from_str(&text)?)
}

/// Where the tables and the bucket are.
#[derive(Debug, Clone)]
pub struct Target {
    pub datasets_table: String,
    pub keys_table: String,
    pub bucket: String,
    /// The download log's table (`DOWNLOADS_TABLE`).
    pub downloads_table: String,
}

/// Creates the tables and the bucket unless they exist.
pub async fn ensure_resources(
    dynamo: &aws_sdk_dynamodb::Client,
    s3: &aws_sdk_s3::Client,
    target: &Target,
) -> Result<(), DevError> {
    let tables = dynamo.list_tables().send().await?;
    let names = tables.table_names();
    if !names.iter().any(|n| n == &target.datasets_table) {
        catalog_writer::create_tables(dynamo, &target.datasets_table, &target.keys_table).await?;
    }
    if !names.iter().any(|n| n == &target.downloads_table) {
        catalog_writer::downloads::create_downloads_table(dynamo, &target.downloads_table).await?;
    }
    let buckets = s3.list_buckets().send().await?;
    if !buckets
        .buckets()
        .iter()
        .any(|b| b.name() == Some(target.bucket.as_str()))
    {
        s3.create_bucket().bucket(&target.bucket).send().await?;
    }
    Ok(())
}

/// Publishes one sample's Parquet file as the next version of its dataset (version 1 when new).
pub async fn seed_dataset(
    dynamo: &aws_sdk_dynamodb::Client,
    s3: &aws_sdk_s3::Client,
    target: &Target,
    samples_dir: &Path,
    sample: &SampleDataset,
    now: DateTime<Utc>,
    id: Option<uuid::Uuid>,
) -> Result<uuid::Uuid, DevError> {
    let (slug, meta) = (&sample.slug, &sample.meta);
    let writer = DynamoWriter::new(dynamo.clone(), &target.datasets_table, &target.keys_table);
    let publication = Publication {
        slug,
        meta,
        id,
        new_only: false,
        now,
    };
    let reserved = writer
        .publish(publication, |reserved| async move {
            let key = catalog_aws::s3::object_key(slug, reserved.version, &sample.sha256);
            let body = ByteStream::from_path(samples_dir.join(&sample.file)).await?;
            s3.put_object()
                .bucket(&target.bucket)
                .key(&key)
                .content_type("application/vnd.apache.parquet")
                .set_checksum_sha256(catalog_aws::s3::checksum_sha256(&sample.sha256))
                .body(body)
                .send()
                .await?;
            let version = NewVersion {
                active: ActiveVersion {
                    version: reserved.version,
                    s3_key: key,
                    size: sample.size,
                    row_count: sample.row_count,
                    columns: sample.columns.clone(),
                    sha256: sample.sha256.clone(),
                    published_at: now,
                    files: None,
                    ingested: None,
                },
                schema_json: sample.schema.to_string(),
            };
            Ok::<_, DevError>(Staged {
                version,
                meta: meta.clone(),
            })
        })
        .await?;
    if let Some(hours) = sample.keyless_offset_hours {
        writer
            .set_keyless(slug, Some(now + Duration::hours(hours)), now)
            .await?;
    }
    Ok(reserved.id)
}

/// Stores a key's hash with the given scopes; returns the key's public id.
pub async fn store_key(
    dynamo: &aws_sdk_dynamodb::Client,
    target: &Target,
    secret: &str,
    scopes: Vec<Scope>,
    label: &str,
    now: DateTime<Utc>,
    expires_at: Option<DateTime<Utc>>,
) -> Result<String, DevError> {
    let key = NewKey::for_secret(secret, scopes, label, now, expires_at);
    let id = key.id.clone();
    DynamoWriter::new(dynamo.clone(), &target.datasets_table, &target.keys_table)
        .put_key(&key)
        .await?;
    Ok(id)
}
