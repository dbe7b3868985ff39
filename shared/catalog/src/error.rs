//! The errors: what a storage adapter reports ([`StoreError`]) and what a request can end in
//! ([`ApiError`], with its stable `code`). Their HTTP status and challenge are `catalog-http`'s
//! (`catalog_http::error`), the one place they are mapped.

use std::error::Error as StdError;

pub use crate::access::Refusal;
use crate::accounts::{ClaimsError, FieldError, MAX_ACTIVE_KEYS, MAX_KEYS_PER_DAY};
use crate::input::ParseError;
use crate::query::QueryError;
use crate::slug::Slug;

pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// What can go wrong in a storage or signing adapter.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The backend refused the request rate (DynamoDB throttling), after the SDK's retries.
    #[error("backend throttled the request")]
    Throttled(#[source] BoxError),
    /// Timed out, unreachable or failing on its side: worth retrying shortly.
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
    /// The one access rule's refusals ([`crate::access`]): 401 or 403.
    #[error(transparent)]
    Refused(#[from] Refusal),
    #[error("no dataset {0}")]
    DatasetNotFound(String),
    #[error("dataset '{0}' has no active version to download")]
    NoActiveVersion(Slug),
    /// Taken down by the catalog's operators (`catalog-admin datasets unpublish`): a 410 on
    /// every route and protocol until they restore it.
    #[error("dataset '{0}' was unpublished by the catalog's operators")]
    Unpublished(Slug),
    #[error("version {requested} of '{slug}' is not available: its active version is {active}")]
    VersionNotActive {
        slug: String,
        requested: u64,
        active: u64,
    },
    #[error("no route for {0}")]
    RouteNotFound(String),
    /// A Delta Sharing share or schema that does not exist: the message names what does.
    #[error("{0}")]
    ResourceNotFound(String),
    /// A Delta Sharing request body that is not what the protocol describes.
    #[error("{0}")]
    MalformedRequest(String),
    /// A Delta Sharing feature this server does not have (the change data feed, time travel
    /// by timestamp).
    #[error("{0}")]
    Unsupported(String),
    /// Delta Sharing time travel to a version that does not exist, is newer than the active
    /// one, was never activated or was withdrawn by a rollback: one answer for all, a 404, as a
    /// pinned version the data endpoint does not serve.
    #[error("version {requested} of '{slug}' cannot be read: this server shares the active version, {active}, and the earlier versions that were active and not withdrawn by a rollback")]
    VersionUnavailable {
        slug: String,
        requested: u64,
        active: u64,
    },
    /// The rows API cannot show these rows within a function's memory (see `catalog::rows`).
    #[error("{0}")]
    PreviewUnavailable(String),
    #[error("method {method} is not allowed; use {}", allowed.hint())]
    MethodNotAllowed { method: String, allowed: Allowed },
    #[error("{0}")]
    Unauthenticated(ClaimsError),
    #[error("{0}")]
    InvalidField(FieldError),
    #[error("an account may hold at most {MAX_ACTIVE_KEYS} active keys: revoke one before creating another")]
    KeyLimitReached,
    #[error("this account is disabled: it cannot create keys or ask for access")]
    AccountDisabled,
    /// The user pool no longer accepts the (still unexpired) access token for anyone: its user
    /// was deleted, or signed out everywhere.
    #[error("the user pool no longer knows this account (deleted, or signed out everywhere): sign in again")]
    AccountUnknown,
    #[error("an account may create at most {MAX_KEYS_PER_DAY} keys a day (UTC): try again in {retry_after} seconds")]
    DailyKeyLimit { retry_after: u64 },
    #[error("{0}")]
    IdempotencyConflict(&'static str),
    #[error("no key {0} in this account")]
    KeyNotFound(String),
    #[error("dataset '{0}' is open to every registered account: there is no access to ask for")]
    RequestNotNeeded(String),
    #[error("a request for '{0}' is already pending: withdraw it to ask again")]
    RequestPending(String),
    #[error("this account already has access to '{0}'")]
    AlreadyGranted(String),
    #[error("the catalog's operators revoked this account's access to '{0}': ask them to grant it again")]
    AccessRevoked(String),
    #[error("no pending request for '{0}' in this account")]
    RequestNotFound(String),
    #[error("no access record for account {grantee} on '{slug}'")]
    RecordNotFound { slug: String, grantee: String },
    #[error("cannot {verb}: the record of {grantee} on '{slug}' is {status} (revision {rev}), not {expected}")]
    DecisionConflict {
        verb: &'static str,
        slug: String,
        grantee: String,
        status: &'static str,
        rev: u64,
        expected: String,
    },
    #[error("these routes are for members of the operators' group")]
    NotAnOperator,
    #[error("the catalog is receiving more requests than it can serve right now, retry shortly")]
    RateLimited(#[source] StoreError),
    #[error("the catalog is temporarily unavailable, retry shortly")]
    Unavailable(#[source] StoreError),
    #[error("internal error")]
    Internal(#[source] BoxError),
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::Throttled(_) => Self::RateLimited(e),
            StoreError::Unavailable(_) => Self::Unavailable(e),
            other => Self::Internal(Box::new(other)),
        }
    }
}

/// A refused path or query parameter: a 400 whose message is the parse error's.
impl From<ParseError> for ApiError {
    fn from(e: ParseError) -> Self {
        Self::BadRequest(e.to_string())
    }
}

/// A refused listing request: a 400 whose message is the query error's.
impl From<QueryError> for ApiError {
    fn from(e: QueryError) -> Self {
        Self::BadRequest(e.to_string())
    }
}

/// The methods a route answers, named by a 405's `Allow` and message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allowed {
    /// The catalog's three routes.
    Catalog,
    /// `/account/keys`.
    KeyCollection,
    /// `/account/keys/{id}`.
    Key,
    /// `/account/access`.
    AccessCollection,
    /// `/account/access/{slug}`.
    AccessItem,
    /// `/operator/access`.
    OperatorCollection,
    /// `/operator/access/{slug}/{account}`.
    OperatorItem,
    /// Delta Sharing's GET routes (lists, version, metadata).
    SharingGet,
    /// Delta Sharing's query.
    SharingPost,
    /// Delta Sharing's table route (its first form of the version route).
    SharingHead,
}

impl Allowed {
    pub fn header(self) -> &'static str {
        match self {
            Self::Catalog => ALLOWED_METHODS,
            Self::KeyCollection | Self::AccessCollection => "GET, POST",
            Self::Key | Self::AccessItem => "DELETE",
            Self::OperatorCollection => "GET",
            Self::OperatorItem => "POST",
            Self::SharingGet => "GET, HEAD",
            Self::SharingPost => "POST",
            Self::SharingHead => "HEAD",
        }
    }

    fn hint(self) -> &'static str {
        match self {
            Self::Catalog => "GET or HEAD",
            Self::KeyCollection | Self::AccessCollection => "GET or POST",
            Self::Key | Self::AccessItem => "DELETE",
            Self::OperatorCollection => "GET",
            Self::OperatorItem => "POST",
            Self::SharingGet => "GET or HEAD",
            Self::SharingPost => "POST",
            Self::SharingHead => "HEAD",
        }
    }
}

/// The methods every route answers (HEAD as GET without the body), named by a 405's `Allow`.
pub const ALLOWED_METHODS: &str = "GET, HEAD, OPTIONS";

/// Seconds a client should wait after a 503.
pub const RETRY_AFTER_SECONDS: &str = "1";

impl ApiError {
    /// The stable code clients can match on (the `error` message may be reworded).
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadRequest(_) => "bad_request",
            Self::Refused(refusal) => refusal.code(),
            Self::DatasetNotFound(_)
            | Self::VersionNotActive { .. }
            | Self::RouteNotFound(_)
            | Self::ResourceNotFound(_) => "not_found",
            Self::MalformedRequest(_) => "malformed_request",
            Self::Unsupported(_) => "unsupported",
            Self::VersionUnavailable { .. } => "version_unavailable",
            Self::NoActiveVersion(_) => "no_active_version",
            Self::Unpublished(_) => "unpublished",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::PreviewUnavailable(_) => "preview_unavailable",
            Self::Unauthenticated(_) => "invalid_token",
            Self::InvalidField(e) => e.field.code(),
            Self::KeyLimitReached => "key_limit_reached",
            Self::DailyKeyLimit { .. } => "daily_key_limit",
            Self::IdempotencyConflict(_) => "idempotency_conflict",
            Self::AccountDisabled => "account_disabled",
            Self::AccountUnknown => "account_unknown",
            Self::KeyNotFound(_) => "key_not_found",
            Self::RequestNotNeeded(_) => "request_not_needed",
            Self::RequestPending(_) => "request_pending",
            Self::AlreadyGranted(_) => "already_granted",
            Self::AccessRevoked(_) => "access_revoked",
            Self::RequestNotFound(_) | Self::RecordNotFound { .. } => "request_not_found",
            Self::DecisionConflict { .. } => "decision_conflict",
            Self::NotAnOperator => "not_an_operator",
            Self::RateLimited(_) => "rate_limited",
            Self::Unavailable(_) => "unavailable",
            Self::Internal(_) => "internal",
        }
    }
}
