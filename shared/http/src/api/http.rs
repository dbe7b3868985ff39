//! How every answer is built: JSON bodies, errors (the JSON error body with its code, challenge
//! and headers), CORS headers and preflights, HTTP caching (a strong `ETag`, `Last-Modified`,
//! `Cache-Control`, and 304 on `If-None-Match`), and HEAD.

use std::error::Error as StdError;

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderMap, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::request::{request_id, request_path, Route};
use crate::error::ToHttp;
use crate::error::{AccountError, ApiError, RETRY_AFTER_SECONDS};
use catalog::metrics::{self, Metric};
use catalog::policy::Freshness;

/// A JSON response with the given status. Serializing this crate's response types cannot fail
/// (no maps with non-string keys, no non-finite floats from `serde_json::Value`); should it ever,
/// the client gets a plain 500 body rather than a panic.
pub fn json_response<T: Serialize + ?Sized>(status: StatusCode, body: &T) -> Response<Body> {
    let (status, text) = match serde_json::to_string(body) {
        Ok(text) => (status, text),
        Err(e) => {
            tracing::error!(error = %e, "response serialization failed");
            (
                StatusCode::INTERNAL_SERVER_ERROR,
                r#"{"error":"internal error","code":"internal"}"#.to_owned(),
            )
        }
    };
    let mut response = Response::new(Body::Text(text));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Who an endpoint answers, and so how the one shell every endpoint plugs into ([`shell`])
/// finishes its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Audience {
    /// The public catalog routes: preflights answered here, CORS headers, HEAD without a body,
    /// errors in the catalog's body; a success carries the caching headers its endpoint set.
    Public,
    /// As [`Audience::Public`], but never stored by any cache: a signed URL, or an answer that
    /// depends on a key.
    Keyed,
    /// The account routes, behind the HTTP API's JWT authorizer (which answers preflights and
    /// adds CORS headers itself): never stored.
    Account,
    /// Delta Sharing: errors in the protocol's body, HEAD without a body, never stored.
    Sharing,
}

/// The shell around every endpoint: `inner` is the endpoint's own work (it is not run for a
/// preflight); what it answers, or the error it ends in, goes out as `audience` asks.
pub(super) async fn shell(
    req: &Request,
    audience: Audience,
    inner: impl std::future::Future<Output = Result<Response<Body>, ApiError>>,
) -> Response<Body> {
    match audience {
        Audience::Public | Audience::Keyed => {
            if let Some(response) = preflight(req) {
                return response;
            }
            let response = finish(inner.await, req);
            match audience {
                Audience::Keyed => no_store(response),
                _ => response,
            }
        }
        Audience::Account => no_store(match inner.await {
            Ok(response) => response,
            Err(e) => error_answer(e, &request_id(req)),
        }),
        Audience::Sharing => {
            let mut response = match inner.await {
                Ok(response) => response,
                Err(e) => shaped_error_answer(e, &request_id(req), ErrorShape::Sharing),
            };
            if req.method() == Method::HEAD {
                *response.body_mut() = Body::Empty;
            }
            no_store(response)
        }
    }
}

/// A catalog endpoint's answer as it goes out: CORS headers on success, the error answer
/// otherwise, and no body for HEAD.
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

/// An error as every catalog endpoint answers it: the JSON body, never cached, readable
/// cross-origin.
pub fn error_response(error: ApiError, request_id: &str) -> Response<Body> {
    with_cors(no_store(error_answer(error, request_id)))
}

/// An answer no one may cache: a signed URL, anything that depends on a key or a token, errors.
pub(super) fn no_store(mut response: Response<Body>) -> Response<Body> {
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The error body: the spec's `error` (a message for people), plus a stable machine-readable
/// `code` and the request id to quote when reporting a problem.
#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    code: &'static str,
    request_id: &'a str,
}

/// The Delta Sharing protocol's error body: its `errorCode` and `message`, plus this catalog's
/// own `code` and the request id, as in [`ErrorBody`].
#[derive(Serialize)]
struct SharingErrorBody<'a> {
    #[serde(rename = "errorCode")]
    error_code: &'static str,
    message: &'a str,
    code: &'static str,
    request_id: &'a str,
}

/// Which body an error is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorShape {
    /// The catalog's API: `{"error", "code", "request_id"}`.
    Catalog,
    /// Delta Sharing: `{"errorCode", "message", "code", "request_id"}`.
    Sharing,
}

/// The one place an error becomes an HTTP response, with the status, code and challenge
/// [`ApiError`] maps it to. Server-side failures are logged here with their cause chain and the
/// request id; the client sees only the generic message.
pub(super) fn error_answer(error: ApiError, request_id: &str) -> Response<Body> {
    shaped_error_answer(error, request_id, ErrorShape::Catalog)
}

/// [`error_answer`], in the body `shape` asks for.
pub(super) fn shaped_error_answer(
    error: ApiError,
    request_id: &str,
    shape: ErrorShape,
) -> Response<Body> {
    let status = error.status();
    if status.is_server_error() {
        tracing::error!(
            request_id,
            status = status.as_u16(),
            error = %error,
            cause = %cause_chain(&error),
            "request failed"
        );
        metrics::record(Metric::Failed(error.code()));
    } else {
        tracing::info!(request_id, status = status.as_u16(), error = %error, "request rejected");
        metrics::record(Metric::Refused(error.code()));
    }
    let message = error.to_string();
    let mut response = match shape {
        ErrorShape::Catalog => json_response(
            status,
            &ErrorBody {
                error: &message,
                code: error.code(),
                request_id,
            },
        ),
        ErrorShape::Sharing => json_response(
            status,
            &SharingErrorBody {
                error_code: crate::sharing::error_code(&error),
                message: &message,
                code: error.code(),
                request_id,
            },
        ),
    };
    let headers = response.headers_mut();
    if let Some(challenge) = error
        .challenge()
        .and_then(|c| HeaderValue::try_from(c).ok())
    {
        headers.insert(header::WWW_AUTHENTICATE, challenge);
    }
    match error {
        ApiError::RateLimited(_) | ApiError::Unavailable(_) => {
            headers.insert(
                header::RETRY_AFTER,
                HeaderValue::from_static(RETRY_AFTER_SECONDS),
            );
        }
        ApiError::MethodNotAllowed { allowed, .. } => {
            headers.insert(header::ALLOW, HeaderValue::from_static(allowed.header()));
        }
        ApiError::Account(AccountError::DailyKeyLimit { retry_after }) => {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(retry_after));
        }
        _ => {}
    }
    response
}

fn cause_chain(e: &dyn StdError) -> String {
    let mut out = String::new();
    let mut cur = e.source();
    while let Some(c) = cur {
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

/// How long shared caches and clients may reuse a list or metadata response, in seconds. It is
/// shortened so that no cached response outlives a keyless window it reports as open.
pub const PUBLIC_MAX_AGE_SECONDS: i64 = 60;

/// Cross-origin access: any origin may call every endpoint from a browser, sending a key in
/// either header and `If-None-Match`, and read the headers below. No cookies are involved, so
/// the wildcard origin is safe. template.yaml's `CorsConfiguration` holds the same values
/// (tests/tests/api/over_http.rs checks they agree); API Gateway applies them in front of the
/// functions, and the functions apply them themselves for function URLs and the local stack.
pub mod cors {
    pub const ALLOW_ORIGIN: &str = "*";
    pub const ALLOW_METHODS: &[&str] = &["GET", "OPTIONS"];
    pub const ALLOW_HEADERS: &[&str] = &["authorization", "x-api-key", "if-none-match"];
    pub const EXPOSE_HEADERS: &[&str] =
        &["etag", "last-modified", "retry-after", "www-authenticate"];
    /// Seconds a browser may cache a preflight answer.
    pub const MAX_AGE_SECONDS: u32 = 600;
}

pub(super) fn with_cors(mut response: Response<Body>) -> Response<Body> {
    let headers = response.headers_mut();
    headers.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static(cors::ALLOW_ORIGIN),
    );
    if let Ok(v) = HeaderValue::try_from(cors::EXPOSE_HEADERS.join(", ")) {
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, v);
    }
    response
}

/// The answer to a CORS preflight (`OPTIONS` on any of the API's routes): 204, no body. Behind
/// the HTTP API, API Gateway answers preflights itself (its `CorsConfiguration`); function URLs
/// and the local API bring them here.
fn preflight(req: &Request) -> Option<Response<Body>> {
    if req.method() != Method::OPTIONS || Route::parse(request_path(req)).is_none() {
        return None;
    }
    Some(preflight_answer())
}

/// The preflight answer itself, as the HTTP API's `CorsConfiguration` gives it on every path,
/// before any authorizer (the local API answers the account routes' preflights with it too).
pub fn preflight_answer() -> Response<Body> {
    let mut response = Response::new(Body::Empty);
    *response.status_mut() = StatusCode::NO_CONTENT;
    let headers = response.headers_mut();
    let values = [
        (
            header::ACCESS_CONTROL_ALLOW_METHODS,
            cors::ALLOW_METHODS.join(", "),
        ),
        (
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            cors::ALLOW_HEADERS.join(", "),
        ),
        (
            header::ACCESS_CONTROL_MAX_AGE,
            cors::MAX_AGE_SECONDS.to_string(),
        ),
    ];
    for (name, value) in values {
        if let Ok(v) = HeaderValue::try_from(value) {
            headers.insert(name, v);
        }
    }
    with_cors(response)
}

/// A public, cacheable 200: a strong `ETag` (a digest of the exact body), `Last-Modified` when
/// known, `Cache-Control: public, max-age=N`, and a 304 without a body when `If-None-Match`
/// names the current ETag.
pub(super) fn cacheable<T: serde::Serialize>(
    req: &Request,
    body: &T,
    last_modified: Option<DateTime<Utc>>,
    max_age: i64,
) -> Response<Body> {
    cacheable_response(
        req,
        json_response(StatusCode::OK, body),
        last_modified,
        max_age,
    )
}

/// [`cacheable`] for a body already written, in `content_type` (the linked-data documents).
pub(super) fn cacheable_as(
    req: &Request,
    body: String,
    content_type: &'static str,
    last_modified: Option<DateTime<Utc>>,
    max_age: i64,
) -> Response<Body> {
    let mut response = Response::new(Body::Text(body));
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    cacheable_response(req, response, last_modified, max_age)
}

fn cacheable_response(
    req: &Request,
    mut response: Response<Body>,
    last_modified: Option<DateTime<Utc>>,
    max_age: i64,
) -> Response<Body> {
    if response.status() != StatusCode::OK {
        return response;
    }
    let etag = match response.body() {
        Body::Text(text) => entity_tag(text.as_bytes()),
        Body::Binary(bytes) => entity_tag(bytes),
        _ => entity_tag(b""),
    };
    if if_none_match(req.headers(), &etag) {
        response = Response::new(Body::Empty);
        *response.status_mut() = StatusCode::NOT_MODIFIED;
    }
    let headers = response.headers_mut();
    let max_age = max_age.clamp(0, PUBLIC_MAX_AGE_SECONDS);
    let values = [
        (header::ETAG, Some(etag)),
        (
            header::LAST_MODIFIED,
            last_modified.map(|t| t.format("%a, %d %b %Y %H:%M:%S GMT").to_string()),
        ),
        (
            header::CACHE_CONTROL,
            Some(format!("public, max-age={max_age}")),
        ),
    ];
    for (name, value) in values {
        if let Some(value) = value.and_then(|v| HeaderValue::try_from(v).ok()) {
            headers.insert(name, value);
        }
    }
    response
}

/// A strong entity tag: the first 128 bits of the body's SHA-256, quoted.
pub fn entity_tag(body: &[u8]) -> String {
    let digest = Sha256::digest(body);
    format!("\"{}\"", hex::encode(&digest[..16]))
}

/// Whether `If-None-Match` matches `etag` (RFC 9110 13.1.2: `*`, or any listed tag under weak
/// comparison). A header that cannot be read matches nothing.
pub(super) fn if_none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

/// The `Last-Modified` (the latest change) and `max-age` (up to the earliest next turn, at most
/// [`PUBLIC_MAX_AGE_SECONDS`]) of an answer showing these datasets: one for the metadata and
/// Croissant answers, a page of them for the list endpoint and the DCAT catalog.
pub(super) fn freshness(
    datasets: impl IntoIterator<Item = Freshness>,
    now: DateTime<Utc>,
) -> (Option<DateTime<Utc>>, i64) {
    let mut last_modified = None;
    let mut max_age = PUBLIC_MAX_AGE_SECONDS;
    for dataset in datasets {
        last_modified = last_modified.max(Some(dataset.changed_at(now)));
        if let Some(at) = dataset.next_turn(now) {
            max_age = max_age.min((at - now).num_seconds());
        }
    }
    (last_modified, max_age)
}
