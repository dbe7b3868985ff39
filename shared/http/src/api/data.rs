//! `GET /api/v1/datasets/{slug}/data`: a presigned URL to the active version's Parquet file, for
//! a read key or inside a keyless window.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::gate::{admit, Admitted};
use super::http::{json_response, shell, Audience};
use super::request::{
    accept, presented_key, presented_key_or_basic, single_param, source_address, Endpoint,
};
use crate::error::ApiError;
use crate::routes::download_name;
use catalog::audit::What;
use catalog::input::{DatasetRef, Format, Slug, VersionPin};
use catalog::metrics::{self, Metric, UrlRoute};
use catalog::ports::{DownloadReader, GrantReader, KeyUsage, SignedUrl, UrlSigner};

/// The download descriptor ([docs/api.md, Data](../../../docs/api.md#data-get-datasetsslugdata)),
/// plus the version the URL serves: its number, the file's SHA-256 and size, and when
/// it was published.
#[derive(Debug, Serialize)]
struct DownloadDescriptor<'a> {
    slug: &'a Slug,
    format: &'static str,
    url: &'a str,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    expires_at: DateTime<Utc>,
    row_count: u64,
    columns: &'a [String],
    version: u64,
    sha256: &'a str,
    size_bytes: u64,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    published_at: DateTime<Utc>,
}

/// `GET /api/v1/datasets/{slug}/data`
pub async fn data(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    // A signed URL, or an answer that depends on a key, must never be cached by anyone.
    shell(req, Audience::Keyed, data_inner(req, reader, signer, now)).await
}

async fn data_inner(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Data)?.unwrap_or_default();
    let format = Format::parse(single_param(req, "format")?)?;
    let key = presented_key(req.headers())?;
    let (dataset, pin) = requested(req, &raw)?;
    if req.method() == Method::HEAD {
        // The GET answer's status and headers, without a URL: nothing is signed that would
        // never be delivered, and nothing is counted as issued.
        admit(&dataset, pin, key, reader, now).await?;
        return Ok(json_response(StatusCode::OK, &()));
    }
    let client = source_address(req);
    let (admitted, signed) = sign(
        &dataset,
        pin,
        UrlRoute::Data,
        (key, client),
        reader,
        signer,
        now,
    )
    .await?;
    Ok(json_response(
        StatusCode::OK,
        &descriptor(&admitted, &signed, format.as_str()),
    ))
}

/// `GET /api/v1/datasets/{slug}/download`: the data endpoint's answer as a redirect, `302
/// Found` to the presigned URL (the descriptor in the body), for clients that fetch a URL and
/// follow redirects (Croissant's `contentUrl`). Besides the data endpoint's two headers, the
/// key may come as HTTP Basic's password.
pub async fn download(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    shell(
        req,
        Audience::Keyed,
        download_inner(req, reader, signer, now),
    )
    .await
}

async fn download_inner(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Download)?.unwrap_or_default();
    let key = presented_key_or_basic(req.headers())?;
    let (dataset, pin) = requested(req, &raw)?;
    // A HEAD gets the redirect's `Location` too: its URL is delivered, and counted.
    let client = source_address(req);
    let (admitted, signed) = sign(
        &dataset,
        pin,
        UrlRoute::Download,
        (key, client),
        reader,
        signer,
        now,
    )
    .await?;
    let mut response = json_response(
        StatusCode::FOUND,
        &descriptor(&admitted, &signed, "parquet"),
    );
    let location =
        HeaderValue::try_from(signed.url.as_str()).map_err(|e| ApiError::Internal(Box::new(e)))?;
    response.headers_mut().insert(header::LOCATION, location);
    Ok(response)
}

/// The dataset (slug or UUID) and the version pin (`?version=`) a data or download request
/// names.
fn requested(req: &Request, raw: &str) -> Result<(DatasetRef, Option<VersionPin>), ApiError> {
    Ok((
        DatasetRef::parse(raw)?,
        VersionPin::parse(single_param(req, "version")?)?,
    ))
}

/// The gate, then a presigned URL for the version it admits: what the data and download routes
/// share. `caller`: the key sent, and the address the request came from (named in the download
/// event, as a digest, only without a key: [`catalog::audit::client_label`]).
async fn sign(
    dataset: &DatasetRef,
    pin: Option<VersionPin>,
    route: UrlRoute,
    caller: (Option<catalog::keys::ApiKey>, Option<&str>),
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<(Admitted, SignedUrl), ApiError> {
    let (key, address) = caller;
    let admitted = admit(dataset, pin, key, reader, now).await?;
    let active = &admitted.active;
    let signed = signer
        .sign(
            &active.s3_key,
            &download_name(&admitted.slug, active.version),
            now,
        )
        .await?;
    admitted
        .event(What::Url {
            route: route.audit(),
            client: catalog::audit::client_label(address, admitted.key_id.is_none()),
            expires_at: signed.expires_at,
        })
        .log();
    metrics::record(Metric::UrlIssued(route));
    Ok((admitted, signed))
}

fn descriptor<'a>(
    admitted: &'a Admitted,
    signed: &'a SignedUrl,
    format: &'static str,
) -> DownloadDescriptor<'a> {
    let active = &admitted.active;
    DownloadDescriptor {
        slug: &admitted.slug,
        format,
        url: &signed.url,
        expires_at: signed.expires_at,
        row_count: active.row_count,
        columns: &active.columns,
        version: active.version,
        sha256: &active.sha256,
        size_bytes: active.size,
        published_at: active.published_at,
    }
}
