//! `catalog-admin publish`: a Parquet file, or many (a directory, several files, globs),
//! becomes the next version of a dataset.

use std::path::PathBuf;

use super::meta::{Meta, MetaArgs};
use super::{CliError, Context};
use crate::human_bytes;
use crate::ingest::error::{IngestError, OnError};
use crate::ingest::parquet::DEFAULT_TARGET;
use crate::ingest::schema::Overrides;
use crate::ingest::source::Format;
use crate::ingest::{
    convert_all, parse_delimiter, parse_size, text_inputs, Converted, Settings, WorkDir,
    DEFAULT_INFER_ROWS,
};
use crate::publish::discover::{discover, Inputs, Layout};
use crate::publish::many::{parse_partition_type, FilesOptions, PublishedFiles};
use crate::publish::upload::DEFAULT_PARALLEL;
use crate::publish::{PublishError, Publisher};

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
///
/// CSV, TSV and JSON Lines (.csv, .tsv, .jsonl, .ndjson, each maybe .gz or .zst) are converted
/// to Parquet first (zstd, a page index), then published the same way: one input that makes one
/// file is a single-file version; several inputs, or one split into several files, a version of
/// many files. Bad input publishes nothing and names the file, the line and the column.
///
/// Example: catalog-admin publish trips.csv.gz --slug trips --column fare=float64 --null NA
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
    #[command(flatten)]
    meta: MetaArgs,
    #[command(flatten)]
    text: Box<TextArgs>,
}

/// How CSV, TSV and JSON Lines inputs are read and converted.
#[derive(clap::Args)]
pub(super) struct TextArgs {
    /// Read every input as this format, whatever its name: csv, tsv or jsonl (compression is
    /// still read from a .gz or .zst ending).
    #[arg(long, value_name = "csv|tsv|jsonl")]
    pub(super) format: Option<String>,
    /// CSV's field delimiter: one ASCII character, or \t (default ',' for CSV, tab for TSV).
    #[arg(long, value_name = "CHAR")]
    delimiter: Option<String>,
    /// Rows read to infer the columns' types (the first ones of each input).
    #[arg(long, default_value_t = DEFAULT_INFER_ROWS as u64, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    infer_rows: u64,
    /// Columns' types from a JSON or YAML file: {"column": "type"}, the types int64, float64,
    /// bool, string, date, timestamp, timestamp_tz. Columns it does not name are inferred.
    #[arg(long, value_name = "FILE")]
    schema: Option<PathBuf>,
    /// A column's type, over the schema file and inference (repeat for several).
    #[arg(long = "column", value_name = "NAME=TYPE")]
    columns: Vec<String>,
    /// A CSV value read as null, besides the empty field (repeat for several), e.g. NA.
    #[arg(long = "null", value_name = "TEXT")]
    nulls: Vec<String>,
    /// What a bad row does: fail (nothing is published) or skip (left out, counted, and the
    /// first 10 named; recorded on the version).
    #[arg(long, value_name = "fail|skip", default_value = "fail")]
    on_error: String,
    /// About the size of each Parquet file an input is split into, e.g. 256M or 1G.
    #[arg(long, value_name = "SIZE")]
    target_file_size: Option<String>,
    /// Where the Parquet is written before it is uploaded (a directory of its own is made
    /// there and removed afterwards); the system's temporary directory by default.
    #[arg(long, value_name = "DIR")]
    pub(super) work_dir: Option<PathBuf>,
    /// Keep the inputs as they came beside the Parquet: the data endpoint then serves them
    /// with format=original, each with its SHA-256 (at most 100 inputs).
    #[arg(long)]
    pub(super) keep_original: bool,
}

impl TextArgs {
    /// The flags given that apply to text inputs only (for the refusal without any).
    fn given(&self) -> Vec<&'static str> {
        let mut given = Vec::new();
        let pairs = [
            (self.delimiter.is_some(), "--delimiter"),
            (self.infer_rows != DEFAULT_INFER_ROWS as u64, "--infer-rows"),
            (self.schema.is_some(), "--schema"),
            (!self.columns.is_empty(), "--column"),
            (!self.nulls.is_empty(), "--null"),
            (self.on_error != "fail", "--on-error"),
            (self.target_file_size.is_some(), "--target-file-size"),
            (self.work_dir.is_some(), "--work-dir"),
            (self.keep_original, "--keep-original"),
        ];
        for (set, flag) in pairs {
            if set {
                given.push(flag);
            }
        }
        given
    }

    pub(super) fn settings(&self) -> Result<Settings, IngestError> {
        let mut overrides = match &self.schema {
            Some(path) => Overrides::from_file(path)?,
            None => Overrides::default(),
        };
        for raw in &self.columns {
            overrides.add_flag(raw)?;
        }
        Ok(Settings {
            format: self.format.as_deref().map(forced_format).transpose()?,
            delimiter: self.delimiter.as_deref().map(parse_delimiter).transpose()?,
            infer_rows: self.infer_rows as usize,
            nulls: self.nulls.clone(),
            on_error: match self.on_error.as_str() {
                "fail" => OnError::Fail,
                "skip" => OnError::Skip,
                other => {
                    return Err(IngestError::Usage(format!(
                        "--on-error {other}: fail or skip"
                    )))
                }
            },
            target_file_size: match &self.target_file_size {
                Some(raw) => parse_size(raw)?,
                None => DEFAULT_TARGET,
            },
            overrides,
        })
    }
}

pub(super) fn forced_format(raw: &str) -> Result<Format, IngestError> {
    Format::parse(raw)
        .ok_or_else(|| IngestError::Usage(format!("--format {raw}: csv, tsv or jsonl")))
}

/// An error of the conversion as the CLI reports it: bad input and unreadable files exit 2.
pub(super) fn ingest_error(e: IngestError) -> CliError {
    match e {
        IngestError::Usage(message) => CliError::Usage(message),
        IngestError::Write(..) => CliError::Objects(e.to_string()),
        IngestError::Bad(_) | IngestError::Io(..) => {
            CliError::Publish(PublishError::BadInput(e.to_string()))
        }
    }
}

/// Converts the text inputs among `inputs.args`, if any, and points `inputs` at the Parquet
/// made (a file, for a single-file version, or the work directory); the work directory lives
/// as long as the value returned.
async fn convert_text(
    inputs: &mut Inputs,
    text: &TextArgs,
) -> Result<Option<(WorkDir, Converted)>, CliError> {
    let forced = text
        .format
        .as_deref()
        .map(forced_format)
        .transpose()
        .map_err(ingest_error)?;
    let Some(found) = text_inputs(&inputs.args, forced).map_err(ingest_error)? else {
        let given = text.given();
        if !given.is_empty() {
            return Err(CliError::Usage(format!(
                "{} apply to CSV, TSV and JSON Lines inputs; none is given",
                given.join(", ")
            )));
        }
        return Ok(None);
    };
    let settings = text.settings().map_err(ingest_error)?;
    let work = WorkDir::new(text.work_dir.as_deref()).map_err(ingest_error)?;
    let single = inputs.single_file().is_some();
    let path = work.path.clone();
    let converted = tokio::task::spawn_blocking(move || convert_all(&found, &settings, &path))
        .await
        .map_err(|e| CliError::Objects(format!("the conversion failed: {e}")))?
        .map_err(ingest_error)?;
    let files: usize = converted.outputs.iter().map(|(_, f)| f.len()).sum();
    eprintln!(
        "converted {} input(s) to {files} Parquet file(s): {} rows",
        converted.outputs.len(),
        converted.rows
    );
    if converted.skipped.count > 0 {
        eprintln!(
            "skipped {} bad row(s) (--on-error skip):",
            converted.skipped.count
        );
        for row in &converted.skipped.first {
            eprintln!("  {row}");
        }
    }
    inputs.args = match converted.single_file() {
        Some(file) if single => vec![file.to_owned()],
        _ => vec![work.path.clone()],
    };
    Ok(Some((work, converted)))
}

pub async fn run(args: Args, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let Meta {
        slug,
        input: meta,
        new_only,
    } = args.meta.resolve()?;
    let bucket = aws.config.bucket()?.to_owned();
    let mut inputs = Inputs {
        args: args.inputs,
        splits: args.splits,
        no_splits: args.no_splits,
    };
    // CSV, TSV and JSON Lines become Parquet here, before anything is written.
    let converted = convert_text(&mut inputs, &args.text).await?;
    let ingested = match &converted {
        Some((_, converted)) => Some(std::sync::Arc::new(
            converted
                .record(args.text.keep_original)
                .map_err(ingest_error)?,
        )),
        None => None,
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
            partials: None,
        };
        let published = publisher
            .publish_files_ingested(&found, &slug, meta, new_only, &options, ctx.now, ingested)
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
        .publish_ingested(&file, &slug, meta, new_only, ctx.now, ingested)
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
