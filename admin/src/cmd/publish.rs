//! `catalog-admin publish`: a Parquet file becomes the next version of a dataset.

use std::path::PathBuf;

use super::{slug, CliError, Context};
use crate::human_bytes;
use crate::publish::{MetaInput, Publisher};
use catalog::records::Discussion;

/// Publish a Parquet file as the next version of a dataset, computing its column statistics.
///
/// Example: catalog-admin publish air.parquet --slug air-quality --name "Air quality"
///   --license CC-BY-4.0 --source "City of X" --category environment --tag air --tag hourly
#[derive(clap::Args)]
pub struct Args {
    /// The Parquet file.
    file: PathBuf,
    /// The dataset's slug: lowercase letters, digits and hyphens.
    #[arg(long)]
    slug: String,
    /// Descriptive fields from a YAML (.yaml/.yml) or JSON file: name, description, license,
    /// source, category, tags, insights, discussions ([{id, title, slug, path}]). Flags override
    /// it. On re-publish, anything not given keeps its stored value.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Refuse to publish if the slug already exists (guards against overwriting another dataset).
    #[arg(long)]
    new: bool,
    /// Display name (required for a new dataset).
    #[arg(long)]
    name: Option<String>,
    /// Free-text description, at most 4096 bytes.
    #[arg(long)]
    description: Option<String>,
    /// License identifier, e.g. CC-BY-4.0 (required for a new dataset).
    #[arg(long)]
    license: Option<String>,
    /// Who produced the data (required for a new dataset).
    #[arg(long)]
    source: Option<String>,
    /// Category, e.g. environment (required for a new dataset).
    #[arg(long)]
    category: Option<String>,
    /// A tag (repeat for several).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// A short note on what the data shows.
    #[arg(long)]
    insights: Option<String>,
}

pub async fn run(args: Args, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let slug = slug(&args.slug)?;
    let bucket = aws.config.bucket()?.to_owned();
    let from_file = match &args.metadata {
        Some(path) => MetaInput::from_file(path)?,
        None => MetaInput::default(),
    };
    let flags = MetaInput {
        name: args.name,
        description: args.description,
        license: args.license,
        source: args.source,
        category: args.category,
        tags: (!args.tags.is_empty()).then_some(args.tags),
        insights: args.insights,
        discussions: None::<Vec<Discussion>>,
        access: None,
    };
    // The rows API reads whole row groups of a file without a page index: say so before the
    // file goes out, while it can still be written better.
    if let Some(warning) = preview_warning(&args.file) {
        eprintln!("warning: {warning}");
    }
    let publisher = Publisher {
        writer: aws.writer(),
        s3: aws.s3(),
        bucket,
    };
    let p = publisher
        .publish(&args.file, &slug, flags.over(from_file), args.new, ctx.now)
        .await?;
    let approximate = p.stats.columns.iter().filter(|c| c.approximate).count();
    println!(
        "published {} version {} ({} rows, {} columns, {}, sha256 {}){}{}",
        p.slug,
        p.version,
        p.stats.row_count,
        p.stats.columns.len(),
        human_bytes(p.size),
        p.sha256,
        if approximate > 0 {
            format!("; {approximate} column(s) with approximate statistics")
        } else {
            String::new()
        },
        if p.histograms_left_out {
            "; histograms left out: the schema would not fit with them"
        } else {
            ""
        }
    );
    Ok(())
}

/// `catalog_preview::plan::preview_warning` of a local file (none if it cannot be read: publish
/// then says why itself).
fn preview_warning(path: &std::path::Path) -> Option<String> {
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    let file = std::fs::File::open(path).ok()?;
    let size = file.metadata().ok()?.len();
    let meta = ParquetMetaDataReader::new()
        .with_offset_index_policy(PageIndexPolicy::Optional)
        .with_column_index_policy(PageIndexPolicy::Skip)
        .parse_and_finish(&file)
        .ok()?;
    catalog_preview::plan::preview_warning(&meta, size)
}
