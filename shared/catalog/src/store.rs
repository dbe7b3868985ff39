//! What a storage or signing adapter reports when it fails ([`StoreError`]): the one error of
//! the ports ([`crate::ports`]), which `ApiError` turns into a 503 or a 500.

use std::error::Error as StdError;

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
