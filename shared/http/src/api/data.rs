//! `GET /api/v1/datasets/{slug}/data`: a presigned URL to the active version's Parquet file, for
//! a read key or inside a keyless window; for a version of many files (or given the listing
//! parameters), a page of its files, each with its own URL ([`super::file_list`]).

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::file_list::FileQuery;
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
use catalog::ports::{DownloadReader, GrantReader, KeyUsage, ManifestReader, SignedUrl, UrlSigner};

/// What the data route reads: the dataset and key (the gate), grants, key use, and a version's
/// manifest chunks (the listing).
pub trait DataReader: DownloadReader + KeyUsage + GrantReader + ManifestReader {}

impl<T: DownloadReader + KeyUsage + GrantReader + ManifestReader> DataReader for T {}

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
    reader: &impl DataReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    // A signed URL, or an answer that depends on a key, must never be cached by anyone.
    shell(req, Audience::Keyed, data_inner(req, reader, signer, now)).await
}

async fn data_inner(
    req: &Request,
    reader: &impl DataReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Data)?.unwrap_or_default();
    let format = Format::parse(single_param(req, "format")?)?;
    let key = presented_key(req.headers())?;
    let (dataset, pin) = requested(req, &raw)?;
    let query = FileQuery::parse(req)?;
    // A page token names the version it lists: later pages are of that version or none.
    let pin = match (pin, query.as_ref().and_then(|q| q.token)) {
        (Some(p), Some(t)) if p.get() != t.version => {
            return Err(ApiError::BadRequest(format!(
                "page_token lists version {}, version asks for {}",
                t.version,
                p.get()
            )))
        }
        (None, Some(t)) => VersionPin::parse(Some(&t.version.to_string()))?,
        (pin, _) => pin,
    };
    if format == Format::Original && query.is_some() {
        return Err(ApiError::BadRequest(
            "format=original lists the files kept as they came: it takes no split, partition \
             or page parameter"
                .into(),
        ));
    }
    if req.method() == Method::HEAD {
        // The GET answer's status and headers, without a URL: nothing is signed that would
        // never be delivered, and nothing is counted as issued.
        let admitted = admit(&dataset, pin, key, reader, now).await?;
        if format == Format::Original {
            super::data_original::kept(&admitted)?;
        }
        return Ok(json_response(StatusCode::OK, &()));
    }
    let client = source_address(req);
    let admitted = admit(&dataset, pin, key, reader, now).await?;
    if format == Format::Original {
        return super::data_original::originals(&admitted, client, signer, now).await;
    }
    if query.is_some() || admitted.active.files.is_some() {
        let query = query.unwrap_or_else(FileQuery::first_page);
        return super::data_files::listing(
            &admitted,
            &query,
            format.as_str(),
            client,
            reader,
            signer,
            now,
        )
        .await;
    }
    let signed = sign(&admitted, UrlRoute::Data, client, signer, now).await?;
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
    reader: &impl DataReader,
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
    reader: &impl DataReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Download)?.unwrap_or_default();
    let key = presented_key_or_basic(req.headers())?;
    let (dataset, pin) = requested(req, &raw)?;
    // A HEAD gets the redirect's `Location` too: its URL is delivered, and counted.
    let client = source_address(req);
    let admitted = admit(&dataset, pin, key, reader, now).await?;
    if let Some(files) = &admitted.active.files {
        // One redirect cannot hand out many files: the data endpoint lists them.
        return Err(ApiError::BadRequest(format!(
            "version {} of '{}' is {} files, which one redirect cannot hand out: list them, each \
             with its URL, at /datasets/{}/data",
            admitted.active.version, admitted.slug, files.files, admitted.slug
        )));
    }
    let signed = sign(&admitted, UrlRoute::Download, client, signer, now).await?;
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

/// A presigned URL for the one-file version the gate admitted: what the data and download
/// routes share. `address`: where the request came from (named in the download event, as a
/// digest, only without a key: [`catalog::audit::client_label`]).
async fn sign(
    admitted: &Admitted,
    route: UrlRoute,
    address: Option<&str>,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<SignedUrl, ApiError> {
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
    Ok(signed)
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
