//! The Lambda entry point the HTTP functions share: lambda_http's
//! adapter behind a guard.
//!
//! lambda_http 1.3 turns an event into an `http::Request` with two `unwrap`s: it parses
//! `{x-forwarded-proto}://{host}{path}` with `Url::parse`, then the result plus the raw query
//! string as an `http::Uri`. An event whose host, stage, path or query cannot form a URI (a
//! `rawPath` starting with a space, a `host` header with a space in it) panics there, and with
//! `panic = "abort"` the process dies: a 502 to the caller and a cold start for the next one.
//! API Gateway and function URLs do not send such events, but [`Guard`] does not rely on it:
//! it rebuilds the URI the same way first and answers a JSON 400 when it would not parse.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::{ready, Either, MapOk, Ready, TryFutureExt};
use lambda_http::aws_lambda_events::apigw::{ApiGatewayProxyResponse, ApiGatewayV2httpResponse};
use lambda_http::http::{header, HeaderMap, Uri};
use lambda_http::request::LambdaRequest;
use lambda_http::{Adapter, Body, Error, LambdaEvent, Request, Response, Service};
use serde::Serialize;

use crate::error::ApiError;

/// Runs `handler` on the Lambda runtime, behind [`Guard`].
pub async fn run<S>(handler: S) -> Result<(), Error>
where
    S: Service<Request, Response = Response<Body>, Error = Infallible>,
    S::Future: Send,
{
    lambda_http::lambda_runtime::run(Guard::new(Adapter::from(handler))).await
}

/// What [`Guard`] answers: the inner service's response, or its own 400. Both serialize to
/// the response document the event's source expects.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Answer<R> {
    Passed(R),
    RejectedV1(ApiGatewayProxyResponse),
    RejectedV2(ApiGatewayV2httpResponse),
}

/// A `Service<LambdaEvent<LambdaRequest>>` that answers 400 to events lambda_http could not
/// convert without panicking, and passes every other event to `inner` (lambda_http's
/// `Adapter`, whose response type is crate-private, hence the generic `R`).
#[derive(Clone)]
pub struct Guard<S> {
    inner: S,
}

impl<S> Guard<S> {
    pub fn new(inner: S) -> Self {
        Self { inner }
    }
}

impl<S> Service<LambdaEvent<LambdaRequest>> for Guard<S>
where
    S: Service<LambdaEvent<LambdaRequest>>,
{
    type Response = Answer<S::Response>;
    type Error = S::Error;
    #[allow(clippy::type_complexity)]
    type Future = Either<
        MapOk<S::Future, fn(S::Response) -> Answer<S::Response>>,
        Ready<Result<Answer<S::Response>, S::Error>>,
    >;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, event: LambdaEvent<LambdaRequest>) -> Self::Future {
        match malformed(&event.payload) {
            None => Either::Left(self.inner.call(event).map_ok(Answer::Passed as fn(_) -> _)),
            Some(reason) => {
                let error = ApiError::BadRequest(format!("malformed request: {reason}"));
                let response = crate::api::error_response(error, &request_id(&event));
                Either::Right(ready(Ok(rejection(&event.payload, response))))
            }
        }
    }
}

/// Lambda's request id; else the gateway's from the event; else `local`.
fn request_id(event: &LambdaEvent<LambdaRequest>) -> String {
    let gateway = match &event.payload {
        LambdaRequest::ApiGatewayV1(e) => e.request_context.request_id.as_deref(),
        LambdaRequest::ApiGatewayV2(e) => e.request_context.request_id.as_deref(),
        _ => None,
    };
    crate::api::pick_request_id(Some(&event.context.request_id), gateway)
}

/// Why lambda_http could not turn this event into a request, or `None` when it can.
pub fn malformed(event: &LambdaRequest) -> Option<&'static str> {
    match event {
        LambdaRequest::ApiGatewayV1(e) => {
            let ctx = &e.request_context;
            // The query is re-encoded with form_urlencoded, whose output is always URI-safe.
            let path = e.path.as_deref().unwrap_or_default();
            check(
                &e.headers,
                ctx.domain_name.as_deref(),
                &ctx.stage,
                path,
                None,
            )
        }
        LambdaRequest::ApiGatewayV2(e) => {
            let ctx = &e.request_context;
            let path = e.raw_path.as_deref().unwrap_or_default();
            let query = e.raw_query_string.as_deref();
            check(
                &e.headers,
                ctx.domain_name.as_deref(),
                &ctx.stage,
                path,
                query,
            )
        }
        _ => Some("unsupported event source"),
    }
}

/// Both paths lambda_http may use (with the stage prefixed, or without it when
/// `AWS_LAMBDA_HTTP_IGNORE_STAGE_IN_PATH` is set) must form a URI.
fn check(
    headers: &HeaderMap,
    domain_name: Option<&str>,
    stage: &Option<String>,
    path: &str,
    query: Option<&str>,
) -> Option<&'static str> {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .or(domain_name);
    let scheme = headers
        .get("x-forwarded-proto")
        .and_then(|s| s.to_str().ok())
        .unwrap_or("https");
    let staged = match stage.as_deref() {
        None | Some("$default") => None,
        Some(stage) if path.starts_with(&format!("/{stage}/")) => None,
        Some(stage) => Some(format!("/{stage}{path}")),
    };
    std::iter::once(path)
        .chain(staged.as_deref())
        .find_map(|p| uri_error(scheme, host, p, query))
}

/// The URI lambda_http 1.3 builds (`build_request_uri`), or why it would fail.
fn uri_error(
    scheme: &str,
    host: Option<&str>,
    path: &str,
    query: Option<&str>,
) -> Option<&'static str> {
    let mut uri = match host {
        None => match url::Url::parse(&format!("http://localhost{path}")) {
            Ok(url) => url.path().to_owned(),
            Err(_) => return Some("the path is not a URL path"),
        },
        Some(host) => match url::Url::parse(&format!("{scheme}://{host}{path}")) {
            Ok(url) => url.to_string(),
            Err(_) => return Some("the host and path do not form a URL"),
        },
    };
    if let Some(query) = query.filter(|q| !q.is_empty()) {
        uri.push('?');
        uri.push_str(query);
    }
    match Uri::try_from(uri) {
        Ok(_) => None,
        Err(_) => Some("the path and query do not form a URI"),
    }
}

/// The response in the shape the event's source expects (lambda_http's own conversion is
/// crate-private). The error body is always UTF-8 JSON, so it goes as text.
fn rejection<R>(event: &LambdaRequest, response: Response<Body>) -> Answer<R> {
    let (parts, body) = response.into_parts();
    // HEAD: the status and headers of the answer, without its body, like every other answer.
    let head = match event {
        LambdaRequest::ApiGatewayV1(e) => e.http_method == lambda_http::http::Method::HEAD,
        LambdaRequest::ApiGatewayV2(e) => {
            e.request_context.http.method == lambda_http::http::Method::HEAD
        }
        _ => false,
    };
    let body = match body {
        _ if head => None,
        Body::Empty => None,
        Body::Text(text) => Some(Body::Text(text)),
        Body::Binary(bytes) => Some(Body::Text(String::from_utf8_lossy(&bytes).into_owned())),
        _ => None,
    };
    let status = i64::from(parts.status.as_u16());
    match event {
        LambdaRequest::ApiGatewayV1(_) => {
            let mut r = ApiGatewayProxyResponse::default();
            r.status_code = status;
            r.headers = parts.headers;
            r.body = body;
            Answer::RejectedV1(r)
        }
        _ => {
            let mut r = ApiGatewayV2httpResponse::default();
            r.status_code = status;
            r.headers = parts.headers;
            r.body = body;
            Answer::RejectedV2(r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(raw_path: &str, host: &str, query: &str) -> LambdaRequest {
        let event = crate::testing::V2Event::raw("GET", raw_path, query)
            .host(host)
            .header("host", host);
        serde_json::from_value(event.json()).unwrap()
    }

    #[test]
    fn well_formed_events_pass() {
        let event = v2(
            "/api/v1/datasets",
            "abc.execute-api.us-east-1.amazonaws.com",
            "page=2",
        );
        assert_eq!(malformed(&event), None);
        let request: Request = event.into();
        assert_eq!(request.uri().path(), "/api/v1/datasets");
    }

    #[test]
    fn events_lambda_http_would_panic_on_are_malformed() {
        let host = "abc.execute-api.us-east-1.amazonaws.com";
        assert!(malformed(&v2(" /api/v1/datasets", host, "")).is_some());
        assert!(malformed(&v2("/api/v1/datasets", "a b", "")).is_some());
        assert!(malformed(&v2("/api/v1/datasets", host, "a b")).is_some());
    }
}
