//! The data bucket's CORS rule, locally: a proxy in front of the S3 server.
//!
//! The dataset page's SQL console reads a presigned URL from the browser (DuckDB-WASM, with range
//! requests), across origins: the deployed data bucket carries a CORS rule for the site's origin
//! alone (template.yaml `DataBucketCors`). s3s-fs answers no CORS at all (a preflight gets its
//! 403 SignatureDoesNotMatch, and no answer carries `Access-Control-*`), so `dev/run` and the
//! console's browser test put this proxy in front of it. It answers preflights as S3 answers
//! them under [`rule`], adds the rule's headers to answers to the site's origin, and forwards
//! every other request unchanged, the `Host` header as received: SigV4 signs the host, so the
//! URLs are signed for the proxy's address (`AWS_ENDPOINT_URL_S3` names it) and s3s-fs checks
//! them against that same host.

use std::sync::{Arc, RwLock};

use http_body_util::{Either, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{self, HeaderMap, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

/// The data bucket's CORS rule, as template.yaml's `DataBucketCors` states it (the console's
/// test checks that the two agree): the site's origin may GET and HEAD with `Range`, and read
/// the headers a range read needs; and PUT (a part of an upload from the site, to its
/// presigned URL) and read the answer's `ETag`.
pub mod rule {
    pub const ALLOWED_METHODS: &[&str] = &["GET", "HEAD", "PUT"];
    pub const ALLOWED_HEADERS: &[&str] = &["Range", "Content-Type"];
    pub const EXPOSE_HEADERS: &[&str] = &["Content-Range", "Content-Length", "ETag"];
    /// Seconds a browser may keep a preflight's answer.
    pub const MAX_AGE_SECONDS: u32 = 600;
}

/// The answer's body: the S3 server's, streamed, or the proxy's own.
pub type ProxyBody = Either<Incoming, Full<Bytes>>;

/// Headers that belong to one connection, not to the request: not forwarded either way.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "upgrade",
];

pub struct S3Cors {
    /// The S3 server, e.g. `http://127.0.0.1:8015`.
    upstream: String,
    /// The site's origin, e.g. `http://127.0.0.1:3000`; none: no origin is allowed.
    origin: RwLock<Option<String>>,
    client: Client<HttpConnector, Incoming>,
}

impl S3Cors {
    pub fn new(upstream: &str, origin: Option<&str>) -> Arc<Self> {
        Arc::new(Self {
            upstream: upstream.trim_end_matches('/').to_owned(),
            origin: RwLock::new(origin.map(|o| o.trim_end_matches('/').to_owned())),
            client: Client::builder(TokioExecutor::new()).build_http(),
        })
    }

    /// Allows `origin` (the only one) from now on: a test knows its site's origin only once
    /// the site listens, after the URLs' address is chosen.
    pub fn allow_origin(&self, origin: &str) {
        let mut allowed = self.origin.write().unwrap_or_else(|e| e.into_inner());
        *allowed = Some(origin.trim_end_matches('/').to_owned());
    }

    /// The request's `Origin` when it is the allowed one.
    fn allowed_origin(&self, headers: &HeaderMap) -> Option<HeaderValue> {
        let sent = headers.get(header::ORIGIN)?;
        let allowed = self.origin.read().unwrap_or_else(|e| e.into_inner());
        (allowed.as_deref() == Some(sent.to_str().ok()?)).then(|| sent.clone())
    }

    /// S3's answer to a preflight (`OPTIONS`) under [`rule`]: 200 with the rule's headers when
    /// the origin, the method and every requested header are allowed, else 403.
    pub fn preflight(&self, headers: &HeaderMap) -> Response<Full<Bytes>> {
        let method = headers
            .get(header::ACCESS_CONTROL_REQUEST_METHOD)
            .and_then(|v| v.to_str().ok());
        let requested: Vec<String> = headers
            .get_all(header::ACCESS_CONTROL_REQUEST_HEADERS)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|h| h.trim().to_ascii_lowercase())
            .filter(|h| !h.is_empty())
            .collect();
        let allowed = match (self.allowed_origin(headers), method) {
            (Some(origin), Some(method))
                if rule::ALLOWED_METHODS.contains(&method)
                    && requested.iter().all(|h| {
                        rule::ALLOWED_HEADERS
                            .iter()
                            .any(|a| a.eq_ignore_ascii_case(h))
                    }) =>
            {
                Some(origin)
            }
            _ => None,
        };
        let Some(origin) = allowed else {
            let mut refused = Response::new(Full::new(Bytes::from_static(
                b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>AccessForbidden</Code>\
                  <Message>CORSResponse: This CORS request is not allowed.</Message></Error>",
            )));
            *refused.status_mut() = StatusCode::FORBIDDEN;
            refused.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/xml"),
            );
            return refused;
        };
        let mut answer = Response::new(Full::new(Bytes::new()));
        let out = answer.headers_mut();
        add_rule_headers(out, origin);
        if !requested.is_empty() {
            if let Ok(v) = HeaderValue::try_from(requested.join(", ")) {
                out.insert(header::ACCESS_CONTROL_ALLOW_HEADERS, v);
            }
        }
        out.insert(
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from(rule::MAX_AGE_SECONDS),
        );
        out.insert(
            header::VARY,
            HeaderValue::from_static(
                "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
            ),
        );
        answer
    }

    /// One request: a preflight answered here, anything else forwarded to the S3 server as it
    /// came, its answer returned with the rule's headers when the site's origin asked.
    pub async fn answer(&self, req: Request<Incoming>) -> Response<ProxyBody> {
        if req.method() == Method::OPTIONS {
            return self.preflight(req.headers()).map(Either::Right);
        }
        let origin = (matches!(*req.method(), Method::GET | Method::HEAD | Method::PUT))
            .then(|| self.allowed_origin(req.headers()))
            .flatten();
        let (mut parts, body) = req.into_parts();
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        parts.uri = match format!("{}{path}", self.upstream).parse() {
            Ok(uri) => uri,
            Err(e) => return bad_gateway(&e.to_string()),
        };
        for name in HOP_BY_HOP {
            parts.headers.remove(*name);
        }
        let mut answer = match self.client.request(Request::from_parts(parts, body)).await {
            Ok(answer) => answer.map(Either::Left),
            Err(e) => return bad_gateway(&e.to_string()),
        };
        let headers = answer.headers_mut();
        for name in HOP_BY_HOP {
            headers.remove(*name);
        }
        headers.append(header::VARY, HeaderValue::from_static("Origin"));
        if let Some(origin) = origin {
            add_rule_headers(headers, origin);
        }
        answer
    }

    /// Serves on `listener` until the task is dropped.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) -> std::io::Result<()> {
        loop {
            let (stream, _) = listener.accept().await?;
            let proxy = self.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let proxy = proxy.clone();
                    async move { Ok::<_, std::convert::Infallible>(proxy.answer(req).await) }
                });
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(error = %e, "connection closed with an error");
                }
            });
        }
    }
}

/// What S3 adds to an answer to an allowed origin.
fn add_rule_headers(headers: &mut HeaderMap, origin: HeaderValue) {
    headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    let list = |items: &[&str]| HeaderValue::try_from(items.join(", ")).ok();
    if let Some(v) = list(rule::ALLOWED_METHODS) {
        headers.insert(header::ACCESS_CONTROL_ALLOW_METHODS, v);
    }
    if let Some(v) = list(rule::EXPOSE_HEADERS) {
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, v);
    }
}

fn bad_gateway(reason: &str) -> Response<ProxyBody> {
    let mut answer = Response::new(Either::Right(Full::new(Bytes::from(format!(
        "the S3 server did not answer: {reason}"
    )))));
    *answer.status_mut() = StatusCode::BAD_GATEWAY;
    answer.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    answer
}

/// The origin (`scheme://host[:port]`) of a URL such as `AWS_ENDPOINT_URL_S3`, for a
/// Content-Security-Policy's `connect-src`.
pub fn origin_of(url: &str) -> Option<String> {
    let uri: hyper::Uri = url.parse().ok()?;
    Some(format!("{}://{}", uri.scheme_str()?, uri.authority()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderName;

    fn preflight(proxy: &S3Cors, pairs: &[(&str, &str)]) -> Response<Full<Bytes>> {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        proxy.preflight(&headers)
    }

    #[tokio::test]
    async fn preflights_are_answered_for_the_site_s_origin_alone() {
        let proxy = S3Cors::new("http://127.0.0.1:9", Some("http://127.0.0.1:3000"));
        let site = ("origin", "http://127.0.0.1:3000");
        let ok = preflight(
            &proxy,
            &[
                site,
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "range"),
            ],
        );
        assert_eq!(ok.status(), StatusCode::OK);
        let h = ok.headers();
        assert_eq!(h["access-control-allow-origin"], "http://127.0.0.1:3000");
        assert_eq!(h["access-control-allow-methods"], "GET, HEAD, PUT");
        assert_eq!(h["access-control-allow-headers"], "range");
        assert_eq!(
            h["access-control-expose-headers"],
            "Content-Range, Content-Length, ETag"
        );
        assert_eq!(h["access-control-max-age"], "600");
        let head = preflight(&proxy, &[site, ("access-control-request-method", "HEAD")]);
        assert_eq!(head.status(), StatusCode::OK);
        // An upload's part: PUT, with a Content-Type.
        let put = preflight(
            &proxy,
            &[
                site,
                ("access-control-request-method", "PUT"),
                ("access-control-request-headers", "content-type"),
            ],
        );
        assert_eq!(put.status(), StatusCode::OK);

        // Another origin, another method, another header, no origin: S3's 403.
        for refused in [
            vec![
                ("origin", "https://elsewhere.example"),
                ("access-control-request-method", "GET"),
            ],
            vec![site, ("access-control-request-method", "DELETE")],
            vec![
                site,
                ("access-control-request-method", "GET"),
                ("access-control-request-headers", "range, x-amz-date"),
            ],
            vec![("access-control-request-method", "GET")],
        ] {
            let answer = preflight(&proxy, &refused);
            assert_eq!(answer.status(), StatusCode::FORBIDDEN, "{refused:?}");
            assert!(answer
                .headers()
                .get("access-control-allow-origin")
                .is_none());
        }

        // No origin allowed until one is named.
        let later = S3Cors::new("http://127.0.0.1:9", None);
        let asked = [site, ("access-control-request-method", "GET")];
        assert_eq!(preflight(&later, &asked).status(), StatusCode::FORBIDDEN);
        later.allow_origin("http://127.0.0.1:3000/");
        assert_eq!(preflight(&later, &asked).status(), StatusCode::OK);
    }

    #[test]
    fn an_endpoint_s_origin_is_its_scheme_host_and_port() {
        assert_eq!(
            origin_of("http://127.0.0.1:8014").as_deref(),
            Some("http://127.0.0.1:8014")
        );
        assert_eq!(
            origin_of("https://s3.eu-west-1.amazonaws.com/").as_deref(),
            Some("https://s3.eu-west-1.amazonaws.com")
        );
        assert_eq!(origin_of("not a url"), None);
    }
}
