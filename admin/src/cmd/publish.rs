//! `catalog-admin publish`: a Parquet file, or many (a directory, several files, globs),
//! becomes the next version of a dataset.

use std::path::PathBuf;

use super::{slug, CliError, Context};
use crate::human_bytes;
use crate::publish::discover::{discover, Inputs, Layout};
use crate::publish::many::{parse_partition_type, FilesOptions, PublishedFiles};
use crate::publish::upload::DEFAULT_PARALLEL;
use crate::publish::{MetaInput, Publisher};
use catalog::records::Discussion;

/// Publish Parquet files as the next version of a dataset, computing its column statistics.
///
/// One file is a single-file version. A directory, several files or globs make a version of
/// many files: paths kept relative to the directory (or to the files' common directory), Hive
/// partitions (key=value/ directories) read from them, splits from --split, from Hugging
/// Face's data/<split>-*.parquet, or from top-level train/, validation/, test/ directories.
///
/// Example: catalog-admin publish air.parquet --slug air-quality --name "Air quality"
///   --license CC-BY-4.0 --source "City of X" --category environment --tag air --tag hourly
///
/// Example: catalog-admin publish ./sales --slug sales --split train='train/**'
///   --split test='test/**'
#[derive(clap::Args)]
pub struct Args {
    /// The Parquet file; or a directory, several files or globs (quoted, or expanded by the
    /// shell) of one version of many files.
    #[arg(required = true, value_name = "FILE|DIR|GLOB")]
    inputs: Vec<PathBuf>,
    /// A split and the files in it: a glob over the paths as published, relative to the
    /// directory ('*' within a directory, '**' across). Repeat for each split; every file must
    /// be in exactly one. Overrides the layouts recognised.
    #[arg(long = "split", value_name = "NAME=GLOB")]
    splits: Vec<String>,
    /// Read no split from the layout of the files (data/<split>-*.parquet, <split>/...).
    #[arg(long, conflicts_with = "splits")]
    no_splits: bool,
    /// A partition column's type (int64, date or string) instead of the one inferred from its
    /// values (int64 when every value is an integer, else date when every one is YYYY-MM-DD,
    /// else string). Repeat for several.
    #[arg(long = "partition-type", value_name = "KEY=TYPE")]
    partition_types: Vec<String>,
    /// How many files to upload at once.
    #[arg(long, default_value_t = DEFAULT_PARALLEL as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    parallel: u64,
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
    let inputs = Inputs {
        args: args.inputs,
        splits: args.splits,
        no_splits: args.no_splits,
    };
    let publisher = Publisher {
        writer: aws.writer(),
        s3: aws.s3(),
        bucket,
    };
    let Some(file) = inputs.single_file() else {
        let found = discover(&inputs)?;
        if !found.ignored.is_empty() {
            eprintln!(
                "note: {} file(s) not named *.parquet left out: {}{}",
                found.ignored.len(),
                found.ignored[..found.ignored.len().min(5)].join(", "),
                if found.ignored.len() > 5 { ", …" } else { "" }
            );
        }
        if found.layout != Layout::None {
            eprintln!("{}", found.layout.describe());
        }
        let options = FilesOptions {
            parallel: args.parallel as usize,
            partition_types: args
                .partition_types
                .iter()
                .map(|raw| parse_partition_type(raw))
                .collect::<Result<_, _>>()?,
        };
        let published = publisher
            .publish_files(
                &found,
                &slug,
                flags.over(from_file),
                args.new,
                &options,
                ctx.now,
            )
            .await;
        println!("{}", files_line(&published?));
        return Ok(());
    };
    if !args.partition_types.is_empty() {
        return Err(CliError::Usage(
            "--partition-type applies to a version of many files (a directory, several files \
             or globs); one file has no partitions"
                .into(),
        ));
    }
    // The rows API reads whole row groups of a file without a page index: say so before the
    // file goes out, while it can still be written better.
    if let Some(warning) = preview_warning(&file) {
        eprintln!("warning: {warning}");
    }
    let p = publisher
        .publish(&file, &slug, flags.over(from_file), args.new, ctx.now)
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

/// What a publish of many files did, in one line.
fn files_line(p: &PublishedFiles) -> String {
    let splits = if p.splits.is_empty() {
        String::new()
    } else {
        let each: Vec<String> = p.splits.iter().map(|(n, f)| format!("{n} {f}")).collect();
        format!(" in {} splits ({})", p.splits.len(), each.join(", "))
    };
    format!(
        "published {} version {} ({} files{splits}, {} rows, {} columns, {}, manifest sha256 {}); \
         {} file(s) uploaded, {} already there{}{}",
        p.slug,
        p.version,
        p.files,
        p.rows,
        p.stats.columns.len(),
        human_bytes(p.bytes),
        p.sha256,
        p.uploaded.put,
        p.uploaded.skipped,
        if p.resumed {
            " (a cut-off publish of the same files, resumed)"
        } else {
            ""
        },
        if p.histograms_left_out {
            "; histograms left out: the schema would not fit with them"
        } else {
            ""
        }
    )
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
