//! Emails that tell people where they stand (issue 40 §4), recorded first and sent later.
//!
//! Whenever an access request is recorded or decided, a [`Notice`] is written in the same write
//! as the record (the store's transaction, `catalog_aws::dynamo::access`): an outbox. The mailer
//! function ([`run`]) reads the pending notices every minute and sends them:
//!
//! - a request ([`NoticeKind::Requested`]) to the dataset's deciders ([`Deciders`]) as a digest:
//!   at most one email per decider per [`MailerConfig::digest`], holding every request that
//!   arrived since;
//! - an approval, rejection or revocation to the person, unless they turned emails off.
//!
//! An email that cannot be sent leaves its notice pending for the next run; after
//! [`MailerConfig::max_attempts`] it is set aside as failed. Nothing here touches the access
//! record. A notice holds what its email needs and never a key, a token or a secret.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

use crate::grants::{AccessRecord, AccessStatus};
use crate::store::StoreError;
use crate::time::format_time;

mod email;
mod run;
#[cfg(test)]
mod tests;

pub use email::{digest_email, personal_email, Email};
pub use run::{run, MailerConfig, RunReport};

/// What a notice tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum NoticeKind {
    /// A request arrived and waits for a decision (to the deciders).
    Requested,
    /// The request was approved, or granted at once (to the person).
    Approved,
    /// The request was rejected, with a reason (to the person).
    Rejected,
    /// The grant was revoked (to the person).
    Revoked,
    /// An address was invited to join an organisation (to that address: `slug` is the
    /// organisation, `reason` the role, `expires_at` when the invitation closes; no account
    /// yet, so no preference applies).
    Invited,
}

impl NoticeKind {
    pub const ALL: [Self; 5] = [
        Self::Requested,
        Self::Approved,
        Self::Rejected,
        Self::Revoked,
        Self::Invited,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Requested => "requested",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Revoked => "revoked",
            Self::Invited => "invited",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == raw)
    }
}

/// One email to send, as the outbox holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Notice {
    /// Time-ordered ([`Notice::id_at`]): the outbox is read oldest first.
    pub id: String,
    pub kind: NoticeKind,
    pub dataset: Uuid,
    pub slug: String,
    /// The account that asked (a Cognito `sub`).
    pub account: String,
    /// That account's verified email, when known.
    pub email: Option<String>,
    /// An approval's end (`None`: until revoked).
    pub expires_at: Option<DateTime<Utc>>,
    /// A rejection's reason.
    pub reason: Option<String>,
    pub created_at: DateTime<Utc>,
    /// Sends that failed so far.
    pub attempts: u32,
    /// The deciders a request's digest has reached (a request is done once all have it).
    pub sent_to: BTreeSet<String>,
}

impl Notice {
    /// The notice an invitation calls for: an email to the address invited, saying which
    /// organisation, as what, until when, and where to accept (no token: the address is the
    /// credential once its owner signs in).
    pub fn for_invitation(invitation: &crate::orgs::Invitation, now: DateTime<Utc>) -> Self {
        Self {
            id: Self::id_at(now),
            kind: NoticeKind::Invited,
            dataset: Uuid::nil(),
            slug: invitation.org.to_string(),
            account: String::new(),
            email: Some(invitation.email.clone()),
            expires_at: Some(invitation.expires_at),
            reason: Some(invitation.role.as_str().to_owned()),
            created_at: now,
            attempts: 0,
            sent_to: BTreeSet::new(),
        }
    }

    /// A time-ordered id: the time in microseconds (16 digits), then 8 random hex digits.
    pub fn id_at(now: DateTime<Utc>) -> String {
        let simple = Uuid::new_v4().simple().to_string();
        format!("{:016}-{}", now.timestamp_micros().max(0), &simple[..8])
    }

    /// The notice a record's write calls for: a new request (pending) tells the deciders; a
    /// grant (automatic or an operator's), a rejection or a revocation tells the person; a
    /// withdrawal tells nobody.
    pub fn for_record(record: &AccessRecord, now: DateTime<Utc>) -> Option<Self> {
        let kind = match record.status {
            AccessStatus::Pending => NoticeKind::Requested,
            AccessStatus::Granted => NoticeKind::Approved,
            AccessStatus::Rejected => NoticeKind::Rejected,
            AccessStatus::Revoked => NoticeKind::Revoked,
            AccessStatus::Withdrawn => return None,
        };
        Some(Self {
            id: Self::id_at(now),
            kind,
            dataset: record.dataset,
            slug: record.slug.clone(),
            account: record.grantee.clone(),
            email: record.email.clone(),
            expires_at: (kind == NoticeKind::Approved)
                .then_some(record.expires_at)
                .flatten(),
            reason: (kind == NoticeKind::Rejected)
                .then(|| record.reason.clone())
                .flatten(),
            created_at: now,
            attempts: 0,
            sent_to: BTreeSet::new(),
        })
    }
}

/// What a send came to, as the mailer port reports it.
#[derive(Debug, thiserror::Error)]
#[error("the email could not be sent: {0}")]
pub struct SendError(pub String);

/// The outbox and what the mailer keeps beside it (the keys table on AWS).
pub trait NoticeQueue: Send + Sync {
    /// Pending notices, oldest first, at most `limit`.
    fn pending(&self, limit: usize)
        -> impl Future<Output = Result<Vec<Notice>, StoreError>> + Send;

    /// The notice is done: removed from the outbox.
    fn done(&self, id: &str) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A request's digest reached one decider.
    fn reached(
        &self,
        id: &str,
        recipient: &str,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// A send failed: `attempts` is the new count; `give_up` sets the notice aside as failed
    /// (out of the pending notices, kept for operators to read).
    fn attempt_failed(
        &self,
        id: &str,
        attempts: u32,
        give_up: bool,
        now: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;

    /// Whether the account wants emails (its preference; `true` unless it said no).
    fn emails_wanted(&self, account: &str)
        -> impl Future<Output = Result<bool, StoreError>> + Send;

    /// When the last digest went to this address.
    fn last_digest(
        &self,
        recipient: &str,
    ) -> impl Future<Output = Result<Option<DateTime<Utc>>, StoreError>> + Send;

    /// A digest went to this address now.
    fn digest_sent(
        &self,
        recipient: &str,
        at: DateTime<Utc>,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Who decides a dataset's requests: their email addresses. The first answer is the operators'
/// configured addresses for every dataset ([`Operators`]); organisations' admins come later.
pub trait Deciders: Send + Sync {
    fn deciders(
        &self,
        dataset: &Uuid,
        slug: &str,
    ) -> impl Future<Output = Result<Vec<String>, StoreError>> + Send;
}

/// The operators' addresses, for every dataset.
#[derive(Debug, Clone, Default)]
pub struct Operators(pub Vec<String>);

impl Operators {
    /// `a@x, b@y` (commas, spaces around them, empties ignored).
    pub fn parse(list: &str) -> Self {
        Self(
            list.split(',')
                .map(str::trim)
                .filter(|a| !a.is_empty())
                .map(str::to_owned)
                .collect(),
        )
    }
}

impl Deciders for Operators {
    async fn deciders(&self, _dataset: &Uuid, _slug: &str) -> Result<Vec<String>, StoreError> {
        Ok(self.0.clone())
    }
}

/// A person's choice of emails about their access (`GET|PUT /api/v1/account/preferences`), on
/// their account.
pub trait EmailPreferences: Send + Sync {
    /// Whether the account wants emails (`true` unless it said no).
    fn emails(
        &self,
        owner: &crate::keys::Owner,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send;

    fn set_emails(
        &self,
        owner: &crate::keys::Owner,
        wanted: bool,
    ) -> impl Future<Output = Result<(), StoreError>> + Send;
}

/// Sends one email (SES on AWS).
pub trait Mailer: Send + Sync {
    fn send(&self, email: &Email) -> impl Future<Output = Result<(), SendError>> + Send;
}

/// How a time is told in an email: `2026-12-31T00:00:00Z (UTC)`.
fn told(t: &DateTime<Utc>) -> String {
    format!("{} (UTC)", format_time(t))
}

/// The requests waiting for each decider: recipient -> notices not yet sent to them.
fn by_recipient<'a>(requests: &[(&'a Notice, Vec<String>)]) -> BTreeMap<String, Vec<&'a Notice>> {
    let mut out: BTreeMap<String, Vec<&Notice>> = BTreeMap::new();
    for (notice, deciders) in requests {
        for to in deciders {
            if !notice.sent_to.contains(to) {
                out.entry(to.clone()).or_default().push(notice);
            }
        }
    }
    out
}

/// Whether a digest may go to a recipient whose last went at `last`.
fn digest_due(last: Option<DateTime<Utc>>, window: Duration, now: DateTime<Utc>) -> bool {
    last.is_none_or(|last| now - last >= window)
}
