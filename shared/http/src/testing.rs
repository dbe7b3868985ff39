//! Test support (with the `memory` feature): API Gateway HTTP API (v2) events as Lambda
//! delivers them, for the rules, property and log tests and the integration harness.

use serde_json::{json, Map, Value};

/// An API Gateway HTTP API (v2) event. Built with [`V2Event::get`] or [`V2Event::new`], then
/// turned into JSON ([`V2Event::json`]) or into the request lambda_http hands a handler
/// ([`V2Event::request`]).
#[derive(Debug, Clone)]
pub struct V2Event {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    host: String,
    request_id: String,
    body: Option<String>,
    /// The claims a JWT authorizer verified (`requestContext.authorizer.jwt.claims`).
    claims: Option<Map<String, Value>>,
    /// The address the request came from (`requestContext.http.sourceIp`).
    source_ip: String,
}

impl V2Event {
    /// A `method` request for `path_and_query` (`/api/v1/datasets?page=2`).
    pub fn new(method: &str, path_and_query: &str) -> Self {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        Self {
            method: method.to_owned(),
            path: path.to_owned(),
            query: query.to_owned(),
            headers: Vec::new(),
            host: "api.example.com".to_owned(),
            request_id: "req-1".to_owned(),
            body: None,
            claims: None,
            source_ip: "192.0.2.1".to_owned(),
        }
    }

    /// A `method` request with this raw path and (already encoded) query string, taken as
    /// they are, even when the path holds a `?`.
    pub fn raw(method: &str, path: &str, query: &str) -> Self {
        let mut event = Self::new(method, "");
        event.path = path.to_owned();
        event.query = query.to_owned();
        event
    }

    pub fn get(path_and_query: &str) -> Self {
        Self::new("GET", path_and_query)
    }

    /// Adds a header; a repeated name is joined with a comma, as API Gateway does.
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn headers<'a>(self, headers: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        headers
            .into_iter()
            .fold(self, |event, (name, value)| event.header(name, value))
    }

    /// The domain name the request came in on (`api.example.com` unless set).
    pub fn host(mut self, host: &str) -> Self {
        self.host = host.to_owned();
        self
    }

    /// The gateway's request id (`req-1` unless set).
    pub fn request_id(mut self, id: &str) -> Self {
        self.request_id = id.to_owned();
        self
    }

    /// The address the request came from (`192.0.2.1` unless set).
    pub fn source_ip(mut self, address: &str) -> Self {
        self.source_ip = address.to_owned();
        self
    }

    /// A text body.
    pub fn body(mut self, body: &str) -> Self {
        self.body = Some(body.to_owned());
        self
    }

    /// The claims of a token API Gateway's JWT authorizer verified, as it passes them on.
    pub fn claims<'a>(mut self, claims: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        self.claims = Some(
            claims
                .into_iter()
                .map(|(k, v)| (k.to_owned(), json!(v)))
                .collect(),
        );
        self
    }

    pub fn json(&self) -> Value {
        let headers = joined_headers(&self.headers);
        let mut event = json!({
            "version": "2.0", "routeKey": "$default", "rawPath": self.path,
            "rawQueryString": self.query, "headers": headers,
            "requestContext": {
                "accountId": "123456789012", "apiId": "api", "domainName": self.host,
                "domainPrefix": "api", "requestId": self.request_id, "routeKey": "$default",
                "stage": "$default", "time": "01/Jun/2026:12:00:00 +0000", "timeEpoch": 0,
                "http": {"method": self.method, "path": self.path, "protocol": "HTTP/1.1",
                         "sourceIp": self.source_ip, "userAgent": "test"}
            },
            "isBase64Encoded": false
        });
        if let Some(body) = &self.body {
            event["body"] = json!(body);
        }
        if let Some(claims) = &self.claims {
            event["requestContext"]["authorizer"] =
                json!({"jwt": {"claims": claims, "scopes": null}});
        }
        event
    }

    /// The request lambda_http makes of this event for a handler.
    ///
    /// # Panics
    /// If lambda_http cannot read the event (a test that builds one wants to know).
    pub fn request(&self) -> lambda_http::Request {
        lambda_http::request::from_str(&self.json().to_string()).expect("a valid v2 event")
    }
}

/// Headers as an API Gateway event's `headers` object: a repeated name's values joined with a
/// comma.
pub fn joined_headers(headers: &[(String, String)]) -> Map<String, Value> {
    let mut joined = Map::new();
    for (name, value) in headers {
        let value = match joined.get(name).and_then(Value::as_str) {
            Some(previous) => format!("{previous},{value}"),
            None => value.clone(),
        };
        joined.insert(name.clone(), json!(value));
    }
    joined
}
