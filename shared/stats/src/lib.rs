//! Per-column statistics of a Parquet file, or of a version's many files (the Column objects
//! of [docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)), read batch by
//! batch; each file's ranges for the manifest ([`ranges`]); schema agreement ([`schemas`]).
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
//! Exactness: numbers, dates and timestamps are listed and sorted, exact in every statistic up
//! to [`LIST_LIMIT`] values; beyond, and for text, counts are exact up to [`DISTINCT_LIMIT`]
//! distinct values (a median from them is exact at any size); past that the unique count comes
//! from a HyperLogLog sketch (about 0.8 % error), top values from the values counted before the
//! limit (each still counted exactly), the median from a uniform reservoir sample of
//! [`MEDIAN_LIMIT`] values, and the column is flagged `"approximate": true`. Histograms are
//! exact at every size: from the listed values, or from a later pass that counts the values
//! into bins fixed by the exact minimum and maximum.
//!
//! Memory is bounded in total, whatever the file's width: see [`summarize_within`].
//!
//! Many files ([`summarize_files`], with Hive partition columns [`summarize_partitioned`]): the
//! files, sharing one schema (columns matched by name, in any order), are read one after
//! another through the same counts, in every pass, so every statistic above (histograms,
//! medians, top values, sample values in file order across the files, and which columns are
//! approximate) is exactly what one file holding all their rows in that order would give: no
//! per-file result is merged, and nothing becomes an estimate that one file would not make one.
//! The same memory bound holds whatever the number of files: one file's footer and reader at a
//! time per thread, and only the first file's schema kept. Parallelism: the footers are read in
//! parallel up front (schema agreement, row counts), and while one file's batches are counted
//! the next files are decoded on the other cores (a batch ahead each, the batch size shared so
//! the batches in flight stay about 2 × 8 MB); the counting itself is parallel over columns.

mod accumulator;
pub mod fanout;
pub mod histogram;
pub mod input;
mod listed;
mod once;
mod parallel;
pub mod partial;
pub mod partitions;
pub mod ranges;
pub mod remote;
pub mod schemas;
mod source;

use listed::LIST_LIMIT;
mod sketch;
mod values;

use std::path::Path;

use arrow_array::ArrayRef;
use serde::Serialize;
use serde_json::Value;

use accumulator::Accumulator;
pub use histogram::{Histogram, BINS};
pub use input::StatsInput;
pub use partitions::Partitions;
pub use ranges::{file_ranges, scan_files, FileColumnRange, FileRanges, ScannedFiles};
pub use schemas::{check_schemas, SchemaMismatch};
use source::Source;

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
    #[error("no files to summarize")]
    NoFiles,
    /// One of many files: its path, and what is wrong with it.
    #[error("{0}: {1}")]
    InFile(String, #[source] Box<StatsError>),
    #[error(transparent)]
    Schemas(#[from] SchemaMismatch),
    /// Partition values that do not fit the files or the partition columns.
    #[error("partition values: {0}")]
    Partitions(String),
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
    /// How many times the file was opened and read (its columns in groups, then again for
    /// histograms and the columns that outgrew their share of memory).
    #[serde(skip)]
    pub passes: usize,
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

/// The bytes every column's counts and values may take at once, whatever the file's width:
/// columns are read in passes of at most [`PASS_COLUMNS`] sharing it, and a column that
/// outgrows its share is counted again in a pass of its own (or with others whose worst case
/// fits beside it). See docs/operations.md, Statistics conventions.
pub const MEMORY_BUDGET: usize = 96 << 20;
/// At least this many columns are read in one pass (more in a short file).
pub const PASS_COLUMNS: usize = 8;
/// Decoded bytes of the columns a batch holds, about.
const BATCH_BYTES: u64 = 8 << 20;
const MIN_BATCH_ROWS: usize = 1024;

/// What a pass after the first does for one column: its histogram, its counts and values, or
/// both.
struct Job {
    index: usize,
    binner: Option<histogram::Binner>,
    own: Option<Accumulator>,
    /// Read straight in this pass, its bins foreseen from the footers ([`once`]).
    foreseen: bool,
}

/// Summarizes every column within [`MEMORY_BUDGET`], or the MiB that `CATALOG_STATS_MEMORY_MIB`
/// names (a machine with more memory takes fewer passes).
pub fn summarize(path: &Path) -> Result<FileStats, StatsError> {
    summarize_within(path, budget())
}

/// [`MEMORY_BUDGET`], or the MiB that `CATALOG_STATS_MEMORY_MIB` names.
fn budget() -> usize {
    std::env::var("CATALOG_STATS_MEMORY_MIB")
        .ok()
        .and_then(|m| m.trim().parse::<usize>().ok())
        .filter(|m| *m > 0)
        .map_or(MEMORY_BUDGET, |m| m.saturating_mul(1 << 20))
}

/// The statistics of the rows of every file in `paths`, in that order, as if one file held
/// them all (see [`summarize_files_within`]), within [`MEMORY_BUDGET`] or the MiB that
/// `CATALOG_STATS_MEMORY_MIB` names.
pub fn summarize_files<P: StatsInput>(paths: &[P]) -> Result<FileStats, StatsError> {
    summarize_files_within(paths, budget())
}

/// Reads the file in passes of at most [`PASS_COLUMNS`] columns whose counts and values share
/// `budget` bytes; then, in as few passes as `budget` allows, counts again each column that
/// outgrew its share, with the numeric, date and timestamp columns' histograms. The answer is
/// the same whatever the budget: only the number of passes changes.
pub fn summarize_within(path: &Path, budget: usize) -> Result<FileStats, StatsError> {
    summarize_files_within(&[path], budget)
}

/// [`summarize_within`] over the rows of every file in `paths`, read one after another through
/// the same counts: every statistic is what one file holding all their rows, in this order,
/// would give (sample values too, in file order across the files). The files must share one
/// schema, the same column names and types in any order (otherwise
/// [`StatsError::Schemas`] names each file and column that disagrees); the columns come in the
/// first file's order and are matched by name in the others. Memory is bounded as for one file
/// whatever the number of files: each pass reads the files one at a time (the next ones
/// decoded ahead on the other cores), and only the first file's schema is kept. An error about
/// one of several files names it ([`StatsError::InFile`]).
pub fn summarize_files_within<P: StatsInput>(
    paths: &[P],
    budget: usize,
) -> Result<FileStats, StatsError> {
    summarize_partitioned_within(paths, Partitions::NONE, budget)
}

/// [`summarize_files`] with Hive partition columns, within [`MEMORY_BUDGET`] or the MiB that
/// `CATALOG_STATS_MEMORY_MIB` names.
pub fn summarize_partitioned<P: StatsInput>(
    paths: &[P],
    partitions: Partitions<'_>,
) -> Result<FileStats, StatsError> {
    summarize_partitioned_within(paths, partitions, budget())
}

/// [`summarize_files_within`] with Hive partition columns after the files' columns: each file's
/// value of each, as if the file held it in every row (see [`partitions`]). A partition column
/// named as a column of the files, or values that do not fit the files or the columns' types,
/// are refused ([`StatsError::Partitions`]).
pub fn summarize_partitioned_within<P: StatsInput>(
    paths: &[P],
    partitions: Partitions<'_>,
    budget: usize,
) -> Result<FileStats, StatsError> {
    let source = Source::open(paths, partitions)?;
    let row_count = source.rows();
    let schema = source.schema().clone();
    let width = schema.fields().len();
    if width == 0 {
        return Err(StatsError::NoColumns);
    }
    // At least PASS_COLUMNS columns a pass, more when the file is short: as many as the
    // budget holds with each column's values listed.
    let rows = usize::try_from(row_count).unwrap_or(usize::MAX);
    let per_column = rows
        .min(LIST_LIMIT)
        .saturating_mul(16)
        .saturating_add(64 << 10);
    let together = (budget / per_column).max(PASS_COLUMNS).min(width);
    let share = (together > 1).then_some(budget / together);
    let mut passes = 0;
    // Every column that kept its counts is done but for its histogram as soon as its group is
    // read (its counts are dropped then); the others wait for a pass of their own.
    let mut done: Vec<Option<ColumnStats>> = vec![None; width];
    let mut waiting: Vec<Option<Accumulator>> = (0..width).map(|_| None).collect();
    // (column, its histogram's bins, the bytes of a pass of its own if it needs one, whether
    // it goes straight to that pass with bins foreseen from the footers)
    let mut jobs: Vec<(usize, Option<histogram::Binner>, usize, bool)> = Vec::new();
    let file_width = width - partitions.columns.len();
    let foreseen = once::foresee(paths, &schema, file_width)?;
    for (index, column) in foreseen.into_iter().enumerate() {
        if let Some(column) = column {
            jobs.push((index, column.binner, column.first.own_pass_bytes(), true));
            waiting[index] = Some(column.first);
        }
    }
    let all: Vec<usize> = (0..width).filter(|i| waiting[*i].is_none()).collect();
    for indices in all.chunks(together) {
        passes += 1;
        let mut group: Vec<Accumulator> = indices
            .iter()
            .map(|i| {
                let field = &schema.fields()[*i];
                let mut column = Accumulator::new(field.name(), field.data_type(), share);
                column.reserve_list(rows);
                column
            })
            .collect();
        // Inputs read once: the first file alone, then the others without the columns that
        // outgrew their share in it and need no histogram ([`once`]).
        let first = match P::READ_ONCE {
            true => source.files().min(1),
            false => source.files(),
        };
        source.read_columns_of(0..first, indices, |arrays| {
            in_parallel(&mut group, arrays, Accumulator::add)
        })?;
        let early: Vec<bool> = indices
            .iter()
            .zip(&group)
            .map(|(i, column)| {
                first < source.files()
                    && *i < file_width
                    && column.deferred()
                    && !once::binnable(schema.field(*i).data_type())
            })
            .collect();
        let rest: Vec<usize> = indices
            .iter()
            .zip(&early)
            .filter(|(_, early)| !**early)
            .map(|(i, _)| *i)
            .collect();
        if !rest.is_empty() {
            let mut kept: Vec<&mut Accumulator> = group
                .iter_mut()
                .zip(&early)
                .filter(|(_, early)| !**early)
                .map(|(column, _)| column)
                .collect();
            source.read_columns_of(first..source.files(), &rest, |arrays| {
                in_parallel(&mut kept, arrays, |column, array| column.add(array))
            })?;
        }
        for ((index, column), early) in indices.iter().copied().zip(group).zip(early) {
            if early {
                // Counted from the first file on in a pass of its own, which gives every
                // statistic of it; planned as large as the budget (its first file says little).
                jobs.push((index, None, budget.max(column.own_pass_bytes()), true));
                waiting[index] = Some(column);
                continue;
            }
            let binner = column.binner().filter(|_| !column.histogram_from_list());
            let own = if column.deferred() {
                let bytes = column.own_pass_bytes();
                waiting[index] = Some(column);
                Some(bytes)
            } else {
                done[index] = Some(column.finish(row_count)?);
                None
            };
            if binner.is_some() || own.is_some() {
                jobs.push((index, binner, own.unwrap_or(0), false));
            }
        }
    }
    jobs.sort_by_key(|job| job.0);

    // Then the histograms (bins fixed by each column's exact minimum and maximum) and the
    // columns counted again, each finished as soon as its pass ends.
    while !jobs.is_empty() {
        // One pass: columns in file order while their worst cases fit the budget together
        // (at least one).
        let mut pass = Vec::new();
        let mut used = 0usize;
        let mut rest = Vec::new();
        for (index, binner, bytes, foreseen) in jobs {
            if pass.len() < together && (pass.is_empty() || used + bytes <= budget) {
                used += bytes;
                let own = waiting[index].as_ref().map(|first| {
                    let field = &schema.fields()[index];
                    Accumulator::own_pass(field.name(), field.data_type(), first)
                });
                pass.push(Job {
                    index,
                    binner,
                    own,
                    foreseen,
                });
            } else {
                rest.push((index, binner, bytes, foreseen));
            }
        }
        jobs = rest;
        passes += 1;
        let indices: Vec<usize> = pass.iter().map(|j| j.index).collect();
        source.read_columns(&indices, |arrays| {
            in_parallel(&mut pass, arrays, |job, array| {
                if let Some(b) = &mut job.binner {
                    match (b.add(array), job.foreseen) {
                        // A value outside the bins foreseen: counted in a later pass.
                        (Err(_), true) => job.binner = None,
                        (added, _) => added?,
                    }
                }
                if let Some(own) = &mut job.own {
                    own.add(array)?;
                }
                Ok(())
            })
        })?;
        for job in pass {
            if job.foreseen {
                waiting[job.index] = None;
                if let Some(own) = job.own {
                    let (stats, again) = once::finish(own, job.binner, row_count)?;
                    if let Some(binner) = again {
                        jobs.push((job.index, Some(binner), 0, false));
                    }
                    done[job.index] = Some(stats);
                }
                continue;
            }
            if let (Some(own), Some(mut column)) = (job.own, waiting[job.index].take()) {
                column.adopt(own);
                done[job.index] = Some(column.finish(row_count)?);
            }
            if let (Some(stats), Some(binner)) = (&mut done[job.index], job.binner) {
                stats.histogram = Some(binner.finish());
            }
        }
    }
    Ok(FileStats {
        row_count,
        passes,
        columns: done
            .into_iter()
            .map(|c| c.ok_or(StatsError::Changed))
            .collect::<Result<_, _>>()?,
    })
}

#[cfg(test)]
mod bench;
#[cfg(test)]
mod testdata;
#[cfg(test)]
mod tests;
