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
    let out = serde_json::json!({
        "row_count": stats.row_count, "column_count": stats.columns.len(), "size": size,
        "sha256": sha256, "schema": stats.columns,
    });
    println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
    Ok(())
}
