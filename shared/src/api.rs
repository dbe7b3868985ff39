//! The three endpoints: request parsing, the rules of the spec, and responses.
//!
//! Handlers never fail: every outcome, including storage failures, is a [`Response`]. An `Err`
//! from a lambda_http handler would become a 502 at API Gateway.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};

use crate::domain::{ApiKey, DatasetRef, Format, PageRequest, Scope};
use crate::error::{json_response, ApiError};
use crate::model::{is_keyless, DatasetResponse, DownloadDescriptor, PageResponse};
use crate::ports::{CatalogPager, DatasetReader, DownloadReader, UrlSigner};

/// The routes, matched on the raw path so that API Gateway (REST and HTTP APIs, with or without
/// a stage in the path) and Lambda function URLs all work: the path must contain
/// `/api/v1/datasets` followed by nothing, `/{slug}` or `/{slug}/data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    List,
    Metadata(String),
    Data(String),
}

impl Route {
    pub fn parse(path: &str) -> Option<Self> {
        let path = path.strip_suffix('/').unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        let start = segments
            .windows(3)
            .position(|w| w == ["api", "v1", "datasets"])?;
        match &segments[start + 3..] {
            [] => Some(Self::List),
            [slug] if !slug.is_empty() => Some(Self::Metadata((*slug).to_owned())),
            [slug, "data"] if !slug.is_empty() => Some(Self::Data((*slug).to_owned())),
            _ => None,
        }
    }
}

/// Which endpoint a function serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    List,
    Metadata,
    Data,
}

/// The request id for logs: Lambda's; else API Gateway's from the event; else `local` (dev/run).
pub fn request_id(req: &Request) -> String {
    use lambda_http::request::RequestContext;
    if let Some(ctx) = req.lambda_context_ref() {
        return ctx.request_id.clone();
    }
    let from_gateway = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.request_id.clone(),
        Some(RequestContext::ApiGatewayV1(ctx)) => ctx.request_id.clone(),
        _ => None,
    };
    from_gateway.unwrap_or_else(|| "local".to_owned())
}

/// Checks method and route; returns the path parameter (if any) of the expected endpoint.
fn accept(req: &Request, endpoint: Endpoint) -> Result<Option<String>, ApiError> {
    let path = req.uri().path();
    let route = Route::parse(path).ok_or_else(|| ApiError::RouteNotFound(path.to_owned()))?;
    if req.method() != Method::GET {
        return Err(ApiError::MethodNotAllowed(req.method().to_string()));
    }
    match (endpoint, route) {
        (Endpoint::List, Route::List) => Ok(None),
        (Endpoint::Metadata, Route::Metadata(slug)) | (Endpoint::Data, Route::Data(slug)) => {
            Ok(Some(slug))
        }
        _ => Err(ApiError::RouteNotFound(path.to_owned())),
    }
}

/// A query parameter that may appear at most once.
fn single_param<'a>(req: &'a Request, name: &str) -> Result<Option<&'a str>, ApiError> {
    let Some(params) = req.query_string_parameters_ref() else {
        return Ok(None);
    };
    match params.all(name).as_deref() {
        None | Some([]) => Ok(None),
        Some([one]) => Ok(Some(one)),
        Some(_) => Err(ApiError::BadRequest(format!(
            "query parameter '{name}' given more than once"
        ))),
    }
}

fn finish(result: Result<Response<Body>, ApiError>, req: &Request) -> Response<Body> {
    result.unwrap_or_else(|e| e.into_response(&request_id(req)))
}

/// `GET /api/v1/datasets`
pub async fn list(req: &Request, pager: &impl CatalogPager, now: DateTime<Utc>) -> Response<Body> {
    finish(list_inner(req, pager, now).await, req)
}

async fn list_inner(
    req: &Request,
    pager: &impl CatalogPager,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    accept(req, Endpoint::List)?;
    let page = PageRequest::parse(single_param(req, "page")?, single_param(req, "page_size")?)?;
    let mut result = pager.page(page.offset(), page.page_size).await?;
    for item in &mut result.items {
        item.keyless = is_keyless(item.keyless_until, now);
    }
    tracing::info!(
        page = page.page,
        page_size = page.page_size,
        total = result.total,
        returned = result.items.len(),
        "listed datasets"
    );
    Ok(json_response(
        StatusCode::OK,
        &PageResponse {
            items: &result.items,
            total: result.total,
            page: page.page,
            page_size: page.page_size,
        },
    ))
}

/// `GET /api/v1/datasets/{slug}` (slug or UUID)
pub async fn metadata(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Response<Body> {
    finish(metadata_inner(req, reader, now).await, req)
}

async fn metadata_inner(
    req: &Request,
    reader: &impl DatasetReader,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Metadata)?.unwrap_or_default();
    let dataset = DatasetRef::parse(&raw)?;
    let record = reader
        .get_dataset(&dataset)
        .await?
        .ok_or_else(|| ApiError::DatasetNotFound(dataset.to_string()))?;
    let active = record
        .active
        .as_ref()
        .ok_or_else(|| ApiError::NoActiveVersion(format!("'{}'", record.slug)))?;
    tracing::info!(slug = %record.slug, version = active.version, "read dataset metadata");
    Ok(json_response(
        StatusCode::OK,
        &DatasetResponse {
            slug: &record.slug,
            id: record.id,
            name: &record.name,
            description: record.description.as_deref(),
            license: &record.license,
            source: &record.source,
            category: &record.category,
            tags: &record.tags,
            size: active.size,
            row_count: active.row_count,
            column_count: active.columns.len() as u64,
            schema: &record.schema,
            keyless: is_keyless(record.keyless_until, now),
            keyless_until: record.keyless_until,
            insights: &record.insights,
            discussions: &record.discussions,
            created_at: record.created_at,
            updated_at: record.updated_at,
        },
    ))
}

/// The key a request presents, from `x-api-key` or `Authorization: Bearer`. Query strings are
/// never read. A header that is present but cannot hold a key we issued is an invalid key.
pub fn presented_key(headers: &HeaderMap) -> Result<Option<ApiKey>, ApiError> {
    let mut from_header = None;
    let mut values = headers.get_all("x-api-key").iter();
    if let Some(value) = values.next() {
        if values.next().is_some() {
            return Err(ApiError::BadRequest(
                "the x-api-key header was sent more than once".to_owned(),
            ));
        }
        from_header = Some(parse_key(value)?);
    }
    let mut from_bearer = None;
    let mut values = headers.get_all(header::AUTHORIZATION).iter();
    if let Some(value) = values.next() {
        if values.next().is_some() {
            return Err(ApiError::BadRequest(
                "the Authorization header was sent more than once".to_owned(),
            ));
        }
        let text = value.to_str().map_err(|_| ApiError::InvalidKey)?;
        let (scheme, token) = text.trim().split_once(' ').ok_or(ApiError::InvalidKey)?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::InvalidKey);
        }
        from_bearer = Some(ApiKey::parse(token.trim()).ok_or(ApiError::InvalidKey)?);
    }
    match (from_header, from_bearer) {
        (Some(a), Some(b)) if a != b => Err(ApiError::BadRequest(
            "x-api-key and Authorization carry different keys; send one".to_owned(),
        )),
        (a, b) => Ok(a.or(b)),
    }
}

fn parse_key(value: &HeaderValue) -> Result<ApiKey, ApiError> {
    value
        .to_str()
        .ok()
        .and_then(|v| ApiKey::parse(v.trim()))
        .ok_or(ApiError::InvalidKey)
}

/// `GET /api/v1/datasets/{slug}/data`
pub async fn data(
    req: &Request,
    reader: &impl DownloadReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    let mut response = finish(data_inner(req, reader, signer, now).await, req);
    // A signed URL, or an answer that depends on a key, must never be cached by anyone.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

async fn data_inner(
    req: &Request,
    reader: &impl DownloadReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Data)?.unwrap_or_default();
    let dataset = DatasetRef::parse(&raw)?;
    let format = Format::parse(single_param(req, "format")?)?;
    let key = presented_key(req.headers())?;
    let hash = key.as_ref().map(ApiKey::hash);

    let (target, key_record) = reader.get_download(&dataset, hash.as_ref()).await?;

    // A presented key is always verified, whatever the dataset's window says.
    let key_id = match (&key, key_record) {
        (None, _) => None,
        (Some(_), Some(record)) if record.is_usable_at(now) => {
            if !record.has_scope(&Scope::Read) {
                return Err(ApiError::InsufficientScope);
            }
            Some(record.id)
        }
        (Some(_), _) => return Err(ApiError::InvalidKey),
    };
    let target = target.ok_or_else(|| ApiError::DatasetNotFound(dataset.to_string()))?;
    let active = target
        .active
        .ok_or_else(|| ApiError::NoActiveVersion(format!("'{}'", target.slug)))?;
    let keyless = is_keyless(target.keyless_until, now);
    if key_id.is_none() && !keyless {
        return Err(ApiError::MissingKey);
    }

    let signed = signer.sign(&active.s3_key, now).await?;
    tracing::info!(
        slug = %target.slug,
        version = active.version,
        key_id = key_id.as_deref().unwrap_or("-"),
        keyless,
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
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_match_under_any_prefix_and_trailing_slash() {
        assert_eq!(Route::parse("/api/v1/datasets"), Some(Route::List));
        assert_eq!(Route::parse("/prod/api/v1/datasets/"), Some(Route::List));
        assert_eq!(
            Route::parse("/api/v1/datasets/city-bikes"),
            Some(Route::Metadata("city-bikes".into()))
        );
        assert_eq!(
            Route::parse("/api/v1/datasets/data"),
            Some(Route::Metadata("data".into()))
        );
        assert_eq!(
            Route::parse("/api/v1/datasets/datasets"),
            Some(Route::Metadata("datasets".into()))
        );
        assert_eq!(
            Route::parse("/stage/api/v1/datasets/x/data"),
            Some(Route::Data("x".into()))
        );
    }

    #[test]
    fn unknown_routes_do_not_match() {
        for path in [
            "/",
            "/api/v1",
            "/api/v2/datasets",
            "/api/v1/datasets/x/y",
            "/api/v1/datasets//data",
            "/api/v1/datasets/x/data/more",
        ] {
            assert_eq!(Route::parse(path), None, "{path}");
        }
    }
}
