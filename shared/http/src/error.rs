//! The one place an [`ApiError`] becomes HTTP: its status and its `WWW-Authenticate` challenge
//! (the answer is built from these, with the error's stable `code`, in `api::http`).

use lambda_http::http::StatusCode;

pub use catalog::error::*;

/// The realm named in `WWW-Authenticate` challenges.
pub const REALM: &str = "dataset-catalog";

/// An error's HTTP side.
pub trait ToHttp {
    fn status(&self) -> StatusCode;
    /// The RFC 6750 challenge of a 401 or 403.
    fn challenge(&self) -> Option<String>;
}

impl ToHttp for ApiError {
    fn status(&self) -> StatusCode {
        match self {
            Self::BadRequest(_) => StatusCode::BAD_REQUEST,
            Self::Refused(Refusal::MissingKey | Refusal::InvalidKey) => StatusCode::UNAUTHORIZED,
            Self::Refused(
                Refusal::InsufficientScope
                | Refusal::KeyNotForDataset(_)
                | Refusal::AccessRequired(_),
            ) => StatusCode::FORBIDDEN,
            Self::DatasetNotFound(_)
            | Self::NoActiveVersion(_)
            | Self::VersionNotActive { .. }
            | Self::RouteNotFound(_)
            | Self::ResourceNotFound(_) => StatusCode::NOT_FOUND,
            Self::VersionUnavailable { .. } => StatusCode::NOT_FOUND,
            Self::Unpublished(_) => StatusCode::GONE,
            Self::MalformedRequest(_) | Self::Unsupported(_) => StatusCode::BAD_REQUEST,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::PreviewUnavailable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::Unauthenticated(_) | Self::AccountUnknown => StatusCode::UNAUTHORIZED,
            Self::InvalidField(_) => StatusCode::BAD_REQUEST,
            Self::KeyLimitReached => StatusCode::CONFLICT,
            Self::DailyKeyLimit { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::IdempotencyConflict(_) => StatusCode::CONFLICT,
            Self::AccountDisabled => StatusCode::FORBIDDEN,
            Self::KeyNotFound(_) | Self::RequestNotFound(_) | Self::RecordNotFound { .. } => {
                StatusCode::NOT_FOUND
            }
            Self::RequestNotNeeded(_)
            | Self::RequestPending(_)
            | Self::AlreadyGranted(_)
            | Self::AccessRevoked(_)
            | Self::DecisionConflict { .. } => StatusCode::CONFLICT,
            Self::NotAnOperator => StatusCode::FORBIDDEN,
            Self::RateLimited(_) | Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The RFC 6750 challenge of a 401 or 403. A request without any key gets the bare
    /// challenge (RFC 6750 section 3.1: no error code when no credentials were sent).
    fn challenge(&self) -> Option<String> {
        match self {
            Self::Refused(Refusal::MissingKey) => Some(format!("Bearer realm=\"{REALM}\"")),
            Self::Refused(Refusal::InvalidKey) => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", \
                 error_description=\"the API key is invalid, expired or revoked\""
            )),
            Self::Refused(Refusal::InsufficientScope) => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"insufficient_scope\", scope=\"read\""
            )),
            Self::Unauthenticated(e) => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{e}\""
            )),
            Self::AccountUnknown => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{self}\""
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::input::{DatasetRef, Format, PageRequest, VersionPin};
    use catalog::query::{ListParams, ListQuery, Sort};

    fn bad_request(e: impl Into<ApiError>) -> String {
        let e = e.into();
        assert_eq!(e.status(), StatusCode::BAD_REQUEST);
        assert_eq!(e.code(), "bad_request");
        match e {
            ApiError::BadRequest(message) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parse_errors_are_400s_with_their_message() {
        assert_eq!(
            bad_request(DatasetRef::parse("City").unwrap_err()),
            "invalid dataset slug: a slug is 1 to 64 lowercase letters, digits and hyphens, \
             starting and ending with a letter or digit"
        );
        assert_eq!(
            bad_request(PageRequest::parse(Some("0"), None).unwrap_err()),
            "page must be a positive integer, got '0'"
        );
        assert_eq!(
            bad_request(PageRequest::parse(None, Some("x")).unwrap_err()),
            "page_size must be a positive integer, got 'x'"
        );
        assert_eq!(
            bad_request(Format::parse(Some("csv")).unwrap_err()),
            "unsupported format 'csv': the only allowed value is 'parquet'"
        );
        assert_eq!(
            bad_request(VersionPin::parse(Some(&"v".repeat(50))).unwrap_err()),
            format!(
                "version must be a positive integer (a version number from the metadata), got '{}…'",
                "v".repeat(40)
            )
        );
    }

    #[test]
    fn query_errors_are_400s_with_their_message() {
        let list = |category: Option<&str>, tags: &[&str], q: Option<&str>| {
            ListQuery::parse(ListParams {
                category,
                tags,
                q,
                ..ListParams::default()
            })
        };
        assert_eq!(
            bad_request(list(Some(" "), &[], None).unwrap_err()),
            "category must be 1 to 128 characters"
        );
        assert_eq!(
            bad_request(list(None, &[""], None).unwrap_err()),
            "tag must be 1 to 128 characters"
        );
        assert_eq!(
            bad_request(
                ListQuery::parse(ListParams {
                    license: Some(""),
                    ..ListParams::default()
                })
                .unwrap_err()
            ),
            "license must be 1 to 128 characters"
        );
        assert_eq!(
            bad_request(list(None, &["t"; 9], None).unwrap_err()),
            "at most 8 tag parameters"
        );
        assert_eq!(
            bad_request(list(None, &[], Some(&"a".repeat(257))).unwrap_err()),
            "q must be at most 256 characters"
        );
        assert_eq!(
            bad_request(list(None, &[], Some("a b c d e f g h i")).unwrap_err()),
            "q must have at most 8 words"
        );
        assert_eq!(
            bad_request(Sort::parse(Some(&"s".repeat(50))).unwrap_err()),
            format!(
                "sort must be created, updated or name, optionally followed by :asc or :desc; got '{}…'",
                "s".repeat(40)
            )
        );
    }
}
