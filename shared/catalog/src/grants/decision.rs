//! An operator's decision on an account's access, and the body of the operators' route that
//! carries it.

use chrono::{DateTime, Utc};

use super::{field, object, AccessStatus};
use crate::accounts::{Field, FieldError};
use crate::input::echo;

/// An operator's decision on an account's access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// A pending request becomes a grant, until `expires_at` (`None`: until revoked).
    Approve { expires_at: Option<DateTime<Utc>> },
    /// A pending request is refused, with a reason the person sees.
    Reject { reason: String },
    /// A grant in force ends: the account's next data request is refused.
    Revoke,
}

impl Decision {
    /// Longest reason, in characters.
    pub const MAX_REASON: usize = 500;

    /// The status a record must have for this decision.
    pub fn applies_to(&self) -> AccessStatus {
        match self {
            Self::Approve { .. } | Self::Reject { .. } => AccessStatus::Pending,
            Self::Revoke => AccessStatus::Granted,
        }
    }

    pub fn verb(&self) -> &'static str {
        match self {
            Self::Approve { .. } => "approve",
            Self::Reject { .. } => "reject",
            Self::Revoke => "revoke",
        }
    }

    /// A rejection's reason, checked: 1 to [`Self::MAX_REASON`] characters.
    pub fn reject(reason: &str) -> Result<Self, FieldError> {
        let reason = reason.trim();
        if reason.is_empty() || reason.chars().count() > Self::MAX_REASON {
            return Err(field(
                Field::Reason,
                format!(
                    "a rejection needs a reason of 1 to {} characters",
                    Self::MAX_REASON
                ),
            ));
        }
        Ok(Self::Reject {
            reason: reason.to_owned(),
        })
    }

    /// An approval until `expires_at`, which must be in the future.
    pub fn approve(
        expires_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Self, FieldError> {
        if expires_at.is_some_and(|t| t <= now) {
            return Err(field(Field::ExpiresAt, "expires_at must be in the future"));
        }
        Ok(Self::Approve { expires_at })
    }
}

/// An operator's decision as the operators' route takes it:
/// `{"decision": "approve"|"reject"|"revoke", "expires_at": "<RFC 3339>", "reason": "...",
/// "rev": <n>}` (`rev`: decide only if the record is still at that revision; required to
/// approve or reject).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    pub decision: Decision,
    pub rev: Option<u64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawDecision {
    decision: Option<serde_json::Value>,
    expires_at: Option<serde_json::Value>,
    reason: Option<serde_json::Value>,
    rev: Option<serde_json::Value>,
}

impl DecisionRequest {
    pub fn parse(body: &[u8], now: DateTime<Utc>) -> Result<Self, FieldError> {
        let raw: RawDecision = object(body, "'decision', 'expires_at', 'reason' and 'rev'")?;
        let text = |v: Option<serde_json::Value>, name: Field| match v {
            None | Some(serde_json::Value::Null) => Ok(None),
            Some(serde_json::Value::String(s)) => Ok(Some(s)),
            Some(_) => Err(field(name, format!("{} must be a string", name.as_str()))),
        };
        let expires_at = text(raw.expires_at, Field::ExpiresAt)?
            .map(|t| {
                DateTime::parse_from_rfc3339(&t)
                    .map(|t| t.with_timezone(&Utc))
                    .map_err(|_| {
                        field(
                            Field::ExpiresAt,
                            format!("expires_at must be an RFC 3339 time, got '{}'", echo(&t)),
                        )
                    })
            })
            .transpose()?;
        let reason = text(raw.reason, Field::Reason)?;
        let decision = match text(raw.decision, Field::Decision)?.as_deref() {
            Some("approve") if reason.is_none() => Decision::approve(expires_at, now)?,
            Some("reject") if expires_at.is_none() => {
                Decision::reject(reason.as_deref().unwrap_or(""))?
            }
            Some("revoke") if expires_at.is_none() && reason.is_none() => Decision::Revoke,
            Some("approve" | "reject" | "revoke") => {
                return Err(field(
                    Field::Body,
                    "expires_at goes with approve only, reason with reject only",
                ))
            }
            _ => {
                return Err(field(
                    Field::Decision,
                    "decision must be 'approve', 'reject' or 'revoke'",
                ))
            }
        };
        let rev = match raw.rev {
            None | Some(serde_json::Value::Null) => None,
            Some(v) => Some(
                v.as_u64()
                    .ok_or_else(|| field(Field::Rev, "rev must be a whole number"))?,
            ),
        };
        // A request is decided as the operator saw it: one made after a withdrawal, with other
        // answers, is another request.
        if rev.is_none() && decision.applies_to() == AccessStatus::Pending {
            return Err(field(
                Field::Rev,
                "rev (the request's revision, as listed) is required to approve or reject",
            ));
        }
        Ok(Self { decision, rev })
    }
}
