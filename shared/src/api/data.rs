//! `GET /api/v1/datasets/{slug}/data`: a presigned URL to the active version's Parquet file, for
//! a read key or inside a keyless window.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::http::{finish, json_response, preflight};
use super::request::{accept, presented_key, single_param, Endpoint};
use crate::access::{authorize, verify_key, Allowed, Guarded};
use crate::error::ApiError;
use crate::input::{DatasetRef, Format, Slug, VersionPin};
use crate::keys::ApiKey;
use crate::ports::{DownloadReader, GrantReader, KeyUsage, UrlSigner};

/// The download descriptor ([docs/api.md, Data](../../../docs/api.md#data-get-datasetsslugdata)),
/// plus the version the URL serves: its number, the file's SHA-256 and size, and when
/// it was published.
#[derive(Debug, Serialize)]
struct DownloadDescriptor<'a> {
    slug: &'a Slug,
    format: &'static str,
    url: &'a str,
    #[serde(serialize_with = "crate::time::rfc3339")]
    expires_at: DateTime<Utc>,
    row_count: u64,
    columns: &'a [String],
    version: u64,
    sha256: &'a str,
    size_bytes: u64,
    #[serde(serialize_with = "crate::time::rfc3339")]
    published_at: DateTime<Utc>,
}

/// `GET /api/v1/datasets/{slug}/data`
pub async fn data(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    if let Some(response) = preflight(req) {
        return response;
    }
    let mut response = finish(data_inner(req, reader, signer, now).await, req);
    // A signed URL, or an answer that depends on a key, must never be cached by anyone.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn data_inner(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Data)?.unwrap_or_default();
    let dataset = DatasetRef::parse(&raw)?;
    let format = Format::parse(single_param(req, "format")?)?;
    let pin = VersionPin::parse(single_param(req, "version")?)?;
    let key = presented_key(req.headers())?;
    let hash = key.as_ref().map(ApiKey::hash);

    let (target, key_record) = reader.get_download(&dataset, hash.as_ref()).await?;

    // A presented key is always verified, whatever the dataset's window says.
    let key_record = match key {
        Some(_) => Some(verify_key(key_record, now)?),
        None => None,
    };
    let target = target.ok_or_else(|| ApiError::DatasetNotFound(dataset.to_string()))?;
    let active = target
        .active
        .as_ref()
        .ok_or_else(|| ApiError::NoActiveVersion(format!("'{}'", target.slug)))?;
    let guarded = Guarded {
        slug: &target.slug,
        id: target.id,
        level: target.level,
        keyless_until: target.keyless_until,
    };
    let allowed = authorize(&guarded, key_record.as_ref(), reader, now).await?;
    let key_id = key_record.as_ref().map(|k| k.id.as_str());
    // Only the active version is ever served: a pinned client whose version was replaced gets
    // a 404 naming the active one, never the newer file under the old number.
    if let Some(requested) = pin.map(VersionPin::get) {
        if requested != active.version {
            return Err(ApiError::VersionNotActive {
                slug: target.slug.to_string(),
                requested,
                active: active.version,
            });
        }
    }

    let signed = signer.sign(&active.s3_key, now).await?;
    let record_use = key_record
        .as_ref()
        .is_some_and(|k| k.use_worth_recording(now));
    if let (true, Some(hash)) = (record_use, &hash) {
        // One more round trip, at most once an hour per key; the download does not depend on it.
        if let Err(e) = reader.record_use(hash, now).await {
            tracing::warn!(key_id = key_id.unwrap_or("-"), error = %e, "could not record the key's use");
        }
    }
    tracing::info!(
        slug = %target.slug,
        version = active.version,
        key_id = key_id.unwrap_or("-"),
        keyless = allowed == Allowed::Keyless,
        allowed = allowed.as_str(),
        expires_at = %signed.expires_at,
        "issued download URL"
    );
    Ok(json_response(
        StatusCode::OK,
        &DownloadDescriptor {
            slug: &target.slug,
            format: format.as_str(),
            url: &signed.url,
            expires_at: signed.expires_at,
            row_count: active.row_count,
            columns: &active.columns,
            version: active.version,
            sha256: &active.sha256,
            size_bytes: active.size,
            published_at: active.published_at,
        },
    ))
}
