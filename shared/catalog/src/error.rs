//! What a request can end in ([`ApiError`], with its stable `code`), and what a storage adapter
//! reports ([`StoreError`], from [`crate::store`]). Their HTTP status and challenge are
//! `catalog-http`'s (`catalog_http::error`), the one place they are mapped.

use std::fmt;

use crate::access::Denied;
pub use crate::access::Refusal;
pub use crate::accounts::{AccountError, IdempotencyConflict};
pub use crate::grants::GrantError;
use crate::input::{DatasetRef, ParseError};
use crate::query::QueryError;
pub use crate::sharing::SharingError;
use crate::slug::Slug;
pub use crate::store::{BoxError, StoreError};

/// Everything a request can end in other than success: the request's own refusals (what it
/// names, its parameters, its method), each domain's refusals wrapped whole (the access rule's,
/// an account's, an access request's, Delta Sharing's), and the backend's failures.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// A refused path or query parameter: the parse error's message.
    #[error("{0}")]
    BadRequest(String),
    /// The one access rule's refusals ([`crate::access`]): 401 or 403.
    #[error(transparent)]
    Refused(#[from] Refusal),
    /// An account route's refusals ([`crate::accounts`]).
    #[error(transparent)]
    Account(#[from] AccountError),
    /// An access request's or decision's refusals ([`crate::grants`]).
    #[error(transparent)]
    Grant(#[from] GrantError),
    /// An organisation's refusals ([`crate::orgs`]).
    #[error(transparent)]
    Org(#[from] crate::orgs::OrgError),
    /// An upload's refusals ([`crate::uploads`]).
    #[error(transparent)]
    Upload(#[from] crate::uploads::UploadError),
    /// An editor's change refused ([`crate::edits`]): its code and message.
    #[error("{1}")]
    Edit(&'static str, String),
    /// Delta Sharing's refusals ([`crate::sharing`]).
    #[error(transparent)]
    Sharing(#[from] SharingError),
    #[error("no dataset {0}")]
    DatasetNotFound(Named),
    #[error("dataset '{0}' has no active version to download")]
    NoActiveVersion(Slug),
    /// Taken down by the catalog's operators (`catalog-admin datasets unpublish`): a 410 on
    /// every route and protocol until they restore it.
    #[error("dataset '{0}' was unpublished by the catalog's operators")]
    Unpublished(Slug),
    #[error("version {requested} of '{slug}' is not available: its active version is {active}")]
    VersionNotActive {
        slug: Slug,
        requested: u64,
        active: u64,
    },
    /// A split the active version does not have, or whose statistics it does not hold (the
    /// name as the client sent it, echoed).
    #[error("dataset '{slug}' has no split '{split}' with statistics in its active version")]
    SplitNotFound { slug: Slug, split: String },
    /// `format=original` of a version that kept no original files (published without
    /// `--keep-original`, or from Parquet).
    #[error(
        "version {version} of '{slug}' kept no original files: only its Parquet is served \
         (an operator keeps CSV or JSON Lines inputs with publish --keep-original)"
    )]
    OriginalNotFound { slug: Slug, version: u64 },
    /// No route for the path (as the client sent it, echoed).
    #[error("no route for {0}")]
    RouteNotFound(String),
    /// The rows API cannot show these rows within a function's memory (see `catalog::rows`).
    #[error("{0}")]
    PreviewUnavailable(String),
    #[error("method {method} is not allowed; use {}", allowed.hint())]
    MethodNotAllowed { method: String, allowed: Allowed },
    #[error("the catalog is receiving more requests than it can serve right now, retry shortly")]
    RateLimited(#[source] StoreError),
    #[error("the catalog is temporarily unavailable, retry shortly")]
    Unavailable(#[source] StoreError),
    #[error("internal error")]
    Internal(#[source] BoxError),
}

/// A dataset as a request named it, for the 404 that finds none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Named {
    /// By slug or UUID, as the catalog's routes name one: `'city-bikes'`, `with id …`.
    Dataset(DatasetRef),
    /// A slug as a parameter or path gave it, possibly malformed (echoed): `'…'`.
    Given(String),
    /// A Delta Sharing table (echoed): `table '…'`.
    Table(String),
}

impl fmt::Display for Named {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Dataset(dataset) => dataset.fmt(f),
            Self::Given(raw) => write!(f, "'{raw}'"),
            Self::Table(raw) => write!(f, "table '{raw}'"),
        }
    }
}

/// The access rule's answer other than a let-through: its refusal, or a failure to read a grant.
impl From<Denied> for ApiError {
    fn from(e: Denied) -> Self {
        match e {
            Denied::Refused(refusal) => Self::Refused(refusal),
            Denied::Store(e) => e.into(),
        }
    }
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
    /// `/account/preferences`.
    Preferences,
    /// `/orgs` (every organisation, a new one).
    Orgs,
    /// `/account/orgs`, `/account/invitations`, and the editor's reads.
    ReadOnly,
    /// `/orgs/{org}`: the organisation, and its settings.
    OrgItem,
    /// `/orgs/{org}/members/{account}`.
    OrgMember,
    /// `/orgs/{org}/invitations`.
    OrgInvitations,
    /// `/orgs/{org}/invitations/{id}`.
    OrgInvitation,
    /// `/account/invitations/{org}`.
    MyInvitation,
    /// `/orgs/{org}/uploads`, `/orgs/{org}/uploads/{id}/complete`.
    Uploads,
    /// `/orgs/{org}/uploads/{id}`.
    Upload,
    /// `/orgs/{org}/datasets/{name}`.
    EditorDataset,
    /// `/orgs/{org}/datasets/{name}/versions/{n}/activate`.
    EditorActivate,
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
            Self::Preferences => "GET, PUT",
            Self::Orgs => "GET, POST",
            Self::ReadOnly => "GET",
            Self::OrgItem => "GET, PATCH",
            Self::OrgMember => "PUT, DELETE",
            Self::OrgInvitations => "POST",
            Self::OrgInvitation => "DELETE",
            Self::MyInvitation => "POST, DELETE",
            Self::Uploads => "POST",
            Self::Upload => "GET, DELETE",
            Self::EditorDataset => "PUT",
            Self::EditorActivate => "POST",
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
            Self::Preferences => "GET or PUT",
            Self::Orgs => "GET or POST",
            Self::ReadOnly => "GET",
            Self::OrgItem => "GET or PATCH",
            Self::OrgMember => "PUT or DELETE",
            Self::OrgInvitations => "POST",
            Self::OrgInvitation => "DELETE",
            Self::MyInvitation => "POST or DELETE",
            Self::Uploads => "POST",
            Self::Upload => "GET or DELETE",
            Self::EditorDataset => "PUT",
            Self::EditorActivate => "POST",
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
            Self::Account(e) => e.code(),
            Self::Grant(e) => e.code(),
            Self::Org(e) => e.code(),
            Self::Upload(e) => e.code(),
            Self::Edit(code, _) => code,
            Self::Sharing(e) => e.code(),
            Self::DatasetNotFound(_)
            | Self::VersionNotActive { .. }
            | Self::SplitNotFound { .. }
            | Self::OriginalNotFound { .. }
            | Self::RouteNotFound(_) => "not_found",
            Self::NoActiveVersion(_) => "no_active_version",
            Self::Unpublished(_) => "unpublished",
            Self::MethodNotAllowed { .. } => "method_not_allowed",
            Self::PreviewUnavailable(_) => "preview_unavailable",
            Self::RateLimited(_) => "rate_limited",
            Self::Unavailable(_) => "unavailable",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<crate::orgs::OrgStoreError> for ApiError {
    fn from(e: crate::orgs::OrgStoreError) -> Self {
        match e {
            crate::orgs::OrgStoreError::Refused(e) => Self::Org(e),
            crate::orgs::OrgStoreError::Store(e) => e.into(),
        }
    }
}

impl From<crate::edits::EditFailure> for ApiError {
    fn from(e: crate::edits::EditFailure) -> Self {
        match e {
            crate::edits::EditFailure::Store(e) => e.into(),
            other => Self::Edit(other.code(), other.to_string()),
        }
    }
}
