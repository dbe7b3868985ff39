//! What an access request or an operator's decision can be refused for. Typed; the HTTP status
//! of each is `catalog-http`'s (`catalog_http::error`), the one place errors are mapped.

use std::fmt;

use chrono::{DateTime, Utc};

use super::{AccessRecord, AccessStatus, DecisionRequest};
use crate::slug::Slug;

/// A refused access request, withdrawal or decision.
#[derive(Debug, thiserror::Error)]
pub enum GrantError {
    #[error("dataset '{0}' is open to every registered account: there is no access to ask for")]
    RequestNotNeeded(Slug),
    #[error("a request for '{0}' is already pending: withdraw it to ask again")]
    RequestPending(Slug),
    #[error("this account already has access to '{0}'")]
    AlreadyGranted(Slug),
    #[error("the catalog's operators revoked this account's access to '{0}': ask them to grant it again")]
    AccessRevoked(Slug),
    /// No pending request to withdraw (the dataset as the client named it, echoed).
    #[error("no pending request for '{0}' in this account")]
    RequestNotFound(String),
    /// No record to decide on (the dataset and account as the path named them, echoed).
    #[error("no access record for account {grantee} on '{slug}'")]
    RecordNotFound { slug: String, grantee: String },
    /// The record is not in the state (or at the revision) the decision applies to.
    #[error("cannot {verb}: the record of {grantee} on '{slug}' is {status} (revision {rev}), not {expected}")]
    DecisionConflict {
        verb: &'static str,
        slug: String,
        grantee: String,
        status: &'static str,
        rev: u64,
        expected: Expected,
    },
}

/// The state a decision applies to, and the revision it was made on when the operator gave one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expected {
    pub status: AccessStatus,
    pub rev: Option<u64>,
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.rev {
            Some(rev) => write!(f, "{} at revision {rev}", self.status.as_str()),
            None => f.write_str(self.status.as_str()),
        }
    }
}

impl GrantError {
    /// A decision that found `record` as it stands, not as `request` expects it.
    pub fn conflict(request: &DecisionRequest, record: &AccessRecord, now: DateTime<Utc>) -> Self {
        Self::DecisionConflict {
            verb: request.decision.verb(),
            slug: record.slug.clone(),
            grantee: record.grantee.clone(),
            status: record.shown_status(now),
            rev: record.rev,
            expected: Expected {
                status: request.decision.applies_to(),
                rev: request.rev,
            },
        }
    }

    /// The stable code clients can match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RequestNotNeeded(_) => "request_not_needed",
            Self::RequestPending(_) => "request_pending",
            Self::AlreadyGranted(_) => "already_granted",
            Self::AccessRevoked(_) => "access_revoked",
            Self::RequestNotFound(_) | Self::RecordNotFound { .. } => "request_not_found",
            Self::DecisionConflict { .. } => "decision_conflict",
        }
    }
}
