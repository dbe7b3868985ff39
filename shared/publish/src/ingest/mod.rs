//! `publish` of CSV, TSV and JSON Lines (plain, gzip or zstd): each input converted to Parquet
//! in a work directory by the Arrow readers (arrow-csv, arrow-json), then published by the
//! Parquet paths as they stand: one input that makes one file is a single-file version, any
//! other a version of many files. Bad input stops everything before a byte is uploaded, naming
//! the file, the line and the column; `--on-error skip` leaves bad rows out, counted.
//!
//! **Which inputs.** An argument is a text input when its name ends in `.csv`, `.tsv`,
//! `.jsonl` or `.ndjson`, each optionally followed by `.gz` or `.zst` (ASCII case aside), or
//! when `--format` names the format (then every file given is of that format, compressed as
//! its name says). A directory is walked as `publish` walks one (sorted, names starting with
//! `.` or `_` skipped), taking the files so named. Parquet files and text inputs are not mixed
//! in one publish: convert the one or publish the other on its own.
//!
//! **Paths.** An input's Parquet keeps its path relative to the inputs' root (the directory
//! when it is the only argument, else the deepest directory holding every argument), with its
//! extensions replaced: `train/a.csv.gz` becomes `train/a.parquet`, or, when it is split into
//! several files, `train/a-part-00000.parquet`, `train/a-part-00001.parquet` … So splits
//! (`train/`, `data/train-*.`) and Hive partitions (`year=2024/`) read from the paths stand as
//! they would for the same names in Parquet.

use std::path::{Path, PathBuf};

pub mod csv;
pub mod error;
pub mod jsonl;
pub mod parquet;
pub mod record;
pub mod records;
pub mod schema;
pub mod source;

use error::{IngestError, OnError, Skipped};
use schema::Overrides;
use source::{Compression, Format};

/// Rows read to infer the schema, by default.
pub const DEFAULT_INFER_ROWS: usize = 10_000;

/// How inputs are converted.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Forces every input's format (`--format`).
    pub format: Option<Format>,
    /// CSV's field delimiter (`--delimiter`); `,` for CSV, a tab for TSV.
    pub delimiter: Option<u8>,
    /// Rows read to infer the schema (`--infer-rows`).
    pub infer_rows: usize,
    /// Values read as null besides the empty field (`--null`), CSV and TSV only.
    pub nulls: Vec<String>,
    pub on_error: OnError,
    /// About the size of one Parquet file (`--target-file-size`).
    pub target_file_size: u64,
    pub overrides: Overrides,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            format: None,
            delimiter: None,
            infer_rows: DEFAULT_INFER_ROWS,
            nulls: Vec::new(),
            on_error: OnError::Fail,
            target_file_size: parquet::DEFAULT_TARGET,
            overrides: Overrides::default(),
        }
    }
}

/// One text input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    /// Relative to the inputs' root, `/`-separated.
    pub rel: String,
    pub format: Format,
    pub compression: Compression,
}

/// What converting the inputs made.
#[derive(Debug, Clone)]
pub struct Converted {
    /// Each input and its Parquet files (absolute paths under the work directory).
    pub outputs: Vec<(Input, Vec<PathBuf>)>,
    pub rows: u64,
    pub skipped: Skipped,
}

impl Converted {
    /// The one Parquet file of a single-file version: one input made one file.
    pub fn single_file(&self) -> Option<&Path> {
        match self.outputs.as_slice() {
            [(_, files)] if files.len() == 1 => Some(&files[0]),
            _ => None,
        }
    }
}

impl Converted {
    /// What the version records of the conversion ([`Converted::ingested`]), with each input
    /// kept as it came when `keep_original` (hashed here).
    pub fn record(&self, keep_original: bool) -> Result<record::Record, IngestError> {
        let ingested = self.ingested();
        if !keep_original {
            return Ok(record::Record {
                ingested,
                local: Vec::new(),
            });
        }
        let inputs: Vec<Input> = self.outputs.iter().map(|(i, _)| i.clone()).collect();
        record::Record::keeping(ingested, &inputs)
    }

    /// What the version records of the conversion: the formats and compressions, the inputs,
    /// the rows skipped and the first of them, without their values.
    pub fn ingested(&self) -> catalog::ingested::Ingested {
        let mut formats: Vec<String> = self
            .outputs
            .iter()
            .map(|(i, _)| i.format.name().to_owned())
            .collect();
        formats.sort();
        formats.dedup();
        let mut compressions: Vec<String> = self
            .outputs
            .iter()
            .map(|(i, _)| i.compression.name().to_owned())
            .collect();
        compressions.sort();
        compressions.dedup();
        catalog::ingested::Ingested {
            formats,
            compressions,
            inputs: self.outputs.len() as u64,
            rows_skipped: self.skipped.count,
            skipped: self
                .skipped
                .first
                .iter()
                .map(|row| catalog::ingested::SkippedLine {
                    file: row.file.clone(),
                    line: row.line,
                    column: row.column.clone(),
                    reason: row.reason.clone(),
                })
                .collect(),
            originals: Vec::new(),
        }
        .capped()
    }
}

/// A value shortened for a message: at most 60 characters.
pub fn clip(value: &str) -> String {
    if value.chars().count() <= 60 {
        value.to_owned()
    } else {
        let head: String = value.chars().take(57).collect();
        format!("{head}…")
    }
}

/// `--delimiter`: one ASCII character, or `\t` / `tab`.
pub fn parse_delimiter(raw: &str) -> Result<u8, IngestError> {
    match raw {
        "\\t" | "tab" | "\t" => Ok(b'\t'),
        _ if raw.len() == 1 && raw.is_ascii() && raw != "\"" && raw != "\n" && raw != "\r" => {
            Ok(raw.as_bytes()[0])
        }
        _ => Err(IngestError::Usage(format!(
            "--delimiter {raw:?}: one ASCII character (not a quote or a line end), or \\t"
        ))),
    }
}

/// `--target-file-size`: bytes, or with a unit `K`, `M`, `G` (powers of 1024, `B`/`iB`
/// suffixes allowed), at least 1 MiB.
pub fn parse_size(raw: &str) -> Result<u64, IngestError> {
    let upper = raw.trim().to_ascii_uppercase();
    let trimmed = upper.trim_end_matches("IB").trim_end_matches('B');
    let (digits, shift) = match trimmed.chars().last() {
        Some('K') => (&trimmed[..trimmed.len() - 1], 10),
        Some('M') => (&trimmed[..trimmed.len() - 1], 20),
        Some('G') => (&trimmed[..trimmed.len() - 1], 30),
        _ => (trimmed, 0),
    };
    let value: u64 = digits.trim().parse().map_err(|_| {
        IngestError::Usage(format!(
            "--target-file-size {raw}: a size such as 256M or 1G"
        ))
    })?;
    let bytes = value.checked_shl(shift).filter(|b| b >> shift == value);
    match bytes {
        Some(b) if b >= 1 << 20 => Ok(b),
        _ => Err(IngestError::Usage(format!(
            "--target-file-size {raw}: at least 1M"
        ))),
    }
}

mod csv_decode;
mod csv_dialect;
mod csv_split;
mod inputs;
mod work;

pub use inputs::text_inputs;
pub use work::{convert_all, WorkDir};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_csv_blocks;
#[cfg(test)]
mod tests_jsonl;
