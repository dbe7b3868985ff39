//! `GET /api/v1/datasets/{slug}/croissant`: the dataset as Croissant JSON-LD
//! ([`crate::linked::croissant`]), public like its metadata, from the same one read.

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};

use super::http::{cacheable_as, changed_at, finish, preflight, seconds_to_next_window_end};
use super::metadata::read_published;
use super::request::{accept, links, Endpoint};
use crate::error::ApiError;
use crate::ports::DatasetReader;

/// The media type of the answer.
pub const CONTENT_TYPE: &str = "application/ld+json";

/// `GET /api/v1/datasets/{slug}/croissant` (slug or UUID)
pub async fn croissant(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Response<Body> {
    if let Some(response) = preflight(req) {
        return response;
    }
    finish(croissant_inner(req, reader, now).await, req)
}

async fn croissant_inner(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Croissant)?.unwrap_or_default();
    let (record, active) = read_published(reader, &raw).await?;
    let document = crate::linked::croissant::document(&record, &active, &links(req));
    tracing::info!(slug = %record.slug, version = active.version, "read dataset as Croissant");
    Ok(cacheable_as(
        req,
        document.to_string(),
        CONTENT_TYPE,
        Some(changed_at(record.updated_at, record.keyless_until, now)),
        seconds_to_next_window_end([record.keyless_until], now),
    ))
}
