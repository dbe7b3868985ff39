//! `catalog-admin download`: a dataset's file, fetched through the public API and verified.

use std::path::PathBuf;

use super::{slug, CliError, Context};
use crate::human_bytes;

/// Download a dataset's Parquet file through the public API, as any client would, and
/// verify its SHA-256 before keeping it. The key, if the dataset needs one, is read from
/// CATALOG_API_KEY (never from a flag, which would show in the process list and history).
///
/// Example: CATALOG_API_KEY=dcat_... catalog-admin download air-quality --api-url
///   https://abc123.execute-api.eu-west-1.amazonaws.com/api/v1
#[derive(clap::Args)]
pub struct Args {
    slug: String,
    /// The API's base URL, ending in /api/v1 (default: CATALOG_API_URL).
    #[arg(long, env = "CATALOG_API_URL")]
    api_url: String,
    /// Pin this version: fail rather than fetch another one.
    #[arg(long)]
    version: Option<u64>,
    /// Where to write it (default: <slug>-v<version>.parquet).
    #[arg(long, short)]
    output: Option<PathBuf>,
}

pub async fn run(args: Args, _ctx: &Context) -> Result<(), CliError> {
    let slug = slug(&args.slug)?;
    let key = std::env::var("CATALOG_API_KEY")
        .ok()
        .filter(|k| !k.is_empty());
    let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let done = crate::download::download(
        &args.api_url,
        slug.as_str(),
        args.version,
        key.as_deref(),
        args.output.as_deref(),
        progress,
    )
    .await?;
    println!(
        "downloaded {} version {} ({}) to {}: sha256 {} verified",
        done.descriptor.slug,
        done.descriptor.version,
        human_bytes(done.descriptor.size_bytes),
        done.path.display(),
        done.descriptor.sha256
    );
    Ok(())
}
