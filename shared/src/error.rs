//! One error type for the API, mapped to HTTP in one place ([`ApiError::into_response`]).

use std::error::Error as StdError;

use lambda_http::http::{header, HeaderValue, StatusCode};
use lambda_http::{Body, Response};
use serde::Serialize;

pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// What can go wrong in a storage or signing adapter.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Throttled, timed out or unreachable: worth retrying shortly.
    #[error("backend temporarily unavailable")]
    Unavailable(#[source] BoxError),
    /// A record that does not have the shape this code writes.
    #[error("malformed record: {0}")]
    Corrupt(String),
    /// Anything else the backend reported.
    #[error("backend error")]
    Other(#[source] BoxError),
}

/// Everything a request can end in other than success.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("{0}")]
    BadRequest(String),
    #[error("an API key is required for this dataset: send it in the x-api-key header or as Authorization: Bearer <key>")]
    MissingKey,
    #[error("the API key is invalid, expired or revoked")]
    InvalidKey,
    #[error("the API key does not have the read scope required to download data")]
    InsufficientScope,
    #[error("no dataset {0}")]
    DatasetNotFound(String),
    #[error("dataset {0} has no active version to download")]
    NoActiveVersion(String),
    #[error("no route for {0}")]
    RouteNotFound(String),
    #[error("method {0} is not allowed; use GET")]
    MethodNotAllowed(String),
    #[error("the catalog is temporarily unavailable, retry shortly")]
    Unavailable(#[source] StoreError),
    #[error("internal error")]
    Internal(#[source] BoxError),
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Unavailable(_) => Self::Unavailable(e),
            other => Self::Internal(Box::new(other)),
        }
    }
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
}

/// Seconds a client should wait after a 503.
pub const RETRY_AFTER_SECONDS: &str = "1";

impl ApiError {
    pub fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::MissingKey | Self::InvalidKey => StatusCode::UNAUTHORIZED,
            Self::InsufficientScope => StatusCode::FORBIDDEN,
            Self::DatasetNotFound(_) | Self::NoActiveVersion(_) | Self::RouteNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            Self::MethodNotAllowed(_) => StatusCode::METHOD_NOT_ALLOWED,
            Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The one place an error becomes an HTTP response. Server-side failures are logged here
    /// with their cause chain and the request id; the client sees only the generic message.
    pub fn into_response(self, request_id: &str) -> Response<Body> {
        let status = self.status();
        if status.is_server_error() {
            tracing::error!(
                request_id,
                status = status.as_u16(),
                error = %self,
                cause = %cause_chain(&self),
                "request failed"
            );
        } else {
            tracing::info!(request_id, status = status.as_u16(), error = %self, "request rejected");
        }
        let message = self.to_string();
        let mut response = json_response(status, &ErrorBody { error: &message });
        let headers = response.headers_mut();
        match self {
            Self::Unavailable(_) => {
                headers.insert(
                    header::RETRY_AFTER,
                    HeaderValue::from_static(RETRY_AFTER_SECONDS),
                );
            }
            Self::MethodNotAllowed(_) => {
                headers.insert(header::ALLOW, HeaderValue::from_static("GET"));
            }
            _ => {}
        }
        response
    }
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
                r#"{"error":"internal error"}"#.to_owned(),
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
