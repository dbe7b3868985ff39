//! `catalog-admin versions`: a dataset's history, and rollback.

use catalog::time::format_time;

use super::{slug, CliError, Context};
use crate::human_bytes;

/// List a dataset's versions or activate one (rollback).
///
/// Example: catalog-admin versions activate air-quality 2
#[derive(clap::Subcommand)]
pub enum Command {
    /// List a dataset's versions, marking the active one.
    ///
    /// Example: catalog-admin versions list air-quality
    List { slug: String },
    /// Make an earlier (or later) version the active one.
    ///
    /// Example: catalog-admin versions activate air-quality 3
    Activate { slug: String, version: u64 },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let writer = ctx.aws().await?.writer();
    match command {
        Command::List { slug: raw } => {
            let slug = slug(&raw)?;
            for v in writer.list_versions(&slug).await? {
                let a = &v.version;
                println!(
                    "{} v{:<5} {:>12} rows {:>10}  {}  sha256 {}",
                    if v.active { "*" } else { " " },
                    a.version,
                    a.row_count,
                    human_bytes(a.size),
                    format_time(&a.published_at),
                    a.sha256
                );
            }
        }
        Command::Activate { slug: raw, version } => {
            let slug = slug(&raw)?;
            let current = writer
                .list_versions(&slug)
                .await?
                .into_iter()
                .find(|v| v.active)
                .map(|v| v.version.version);
            writer
                .activate(&slug, version, current.into(), None, ctx.now)
                .await?;
            println!("{slug}: version {version} is active");
        }
    }
    Ok(())
}
