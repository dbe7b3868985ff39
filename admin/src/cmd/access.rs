//! `catalog-admin access`: who may read a dataset's data. A dataset's level (`registered`: any
//! read key; `approval`: an account's key with a grant, or an operator's key) and accounts'
//! grants, by email. Decisions are recorded with who made them (`CATALOG_OPERATOR`, else the
//! login name) and when.

use catalog::policy::{AccessLevel, Approval, GRANTED};
use catalog::time::format_time;

use super::{accounts, operator, slug, CliError, Context};
use crate::parse_when;

/// Set a dataset's access level; grant, revoke and list accounts' access (by email).
///
/// Example: catalog-admin access grant river-levels someone@example.com --expires +90d
#[derive(clap::Subcommand)]
pub enum Command {
    /// Set who may read the data: `registered` (any valid read key) or `approval` (an
    /// account's key whose account holds a grant, or an operator's key). Takes effect on the
    /// next request. The request form and terms stay as published.
    ///
    /// Example: catalog-admin access level river-levels approval --approval manual
    Level {
        slug: String,
        /// `registered` or `approval`.
        level: String,
        /// How requests are decided at the `approval` level: `manual` or `automatic` (default:
        /// as stored).
        #[arg(long)]
        approval: Option<String>,
    },
    /// Grant an account access to a dataset (replacing an earlier decision). Needs
    /// USER_POOL_ID.
    ///
    /// Example: catalog-admin access grant river-levels someone@example.com --expires +90d
    Grant {
        slug: String,
        email: String,
        /// Expiry: RFC 3339 time or +<n><s|m|h|d> (default: until revoked).
        #[arg(long)]
        expires: Option<String>,
    },
    /// Revoke an account's access to a dataset: its next data request is refused. Needs
    /// USER_POOL_ID.
    ///
    /// Example: catalog-admin access revoke river-levels someone@example.com
    Revoke { slug: String, email: String },
    /// Who has (or had) access to a dataset: email, account id, status, expiry, and who
    /// decided when.
    ///
    /// Example: catalog-admin access list river-levels
    List { slug: String },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let writer = aws.writer();
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
                    "unknown level '{level}': use 'registered' or 'approval'"
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
            email,
            expires,
        } => {
            let slug = slug(&raw)?;
            let expires_at = expires
                .map(|e| parse_when(&e, now).map_err(CliError::Usage))
                .transpose()?;
            if expires_at.is_some_and(|t| t <= now) {
                return Err(CliError::Usage("--expires must be in the future".into()));
            }
            let (sub, _) = accounts::find(&aws, &email).await?;
            writer
                .grant(&slug, &sub, &email, expires_at, &operator(), now)
                .await?;
            let until = expires_at.map_or("until revoked".to_owned(), |t| {
                format!("until {}", format_time(&t))
            });
            println!("granted {email} ({sub}) access to {slug} {until}");
        }
        Command::Revoke { slug: raw, email } => {
            let slug = slug(&raw)?;
            let (sub, _) = accounts::find(&aws, &email).await?;
            if writer.revoke_grant(&slug, &sub, &operator(), now).await? {
                println!("revoked {email}'s access to {slug}");
            } else {
                return Err(CliError::Usage(format!(
                    "{email} holds no grant in force for {slug}"
                )));
            }
        }
        Command::List { slug: raw } => {
            let slug = slug(&raw)?;
            let t = |t: Option<chrono::DateTime<chrono::Utc>>| {
                t.map_or("-".to_owned(), |t| format_time(&t))
            };
            println!(
                "{:<32} {:<36} {:<8} {:<21} {:<21} decided by",
                "email", "account", "status", "expires", "decided"
            );
            for g in writer.grants_of(&slug).await? {
                let status = if g.status == GRANTED && !g.is_active_at(now) {
                    "expired"
                } else {
                    g.status.as_str()
                };
                println!(
                    "{:<32} {:<36} {:<8} {:<21} {:<21} {}",
                    g.email.as_deref().unwrap_or("-"),
                    g.grantee,
                    status,
                    t(g.expires_at),
                    t(Some(g.decided_at)),
                    g.decided_by
                );
            }
        }
    }
    Ok(())
}
