//! `catalog-admin datasets`: the catalog as the API shows it, and its filter lists.

use catalog::input::{DatasetRef, Slug};
use catalog::policy::is_keyless;
use catalog::ports::{CatalogPager, DatasetReader};
use catalog::query::ListQuery;
use catalog::time::format_time;
use catalog_aws::dynamo::DatasetsTable;
use chrono::{DateTime, Utc};

use super::{slug, CliError, Context};
use crate::human_bytes;

/// List datasets or show one.
///
/// Example: catalog-admin datasets show air-quality
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the catalog as the API does (newest first); with --org, every dataset of an
    /// organisation by slug, private ones included (its index: no pages).
    ///
    /// Example: catalog-admin datasets list --page 2
    List {
        #[arg(long, default_value_t = 1)]
        page: u64,
        #[arg(long, default_value_t = 100)]
        page_size: u64,
        /// An organisation's name: its datasets, at every level.
        #[arg(long)]
        org: Option<String>,
    },
    /// Show a dataset's metadata and schema as JSON.
    ///
    /// Example: catalog-admin datasets show air-quality
    Show { slug: String },
    /// Rebuild the per-category, per-tag and per-license lists behind the API's filters, and
    /// the facet summary behind `facets=true`, from the catalog list. Run it once after
    /// upgrading from a version without filters or without facet counts, or after a publish
    /// that was interrupted while it moved a dataset between categories or tags.
    ///
    /// Example: catalog-admin datasets reindex
    Reindex,
    /// Take a dataset down: every route and protocol answers 410 `unpublished`, and it leaves
    /// the catalog, its filters and its counts. Its versions and files are kept, so that
    /// `datasets restore` brings it back. URLs already handed out work until they expire; to
    /// make them fail at once, delete the files (`datasets delete`, `versions delete`).
    ///
    /// Example: catalog-admin datasets unpublish air-quality
    Unpublish { slug: String },
    /// List an unpublished dataset again, with the version that was active (it is listed as
    /// newly published: first in the default order).
    ///
    /// Example: catalog-admin datasets restore air-quality
    Restore { slug: String },
    /// Delete a dataset for good: its records, every version, and their files in the bucket.
    /// Asks to type the slug to confirm, unless --yes. URLs already handed out fail at once
    /// (the files are gone). The slug may then be published anew (a new dataset, a new id).
    ///
    /// Example: catalog-admin datasets delete air-quality --yes
    Delete {
        slug: String,
        /// Do not ask for confirmation.
        #[arg(long)]
        yes: bool,
    },
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let now = ctx.now;
    match command {
        Command::List { org: Some(org), .. } => {
            let org = catalog::slug::OrgName::parse(&org)
                .map_err(|e| CliError::Usage(format!("organisation '{org}': {e}")))?;
            let datasets = aws.catalog().org_datasets(&org).await?;
            println!("{} datasets of {org}", datasets.len());
            for d in datasets {
                println!(
                    "{:<40} {:<10} {}  {}{}",
                    d.slug,
                    d.access_level.as_str(),
                    format_time(&d.updated_at),
                    d.name,
                    if d.unpublished { "  [unpublished]" } else { "" }
                );
            }
        }
        Command::List {
            page, page_size, ..
        } => {
            if page == 0 || page_size == 0 {
                return Err(CliError::Usage("page and page size start at 1".into()));
            }
            let offset = (page - 1).checked_mul(page_size);
            let result = aws
                .catalog()
                .page(&ListQuery::default(), offset, page_size)
                .await?;
            println!("{} datasets", result.total);
            for d in result.items {
                println!(
                    "{:<32} {:>12} rows {:>4} cols {:>10}  {}{}",
                    d.slug,
                    d.row_count,
                    d.column_count,
                    human_bytes(d.size),
                    d.card.name,
                    if is_keyless(d.keyless_until, now) {
                        "  [keyless]"
                    } else {
                        ""
                    }
                );
            }
        }
        Command::Show { slug: raw } => {
            let slug = slug(&raw)?;
            println!("{}", show(&aws.catalog(), &slug, now).await?);
        }
        Command::Reindex => report(&aws.writer().reindex().await?),
        Command::Unpublish { slug: raw } => {
            let slug = slug(&raw)?;
            let done = aws.writer().unpublish(&slug, now).await?;
            println!("{slug}: unpublished (every route answers 410; `datasets restore {slug}` lists it again)");
            report(&done);
        }
        Command::Restore { slug: raw } => {
            let slug = slug(&raw)?;
            let writer = aws.writer();
            writer.restore(&slug, now).await?;
            // A private dataset is served again, to its members, and stays in no public list.
            let private = writer
                .dataset_meta(&slug)
                .await?
                .is_some_and(|m| m.card.access_level == catalog::policy::AccessLevel::Private);
            match private {
                true => println!("{slug}: served again (private: in no public list)"),
                false => println!("{slug}: listed again"),
            }
        }
        Command::Delete { slug: raw, yes } => {
            let slug = slug(&raw)?;
            if !yes {
                confirm(&slug)?;
            }
            let bucket = aws.config.bucket()?.to_owned();
            let done = aws.writer().delete_dataset(&slug, now).await?;
            let removed = crate::remove::objects(
                &aws.s3(),
                &bucket,
                &done.objects,
                Some(&format!("datasets/{slug}/")),
            )
            .await?;
            println!(
                "{slug}: deleted ({} versions, {removed} files)",
                done.objects.len()
            );
            report(&done.lists);
        }
    }
    Ok(())
}

/// What `reindex` (or the renumbering after a take-down) did.
fn report(done: &catalog_writer::Reindexed) {
    println!(
        "reindexed {} filter lists ({} entries written or removed; {} catalog entries moved or removed)",
        done.lists, done.written, done.renumbered
    );
    println!(
        "text index: {} datasets in {} shards ({} KB); {} stale items removed",
        done.text.datasets,
        done.text.shards,
        done.text.bytes.div_ceil(1024),
        done.text.swept
    );
    println!(
        "kept orders (name, updated, downloads): {} datasets in {} chunks; {} stale items removed",
        done.orders.datasets, done.orders.chunks, done.orders.swept
    );
    let (values, kb) = (done.summary_values, done.summary_bytes.div_ceil(1024));
    if done.summary_fits {
        println!("facet counts: {values} values ({kb} KB)");
    } else {
        eprintln!(
            "warning: the catalog has {values} facet values ({kb} KB), more than the facet \
             summary holds ({} KB): the list answers facets=true without facets",
            catalog_writer::summary::BUDGET_BYTES / 1024
        );
    }
}

/// Asks the operator to type the slug (on a terminal); refuses when there is none to ask.
fn confirm(slug: &Slug) -> Result<(), CliError> {
    use std::io::{BufRead, IsTerminal, Write};
    if !std::io::stdin().is_terminal() {
        return Err(CliError::Usage(format!(
            "deleting '{slug}' removes every version and file for good: pass --yes to confirm"
        )));
    }
    eprint!(
        "This deletes '{slug}', every version and its files, for good. Type the slug to confirm: "
    );
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| CliError::Usage(format!("no confirmation: {e}")))?;
    if line.trim() != slug.as_str() {
        return Err(CliError::Usage("not confirmed: nothing was deleted".into()));
    }
    Ok(())
}

/// The dataset as the metadata endpoint shows it.
async fn show(
    catalog: &DatasetsTable,
    slug: &Slug,
    now: DateTime<Utc>,
) -> Result<String, CliError> {
    let record = catalog
        .get_dataset(&DatasetRef::Slug(slug.clone()))
        .await?
        .ok_or_else(|| CliError::Usage(format!("no dataset '{slug}'")))?;
    let active = record.active.as_ref();
    let (meta, card) = (&record.meta, &record.meta.card);
    let out = serde_json::json!({
        "slug": record.slug, "id": record.id, "name": card.name,
        "description": card.description, "license": card.license, "source": meta.source,
        "category": card.category, "tags": card.tags,
        "active_version": active.map(|a| a.version),
        "size": active.map(|a| a.size), "row_count": active.map(|a| a.row_count),
        "column_count": active.map(|a| a.columns.len()), "insights": meta.insights,
        "keyless": is_keyless(record.keyless_until, now),
        "keyless_until": record.keyless_until.map(|t| format_time(&t)),
        "schema": record.schema, "discussions": meta.discussions,
        "created_at": format_time(&record.created_at),
        "updated_at": format_time(&record.updated_at),
    });
    Ok(serde_json::to_string_pretty(&out).unwrap_or_default())
}
