//! Access requests and grants for `approval` datasets: one record per account and dataset, from
//! the request to its decisions. A person asks (answering the dataset's form, accepting its
//! terms); an operator approves (optionally until a time), rejects with a reason, or revokes; the
//! person may withdraw a pending request. An automatic approval is recorded as a request too.
//!
//! The record holds the latest request and the latest decision: a new request, allowed once the
//! last one was rejected, withdrawn, revoked or has expired, replaces it. Every write increments
//! `rev`, so a decision can be made on the condition that nothing changed since it was read.
//! Storage is [`crate::ports::AccessStore`]; the data path reads only [`Grant`].

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use crate::accounts::{Field, FieldError};
use crate::input::echo;
use crate::keys::Owner;
use crate::policy::{ApprovalPolicy, Grant};
use crate::slug::Slug;

mod decision;
mod error;

pub use decision::{Decision, DecisionRequest};
pub use error::{Expected, GrantError};

/// Where a record stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AccessStatus {
    /// Asked, not decided.
    Pending,
    /// Approved or granted directly: the account's keys read the dataset (until `expires_at`).
    Granted,
    /// Refused, with a reason.
    Rejected,
    /// A grant an operator (or `accounts disable`) ended.
    Revoked,
    /// A pending request its author took back.
    Withdrawn,
}

impl AccessStatus {
    pub const ALL: [Self; 5] = [
        Self::Pending,
        Self::Granted,
        Self::Rejected,
        Self::Revoked,
        Self::Withdrawn,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Granted => "granted",
            Self::Rejected => "rejected",
            Self::Revoked => "revoked",
            Self::Withdrawn => "withdrawn",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == raw)
    }
}

/// Who decided an automatic approval.
pub const AUTOMATIC: &str = "automatic";

/// One account's access to one `approval` dataset: its latest request and decision.
#[derive(Debug, Clone, PartialEq)]
pub struct AccessRecord {
    pub slug: String,
    pub dataset: Uuid,
    /// The account (a Cognito `sub`).
    pub grantee: String,
    /// The account's verified email when it asked (or when an operator granted by email).
    pub email: Option<String>,
    pub status: AccessStatus,
    /// When the person asked; `None` for a grant an operator made without a request.
    pub requested_at: Option<DateTime<Utc>>,
    /// The answers to the dataset's form, by question name.
    pub answers: BTreeMap<String, String>,
    /// Whether the person accepted the dataset's terms when asking.
    pub terms_accepted: bool,
    /// When a grant ends (`None`: until revoked).
    pub expires_at: Option<DateTime<Utc>>,
    /// Who made the latest decision (an operator, `automatic`, or the person for a withdrawal),
    /// and when; `None` while pending.
    pub decided_by: Option<String>,
    pub decided_at: Option<DateTime<Utc>>,
    /// Why a request was rejected.
    pub reason: Option<String>,
    /// Bumped by every write.
    pub rev: u64,
}

impl AccessRecord {
    /// What the data path reads of it.
    pub fn grant(&self) -> Grant {
        Grant {
            granted: self.status == AccessStatus::Granted,
            expires_at: self.expires_at,
        }
    }

    /// In force at `now`, by the data path's own rule ([`Grant::is_active_at`]).
    pub fn is_active_at(&self, now: DateTime<Utc>) -> bool {
        self.grant().is_active_at(now)
    }

    /// The status as people see it: a grant past its expiry is `expired`.
    pub fn shown_status(&self, now: DateTime<Utc>) -> &'static str {
        if self.status == AccessStatus::Granted && !self.is_active_at(now) {
            "expired"
        } else {
            self.status.as_str()
        }
    }

    /// Whether a new request may replace this record: not while one is pending or a grant is
    /// in force.
    pub fn may_ask_again(&self, now: DateTime<Utc>) -> bool {
        match self.status {
            AccessStatus::Pending => false,
            AccessStatus::Granted => !self.is_active_at(now),
            _ => true,
        }
    }

    /// The account's view of its own record (operators' names are not shown to it).
    pub fn own_view(&self, now: DateTime<Utc>) -> OwnView<'_> {
        OwnView {
            dataset: &self.slug,
            status: self.shown_status(now),
            requested_at: self.requested_at,
            answers: &self.answers,
            terms_accepted: self.terms_accepted,
            expires_at: self.expires_at,
            decided_at: self.decided_at,
            reason: self.reason.as_deref(),
        }
    }

    /// Operators' view: the account's record, with who it is and who decided.
    pub fn operator_view(&self, now: DateTime<Utc>) -> OperatorView<'_> {
        OperatorView {
            own: self.own_view(now),
            grantee: &self.grantee,
            email: self.email.as_deref(),
            decided_by: self.decided_by.as_deref(),
            rev: self.rev,
        }
    }
}

/// A record as its account sees it.
#[derive(Debug, Serialize)]
pub struct OwnView<'a> {
    pub dataset: &'a str,
    /// `pending`, `granted`, `expired`, `rejected`, `revoked` or `withdrawn`.
    pub status: &'static str,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub requested_at: Option<DateTime<Utc>>,
    pub answers: &'a BTreeMap<String, String>,
    pub terms_accepted: bool,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub expires_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub decided_at: Option<DateTime<Utc>>,
    pub reason: Option<&'a str>,
}

/// A record as operators see it.
#[derive(Debug, Serialize)]
pub struct OperatorView<'a> {
    #[serde(flatten)]
    pub own: OwnView<'a>,
    pub grantee: &'a str,
    pub email: Option<&'a str>,
    pub decided_by: Option<&'a str>,
    pub rev: u64,
}

/// What `POST /account/access` asks for, checked against the dataset's form later
/// ([`AccessAsk::answers_for`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessAsk {
    pub dataset: Slug,
    pub answers: BTreeMap<String, String>,
    pub accept_terms: bool,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAsk {
    dataset: Option<serde_json::Value>,
    answers: Option<serde_json::Value>,
    accept_terms: Option<serde_json::Value>,
}

fn field(field: Field, message: impl Into<String>) -> FieldError {
    FieldError {
        field,
        message: message.into(),
    }
}

/// Parses a JSON object body with no fields beyond `known` (named in the message).
fn object<T: serde::de::DeserializeOwned>(body: &[u8], known: &str) -> Result<T, FieldError> {
    serde_json::from_slice(body).map_err(|e| {
        let text = e.to_string();
        match text.strip_prefix("unknown field ") {
            Some(rest) => field(
                Field::Body,
                format!(
                    "unknown field {}; the body has {known}",
                    echo(rest.split(',').next().unwrap_or(rest))
                ),
            ),
            None => field(
                Field::Body,
                format!("the body must be a JSON object with {known}"),
            ),
        }
    })
}

impl AccessAsk {
    /// Longest answer accepted before the form is known, in characters (a form's own limits
    /// are at most this).
    pub const MAX_ANSWER: usize = crate::policy::FormField::MAX_ANSWER;

    /// Parses `{"dataset": "<slug>", "answers": {"<name>": "<text>"}, "accept_terms": true}`:
    /// `answers` and `accept_terms` are optional.
    pub fn parse(body: &[u8]) -> Result<Self, FieldError> {
        let raw: RawAsk = object(body, "'dataset', 'answers' and 'accept_terms'")?;
        let dataset = match raw.dataset {
            Some(serde_json::Value::String(s)) => Slug::parse(&s).map_err(|_| {
                field(
                    Field::Dataset,
                    format!("dataset must be a dataset's slug, got '{}'", echo(&s)),
                )
            })?,
            _ => return Err(field(Field::Dataset, "dataset (a slug) is required")),
        };
        let answers = match raw.answers {
            None | Some(serde_json::Value::Null) => BTreeMap::new(),
            Some(serde_json::Value::Object(map)) => {
                let mut answers = BTreeMap::new();
                for (name, value) in map {
                    let serde_json::Value::String(text) = value else {
                        return Err(field(
                            Field::Answers,
                            format!("the answer to '{}' must be a string", echo(&name)),
                        ));
                    };
                    answers.insert(name, text);
                }
                answers
            }
            Some(_) => {
                return Err(field(
                    Field::Answers,
                    "answers must be an object of the form's question names and texts",
                ))
            }
        };
        let accept_terms = match raw.accept_terms {
            None | Some(serde_json::Value::Null) => false,
            Some(serde_json::Value::Bool(b)) => b,
            Some(_) => return Err(field(Field::Body, "accept_terms must be true or false")),
        };
        Ok(Self {
            dataset,
            answers,
            accept_terms,
        })
    }

    /// The answers as the dataset's form takes them: every required question answered, none
    /// longer than its limit, no question the form does not ask, and the terms accepted if
    /// there are any. Answers are trimmed; an empty one is no answer.
    pub fn answers_for(
        &self,
        policy: &ApprovalPolicy,
    ) -> Result<BTreeMap<String, String>, FieldError> {
        if let Some(name) = self
            .answers
            .keys()
            .find(|name| !policy.form.iter().any(|f| &f.name == *name))
        {
            return Err(field(
                Field::Answers,
                format!("the form has no question '{}'", echo(name)),
            ));
        }
        let mut answers = BTreeMap::new();
        for question in &policy.form {
            let text = self
                .answers
                .get(&question.name)
                .map(|t| t.trim())
                .unwrap_or("");
            if text.is_empty() {
                if question.required {
                    return Err(field(
                        Field::Answers,
                        format!("'{}' needs an answer ({})", question.name, question.label),
                    ));
                }
                continue;
            }
            let chars = text.chars().count();
            if chars > question.max_length {
                return Err(field(
                    Field::Answers,
                    format!(
                        "the answer to '{}' is {chars} characters: at most {}",
                        question.name, question.max_length
                    ),
                ));
            }
            if text
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t')
            {
                return Err(field(
                    Field::Answers,
                    format!("the answer to '{}' holds control characters", question.name),
                ));
            }
            answers.insert(question.name.clone(), text.to_owned());
        }
        if policy.terms.is_some() && !self.accept_terms {
            return Err(field(
                Field::AcceptTerms,
                "this dataset's terms must be accepted (\"accept_terms\": true) to ask for access",
            ));
        }
        Ok(answers)
    }

    /// The record of this request by `grantee`, decided at once when the dataset's approval is
    /// automatic.
    #[allow(clippy::too_many_arguments)]
    pub fn record(
        &self,
        dataset: Uuid,
        grantee: &Owner,
        email: Option<String>,
        answers: BTreeMap<String, String>,
        automatic: bool,
        terms: bool,
        now: DateTime<Utc>,
    ) -> AccessRecord {
        AccessRecord {
            slug: self.dataset.to_string(),
            dataset,
            grantee: grantee.to_string(),
            email,
            status: if automatic {
                AccessStatus::Granted
            } else {
                AccessStatus::Pending
            },
            requested_at: Some(now),
            answers,
            terms_accepted: terms && self.accept_terms,
            expires_at: None,
            decided_by: automatic.then(|| AUTOMATIC.to_owned()),
            decided_at: automatic.then_some(now),
            reason: None,
            rev: 0,
        }
    }
}

/// Whether the claims' `cognito:groups` name `group`, exactly. API Gateway's HTTP API passes an
/// array claim as `[a b]`, its items separated by spaces (group names hold no whitespace).
pub fn in_group(claims: &std::collections::HashMap<String, String>, group: &str) -> bool {
    let Some(groups) = claims.get("cognito:groups") else {
        return false;
    };
    let inner = groups
        .strip_prefix('[')
        .and_then(|g| g.strip_suffix(']'))
        .unwrap_or(groups);
    inner.split_whitespace().any(|g| g == group)
}

#[cfg(test)]
mod tests;
