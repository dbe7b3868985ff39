//! What a request carries, read in one place: its route (and the function that serves it), its
//! request id, its query parameters, and the API key it presents.

use lambda_http::http::{header, HeaderMap, HeaderValue, Method};
use lambda_http::{Request, RequestExt};

use crate::error::{Allowed, ApiError, Refusal};
use catalog::input::echo;
use catalog::keys::ApiKey;

/// The routes. A path is exactly `/api/v1/datasets`, `/api/v1/datasets/{slug}`,
/// `/api/v1/datasets/{slug}/data` or `/api/v1/datasets/{slug}/rows`: nothing before (a REST API's stage is not part of the path
/// the client sent; see [`request_path`]), no trailing slash. Anything else is a JSON 404.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    List,
    Metadata(String),
    Data(String),
    Rows(String),
    /// `/catalog`: the public catalog as DCAT (the list function).
    Catalog,
    /// `/datasets/{slug}/croissant`: the metadata as Croissant JSON-LD (the metadata function).
    Croissant(String),
    /// `/datasets/{slug}/download`: a redirect to the presigned URL (the data function).
    Download(String),
}

impl Route {
    /// The catalog route `path` takes, from the one table of routes ([`crate::routes`]).
    pub fn parse(path: &str) -> Option<Self> {
        let matched = crate::routes::find(path)?;
        let slug = || matched.params.first().map(|s| (*s).to_owned());
        Some(match matched.route.endpoint {
            Endpoint::List => Self::List,
            Endpoint::Catalog => Self::Catalog,
            Endpoint::Metadata => Self::Metadata(slug()?),
            Endpoint::Data => Self::Data(slug()?),
            Endpoint::Rows => Self::Rows(slug()?),
            Endpoint::Croissant => Self::Croissant(slug()?),
            Endpoint::Download => Self::Download(slug()?),
            Endpoint::Sharing | Endpoint::Account | Endpoint::Editor => return None,
        })
    }

    /// The list route; the others are below it.
    pub const BASE: &'static str = "/api/v1/datasets";

    /// The DCAT catalog's route.
    pub const CATALOG: &'static str = "/api/v1/catalog";

    /// The start of every API path: `{base_url}` without its origin.
    pub const API_BASE: &'static str = crate::routes::API_BASE;
}

pub use crate::routes::Endpoint;

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

/// Checks method and route; returns the path parameter (if any) of the expected endpoint.
pub(super) fn accept(req: &Request, endpoint: Endpoint) -> Result<Option<String>, ApiError> {
    let path = request_path(req);
    let not_found = || ApiError::RouteNotFound(echo(path));
    let route = Route::parse(path).ok_or_else(not_found)?;
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return Err(ApiError::MethodNotAllowed {
            method: echo(req.method().as_str()),
            allowed: Allowed::Catalog,
        });
    }
    match (endpoint, route) {
        (Endpoint::List, Route::List) | (Endpoint::Catalog, Route::Catalog) => Ok(None),
        (Endpoint::Metadata, Route::Metadata(slug))
        | (Endpoint::Data, Route::Data(slug))
        | (Endpoint::Rows, Route::Rows(slug))
        | (Endpoint::Croissant, Route::Croissant(slug))
        | (Endpoint::Download, Route::Download(slug)) => Ok(Some(slug)),
        _ => Err(not_found()),
    }
}

/// A query parameter that may appear at most once.
pub(super) fn single_param<'a>(req: &'a Request, name: &str) -> Result<Option<&'a str>, ApiError> {
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

/// Whether the client takes a gzip-compressed answer: `Accept-Encoding` names `gzip` (or `*`)
/// with a weight above zero.
pub(super) fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(lambda_http::http::header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|coding| {
            let mut parts = coding.split(';');
            let name = parts.next().unwrap_or("").trim();
            let refused = parts.any(|p| {
                let p = p.trim();
                p.strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !refused
        })
}

/// Every value of a repeatable query parameter, in order.
pub(super) fn all_params(req: &Request, name: &str) -> Vec<String> {
    req.query_string_parameters_ref()
        .and_then(|params| params.all(name))
        .map(|values| values.into_iter().map(str::to_owned).collect())
        .unwrap_or_default()
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
        let text = value
            .to_str()
            .map_err(|_| ApiError::Refused(Refusal::InvalidKey))?;
        let (scheme, token) = text
            .trim()
            .split_once(' ')
            .ok_or(ApiError::Refused(Refusal::InvalidKey))?;
        if !scheme.eq_ignore_ascii_case("bearer") {
            return Err(ApiError::Refused(Refusal::InvalidKey));
        }
        from_bearer =
            Some(ApiKey::parse(token.trim()).ok_or(ApiError::Refused(Refusal::InvalidKey))?);
    }
    match (from_header, from_bearer) {
        (Some(a), Some(b)) if a != b => Err(ApiError::BadRequest(
            "x-api-key and Authorization carry different keys; send one".to_owned(),
        )),
        (a, b) => Ok(a.or(b)),
    }
}

/// The key a request to the download route presents: as [`presented_key`] reads it, or as the
/// password of HTTP Basic authentication (`Authorization: Basic base64(user:key)`, any user),
/// the one way a Croissant client (`mlcroissant`) sends a secret.
pub fn presented_key_or_basic(headers: &HeaderMap) -> Result<Option<ApiKey>, ApiError> {
    let basic = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("basic"));
    let Some((_, encoded)) = basic else {
        return presented_key(headers);
    };
    if headers.get_all(header::AUTHORIZATION).iter().count() > 1 {
        return Err(ApiError::BadRequest(
            "the Authorization header was sent more than once".to_owned(),
        ));
    }
    let decoded = aws_smithy_types::base64::decode(encoded.trim())
        .ok()
        .and_then(|bytes| String::from_utf8(bytes).ok())
        .ok_or(ApiError::Refused(Refusal::InvalidKey))?;
    let (_, password) = decoded
        .split_once(':')
        .ok_or(ApiError::Refused(Refusal::InvalidKey))?;
    let from_basic = ApiKey::parse(password).ok_or(ApiError::Refused(Refusal::InvalidKey))?;
    let mut values = headers.get_all("x-api-key").iter();
    match (values.next(), values.next()) {
        (None, _) => Ok(Some(from_basic)),
        (Some(_), Some(_)) => Err(ApiError::BadRequest(
            "the x-api-key header was sent more than once".to_owned(),
        )),
        (Some(value), None) if parse_key(value)? == from_basic => Ok(Some(from_basic)),
        (Some(_), None) => Err(ApiError::BadRequest(
            "x-api-key and Authorization carry different keys; send one".to_owned(),
        )),
    }
}

/// Where the API and the web site are, as this request reached them ([`crate::linked::Links`]):
/// the scheme from `x-forwarded-proto` (API Gateway's; `https` without one), the host from
/// `x-forwarded-host` (set by the site's CloudFront distribution and by the local server, which
/// serve the site and the API under one origin) or else `Host`, or else API Gateway's domain
/// name. Without any, the links are relative (`/api/v1`).
pub fn links(req: &Request) -> crate::linked::Links {
    let header = |name: &str| {
        req.headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.split(',').next().unwrap_or_default().trim())
            .filter(|v| !v.is_empty())
    };
    let scheme = match header("x-forwarded-proto") {
        Some(p) if p.eq_ignore_ascii_case("http") => "http",
        _ => "https",
    };
    let forwarded = header("x-forwarded-host").filter(|h| is_host(h));
    let domain = || {
        use lambda_http::request::RequestContext;
        match req.request_context_ref() {
            Some(RequestContext::ApiGatewayV2(ctx)) => ctx.domain_name.clone(),
            Some(RequestContext::ApiGatewayV1(ctx)) => ctx.domain_name.clone(),
            _ => None,
        }
    };
    let host = forwarded
        .map(str::to_owned)
        .or_else(|| header("host").filter(|h| is_host(h)).map(str::to_owned))
        .or_else(|| domain().filter(|h| is_host(h)));
    let origin = host.map(|h| format!("{scheme}://{}", h.to_ascii_lowercase()));
    crate::linked::Links {
        api_base: format!(
            "{}{}",
            origin.as_deref().unwrap_or_default(),
            Route::API_BASE
        ),
        site: forwarded.and(origin),
    }
}

/// A host name or address with an optional port: letters, digits, `.`, `-`, `:` and brackets.
fn is_host(text: &str) -> bool {
    text.len() <= 255
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '[' | ']'))
}

fn parse_key(value: &HeaderValue) -> Result<ApiKey, ApiError> {
    value
        .to_str()
        .ok()
        .and_then(|v| ApiKey::parse(v.trim()))
        .ok_or(ApiError::Refused(Refusal::InvalidKey))
}

/// The address the request came from, as API Gateway saw it (`None` outside API Gateway, or
/// when it says nothing).
pub fn source_address(req: &Request) -> Option<&str> {
    use lambda_http::request::RequestContext;
    let address = match req.request_context_ref()? {
        RequestContext::ApiGatewayV2(ctx) => ctx.http.source_ip.as_deref(),
        RequestContext::ApiGatewayV1(ctx) => ctx.identity.source_ip.as_deref(),
        _ => None,
    };
    address.filter(|a| !a.is_empty())
}

/// The verified claims API Gateway's JWT authorizer put in the request context.
pub fn verified_claims(req: &Request) -> Option<&std::collections::HashMap<String, String>> {
    use lambda_http::request::RequestContext;
    match req.request_context_ref()? {
        RequestContext::ApiGatewayV2(ctx) => {
            ctx.authorizer.as_ref()?.jwt.as_ref().map(|jwt| &jwt.claims)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_accepted_when_named_or_starred_without_a_zero_weight() {
        let accepts = |values: &[&str]| {
            let mut headers = HeaderMap::new();
            for v in values {
                headers.append(
                    lambda_http::http::header::ACCEPT_ENCODING,
                    v.parse().unwrap(),
                );
            }
            accepts_gzip(&headers)
        };
        // As Python's requests sends it, and as curl --compressed does
        assert!(accepts(&["gzip, deflate"]));
        assert!(accepts(&["deflate, gzip, br, zstd"]));
        assert!(accepts(&["br;q=1.0, GZIP;q=0.5"]));
        assert!(accepts(&["*"]));
        assert!(accepts(&["identity", "gzip"]));
        assert!(!accepts(&[]));
        assert!(!accepts(&["identity"]));
        assert!(!accepts(&["deflate, br"]));
        assert!(!accepts(&["gzip;q=0"]));
        assert!(!accepts(&["gzip; q=0.0, deflate"]));
        assert!(!accepts(&["x-gzip-ish"]));
    }

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
        assert_eq!(
            Route::parse("/api/v1/datasets/x/rows"),
            Some(Route::Rows("x".into()))
        );
        assert_eq!(
            Route::parse("/api/v1/datasets/rows"),
            Some(Route::Metadata("rows".into()))
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
            "/api/v1/datasets/x/rows/",
            "/api/v1/datasets//rows",
        ] {
            assert_eq!(Route::parse(path), None, "{path}");
        }
    }

    #[test]
    fn the_linked_data_routes_are_exact_too() {
        assert_eq!(Route::parse("/api/v1/catalog"), Some(Route::Catalog));
        assert_eq!(
            Route::parse("/api/v1/datasets/x/croissant"),
            Some(Route::Croissant("x".into()))
        );
        assert_eq!(
            Route::parse("/api/v1/datasets/x/download"),
            Some(Route::Download("x".into()))
        );
        for path in [
            "/api/v1/catalog/",
            "/api/v1/catalogs",
            "/prod/api/v1/catalog",
            "/api/v1/datasets//croissant",
            "/api/v1/datasets/x/download/",
        ] {
            assert_eq!(Route::parse(path), None, "{path}");
        }
    }

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                lambda_http::http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    const KEY: &str = "dcat_0123456789abcdef0123456789abcdef0123456789abcdef0123456789ab";

    fn basic(credentials: &str) -> String {
        format!("Basic {}", aws_smithy_types::base64::encode(credentials))
    }

    #[test]
    fn the_download_route_reads_a_key_as_basic_password_and_nothing_else_does() {
        let sent = headers(&[("authorization", &basic(&format!("key:{KEY}")))]);
        let key = presented_key_or_basic(&sent).unwrap().unwrap();
        assert_eq!(key, ApiKey::parse(KEY).unwrap());
        // Any user name, an empty one included
        let sent = headers(&[("authorization", &basic(&format!(":{KEY}")))]);
        assert!(presented_key_or_basic(&sent).unwrap().is_some());
        // The other routes keep refusing Basic
        assert!(matches!(
            presented_key(&sent),
            Err(ApiError::Refused(Refusal::InvalidKey))
        ));
        // The same key in x-api-key too is fine; another is a 400
        let same = headers(&[
            ("authorization", &basic(&format!("key:{KEY}"))),
            ("x-api-key", KEY),
        ]);
        assert!(presented_key_or_basic(&same).unwrap().is_some());
        let other = headers(&[
            ("authorization", &basic(&format!("key:{KEY}"))),
            ("x-api-key", &KEY.replace('a', "b")),
        ]);
        assert!(matches!(
            presented_key_or_basic(&other),
            Err(ApiError::BadRequest(_))
        ));
        // The header forms of the data endpoint still work here
        assert!(presented_key_or_basic(&headers(&[("x-api-key", KEY)]))
            .unwrap()
            .is_some());
        assert!(presented_key_or_basic(&headers(&[])).unwrap().is_none());
    }

    #[test]
    fn hostile_basic_credentials_are_an_invalid_key_never_a_panic() {
        for value in [
            "Basic".to_owned(),
            "Basic ".to_owned(),
            "Basic !!!".to_owned(),
            basic("no-colon"),
            basic("key:"),
            format!(
                "Basic {}",
                aws_smithy_types::base64::encode([0xff, 0xfe, b':', b'x'])
            ),
        ] {
            let result = presented_key_or_basic(&headers(&[("authorization", &value)]));
            assert!(
                matches!(result, Err(ApiError::Refused(Refusal::InvalidKey))),
                "{value:?}: {result:?}"
            );
        }
        let twice = headers(&[
            ("authorization", &basic(&format!("key:{KEY}"))),
            ("authorization", &basic(&format!("key:{KEY}"))),
        ]);
        assert!(matches!(
            presented_key_or_basic(&twice),
            Err(ApiError::BadRequest(_))
        ));
    }

    fn request(pairs: &[(&str, &str)]) -> Request {
        let mut req = Request::default();
        *req.headers_mut() = headers(pairs);
        req
    }

    #[test]
    fn links_follow_the_forwarded_host_then_the_host() {
        let direct = links(&request(&[("host", "abc.execute-api.example.com")]));
        assert_eq!(
            direct.api_base,
            "https://abc.execute-api.example.com/api/v1"
        );
        assert_eq!(direct.site, None);
        let through_site = links(&request(&[
            ("host", "abc.execute-api.example.com"),
            ("x-forwarded-host", "Data.Example.org"),
            ("x-forwarded-proto", "https"),
        ]));
        assert_eq!(through_site.api_base, "https://data.example.org/api/v1");
        assert_eq!(
            through_site.site.as_deref(),
            Some("https://data.example.org")
        );
        let local = links(&request(&[
            ("host", "127.0.0.1:3000"),
            ("x-forwarded-host", "127.0.0.1:3000"),
            ("x-forwarded-proto", "http"),
        ]));
        assert_eq!(local.api_base, "http://127.0.0.1:3000/api/v1");
        // A host that is not one is ignored
        let hostile = links(&request(&[("host", "evil.example/<script>")]));
        assert_eq!(hostile.api_base, "/api/v1");
        assert_eq!(hostile.site, None);
    }
}
