//! How a version was made from text inputs: `catalog-admin publish` converted CSV, TSV or JSON
//! Lines into the version's Parquet, and may have left bad rows out (`--on-error skip`) or kept
//! the inputs as they came (`--keep-original`). Recorded on the version
//! ([`crate::records::ActiveVersion::ingested`]) and shown by the metadata endpoint as
//! `ingested`.

use serde::{Deserialize, Serialize};

/// Most skipped rows a version names.
pub const SKIPPED_KEPT: usize = 10;
/// Most bytes of a skipped row's reason or file kept.
pub const TEXT_MAX: usize = 200;
/// Most originals a version keeps (each is a key of the `active` map's record).
pub const ORIGINALS_MAX: usize = 100;

/// What the conversion of a version's inputs recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ingested {
    /// The inputs' formats, each once, sorted: `csv`, `jsonl`, `tsv`.
    pub formats: Vec<String>,
    /// Their compressions, each once, sorted: `gzip`, `none`, `zstd`.
    pub compressions: Vec<String>,
    /// How many inputs there were.
    pub inputs: u64,
    /// Rows left out by `--on-error skip`.
    pub rows_skipped: u64,
    /// The first rows left out (at most [`SKIPPED_KEPT`]), in the order met.
    #[serde(default)]
    pub skipped: Vec<SkippedLine>,
    /// The inputs kept as they came, beside the Parquet (`--keep-original`); empty without.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub originals: Vec<Original>,
}

/// A row left out: where, and why. The reason names the problem, never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkippedLine {
    /// The input's path, relative to the inputs' root.
    pub file: String,
    /// 1-based, a CSV header counting as line 1.
    pub line: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    pub reason: String,
}

/// An input kept as it came.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Original {
    /// The input's path, relative to the inputs' root.
    pub name: String,
    /// Its object's key in the bucket.
    pub key: String,
    pub size: u64,
    /// Hex SHA-256 of its bytes.
    pub sha256: String,
    /// `text/csv`, `text/tab-separated-values` or `application/x-ndjson`; with
    /// compression, `application/gzip` or `application/zstd`.
    pub media_type: String,
}

/// `text` cut to at most [`TEXT_MAX`] bytes, at a character boundary, `…` marking a cut.
pub fn clip(text: &str) -> String {
    if text.len() <= TEXT_MAX {
        return text.to_owned();
    }
    let mut end = TEXT_MAX - '…'.len_utf8();
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

impl Ingested {
    /// The record as stored: at most [`SKIPPED_KEPT`] rows named, each text clipped.
    pub fn capped(mut self) -> Self {
        self.skipped.truncate(SKIPPED_KEPT);
        for line in &mut self.skipped {
            line.file = clip(&line.file);
            line.reason = clip(&line.reason);
            line.column = line.column.as_deref().map(clip);
        }
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capped_keeps_ten_lines_and_short_texts() {
        let line = |i: u64| SkippedLine {
            file: "a.csv".into(),
            line: i,
            column: Some("é".repeat(150)),
            reason: "x".repeat(500),
        };
        let ingested = Ingested {
            formats: vec!["csv".into()],
            compressions: vec!["none".into()],
            inputs: 1,
            rows_skipped: 12,
            skipped: (1..=12).map(line).collect(),
            originals: Vec::new(),
        }
        .capped();
        assert_eq!(ingested.skipped.len(), SKIPPED_KEPT);
        assert_eq!(ingested.rows_skipped, 12);
        let first = &ingested.skipped[0];
        assert!(first.reason.len() <= TEXT_MAX && first.reason.ends_with('…'));
        let column = first.column.as_deref().unwrap();
        assert!(
            column.len() <= TEXT_MAX && column.ends_with('…'),
            "{column}"
        );
        assert_eq!(clip("short"), "short");
    }
}
