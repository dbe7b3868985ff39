//! `GET /api/v1/datasets/{slug}/croissant`: the dataset as Croissant JSON-LD
//! ([`crate::linked::croissant`]), public like its metadata, from the same read: an `approval`
//! dataset's field statistics hold no value drawn from the rows unless the request sends a key
//! [`catalog::access::authorize`] admits (see the metadata's `read_shown`).

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};

use super::http::{cacheable_as, freshness, shell, Audience};
use super::metadata::read_shown;
use super::request::{accept, links, Endpoint};
use crate::error::ApiError;
use catalog::ports::MetadataReader;

/// The media type of the answer.
pub const CONTENT_TYPE: &str = "application/ld+json";

/// `GET /api/v1/datasets/{slug}/croissant` (slug or UUID)
pub async fn croissant(
    req: &Request,
    reader: &impl MetadataReader,
    now: DateTime<Utc>,
) -> Response<Body> {
    shell(req, Audience::Public, croissant_inner(req, reader, now)).await
}

async fn croissant_inner(
    req: &Request,
    reader: &impl MetadataReader,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Croissant)?.unwrap_or_default();
    let shown = read_shown(req, reader, &raw, now).await?;
    let (record, active) = (&shown.record, &shown.active);
    let document = crate::linked::croissant::document(record, active, &links(req));
    tracing::info!(
        slug = %record.slug,
        version = active.version,
        values_withheld = shown.withheld,
        "read dataset as Croissant"
    );
    let (last_modified, max_age) = freshness([record.freshness()], now);
    Ok(shown.finish(cacheable_as(
        req,
        document.to_string(),
        CONTENT_TYPE,
        last_modified,
        max_age,
    )))
}
