//! `catalog-admin versions`: a dataset's history, and rollback.

use catalog::input::Slug;
use catalog::time::format_time;
use catalog_writer::{DynamoWriter, WriteError};

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
    /// Delete a version: its record, then its manifest (a version of many files), then every
    /// object under datasets/<slug>/v<n>/ (URLs already handed out for it fail at once). The
    /// active version cannot be deleted unless --activate names another to activate first.
    /// Version numbers are never reused. Run it again to finish a delete that was cut off.
    ///
    /// Example: catalog-admin versions delete air-quality 2 --activate 1
    Delete {
        slug: String,
        version: u64,
        /// Activate this version first (required when deleting the active one).
        #[arg(long)]
        activate: Option<u64>,
    },
    /// Delete what publishes that never recorded their version left: the objects under
    /// datasets/<slug>/v<n>/ and the manifest items of every version no record names (a
    /// cut-off publish run again with other files, a failed upload, an interrupted delete).
    /// The latest reservation is left alone when no record names it: a publish may be running,
    /// or be resumed. Each version swept is fenced first, so that a publish of it still
    /// running can no longer record it.
    ///
    /// Example: catalog-admin versions sweep air-quality
    Sweep { slug: String },
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
            let gone = writer.delete_version(&slug, version, ctx.now).await?;
            let object: Vec<String> = gone.object.iter().cloned().collect();
            let removed =
                crate::remove::objects(&aws.s3(), &bucket, &object, Some(&gone.prefix)).await?;
            if !gone.recorded && gone.manifest_items == 0 && removed == 0 {
                return Err(WriteError::NoSuchVersion(slug.to_string(), version).into());
            }
            println!(
                "{slug}: version {version} deleted, with {removed} file(s){}",
                manifest_note(gone.manifest_items)
            );
        }
        Command::Sweep { slug: raw } => {
            let slug = slug(&raw)?;
            let (s3, bucket) = (aws.s3(), aws.config.bucket()?.to_owned());
            let found = version_prefixes(&s3, &bucket, &slug).await?;
            let mut swept = 0;
            for version in writer.unrecorded_versions(&slug, found).await? {
                let gone = writer.delete_version(&slug, version, ctx.now).await?;
                let removed = crate::remove::objects(&s3, &bucket, &[], Some(&gone.prefix)).await?;
                println!(
                    "{slug}: version {version} (no record) swept: {removed} file(s){}",
                    manifest_note(gone.manifest_items)
                );
                swept += 1;
            }
            println!("{slug}: {swept} unrecorded version(s) swept");
        }
    }
    Ok(())
}

fn manifest_note(items: usize) -> String {
    match items {
        0 => String::new(),
        n => format!(" and {n} manifest item(s)"),
    }
}

/// The version numbers with objects in the bucket: the `v<n>/` prefixes under
/// `datasets/<slug>/` (ListObjectsV2 with a delimiter, 1,000 prefixes a page).
async fn version_prefixes(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    slug: &Slug,
) -> Result<Vec<u64>, CliError> {
    let root = format!("datasets/{slug}/");
    let mut pages = s3
        .list_objects_v2()
        .bucket(bucket)
        .prefix(&root)
        .delimiter("/")
        .into_paginator()
        .send();
    let mut found = Vec::new();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| {
            CliError::Objects(format!(
                "listing s3://{bucket}/{root}: {}",
                aws_sdk_s3::error::DisplayErrorContext(e)
            ))
        })?;
        for prefix in page.common_prefixes() {
            let number = prefix
                .prefix()
                .and_then(|p| p.strip_prefix(&root))
                .and_then(|p| p.strip_prefix('v'))
                .and_then(|p| p.strip_suffix('/'))
                .and_then(|n| n.parse::<u64>().ok());
            found.extend(number);
        }
    }
    Ok(found)
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
