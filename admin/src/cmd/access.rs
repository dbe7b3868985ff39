//! `catalog-admin access`: who may read a dataset's data. A dataset's level (`registered`: any
//! read key; `approval`: an account's key with a grant, or an operator's key), accounts'
//! requests and grants, by email or account id (a Cognito `sub`). Decisions are recorded with who made them (`CATALOG_OPERATOR`, else the
//! login name) and when.

use catalog::grants::{AccessRecord, AccessStatus, Decision};
use catalog::policy::{AccessLevel, Approval};
use catalog::ports::{AccessStore, DatasetAccess, Decided};
use catalog::time::format_time;
use catalog_aws::dynamo::access::DynamoAccess;
use chrono::{DateTime, Utc};

use super::{accounts, operator, slug, Aws, CliError, Context};
use crate::parse_when;

/// Set a dataset's access level; grant, revoke and list accounts' access (by email or account
/// id).
///
/// Example: catalog-admin access grant river-levels someone@example.com --expires +90d
#[derive(clap::Subcommand)]
pub enum Command {
    /// Set who may read the data: `registered` (any valid read key), `approval` (an
    /// account's key whose account holds a grant, or an operator's key) or `private` (an
    /// organisation's dataset, `org~name`: its members and the operators only; to anyone else
    /// it does not exist, and it leaves every public list; back to `registered` or `approval`
    /// it is listed again, as newest). Takes effect on the next request. The request form and
    /// terms stay as published.
    ///
    /// Example: catalog-admin access level river-levels approval --approval manual
    Level {
        slug: String,
        /// `registered`, `approval` or `private`.
        level: String,
        /// How requests are decided at the `approval` level: `manual` or `automatic` (default:
        /// as stored).
        #[arg(long)]
        approval: Option<String>,
    },
    /// Grant an account access to a dataset directly, with or without a request (replacing
    /// an earlier decision). Needs USER_POOL_ID.
    ///
    /// Example: catalog-admin access grant river-levels someone@example.com --expires +90d
    Grant {
        slug: String,
        /// An email, or an account id (a Cognito `sub`).
        account: String,
        /// Expiry: RFC 3339 time or +<n><s|m|h|d> (default: until revoked).
        #[arg(long)]
        expires: Option<String>,
    },
    /// Approve an account's pending request (optionally until a time), as `access requests`
    /// showed it: with `--rev`, only if the request is still at that revision (the person may
    /// have withdrawn it and asked again with other answers); without, at the revision read
    /// just before. Needs USER_POOL_ID.
    ///
    /// Example: catalog-admin access approve river-levels someone@example.com --rev 1 --expires +90d
    Approve {
        slug: String,
        /// An email, or an account id (a Cognito `sub`).
        account: String,
        /// Expiry: RFC 3339 time or +<n><s|m|h|d> (default: until revoked).
        #[arg(long)]
        expires: Option<String>,
        /// The request's revision, as `access requests` lists it.
        #[arg(long)]
        rev: Option<u64>,
    },
    /// Reject an account's pending request, with a reason the person sees (`--rev` as for
    /// approve). Needs USER_POOL_ID.
    ///
    /// Example: catalog-admin access reject river-levels someone@example.com --rev 1 --reason "partners only"
    Reject {
        slug: String,
        /// An email, or an account id (a Cognito `sub`).
        account: String,
        /// Why (1 to 500 characters).
        #[arg(long)]
        reason: String,
        /// The request's revision, as `access requests` lists it.
        #[arg(long)]
        rev: Option<u64>,
    },
    /// Revoke an account's access to a dataset: its next data request is refused. By account
    /// id, also the grant of an account deleted from the user pool. Needs USER_POOL_ID.
    ///
    /// Example: catalog-admin access revoke river-levels someone@example.com
    Revoke {
        slug: String,
        /// An email, or an account id (a Cognito `sub`).
        account: String,
    },
    /// Access requests in one status (default: pending), of one dataset or all, newest first,
    /// with each record's revision (`--rev` of approve and reject) and the form's answers or
    /// the rejection's reason.
    ///
    /// Example: catalog-admin access requests river-levels --status rejected
    Requests {
        slug: Option<String>,
        /// pending, granted, rejected, revoked or withdrawn.
        #[arg(long)]
        status: Option<String>,
    },
    /// Who has (or had) access to a dataset: email, account id, status, expiry, and who
    /// decided when.
    ///
    /// Example: catalog-admin access list river-levels
    List { slug: String },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let writer = aws.writer();
    let access = aws.access();
    let now = ctx.now;
    match command {
        Command::Level {
            slug: raw,
            level,
            approval,
        } => {
            let slug = slug(&raw)?;
            let level = AccessLevel::parse(&level).ok_or_else(|| {
                CliError::Usage(format!(
                    "unknown level '{level}': use 'registered', 'approval' or 'private'"
                ))
            })?;
            let mut policy = writer
                .dataset_meta(&slug)
                .await?
                .ok_or_else(|| CliError::Usage(format!("no dataset '{slug}'")))?
                .access;
            if let Some(approval) = approval {
                policy.approval = match approval.as_str() {
                    "manual" => Approval::Manual,
                    "automatic" => Approval::Automatic,
                    other => {
                        return Err(CliError::Usage(format!(
                            "unknown approval '{other}': use 'manual' or 'automatic'"
                        )))
                    }
                };
            }
            writer.set_access(&slug, level, &policy, now).await?;
            println!("{slug}: access level {}", level.as_str());
        }
        Command::Grant {
            slug: raw,
            account,
            expires,
        } => {
            let dataset = dataset_of(&access, &raw).await?;
            let expires_at = expiry(expires, now)?;
            let account = accounts::find(&aws, &account).await?;
            let (sub, email) = (&account.sub, account.name.as_str());
            let known = account.email().ok_or_else(|| {
                CliError::Usage(format!(
                    "the account {sub} is no longer in the user pool (deleted): it cannot be granted access"
                ))
            })?;
            access
                .grant(&dataset, sub, known, expires_at, &operator(), now)
                .await?;
            println!(
                "granted {email} ({sub}) access to {} {}",
                dataset.slug,
                until(expires_at)
            );
        }
        Command::Approve {
            slug: raw,
            account,
            expires,
            rev,
        } => {
            let expires_at = expiry(expires, now)?;
            let decision =
                Decision::approve(expires_at, now).map_err(|e| CliError::Usage(e.message))?;
            let (email, record) =
                decide(&aws, &access, &raw, &account, &decision, rev, now).await?;
            println!(
                "approved {email}'s request for {} (revision {}) {}",
                record.slug,
                record.rev - 1,
                until(expires_at)
            );
        }
        Command::Reject {
            slug: raw,
            account,
            reason,
            rev,
        } => {
            let decision = Decision::reject(&reason).map_err(|e| CliError::Usage(e.message))?;
            let (email, record) =
                decide(&aws, &access, &raw, &account, &decision, rev, now).await?;
            println!(
                "rejected {email}'s request for {} (revision {})",
                record.slug,
                record.rev - 1
            );
        }
        Command::Revoke { slug: raw, account } => {
            let (email, record) =
                decide(&aws, &access, &raw, &account, &Decision::Revoke, None, now).await?;
            println!("revoked {email}'s access to {}", record.slug);
        }
        Command::Requests { slug, status } => {
            let status = match status.as_deref() {
                None => AccessStatus::Pending,
                Some(raw) => AccessStatus::parse(raw).ok_or_else(|| {
                    CliError::Usage(format!(
                        "unknown status '{raw}': use pending, granted, rejected, revoked or withdrawn"
                    ))
                })?,
            };
            let dataset = match slug {
                Some(raw) => Some(dataset_of(&access, &raw).await?),
                None => None,
            };
            let records = access
                .access_by_status(status, dataset.as_ref().map(|d| &d.id))
                .await?;
            print_records(&records, now);
        }
        Command::List { slug: raw } => {
            let dataset = dataset_of(&access, &raw).await?;
            let records = access
                .records_of(&dataset.id, &[AccessStatus::Granted, AccessStatus::Revoked])
                .await?;
            print_records(&records, now);
        }
    }
    Ok(())
}

/// The dataset a slug names, with its policy.
async fn dataset_of(access: &DynamoAccess, raw: &str) -> Result<DatasetAccess, CliError> {
    access
        .dataset_access(&slug(raw)?)
        .await?
        .ok_or_else(|| CliError::Usage(format!("no dataset '{raw}'")))
}

fn expiry(expires: Option<String>, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>, CliError> {
    let expires_at = expires
        .map(|e| parse_when(&e, now).map_err(CliError::Usage))
        .transpose()?;
    if expires_at.is_some_and(|t| t <= now) {
        return Err(CliError::Usage("--expires must be in the future".into()));
    }
    Ok(expires_at)
}

fn until(expires_at: Option<DateTime<Utc>>) -> String {
    expires_at.map_or("until revoked".to_owned(), |t| {
        format!("until {}", format_time(&t))
    })
}

/// Applies an operator's decision to an account's record (by email or id), at a revision: the
/// one given (as `access requests` showed it), else the one read just before, so that a record
/// that changed meanwhile is not decided on; or says why it does not apply. The account's name
/// in messages, and the record decided.
async fn decide(
    aws: &Aws,
    access: &DynamoAccess,
    raw: &str,
    who: &str,
    decision: &Decision,
    rev: Option<u64>,
    now: DateTime<Utc>,
) -> Result<(String, AccessRecord), CliError> {
    let dataset = dataset_of(access, raw).await?;
    let account = accounts::find(aws, who).await?;
    let (sub, email) = (&account.sub, account.name.clone());
    if account.user.is_none() && matches!(decision, Decision::Approve { .. }) {
        return Err(CliError::Usage(format!(
            "the account {sub} is no longer in the user pool (deleted): its request cannot be approved"
        )));
    }
    let not_found = || {
        CliError::Usage(format!(
            "{email} has neither asked for nor been granted access to {}",
            dataset.slug
        ))
    };
    let rev = match rev {
        Some(rev) => rev,
        None => {
            access
                .record(sub, &dataset.id)
                .await?
                .ok_or_else(not_found)?
                .rev
        }
    };
    match access
        .decide(&dataset.id, sub, decision, Some(rev), &operator(), now)
        .await?
    {
        Decided::Done(record) => Ok((email, record)),
        Decided::Conflict(record) => Err(CliError::Usage(format!(
            "cannot {}: {email}'s record for {} is {} at revision {}, not {} at revision {rev}{}",
            decision.verb(),
            dataset.slug,
            record.shown_status(now),
            record.rev,
            decision.applies_to().as_str(),
            if record.rev == rev {
                ""
            } else {
                " (it changed since it was read: list it again with `access requests`)"
            }
        ))),
        Decided::NotFound => Err(not_found()),
    }
}

fn print_records(records: &[AccessRecord], now: DateTime<Utc>) {
    let t = |t: Option<DateTime<Utc>>| t.map_or("-".to_owned(), |t| format_time(&t));
    println!(
        "{:<24} {:<32} {:<36} {:<9} {:>4} {:<20} {:<20} {:<20} {:<16} answers / reason",
        "dataset",
        "email",
        "account",
        "status",
        "rev",
        "requested",
        "expires",
        "decided",
        "decided by"
    );
    for r in records {
        let detail = match &r.reason {
            Some(reason) => format!("reason: {reason}"),
            None => r
                .answers
                .iter()
                .map(|(k, v)| format!("{k}={v:?}"))
                .collect::<Vec<_>>()
                .join(" "),
        };
        println!(
            "{:<24} {:<32} {:<36} {:<9} {:>4} {:<20} {:<20} {:<20} {:<16} {}",
            r.slug,
            r.email.as_deref().unwrap_or("-"),
            r.grantee,
            r.shown_status(now),
            r.rev,
            t(r.requested_at),
            t(r.expires_at),
            t(r.decided_at),
            r.decided_by.as_deref().unwrap_or("-"),
            detail
        );
    }
}
