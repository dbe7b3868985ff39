//! `catalog-admin stage`: put Parquet files under the bucket's staging prefix (`upload`), and
//! publish the objects staged there in place (`publish`), copied server-side
//! ([`crate::publish::staged`]).

use std::path::PathBuf;

use super::meta::{Meta, MetaArgs};
use super::{CliError, Context};
use crate::human_bytes;
use crate::publish::discover::Inputs;
use crate::publish::many::{parse_partition_type, FilesOptions};
use crate::publish::staged::upload::stage_upload;
use crate::publish::staged::{CopyOptions, StagedPrefix, COPY_MAX};
use crate::publish::upload::DEFAULT_PARALLEL;
use crate::publish::Publisher;

/// Stage data in the catalog's bucket and publish it in place.
///
/// Example: catalog-admin stage upload ./sales s3://BUCKET/staging/sales/
#[derive(clap::Subcommand)]
pub enum Command {
    Upload(UploadArgs),
    Publish(Box<PublishArgs>),
}

/// Upload Parquet files to a prefix under staging/ in the catalog's bucket: several at once,
/// each with its SHA-256 (S3 verifies it); a file already there with the same size and
/// checksum is skipped, so running it again after a cut-off uploads only the rest.
///
/// Example: catalog-admin stage upload ./sales s3://BUCKET/staging/sales/
#[derive(clap::Args)]
pub struct UploadArgs {
    /// A directory, Parquet files or globs, with their paths as `publish` takes them (relative
    /// to the directory, or to the files' common directory).
    #[arg(required = true, value_name = "FILE|DIR|GLOB")]
    inputs: Vec<PathBuf>,
    /// Where: s3://BUCKET/staging/PREFIX/ (or staging/PREFIX/) in the catalog's bucket.
    #[arg(value_name = "S3_PREFIX", required = true)]
    to: String,
    /// How many files to upload at once.
    #[arg(long, default_value_t = DEFAULT_PARALLEL as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    parallel: u64,
}

/// Publish the Parquet objects under a staging prefix as the next version of a dataset, in
/// place: their footers and statistics read by ranged GETs, the objects copied server-side
/// into the version's keys (nothing goes through this machine), the version activated once
/// every file is copied and recorded. The splits and partitions follow the rules of `publish`
/// for a directory. Staged CSV or JSON Lines is refused: publish those from disk.
///
/// Example: catalog-admin stage publish s3://BUCKET/staging/sales/ --slug sales --name Sales
///   --license CC-BY-4.0 --source "Sales team" --category business
#[derive(clap::Args)]
pub struct PublishArgs {
    /// The staged prefix: s3://BUCKET/staging/PREFIX/ (or staging/PREFIX/).
    #[arg(value_name = "S3_PREFIX")]
    from: String,
    /// A split and the files in it: a glob over the paths as published ('*' within a
    /// directory, '**' across). Repeat for each split; every file must be in exactly one.
    #[arg(long = "split", value_name = "NAME=GLOB")]
    splits: Vec<String>,
    /// Read no split from the layout of the files (data/<split>-*.parquet, <split>/...).
    #[arg(long, conflicts_with = "splits")]
    no_splits: bool,
    /// A partition column's type (int64, date or string) instead of the one inferred.
    #[arg(long = "partition-type", value_name = "KEY=TYPE")]
    partition_types: Vec<String>,
    /// How many objects to read, hash and copy at once.
    #[arg(long, default_value_t = DEFAULT_PARALLEL as u64, value_parser = clap::value_parser!(u64).range(1..=64))]
    parallel: u64,
    /// Objects larger than this many bytes are copied in parts (UploadPartCopy); at most
    /// 5 GiB, S3's limit of one CopyObject.
    #[arg(long, default_value_t = COPY_MAX)]
    copy_threshold: u64,
    /// The size of those parts, in bytes (5 MiB to 5 GiB).
    #[arg(long, default_value_t = CopyOptions::default().part_size)]
    copy_part_size: u64,
    /// Take the statistics from the per-file partials under this prefix
    /// (s3://BUCKET/stats/.../, as the stack's FileStatsStateMachine or `stats file` wrote
    /// them; or local partial files) instead of reading every file here: merged, one per
    /// staged file, each computed over the object as it is now (docs/scaling.md).
    #[arg(long, value_name = "PARTIALS")]
    partials: Vec<String>,
    #[command(flatten)]
    meta: MetaArgs,
}

pub async fn run(command: Command, ctx: &Context) -> Result<(), CliError> {
    match command {
        Command::Upload(args) => upload(args, ctx).await,
        Command::Publish(args) => publish(*args, ctx).await,
    }
}

async fn upload(args: UploadArgs, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let staged = StagedPrefix::parse(&args.to, aws.config.bucket()?)?;
    let done = stage_upload(&aws.s3(), &staged, args.inputs, args.parallel as usize).await?;
    if !done.found.ignored.is_empty() {
        eprintln!(
            "note: {} file(s) not named *.parquet left out: {}",
            done.found.ignored.len(),
            done.found.ignored[..done.found.ignored.len().min(5)].join(", ")
        );
    }
    println!(
        "staged {} file(s) ({}) under {}: {} uploaded, {} already there",
        done.found.files.len(),
        human_bytes(done.bytes),
        staged.url(),
        done.uploaded.put,
        done.uploaded.skipped
    );
    Ok(())
}

async fn publish(args: PublishArgs, ctx: &Context) -> Result<(), CliError> {
    let aws = ctx.aws().await?;
    let Meta {
        slug,
        input: meta,
        new_only,
    } = args.meta.resolve()?;
    let bucket = aws.config.bucket()?.to_owned();
    let staged = StagedPrefix::parse(&args.from, &bucket)?;
    let copy = CopyOptions::new(args.copy_threshold, args.copy_part_size)?;
    let options = FilesOptions {
        parallel: args.parallel as usize,
        partition_types: args
            .partition_types
            .iter()
            .map(|raw| parse_partition_type(raw))
            .collect::<Result<_, _>>()?,
        partials: if args.partials.is_empty() {
            None
        } else {
            Some(super::stats::read_partials(&args.partials).await?)
        },
    };
    let inputs = Inputs {
        args: Vec::new(),
        splits: args.splits,
        no_splits: args.no_splits,
    };
    let publisher = Publisher {
        writer: aws.writer(),
        s3: aws.s3(),
        bucket,
    };
    let done = publisher
        .publish_staged(
            &staged, &inputs, &slug, meta, new_only, &options, &copy, ctx.now,
        )
        .await?;
    if !done.ignored.is_empty() {
        eprintln!(
            "note: {} object(s) not named *.parquet left out: {}",
            done.ignored.len(),
            done.ignored[..done.ignored.len().min(5)].join(", ")
        );
    }
    let p = &done.published;
    let splits = if p.splits.is_empty() {
        String::new()
    } else {
        let each: Vec<String> = p.splits.iter().map(|(n, f)| format!("{n} {f}")).collect();
        format!(" in {} splits ({})", p.splits.len(), each.join(", "))
    };
    println!(
        "published {} version {} ({} files{splits}, {} rows, {} columns, {}, manifest sha256 {}) \
         in place from {}: {} file(s) copied server-side ({} in parts), {} hashed by reading \
         them; {} ranged GETs read {}{}",
        p.slug,
        p.version,
        p.files,
        p.rows,
        p.stats.columns.len(),
        human_bytes(p.bytes),
        p.sha256,
        done.source,
        p.uploaded.put,
        done.multipart,
        done.hashed,
        done.get_requests,
        human_bytes(done.get_bytes),
        if p.histograms_left_out {
            "; histograms left out: the schema would not fit with them"
        } else {
            ""
        }
    );
    Ok(())
}
