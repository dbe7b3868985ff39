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
            Self::Refused(refusal) => refusal.status(),
            Self::Account(e) => e.status(),
            Self::Grant(e) => e.status(),
            Self::Org(e) => e.status(),
            Self::Upload(e) => e.status(),
            Self::Edit(code, _) => match *code {
                "version_not_found" => StatusCode::NOT_FOUND,
                "not_editable" | "edit_conflict" => StatusCode::CONFLICT,
                "not_an_editor" => StatusCode::FORBIDDEN,
                _ => StatusCode::BAD_REQUEST,
            },
            Self::Sharing(e) => e.status(),
            Self::DatasetNotFound(_)
            | Self::NoActiveVersion(_)
            | Self::VersionNotActive { .. }
            | Self::SplitNotFound { .. }
            | Self::OriginalNotFound { .. }
            | Self::RouteNotFound(_) => StatusCode::NOT_FOUND,
            Self::Unpublished(_) => StatusCode::GONE,
            Self::MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            Self::PreviewUnavailable(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::RateLimited(_) | Self::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The RFC 6750 challenge of a 401 or 403. A request without any key gets the bare
    /// challenge (RFC 6750 section 3.1: no error code when no credentials were sent).
    fn challenge(&self) -> Option<String> {
        match self {
            Self::Refused(refusal) => refusal.challenge(),
            Self::Account(e) => e.challenge(),
            _ => None,
        }
    }
}

impl ToHttp for Refusal {
    fn status(&self) -> StatusCode {
        match self {
            Self::MissingKey | Self::InvalidKey => StatusCode::UNAUTHORIZED,
            // Callers answer it as the unknown slug it stands for (the request's own wording).
            Self::Hidden(_) => StatusCode::NOT_FOUND,
            // A key without the scope, or a good key this dataset refuses.
            _ => StatusCode::FORBIDDEN,
        }
    }

    fn challenge(&self) -> Option<String> {
        match self {
            Self::MissingKey => Some(format!("Bearer realm=\"{REALM}\"")),
            Self::InvalidKey => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", \
                 error_description=\"the API key is invalid, expired or revoked\""
            )),
            Self::InsufficientScope => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"insufficient_scope\", scope=\"read\""
            )),
            // A good key this dataset refuses: no challenge, since another key would not help
            // more than the message says.
            _ => None,
        }
    }
}

impl ToHttp for AccountError {
    fn status(&self) -> StatusCode {
        match self {
            Self::Unauthenticated(_) | Self::Unknown => StatusCode::UNAUTHORIZED,
            Self::Disabled | Self::NotAnOperator => StatusCode::FORBIDDEN,
            Self::InvalidField(_) => StatusCode::BAD_REQUEST,
            Self::KeyLimitReached | Self::IdempotencyConflict(_) => StatusCode::CONFLICT,
            Self::DailyKeyLimit { .. } => StatusCode::TOO_MANY_REQUESTS,
            Self::KeyNotFound(_) => StatusCode::NOT_FOUND,
        }
    }

    /// A token the authorizer let through that names no caller, or that the user pool no
    /// longer knows: `invalid_token`, saying why.
    fn challenge(&self) -> Option<String> {
        match self {
            Self::Unauthenticated(_) | Self::Unknown => Some(format!(
                "Bearer realm=\"{REALM}\", error=\"invalid_token\", error_description=\"{self}\""
            )),
            _ => None,
        }
    }
}

impl ToHttp for GrantError {
    fn status(&self) -> StatusCode {
        match self {
            Self::RequestNotFound(_) | Self::RecordNotFound { .. } => StatusCode::NOT_FOUND,
            Self::RequestNotNeeded(_)
            | Self::RequestPending(_)
            | Self::AlreadyGranted(_)
            | Self::AccessRevoked(_)
            | Self::DecisionConflict { .. } => StatusCode::CONFLICT,
        }
    }

    fn challenge(&self) -> Option<String> {
        None
    }
}

impl ToHttp for catalog::orgs::OrgError {
    fn status(&self) -> StatusCode {
        use catalog::orgs::OrgError as E;
        match self {
            E::Name(_) | E::DisplayName | E::Role(_) | E::Email => StatusCode::BAD_REQUEST,
            E::NotFound(_) | E::NotMember { .. } | E::NoInvitation { .. } => StatusCode::NOT_FOUND,
            E::NotAdmin { .. } | E::NotOperator => StatusCode::FORBIDDEN,
            E::Exists(_)
            | E::TooManyMembers { .. }
            | E::TooManyOrgs
            | E::AlreadyMember { .. }
            | E::AddressIsMember { .. }
            | E::LastAdmin { .. } => StatusCode::CONFLICT,
        }
    }

    fn challenge(&self) -> Option<String> {
        None
    }
}

/// An upload's refusals (`catalog::uploads`): past the site's limits 413, naming the CLI.
impl ToHttp for catalog::uploads::UploadError {
    fn status(&self) -> StatusCode {
        use catalog::uploads::UploadError as E;
        match self {
            E::Invalid(_) => StatusCode::BAD_REQUEST,
            E::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
            E::NotFound(_) => StatusCode::NOT_FOUND,
            E::NotUploading { .. } => StatusCode::CONFLICT,
            E::Abandoned => StatusCode::GONE,
            E::NotEditor { .. } => StatusCode::FORBIDDEN,
        }
    }

    fn challenge(&self) -> Option<String> {
        None
    }
}

/// Delta Sharing's refusals: the protocol has no 410, so an unpublished table is a 404.
impl ToHttp for SharingError {
    fn status(&self) -> StatusCode {
        match self {
            Self::UnknownShare(_)
            | Self::UnknownSchema(_)
            | Self::Unpublished(_)
            | Self::VersionUnavailable { .. } => StatusCode::NOT_FOUND,
            Self::MalformedQuery(_) | Self::Unsupported(_) => StatusCode::BAD_REQUEST,
        }
    }

    fn challenge(&self) -> Option<String> {
        None
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
             starting and ending with a letter or digit, optionally after an organisation's \
             name and '~' (acme~sales)"
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
            "unsupported format 'csv': the allowed values are 'parquet' and 'original'"
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
