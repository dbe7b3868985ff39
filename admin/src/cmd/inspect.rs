//! `catalog-admin inspect`: a Parquet file's statistics, as publish would compute them.

use std::path::PathBuf;

use super::{CliError, Context};

/// Print a Parquet file's column statistics as JSON, without publishing anything.
///
/// Example: catalog-admin inspect air.parquet
#[derive(clap::Args)]
pub struct Args {
    file: PathBuf,
}

pub async fn run(args: Args, _ctx: &Context) -> Result<(), CliError> {
    let (stats, size, sha256) = crate::publish::inspect(&args.file).await?;
    // Written straight from the statistics, not through a `serde_json::Value`: a histogram's
    // last edge can pass 2^64 − 1, which a `Value` cannot hold.
    #[derive(serde::Serialize)]
    struct Out<'a> {
        row_count: u64,
        column_count: usize,
        size: u64,
        sha256: String,
        schema: &'a [catalog_stats::ColumnStats],
    }
    let out = Out {
        row_count: stats.row_count,
        column_count: stats.columns.len(),
        size,
        sha256,
        schema: &stats.columns,
    };
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    Ok(())
}
