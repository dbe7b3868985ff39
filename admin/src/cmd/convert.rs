//! `catalog-admin convert`: CSV, TSV and JSON Lines to Parquet in a directory, exactly as
//! `publish` converts them, and nothing published: to check inputs (types, bad rows) before a
//! publish, to publish the Parquet later, and to time the conversion (`bench/ingest.py`).

use std::path::PathBuf;

use super::publish::{forced_format, ingest_error, TextArgs};
use super::CliError;
use crate::human_bytes;
use crate::ingest::{convert_all, text_inputs};

/// Convert CSV, TSV or JSON Lines to Parquet files in a directory, as publish converts them
/// (the same types, the same Parquet, the same errors naming the file, line and column), without
/// publishing anything. Needs no AWS configuration.
///
/// Example: catalog-admin convert trips.csv.gz --out ./trips --column fare=float64
#[derive(clap::Args)]
pub struct Args {
    /// The inputs: files, a directory or globs, as publish takes them.
    #[arg(required = true, value_name = "FILE|DIR|GLOB")]
    inputs: Vec<PathBuf>,
    /// The directory the Parquet is written to: created if missing, else it must be empty.
    /// Paths under it are those publish would publish (`train/a.csv` makes `train/a.parquet`).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    text: Box<TextArgs>,
}

pub async fn run(args: Args) -> Result<(), CliError> {
    if args.text.work_dir.is_some() || args.text.keep_original {
        return Err(CliError::Usage(
            "--work-dir and --keep-original apply to publish; convert writes to --out".into(),
        ));
    }
    let forced = args
        .text
        .format
        .as_deref()
        .map(forced_format)
        .transpose()
        .map_err(ingest_error)?;
    let Some(found) = text_inputs(&args.inputs, forced).map_err(ingest_error)? else {
        return Err(CliError::Usage(
            "no CSV, TSV or JSON Lines input given (.csv, .tsv, .jsonl or .ndjson, maybe .gz or \
             .zst; or name the format with --format)"
                .into(),
        ));
    };
    let settings = args.text.settings().map_err(ingest_error)?;
    let out = args.out;
    match std::fs::read_dir(&out) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(CliError::Usage(format!(
                    "--out {}: the directory is not empty",
                    out.display()
                )));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir_all(&out)
            .map_err(|e| CliError::Objects(format!("cannot create {}: {e}", out.display())))?,
        Err(e) => {
            return Err(CliError::Objects(format!(
                "cannot read {}: {e}",
                out.display()
            )))
        }
    }
    let dir = out.clone();
    let converted = tokio::task::spawn_blocking(move || convert_all(&found, &settings, &dir))
        .await
        .map_err(|e| CliError::Objects(format!("the conversion failed: {e}")))?
        .map_err(ingest_error)?;
    let mut bytes = 0u64;
    for (input, files) in &converted.outputs {
        for file in files {
            let size = std::fs::metadata(file).map(|m| m.len()).unwrap_or(0);
            bytes += size;
            let shown = file.strip_prefix(&out).unwrap_or(file);
            println!(
                "{} -> {} ({})",
                input.rel,
                shown.display(),
                human_bytes(size)
            );
        }
    }
    if converted.skipped.count > 0 {
        eprintln!(
            "skipped {} bad row(s) (--on-error skip):",
            converted.skipped.count
        );
        for row in &converted.skipped.first {
            eprintln!("  {row}");
        }
    }
    let files: usize = converted.outputs.iter().map(|(_, f)| f.len()).sum();
    println!(
        "converted {} input(s) to {files} Parquet file(s) in {}: {} rows, {}",
        converted.outputs.len(),
        out.display(),
        converted.rows,
        human_bytes(bytes)
    );
    Ok(())
}
