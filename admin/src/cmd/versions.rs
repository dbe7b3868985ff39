//! `catalog-admin versions`: a dataset's history, and rollback.

use catalog::input::Slug;
use catalog::time::format_time;
use catalog_writer::DynamoWriter;

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
    /// Delete a version: its record, then its file (URLs already handed out for it fail at
    /// once). The active version cannot be deleted unless --activate names another to activate
    /// first. Version numbers are never reused.
    ///
    /// Example: catalog-admin versions delete air-quality 2 --activate 1
    Delete {
        slug: String,
        version: u64,
        /// Activate this version first (required when deleting the active one).
        #[arg(long)]
        activate: Option<u64>,
    },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let writer = aws.writer();
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
            activate_version(&writer, &slug, version, ctx).await?;
            println!("{slug}: version {version} is active");
        }
        Command::Delete {
            slug: raw,
            version,
            activate,
        } => {
            let slug = slug(&raw)?;
            let bucket = aws.config.bucket()?.to_owned();
            if let Some(next) = activate {
                if next == version {
                    return Err(CliError::Usage(format!(
                        "--activate {next} names the version being deleted"
                    )));
                }
                activate_version(&writer, &slug, next, ctx).await?;
                println!("{slug}: version {next} is active");
            }
            let object = writer.delete_version(&slug, version).await?;
            crate::remove::objects(&aws.s3(), &bucket, &[object], None).await?;
            println!("{slug}: version {version} deleted, with its file");
        }
    }
    Ok(())
}

/// Makes `version` the active one, on the condition that the version active now (read first)
/// still is.
async fn activate_version(
    writer: &DynamoWriter,
    slug: &Slug,
    version: u64,
    ctx: &Context,
) -> Result<(), CliError> {
    let current = writer
        .list_versions(slug)
        .await?
        .into_iter()
        .find(|v| v.active)
        .map(|v| v.version.version);
    writer
        .activate(slug, version, current.into(), None, ctx.now)
        .await?;
    Ok(())
}
