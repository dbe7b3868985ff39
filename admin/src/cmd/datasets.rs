//! `catalog-admin datasets`: the catalog as the API shows it, and its filter lists.

use catalog::dynamo::DynamoCatalog;
use catalog::input::{DatasetRef, Slug};
use catalog::policy::is_keyless;
use catalog::ports::{CatalogPager, DatasetReader};
use catalog::query::ListQuery;
use catalog::time::format_time;
use chrono::{DateTime, Utc};

use super::{slug, CliError, Context};
use crate::human_bytes;

/// List datasets or show one.
///
/// Example: catalog-admin datasets show air-quality
#[derive(clap::Subcommand)]
pub enum Command {
    /// List the catalog as the API does (newest first).
    ///
    /// Example: catalog-admin datasets list --page 2
    List {
        #[arg(long, default_value_t = 1)]
        page: u64,
        #[arg(long, default_value_t = 100)]
        page_size: u64,
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
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let now = ctx.now;
    match command {
        Command::List { page, page_size } => {
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
        Command::Reindex => {
            let done = aws.writer().reindex().await?;
            println!(
                "reindexed {} filter lists ({} entries written or removed)",
                done.lists, done.written
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
    }
    Ok(())
}

/// The dataset as the metadata endpoint shows it.
async fn show(
    catalog: &DynamoCatalog,
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
