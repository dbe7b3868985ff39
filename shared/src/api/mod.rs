//! The three endpoints: request parsing, the rules of the spec, and responses.
//!
//! Handlers never fail: every outcome, including storage failures, is a [`Response`]. An `Err`
//! from a lambda_http handler would become a 502 at API Gateway.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};

use crate::domain::{ApiKey, DatasetRef, Format, PageRequest, Scope, VersionPin};
use crate::error::{json_response, ApiError};
use crate::model::{is_keyless, Access, DatasetResponse, DownloadDescriptor, PageResponse};

use crate::ports::{CatalogPager, DatasetReader, DownloadReader, KeyUsage, UrlSigner};
use crate::query::{ListParams, ListQuery};

pub mod account;
mod http;
use http::{cacheable, changed_at, preflight, seconds_to_next_window_end, with_cors};
pub use http::{cors, entity_tag, PUBLIC_MAX_AGE_SECONDS};

/// The routes. A path is exactly `/api/v1/datasets`, `/api/v1/datasets/{slug}` or
/// `/api/v1/datasets/{slug}/data`: nothing before (a REST API's stage is not part of the path
/// the client sent; see [`request_path`]), no trailing slash. Anything else is a JSON 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    List,
    Metadata(String),
    Data(String),
}

impl Route {
    pub fn parse(path: &str) -> Option<Self> {
        let rest = path.strip_prefix(Self::BASE)?;
        if rest.is_empty() {
            return Some(Self::List);
        }
        let segments: Vec<&str> = rest.strip_prefix('/')?.split('/').collect();
        match segments.as_slice() {
            [slug] if !slug.is_empty() => Some(Self::Metadata((*slug).to_owned())),
            [slug, "data"] if !slug.is_empty() => Some(Self::Data((*slug).to_owned())),
            _ => None,
        }
    }

    /// The list route; the others are below it.
    pub const BASE: &'static str = "/api/v1/datasets";
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
    let lambda = req.lambda_context_ref().map(|c| c.request_id.as_str());
    let gateway = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(ctx)) => ctx.request_id.as_deref(),
        Some(RequestContext::ApiGatewayV1(ctx)) => ctx.request_id.as_deref(),
        _ => None,
    };
    pick_request_id(lambda, gateway)
}

/// The first request id that is set: Lambda's invocation id, then API Gateway's, else `local`.
pub fn pick_request_id(lambda: Option<&str>, gateway: Option<&str>) -> String {
    [lambda, gateway]
        .into_iter()
        .flatten()
        .find(|id| !id.is_empty())
        .unwrap_or("local")
        .to_owned()
}

/// The path the client sent. lambda_http puts a REST API's stage in front of the URI's path;
/// the raw path it keeps is the one without (and the only one, for requests made elsewhere).
pub fn request_path(req: &Request) -> &str {
    match req.raw_http_path() {
        "" => req.uri().path(),
        raw => raw,
    }
}

pub use crate::error::ALLOWED_METHODS;

/// Checks method and route; returns the path parameter (if any) of the expected endpoint.
fn accept(req: &Request, endpoint: Endpoint) -> Result<Option<String>, ApiError> {
    let path = request_path(req);
    let not_found = || ApiError::RouteNotFound(crate::domain::echo(path));
    let route = Route::parse(path).ok_or_else(not_found)?;
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return Err(ApiError::MethodNotAllowed {
            method: crate::domain::echo(req.method().as_str()),
            allowed: crate::error::Allowed::Catalog,
        });
    }
    match (endpoint, route) {
        (Endpoint::List, Route::List) => Ok(None),
        (Endpoint::Metadata, Route::Metadata(slug)) | (Endpoint::Data, Route::Data(slug)) => {
            Ok(Some(slug))
        }
        _ => Err(not_found()),
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

/// Every value of a repeatable query parameter, in order.
fn all_params(req: &Request, name: &str) -> Vec<String> {
    req.query_string_parameters_ref()
        .and_then(|params| params.all(name))
        .map(|values| values.into_iter().map(str::to_owned).collect())
        .unwrap_or_default()
}

fn finish(result: Result<Response<Body>, ApiError>, req: &Request) -> Response<Body> {
    let mut response = match result {
        Ok(response) => with_cors(response),
        Err(e) => error_response(e, &request_id(req)),
    };
    // HEAD: the GET answer's status and headers, without its body (RFC 9110 9.3.2).
    if req.method() == Method::HEAD {
        *response.body_mut() = Body::Empty;
    }
    response
}

/// An error as every endpoint answers it: the JSON body, never cached, readable cross-origin.
pub fn error_response(error: ApiError, request_id: &str) -> Response<Body> {
    let mut response = error.into_response(request_id);
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    with_cors(response)
}

/// Answers a request as the deployed API routes it (the local API, the tests and the fuzz
/// targets; each function calls its own handler): the metadata and data routes to their
/// handlers, everything else to the list handler, as the `$default` route does.
pub async fn dispatch<C>(
    req: &Request,
    catalog: &C,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body>
where
    C: CatalogPager + DatasetReader + DownloadReader + KeyUsage,
{
    match Route::parse(request_path(req)) {
        Some(Route::Metadata(_)) => metadata(req, catalog, now).await,
        Some(Route::Data(_)) => data(req, catalog, signer, now).await,
        _ => list(req, catalog, now).await,
    }
}

/// `GET /api/v1/datasets`
pub async fn list(req: &Request, pager: &impl CatalogPager, now: DateTime<Utc>) -> Response<Body> {
    if let Some(response) = preflight(req) {
        return response;
    }
    finish(list_inner(req, pager, now).await, req)
}

async fn list_inner(
    req: &Request,
    pager: &impl CatalogPager,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    accept(req, Endpoint::List)?;
    let page = PageRequest::parse(single_param(req, "page")?, single_param(req, "page_size")?)?;
    let tags = all_params(req, "tag");
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    let query = ListQuery::parse(ListParams {
        category: single_param(req, "category")?,
        tags: &tags,
        license: single_param(req, "license")?,
        q: single_param(req, "q")?,
        sort: single_param(req, "sort")?,
    })?;
    let mut result = pager.page(&query, page.offset(), page.page_size()).await?;
    for item in &mut result.items {
        item.keyless = is_keyless(item.keyless_until, now);
    }
    tracing::info!(
        page = page.page(),
        page_size = page.page_size(),
        facets = query.facets.len(),
        words = query.words.len(),
        sort = ?query.sort,
        total = result.total,
        returned = result.items.len(),
        "listed datasets"
    );
    let last_modified = result
        .items
        .iter()
        .map(|i| changed_at(i.updated_at, i.keyless_until, now))
        .max();
    let max_age = seconds_to_next_window_end(result.items.iter().map(|i| i.keyless_until), now);
    Ok(cacheable(
        req,
        &PageResponse {
            items: &result.items,
            total: result.total,
            page: page.page(),
            page_size: page.page_size(),
        },
        last_modified,
        max_age,
    ))
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
            version: active.version,
            sha256: &active.sha256,
            published_at: active.published_at,
            access: Access::at(record.keyless_until, now),
        },
        Some(changed_at(record.updated_at, record.keyless_until, now)),
        seconds_to_next_window_end([record.keyless_until], now),
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
    reader: &(impl DownloadReader + KeyUsage),
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
    reader: &(impl DownloadReader + KeyUsage),
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
    let (key_id, record_use) = match (&key, key_record) {
        (None, _) => (None, false),
        (Some(_), Some(record)) if record.is_usable_at(now) => {
            if !record.has_scope(&Scope::Read) {
                return Err(ApiError::InsufficientScope);
            }
            let record_use = record.use_worth_recording(now);
            (Some(record.id), record_use)
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
    if let (true, Some(hash)) = (record_use, &hash) {
        // A second round trip, at most once an hour per key; the download does not depend on it.
        if let Err(e) = reader.record_use(hash, now).await {
            tracing::warn!(key_id = key_id.as_deref().unwrap_or("-"), error = %e, "could not record the key's use");
        }
    }
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
            version: active.version,
            sha256: &active.sha256,
            size_bytes: active.size,
            published_at: active.published_at,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_exact_paths() {
        assert_eq!(Route::parse("/api/v1/datasets"), Some(Route::List));
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
            Route::parse("/api/v1/datasets/x/data"),
            Some(Route::Data("x".into()))
        );
    }

    #[test]
    fn nothing_may_precede_the_base_and_no_route_takes_a_trailing_slash() {
        for path in [
            "/prod/api/v1/datasets",
            "/anything/api/v1/datasets",
            "/anything/api/v1/datasets/x/data",
            "/api/v1/datasets/",
            "/api/v1/datasets/x/",
            "/api/v1/datasets/x/data/",
            "api/v1/datasets",
            "/api/v1/datasetsx",
        ] {
            assert_eq!(Route::parse(path), None, "{path}");
        }
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
