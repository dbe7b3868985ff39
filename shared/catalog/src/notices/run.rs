//! One run of the mailer: every pending notice read, sent or held, and the outbox updated.

use std::collections::{BTreeMap, BTreeSet};

use chrono::{DateTime, Duration, Utc};

use super::{
    by_recipient, digest_due, digest_email, personal_email, Deciders, Mailer, Notice, NoticeKind,
    NoticeQueue, SendError,
};
use crate::metrics::{record, Metric};
use crate::store::StoreError;

/// How the mailer runs (the function's environment sets it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MailerConfig {
    /// The site's address: emails link to its `account.html` and `operators.html`.
    pub site_url: String,
    /// At most one digest per decider in this time.
    pub digest: Duration,
    /// Failed sends after which a notice is set aside as failed.
    pub max_attempts: u32,
    /// Notices read in one run (the rest wait for the next).
    pub batch: usize,
}

impl MailerConfig {
    /// The digest's default window, in minutes.
    pub const DIGEST_MINUTES: i64 = 15;
    /// Failed sends before a notice is set aside (one a minute: ten minutes of SES failing).
    pub const MAX_ATTEMPTS: u32 = 10;
    pub const BATCH: usize = 200;

    pub fn new(site_url: impl Into<String>) -> Self {
        Self {
            site_url: site_url.into(),
            digest: Duration::minutes(Self::DIGEST_MINUTES),
            max_attempts: Self::MAX_ATTEMPTS,
            batch: Self::BATCH,
        }
    }
}

/// What one run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RunReport {
    /// Pending notices read.
    pub read: usize,
    /// Emails sent to people about their own access.
    pub sent: usize,
    /// Digests sent to deciders.
    pub digests: usize,
    /// Notices dropped unsent: the person turned emails off, or there is nobody to send to.
    pub unwanted: usize,
    /// Requests waiting for a decider's digest window.
    pub held: usize,
    /// Notices whose send failed and that wait for the next run.
    pub retried: usize,
    /// Notices set aside as failed in this run.
    pub failed: usize,
}

/// Reads the pending notices and sends them. A store error ends the run (the function's Errors
/// alarm); a send error is the notice's alone.
pub async fn run<Q: NoticeQueue, D: Deciders, M: Mailer>(
    queue: &Q,
    deciders: &D,
    mailer: &M,
    config: &MailerConfig,
    now: DateTime<Utc>,
) -> Result<RunReport, StoreError> {
    let pending = queue.pending(config.batch).await?;
    let mut report = RunReport {
        read: pending.len(),
        ..RunReport::default()
    };
    let mut requests = Vec::new();
    for notice in &pending {
        if notice.kind == NoticeKind::Requested {
            let to = deciders.deciders(&notice.dataset, &notice.slug).await?;
            if to.iter().all(|t| notice.sent_to.contains(t)) {
                // Nobody (left) to tell.
                queue.done(&notice.id).await?;
                report.unwanted += 1;
            } else {
                requests.push((notice, to));
            }
            continue;
        }
        // An invitation goes to an address that may have no account yet: no preference to ask.
        if notice.kind != NoticeKind::Invited && !queue.emails_wanted(&notice.account).await? {
            queue.done(&notice.id).await?;
            report.unwanted += 1;
            continue;
        }
        let Some(email) = personal_email(notice, &config.site_url) else {
            tracing::warn!(notice = %notice.id, "a notice with no address to send to");
            queue.done(&notice.id).await?;
            report.unwanted += 1;
            continue;
        };
        match mailer.send(&email).await {
            Ok(()) => {
                queue.done(&notice.id).await?;
                report.sent += 1;
            }
            Err(e) => failed(queue, notice, config, now, &mut report, &e).await?,
        }
    }
    let mut reached: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    let mut failing: BTreeSet<&str> = BTreeSet::new();
    for (to, notices) in by_recipient(&requests) {
        if !digest_due(queue.last_digest(&to).await?, config.digest, now) {
            report.held += notices.len();
            continue;
        }
        let email = digest_email(&to, &notices, &config.site_url);
        match mailer.send(&email).await {
            Ok(()) => {
                queue.digest_sent(&to, now).await?;
                report.digests += 1;
                for n in &notices {
                    queue.reached(&n.id, &to).await?;
                    reached.entry(&n.id).or_default().insert(to.clone());
                }
            }
            Err(e) => {
                for n in notices {
                    // Counted once a run, however many deciders it failed for.
                    if failing.insert(&n.id) {
                        failed(queue, n, config, now, &mut report, &e).await?;
                    }
                }
            }
        }
    }
    for (notice, to) in &requests {
        let now_reached = reached.get(notice.id.as_str());
        let all = to
            .iter()
            .all(|t| notice.sent_to.contains(t) || now_reached.is_some_and(|r| r.contains(t)));
        if all && !failing.contains(notice.id.as_str()) {
            queue.done(&notice.id).await?;
        }
    }
    Ok(report)
}

/// A send failed: one more attempt counted; past the limit, the notice is set aside.
async fn failed<Q: NoticeQueue>(
    queue: &Q,
    notice: &Notice,
    config: &MailerConfig,
    now: DateTime<Utc>,
    report: &mut RunReport,
    error: &SendError,
) -> Result<(), StoreError> {
    let attempts = notice.attempts + 1;
    let give_up = attempts >= config.max_attempts;
    queue
        .attempt_failed(&notice.id, attempts, give_up, now)
        .await?;
    if give_up {
        tracing::error!(notice = %notice.id, kind = notice.kind.as_str(), dataset = %notice.slug, attempts, error = %error, "a notice could not be sent and is set aside");
        record(Metric::NoticeFailed);
        report.failed += 1;
    } else {
        tracing::warn!(notice = %notice.id, kind = notice.kind.as_str(), attempts, error = %error, "a notice could not be sent; the next run tries again");
        report.retried += 1;
    }
    Ok(())
}
