//! Statistics computed per file and merged: what lets a version's statistics fan out, one
//! worker per file (a Lambda function under Step Functions' Distributed Map, a shell loop, AWS
//! Batch: docs/scaling.md), and be put together by the same [`merge`] the CLI runs
//! (`catalog-admin stats edges`, `stats file`, `stats merge`).
//!
//! Two phases, so that histograms are exact:
//! 1. [`edges`]: each column's minimum and maximum over every file, from the footers'
//!    statistics (reading a column only where a footer lacks exact bounds, or holds an
//!    infinite one). They fix the bins as [`histogram`](super::histogram) fixes them.
//! 2. [`file_partial`]: one file's [`FilePartial`], its histograms counted into those bins.
//!    Then [`merge`] of every file's partial, in the version's file order, gives the
//!    [`FileStats`] that publish writes.
//!
//! A partial is small whatever the file's size (JSON, tens of KiB per column at most): per
//! column, rows, nulls (NaN and ±infinity counted as nulls, as in [`super`]), count, mean and
//! M2 (merged with Chan's formulas: mean and sample std exact up to floating point), exact
//! minimum and maximum, the first [`SAMPLES`](super::SAMPLES) values, the histogram's counts,
//! and either
//! - **every distinct value with its count**, while the file's column has at most
//!   [`PARTIAL_VALUES`] distinct values of at most [`PARTIAL_TEXT_BYTES`] of text together:
//!   then unique count, top values and median merge exactly (the union counted exactly up to
//!   [`DISTINCT_LIMIT`](super::DISTINCT_LIMIT) distinct values); or
//! - **estimates**: a HyperLogLog sketch of the values (2^14 registers, the one the statistics
//!   of a whole version use, merged register by register: about 0.8 % standard error); the
//!   [`TOP_KEPT`] most frequent values (at most [`PARTIAL_TEXT_BYTES`] of their text) from a
//!   Misra–Gries summary of [`COUNTERS`] counters,
//!   with `top_error`, the most any value's true count can exceed its listed count (0 when
//!   unlisted); and, for numbers, [`QUANTILE_POINTS`] points of the file's sorted values, each
//!   standing for the block of values from it to the next (`rank_error`: the largest block).
//!   Past [`SAMPLE_LIMIT`] values the points come from a uniform sample of that many values.
//!
//! What a merged estimate guarantees ([`Estimate`], also written by `stats merge`):
//! - top values: each listed count is at most `top_count_error` (the files' `top_error`
//!   summed, plus what the merge itself dropped) below the true count; a value not listed
//!   holds at most the fifth count plus `top_count_error`.
//! - median: the value returned has a rank within `median_rank_error` (the files'
//!   `rank_error` summed) of the middle, unless `median_sampled`, when a file's points came
//!   from a sample and the error is statistical (about 0.5 / √[`SAMPLE_LIMIT`] of that file's
//!   values, one standard deviation).
//! - unique count: HyperLogLog's, about 0.8 % standard error.

mod column;
mod edges;
mod exact;
mod feed;
mod merge;

use serde::{Deserialize, Serialize};

pub use edges::{edges, Bounds, ColumnEdges, Edges};
pub use merge::{merge, Estimate, Merged};

use super::values::Key;
use super::{FileStats, StatsError, StatsInput};

/// Distinct values a file's partial lists with their counts (beyond, it keeps estimates).
pub const PARTIAL_VALUES: usize = 1024;
/// Bytes of text the values listed in a partial may hold together.
pub const PARTIAL_TEXT_BYTES: usize = 64 << 10;
/// Counters of the Misra–Gries summary a file's values are counted in (and at most
/// [`COUNTER_TEXT_BYTES`] of text).
pub const COUNTERS: usize = 4096;
/// Bytes of text the counters may hold.
pub const COUNTER_TEXT_BYTES: usize = 4 << 20;
/// Most frequent values a partial keeps when it does not list every value.
pub const TOP_KEPT: usize = 100;
/// Points of a file's sorted numbers a partial keeps for the median.
pub const QUANTILE_POINTS: usize = 512;
/// Numbers of a file kept for its quantile points (beyond, a uniform sample of this many).
pub const SAMPLE_LIMIT: usize = 1 << 17;
/// The partial's format: [`merge`] refuses others.
pub const FORMAT: u32 = 1;

#[derive(Debug, thiserror::Error)]
pub enum PartialError {
    #[error(transparent)]
    Stats(#[from] StatsError),
    /// The edges do not fit the file or the files.
    #[error("{0}")]
    Edges(String),
    /// Partials that cannot be merged.
    #[error("{0}")]
    Merge(String),
}

/// One file's partial statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FilePartial {
    pub format: u32,
    /// The file's name as it was read (a path, or `s3://bucket/key`).
    pub file: String,
    /// The object's ETag every read was conditioned on, for a file in S3: `stage publish
    /// --partials` takes the partial only for that object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    pub row_count: u64,
    pub columns: Vec<ColumnPartial>,
}

/// How a column's values are written (the statistics' `Kind`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum KindTag {
    Int,
    Float,
    Decimal { scale: i8 },
    Bool,
    Text,
    Date32,
    Date64,
    Timestamp { unit: String, tz: bool },
    Other,
}

/// One column of one file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnPartial {
    pub name: String,
    pub dtype: String,
    pub kind: KindTag,
    /// Nulls, NaN and ±infinity.
    pub nulls: u64,
    /// Values that are not nulls.
    pub count: u64,
    #[serde(with = "exact::f64")]
    pub mean: f64,
    #[serde(with = "exact::f64")]
    pub m2: f64,
    /// Numbers' minimum and maximum (as doubles; `inf` and `-inf` without a value).
    #[serde(with = "exact::f64")]
    pub min: f64,
    #[serde(with = "exact::f64")]
    pub max: f64,
    /// Integers', dates' (in days) and timestamps' (in their unit) minimum and maximum.
    #[serde(with = "exact::i128")]
    pub min_int: i128,
    #[serde(with = "exact::i128")]
    pub max_int: i128,
    /// The first values, in file order (text cut as it is shown).
    pub(crate) samples: Vec<Key>,
    /// Every distinct value and its count, when the file has few enough (see the module).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub values: Option<Vec<Counted>>,
    /// Otherwise: the most frequent values, with counts at most `top_error` below the truth.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub top: Vec<Counted>,
    #[serde(default)]
    pub top_error: u64,
    /// Otherwise: the HyperLogLog registers, in hex.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hll: Option<String>,
    /// Otherwise, for numbers: points for the median.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantiles: Option<Quantiles>,
    /// The histogram's counts in the bins of the edges given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<BinCounts>,
}

/// A value and how many rows hold it, written `[value, count]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "(Key, u64)", from = "(Key, u64)")]
pub struct Counted {
    pub(crate) value: Key,
    pub count: u64,
}

impl From<Counted> for (Key, u64) {
    fn from(c: Counted) -> Self {
        (c.value, c.count)
    }
}

impl From<(Key, u64)> for Counted {
    fn from((value, count): (Key, u64)) -> Self {
        Self { value, count }
    }
}

/// Points of a file's sorted numbers: each the first of a block of `weight` values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantiles {
    pub points: Vec<Point>,
    /// The largest block: the most a rank read from the points is off by.
    pub rank_error: u64,
    /// The points come from a uniform sample of [`SAMPLE_LIMIT`] values.
    pub sampled: bool,
}

/// Written `["value", weight]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point(#[serde(with = "exact::f64")] pub f64, pub u64);

/// A histogram's counts, and the minimum and maximum that fixed its bins.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BinCounts {
    pub bounds: Bounds,
    pub counts: Vec<u64>,
}

/// One file's partial statistics, its histograms counted into the bins `edges` fix.
pub fn file_partial<I: StatsInput + ?Sized>(
    input: &I,
    edges: &Edges,
) -> Result<FilePartial, PartialError> {
    column::file_partial(input, edges)
}

#[cfg(test)]
mod tests;
