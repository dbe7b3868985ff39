//! `catalog-admin audit`: who downloaded what, from the download log.

use std::collections::HashMap;

use catalog::audit::Download;
use catalog::time::format_time;
use catalog_writer::downloads::{DownloadLog, Filter};

use super::{CliError, Context};
use crate::parse_when;

/// Who downloaded what: each URL handed out (data, download, Delta Sharing) and each rows page,
/// with the account's email, the key id, the dataset, the version, the time and the route,
/// oldest first. Filters combine; without a dataset or an account, the last 30 days (or
/// --since). Needs DOWNLOADS_TABLE (the stack's output), and USER_POOL_ID to show emails.
///
/// Example: catalog-admin audit --dataset river-levels --since -7d
#[derive(clap::Args)]
pub struct Args {
    /// Only this dataset's downloads.
    #[arg(long)]
    dataset: Option<String>,
    /// Only the downloads of this account's keys (its email).
    #[arg(long)]
    account: Option<String>,
    /// From this time (RFC 3339, or -7d, -12h).
    #[arg(long, allow_hyphen_values = true)]
    since: Option<String>,
    /// Until this time (RFC 3339, or -1d).
    #[arg(long, allow_hyphen_values = true)]
    until: Option<String>,
}

/// Count each dataset's downloads over the last 30 days now, as the stack's daily job does
/// (the list's `downloads` and `sort=downloads`, the metadata's `downloads`). Needs
/// DOWNLOADS_TABLE.
///
/// Example: catalog-admin count-downloads
#[derive(clap::Args)]
pub struct CountArgs {}

pub async fn count(_args: CountArgs, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let log = DownloadLog::new(aws.dynamo.clone(), aws.config.downloads_table()?);
    let done = aws
        .writer()
        .roll_up_downloads(&log, ctx.now.date_naive(), ctx.now)
        .await?;
    println!(
        "counted the last 30 days: {} datasets downloaded in {} days, {} counts changed",
        done.checked,
        catalog_writer::downloads::LOOKBACK_DAYS,
        done.changed
    );
    if !done.failed.is_empty() {
        return Err(CliError::Objects(format!(
            "these counts could not be set (the next run tries again): {}",
            done.failed.join(", ")
        )));
    }
    Ok(())
}

pub async fn run(args: Args, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let log = DownloadLog::new(aws.dynamo.clone(), aws.config.downloads_table()?);
    let when = |raw: &Option<String>| {
        raw.as_deref()
            .map(|r| parse_when(r, ctx.now).map_err(CliError::Usage))
            .transpose()
    };
    let account = match &args.account {
        Some(email) => Some(super::accounts::find(&aws, email).await?.sub.to_string()),
        None => None,
    };
    let filter = Filter {
        dataset: args.dataset.clone(),
        account,
        since: when(&args.since)?,
        until: when(&args.until)?,
    };
    let downloads = log.list(&filter).await?;
    // Each account's email, asked once (shown as its id without a user pool).
    let mut emails: HashMap<String, String> = HashMap::new();
    for d in &downloads {
        if let Some(sub) = &d.account {
            if !emails.contains_key(sub) {
                let email = email_of(&aws, sub).await.unwrap_or_else(|| sub.clone());
                emails.insert(sub.clone(), email);
            }
        }
    }
    println!("{} downloads", downloads.len());
    for d in &downloads {
        println!("{}", line(d, &emails));
    }
    Ok(())
}

/// One download: time, account, key, dataset and version, route.
fn line(d: &Download, emails: &HashMap<String, String>) -> String {
    let account = match &d.account {
        Some(sub) => emails.get(sub).cloned().unwrap_or_else(|| sub.clone()),
        None if d.key_id.is_some() => "(operator's key)".into(),
        None => "(no key)".into(),
    };
    format!(
        "{}  {:<32} {:<22} {} v{}  {}",
        format_time(&d.at),
        account,
        d.key_id.as_deref().unwrap_or("-"),
        d.slug,
        d.version,
        d.route.as_str()
    )
}

/// The email of the account whose Cognito `sub` this is, if a user pool is configured and
/// holds it.
async fn email_of(aws: &super::Aws, sub: &str) -> Option<String> {
    let pool = aws.config.user_pool_id.as_deref()?;
    let found = aws
        .cognito()
        .list_users()
        .user_pool_id(pool)
        .filter(format!("sub = \"{sub}\""))
        .limit(1)
        .send()
        .await
        .ok()?;
    found
        .users()
        .first()?
        .attributes()
        .iter()
        .find(|a| a.name() == "email")
        .and_then(|a| a.value())
        .map(str::to_owned)
}
