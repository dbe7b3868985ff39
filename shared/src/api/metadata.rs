//! `GET /api/v1/datasets/{slug}`: one dataset's metadata, statistics, active version and access.

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use super::http::{cacheable, changed_at, finish, preflight, seconds_to_next_window_end};
use super::request::{accept, Endpoint};
use crate::error::ApiError;
use crate::input::{DatasetRef, Slug};
use crate::policy::{is_keyless, Access};
use crate::ports::DatasetReader;
use crate::records::{ActiveVersion, DatasetRecord, Discussion};

/// The Dataset object ([docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)),
/// plus `id`, the active version (`version`, `sha256`, `published_at`) and `access`.
#[derive(Debug, Serialize)]
struct DatasetResponse<'a> {
    slug: &'a Slug,
    id: Uuid,
    name: &'a str,
    description: Option<&'a str>,
    license: &'a str,
    source: &'a str,
    category: &'a str,
    tags: &'a [String],
    size: u64,
    row_count: u64,
    column_count: u64,
    schema: &'a RawValue,
    keyless: bool,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    keyless_until: Option<DateTime<Utc>>,
    insights: &'a str,
    discussions: &'a [Discussion],
    #[serde(serialize_with = "crate::time::rfc3339")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "crate::time::rfc3339")]
    updated_at: DateTime<Utc>,
    /// Downloads over the last 30 days (counted once a day).
    downloads: u64,
    /// The active version's number: pass it as `?version=` to the data endpoint to pin it.
    version: u64,
    sha256: &'a str,
    #[serde(serialize_with = "crate::time::rfc3339")]
    published_at: DateTime<Utc>,
    access: Access,
}

/// The dataset `raw` names (slug or UUID), in one read, and its active version taken out of
/// it: 404 when there is no such dataset or it has no active version, 410 once unpublished. The metadata and its
/// Croissant document both answer from it.
pub(super) async fn read_published(
    reader: &impl DatasetReader,
    raw: &str,
) -> Result<(DatasetRecord, ActiveVersion), ApiError> {
    let dataset = DatasetRef::parse(raw)?;
    let mut record = reader
        .get_dataset(&dataset)
        .await?
        .ok_or_else(|| ApiError::DatasetNotFound(dataset.to_string()))?;
    if record.unpublished_at.is_some() {
        return Err(ApiError::Unpublished(format!("'{}'", record.slug)));
    }
    let active = record
        .active
        .take()
        .ok_or_else(|| ApiError::NoActiveVersion(format!("'{}'", record.slug)))?;
    Ok((record, active))
}

/// `GET /api/v1/datasets/{slug}` (slug or UUID)
pub async fn metadata(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Response<Body> {
    if let Some(response) = preflight(req) {
        return response;
    }
    finish(metadata_inner(req, reader, now).await, req)
}

async fn metadata_inner(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Metadata)?.unwrap_or_default();
    let (record, active) = read_published(reader, &raw).await?;
    let active = &active;
    tracing::info!(slug = %record.slug, version = active.version, "read dataset metadata");
    Ok(cacheable(
        req,
        &DatasetResponse {
            slug: &record.slug,
            id: record.id,
            name: &record.meta.card.name,
            description: record.meta.card.description.as_deref(),
            license: &record.meta.card.license,
            source: &record.meta.source,
            category: &record.meta.card.category,
            tags: &record.meta.card.tags,
            size: active.size,
            row_count: active.row_count,
            column_count: active.columns.len() as u64,
            schema: &record.schema,
            keyless: is_keyless(record.keyless_until, now),
            keyless_until: record.keyless_until,
            insights: &record.meta.insights,
            discussions: &record.meta.discussions,
            created_at: record.created_at,
            updated_at: record.updated_at,
            downloads: record.downloads,
            version: active.version,
            sha256: &active.sha256,
            published_at: active.published_at,
            access: Access::at(
                record.keyless_until,
                record.meta.card.access_level,
                &record.meta.access,
                now,
            ),
        },
        Some(changed_at(record.updated_at, record.keyless_until, now)),
        seconds_to_next_window_end([record.keyless_until], now),
    ))
}
