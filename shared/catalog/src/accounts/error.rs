//! What an account's request can be refused for: its caller, its body, its keys. Typed; the
//! HTTP status of each is `catalog-http`'s (`catalog_http::error`), the one place errors are
//! mapped.

use super::{ClaimsError, FieldError, MAX_ACTIVE_KEYS, MAX_KEYS_PER_DAY};

/// An account route's refusal (the keys routes, and the caller checks of the access routes).
#[derive(Debug, thiserror::Error)]
pub enum AccountError {
    /// The claims name no caller (401 `invalid_token`).
    #[error("{0}")]
    Unauthenticated(#[from] ClaimsError),
    /// The user pool no longer accepts the (still unexpired) access token for anyone: its user
    /// was deleted, or signed out everywhere.
    #[error("the user pool no longer knows this account (deleted, or signed out everywhere): sign in again")]
    Unknown,
    /// An operator disabled the account.
    #[error("this account is disabled: it cannot create keys or ask for access")]
    Disabled,
    /// A refused request body, naming its field.
    #[error("{0}")]
    InvalidField(#[from] FieldError),
    #[error("an account may hold at most {MAX_ACTIVE_KEYS} active keys: revoke one before creating another")]
    KeyLimitReached,
    #[error("an account may create at most {MAX_KEYS_PER_DAY} keys a day (UTC): try again in {retry_after} seconds")]
    DailyKeyLimit { retry_after: u64 },
    #[error("{0}")]
    IdempotencyConflict(IdempotencyConflict),
    /// No key of this account has the id (as the client sent it, echoed).
    #[error("no key {0} in this account")]
    KeyNotFound(String),
    /// The operators' routes, to a caller outside the operators' group who is not an admin of
    /// the organisation whose datasets the request names.
    #[error("these routes are for members of the operators' group, and for an organisation's admins on its own datasets")]
    NotAnOperator,
}

/// Why a retried creation (the same `Idempotency-Key`) cannot be answered with the key it
/// created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum IdempotencyConflict {
    #[error("this Idempotency-Key was sent with another request: use a new one")]
    OtherRequest,
    #[error("the key this Idempotency-Key created is gone: use a new one")]
    KeyGone,
    #[error("the key this Idempotency-Key created was revoked or has expired: use a new one")]
    KeyEnded,
    #[error("another request with this Idempotency-Key changed the key meanwhile: retry")]
    ChangedMeanwhile,
}

impl AccountError {
    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Unauthenticated(_) => "invalid_token",
            Self::Unknown => "account_unknown",
            Self::Disabled => "account_disabled",
            Self::InvalidField(e) => e.field.code(),
            Self::KeyLimitReached => "key_limit_reached",
            Self::DailyKeyLimit { .. } => "daily_key_limit",
            Self::IdempotencyConflict(_) => "idempotency_conflict",
            Self::KeyNotFound(_) => "key_not_found",
            Self::NotAnOperator => "not_an_operator",
        }
    }
}
