//! Per-column statistics of a Parquet file (the Column objects of
//! [docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)), read batch by batch.
//!
//! Conventions (the same as `dev/samples.py` and docs/operations.md, Statistics conventions):
//! - `dtype` is the Arrow type as pyarrow prints it (`int64`, `double`, `string`, `bool`,
//!   `date32[day]`, `timestamp[us, tz=UTC]`, `decimal128(10, 2)`, ...).
//! - `null_count` counts nulls and, in floating-point columns, NaN and ±infinity (JSON has no
//!   number for them). `null_percent` is
//!   100 × null_count / row_count, rounded to 4 decimals.
//! - `unique_count` counts distinct non-null values.
//! - `mean`, `std` (sample, ddof = 1), `min`, `max`, `median` are numbers for integer, floating
//!   point and decimal128 columns (decimals in double precision), computed over non-null, non-NaN
//!   values; `null` when there are none (`std` when fewer than two), and `null` for every other
//!   type. `min` and `max` of integer columns are integers.
//! - `top_values`: up to 5 most frequent non-null values, most frequent first, ties by value
//!   ascending; `top_counts`: how many rows hold each of them, in the same order.
//!   `sample_values`: the first up to 5 non-null values in file order. Dates and
//!   timestamps as ISO 8601 strings; text longer than 200 characters is cut and ends in `…`.
//!   Values of other types (binary, lists, structs) are counted by their text form, so cut.
//! - `histogram` (integer, floating-point, decimal, date and timestamp columns with a value):
//!   at most [`BINS`] bins, `{"bin_edges": [...], "counts": [...]}` as in Hugging Face
//!   dataset-viewer's `/statistics`. Integers, dates (in days) and timestamps (in their unit)
//!   have integer bins of one width, ceil((max − min + 1) / 20), from `min`, the last edge an
//!   exclusive bound; floats and decimals (as doubles) have numpy.histogram(values, bins=20)'s
//!   bins, computed as numpy computes them, and none where numpy refuses the range. See
//!   [`histogram`].
//!
//! Memory is bounded per column, whatever the file's size: exact up to [`DISTINCT_LIMIT`]
//! distinct values (unique count, top values) and [`MEDIAN_LIMIT`] values (median); beyond, the
//! unique count comes from a HyperLogLog sketch (about 0.8 % error), top values from the values
//! counted before the limit (each still counted exactly), the median from a uniform reservoir
//! sample of [`MEDIAN_LIMIT`] values, and the column is flagged `"approximate": true`.
//! Histograms are exact at every size: a second pass over the file, reading only their columns,
//! counts the values into bins fixed by the first pass's exact minimum and maximum.

mod accumulator;
pub mod histogram;
mod sketch;
mod values;

use std::fs::File;
use std::path::Path;

use arrow_array::ArrayRef;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ProjectionMask;
use serde::Serialize;
use serde_json::Value;

use accumulator::Accumulator;
pub use histogram::{Histogram, BINS};

/// Distinct values counted exactly per column.
pub const DISTINCT_LIMIT: usize = 1 << 20;
/// Values kept per column for an exact median.
pub const MEDIAN_LIMIT: usize = 1 << 22;
/// Longest text shown in `top_values` and `sample_values`, in characters.
pub const SHOWN_CHARS: usize = 200;
const TOP: usize = 5;
const SAMPLES: usize = 5;
const BATCH_ROWS: usize = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum StatsError {
    #[error("cannot read {0}: {1}")]
    Io(String, #[source] std::io::Error),
    #[error("not a valid Parquet file: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    #[error("not a valid Parquet file: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    #[error("the file has no columns")]
    NoColumns,
    #[error("a statistics thread failed")]
    Panicked,
    #[error("the file changed while its statistics were computed")]
    Changed,
}

/// A Column object ([docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)), plus
/// `approximate`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ColumnStats {
    pub name: String,
    pub dtype: String,
    pub null_count: u64,
    pub null_percent: f64,
    pub unique_count: u64,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub min: Option<Value>,
    pub max: Option<Value>,
    pub median: Option<f64>,
    pub top_values: Vec<Value>,
    /// How many rows hold each of `top_values`, in the same order (beyond the spec).
    pub top_counts: Vec<u64>,
    pub sample_values: Vec<Value>,
    /// True when a memory bound made `unique_count`, `top_values` or `median` an estimate.
    pub approximate: bool,
    /// Numeric, date and timestamp columns with a value (beyond the spec).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<Histogram>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileStats {
    pub row_count: u64,
    pub columns: Vec<ColumnStats>,
}

/// Feeds each array of a batch to its own item: the items are independent, so each thread takes
/// a share of them.
fn in_parallel<T: Send>(
    items: &mut [T],
    arrays: &[ArrayRef],
    feed: impl Fn(&mut T, &ArrayRef) -> Result<(), StatsError> + Sync,
) -> Result<(), StatsError> {
    if items.len() != arrays.len() {
        return Err(StatsError::Changed);
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(items.len());
    if threads == 0 {
        return Ok(());
    }
    let share = items.len().div_ceil(threads);
    let feed = &feed;
    std::thread::scope(|scope| {
        let jobs: Vec<_> = items
            .chunks_mut(share)
            .zip(arrays.chunks(share))
            .map(|(items, arrays)| {
                scope.spawn(move || {
                    items
                        .iter_mut()
                        .zip(arrays)
                        .try_for_each(|(item, array)| feed(item, array))
                })
            })
            .collect();
        jobs.into_iter()
            .try_for_each(|job| job.join().unwrap_or_else(|_| Err(StatsError::Panicked)))
    })
}

fn open(path: &Path) -> Result<ParquetRecordBatchReaderBuilder<File>, StatsError> {
    let file = File::open(path).map_err(|e| StatsError::Io(path.display().to_string(), e))?;
    Ok(ParquetRecordBatchReaderBuilder::try_new(file)?.with_batch_size(BATCH_ROWS))
}

/// Reads the file batch by batch and summarizes every column; then reads the numeric, date and
/// timestamp columns again to count their histograms.
pub fn summarize(path: &Path) -> Result<FileStats, StatsError> {
    let builder = open(path)?;
    let row_count = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    let schema = builder.schema().clone();
    if schema.fields().is_empty() {
        return Err(StatsError::NoColumns);
    }
    let mut columns: Vec<Accumulator> = schema
        .fields()
        .iter()
        .map(|f| Accumulator::new(f.name(), f.data_type()))
        .collect();
    for batch in builder.build()? {
        in_parallel(&mut columns, batch?.columns(), Accumulator::add)?;
    }
    // Second pass: the bins are fixed by each column's exact minimum and maximum.
    let (indices, mut binners): (Vec<usize>, Vec<_>) = columns
        .iter()
        .enumerate()
        .filter_map(|(i, c)| c.binner().map(|b| (i, b)))
        .unzip();
    if !binners.is_empty() {
        let builder = open(path)?;
        let mask = ProjectionMask::roots(builder.parquet_schema(), indices.iter().copied());
        for batch in builder.with_projection(mask).build()? {
            in_parallel(&mut binners, batch?.columns(), |b, a| b.add(a))?;
        }
    }
    let mut histograms: Vec<Option<Histogram>> = vec![None; columns.len()];
    for (i, binner) in indices.into_iter().zip(binners) {
        histograms[i] = Some(binner.finish());
    }
    Ok(FileStats {
        row_count,
        columns: columns
            .into_iter()
            .zip(histograms)
            .map(|(c, h)| c.finish(row_count, h))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::sketch::{median, mixed_hash, HyperLogLog};
    use super::values::*;
    use super::*;
    use arrow_schema::TimeUnit;
    use serde_json::json;

    #[test]
    fn float_keys_order_numerically() {
        let mut values = [3.5, -1.0, 0.0, -0.0, -7.25, 1e300, f64::NEG_INFINITY];
        let mut keys: Vec<Key> = values.iter().map(|v| float_key(*v)).collect();
        keys.sort();
        values.sort_by(f64::total_cmp);
        let back: Vec<f64> = keys
            .iter()
            .map(|k| match k {
                Key::Float(b) => float_of(*b),
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(back, [f64::NEG_INFINITY, -7.25, -1.0, 0.0, 0.0, 3.5, 1e300]);
        assert_eq!(float_key(0.0), float_key(-0.0));
    }

    #[test]
    fn long_text_is_cut_on_a_character_boundary() {
        let long = "é".repeat(300);
        let cut = shown(&long);
        assert_eq!(cut.chars().count(), SHOWN_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(shown("short"), "short");
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [5.0]), 5.0);
    }

    #[test]
    fn hyperloglog_is_within_two_percent_on_a_million() {
        let mut hll = HyperLogLog::new();
        for i in 0..1_000_000u64 {
            hll.add(mixed_hash(&i128::from(i)));
        }
        let e = hll.estimate() as f64;
        assert!((e - 1e6).abs() / 1e6 < 0.02, "{e}");
    }

    #[test]
    fn timestamps_and_dates_render_as_iso_8601() {
        assert_eq!(date_json(0), json!("1970-01-01"));
        assert_eq!(date_json(19_783), json!("2024-03-01"));
        assert_eq!(
            timestamp_json(1_709_251_200_000_000, &TimeUnit::Microsecond, true),
            json!("2024-03-01T00:00:00Z")
        );
        assert_eq!(
            timestamp_json(1_500, &TimeUnit::Millisecond, false),
            json!("1970-01-01T00:00:01.500")
        );
    }
}
