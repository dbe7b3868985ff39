//! `GET /api/v1/datasets/{slug}/data?format=original`: the files a version converted from CSV,
//! TSV or JSON Lines kept as they came (`catalog-admin publish --keep-original`), each with a
//! presigned URL, its size, SHA-256 and media type. The same gate as the Parquet: whoever may
//! read the version's data may read its originals, and nobody else.

use chrono::{DateTime, Utc};
use lambda_http::http::StatusCode;
use lambda_http::{Body, Response};
use serde::Serialize;

use super::gate::Admitted;
use super::http::json_response;
use crate::error::ApiError;
use catalog::audit::What;
use catalog::input::Slug;
use catalog::metrics::{self, Metric, UrlRoute};
use catalog::ports::UrlSigner;

/// The answer ([docs/api.md, Data](../../../docs/api.md#the-original-files-formatoriginal)).
#[derive(Debug, Serialize)]
struct Originals<'a> {
    slug: &'a Slug,
    format: &'static str,
    version: u64,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    expires_at: DateTime<Utc>,
    originals: Vec<OriginalFile<'a>>,
}

#[derive(Debug, Serialize)]
struct OriginalFile<'a> {
    /// The input's path as published.
    name: &'a str,
    media_type: &'a str,
    size_bytes: u64,
    sha256: &'a str,
    url: String,
}

/// The originals the admitted version kept: 404 `not_found` when none.
pub(super) fn kept(admitted: &Admitted) -> Result<&[catalog::ingested::Original], ApiError> {
    let kept = admitted
        .active
        .ingested
        .as_deref()
        .map(|i| i.originals.as_slice())
        .unwrap_or_default();
    if kept.is_empty() {
        return Err(ApiError::OriginalNotFound {
            slug: admitted.slug.clone(),
            version: admitted.active.version,
        });
    }
    Ok(kept)
}

/// The originals of the version the gate admitted, each signed (and counted, and logged, as
/// the data route's URL is); 404 when it kept none.
pub(super) async fn originals(
    admitted: &Admitted,
    address: Option<&str>,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let active = &admitted.active;
    let kept = kept(admitted)?;
    let mut files = Vec::with_capacity(kept.len());
    let mut expires_at = None;
    for original in kept {
        let name = original.name.rsplit('/').next().unwrap_or(&original.name);
        let signed = signer.sign(&original.key, name, now).await?;
        admitted
            .event(What::Url {
                route: UrlRoute::Data.audit(),
                client: catalog::audit::client_label(address, admitted.key_id.is_none()),
                expires_at: signed.expires_at,
            })
            .log();
        metrics::record(Metric::UrlIssued(UrlRoute::Data));
        expires_at = Some(expires_at.map_or(signed.expires_at, |e: DateTime<Utc>| {
            e.min(signed.expires_at)
        }));
        files.push(OriginalFile {
            name: &original.name,
            media_type: &original.media_type,
            size_bytes: original.size,
            sha256: &original.sha256,
            url: signed.url,
        });
    }
    Ok(json_response(
        StatusCode::OK,
        &Originals {
            slug: &admitted.slug,
            format: "original",
            version: active.version,
            expires_at: expires_at.unwrap_or(now),
            originals: files,
        },
    ))
}
