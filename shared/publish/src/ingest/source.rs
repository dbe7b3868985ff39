//! What an input is (CSV, TSV or JSON Lines; plain, gzip or zstd), read from its name or
//! forced with `--format`, and the reader of its bytes, decompressed.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// A text format `publish` converts to Parquet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Tsv,
    JsonLines,
}

impl Format {
    /// `--format`'s values: `csv`, `tsv`, `jsonl` (or `ndjson`).
    pub fn parse(raw: &str) -> Option<Format> {
        match raw.to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "tsv" => Some(Format::Tsv),
            "jsonl" | "ndjson" | "json-lines" => Some(Format::JsonLines),
            _ => None,
        }
    }

    /// The name the version records (`csv`, `tsv`, `jsonl`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Tsv => "tsv",
            Format::JsonLines => "jsonl",
        }
    }

    /// The media type of an original kept beside the Parquet.
    pub fn media_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv",
            Format::Tsv => "text/tab-separated-values",
            Format::JsonLines => "application/x-ndjson",
        }
    }
}

/// How an input's bytes are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The name the version records (`none`, `gzip`, `zstd`).
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// Splits a file name into its stem, format and compression: `sales.csv.gz` is
/// (`sales`, CSV, gzip). ASCII case is ignored. `None` when the name is not one of
/// `.csv`, `.tsv`, `.jsonl`, `.ndjson`, each optionally followed by `.gz` or `.zst`.
pub fn detect(name: &str) -> Option<(&str, Format, Compression)> {
    let (rest, compression) = strip(name, ".gz")
        .map(|r| (r, Compression::Gzip))
        .or_else(|| strip(name, ".zst").map(|r| (r, Compression::Zstd)))
        .unwrap_or((name, Compression::None));
    let formats = [
        (".csv", Format::Csv),
        (".tsv", Format::Tsv),
        (".jsonl", Format::JsonLines),
        (".ndjson", Format::JsonLines),
    ];
    formats.iter().find_map(|(ext, format)| {
        strip(rest, ext)
            .filter(|stem| !stem.is_empty())
            .map(|stem| (stem, *format, compression))
    })
}

/// The compression a name shows (for `--format`, which names the format only).
pub fn compression_of(name: &str) -> Compression {
    if strip(name, ".gz").is_some() {
        Compression::Gzip
    } else if strip(name, ".zst").is_some() {
        Compression::Zstd
    } else {
        Compression::None
    }
}

/// The name without its compression and format extensions, whatever they are (`x.csv.gz` is
/// `x`; a forced format's input `data.txt` is `data`).
pub fn stem_of(name: &str) -> &str {
    if let Some((stem, _, _)) = detect(name) {
        return stem;
    }
    let base = strip(name, ".gz")
        .or_else(|| strip(name, ".zst"))
        .unwrap_or(name);
    match base.rfind('.') {
        Some(dot) if dot > 0 => &base[..dot],
        _ => base,
    }
}

fn strip<'a>(name: &'a str, ext: &str) -> Option<&'a str> {
    let split = name.len().checked_sub(ext.len())?;
    (name.is_char_boundary(split) && name[split..].eq_ignore_ascii_case(ext))
        .then(|| &name[..split])
}

/// The input's bytes, decompressed, buffered (1 MiB).
pub fn open(path: &Path, compression: Compression) -> std::io::Result<Box<dyn BufRead + Send>> {
    let file = File::open(path)?;
    let inner: Box<dyn Read + Send> = match compression {
        Compression::None => Box::new(file),
        // Concatenated gzip members (as `cat a.gz b.gz` makes) are one stream.
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file))),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(file)?),
    };
    Ok(Box::new(BufReader::with_capacity(1 << 20, inner)))
}
