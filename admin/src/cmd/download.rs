//! `catalog-admin download`: a dataset's file, or every file of a version of many files,
//! fetched through the public API and verified.

use std::path::PathBuf;

use super::{slug, CliError, Context};
use crate::download::{download_any, Outcome, Wanted};
use crate::human_bytes;

/// Download a dataset through the public API, as any client would, verifying each file's
/// SHA-256 before keeping it. A dataset of one file is written to --output (default
/// <slug>-v<version>.parquet, in DIR if given); a dataset of many files (or one asked for with
/// --split or --partition) goes file by file to DIR/<path> (default <slug>-v<version>/), several
/// at once, and a run again skips the files already there with the right SHA-256. The key, if
/// the dataset needs one, is read from CATALOG_API_KEY (never from a flag, which would show in
/// the process list and history).
///
/// Example: CATALOG_API_KEY=dcat_... catalog-admin download air-quality --api-url
///   https://abc123.execute-api.eu-west-1.amazonaws.com/api/v1
///
/// Example: catalog-admin download sales --split train --partition year=2024 ./sales
#[derive(clap::Args)]
pub struct Args {
    slug: String,
    /// The directory to write to: a many-file dataset's files go to DIR/<path>.
    dir: Option<PathBuf>,
    /// The API's base URL, ending in /api/v1 (default: CATALOG_API_URL).
    #[arg(long, env = "CATALOG_API_URL")]
    api_url: String,
    /// Pin this version: fail rather than fetch another one.
    #[arg(long)]
    version: Option<u64>,
    /// Where to write a one-file dataset (default: <slug>-v<version>.parquet).
    #[arg(long, short)]
    output: Option<PathBuf>,
    /// Only the files of this split.
    #[arg(long)]
    split: Option<String>,
    /// Only the files with this partition value, KEY=VALUE (repeatable: all of them;
    /// __HIVE_DEFAULT_PARTITION__ for null).
    #[arg(long = "partition", value_name = "KEY=VALUE")]
    partitions: Vec<String>,
    /// Files downloaded at once.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=64))]
    parallel: u64,
}

pub async fn run(args: Args, _ctx: &Context) -> Result<(), CliError> {
    let slug = slug(&args.slug)?;
    let key = std::env::var("CATALOG_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let wanted = Wanted {
        api_url: &args.api_url,
        slug: slug.as_str(),
        version: args.version,
        key: key.as_deref(),
        output: args.output.as_deref(),
        dir: args.dir.as_deref(),
        split: args.split.as_deref(),
        partitions: &args.partitions,
        parallel: args.parallel as usize,
        progress,
    };
    match download_any(&wanted).await? {
        Outcome::One(done) => println!(
            "downloaded {} version {} ({}) to {}: sha256 {} verified",
            done.descriptor.slug,
            done.descriptor.version,
            human_bytes(done.descriptor.size_bytes),
            done.path.display(),
            done.descriptor.sha256
        ),
        Outcome::Many(done) => println!(
            "downloaded {} version {}: {} file(s) ({}) to {}, {} fetched, {} already there; \
             every sha256 verified",
            done.slug,
            done.version,
            done.fetched + done.skipped,
            human_bytes(done.bytes),
            done.dir.display(),
            done.fetched,
            done.skipped
        ),
    }
    Ok(())
}
