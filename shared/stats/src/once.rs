//! Passes planned from the footers, for inputs whose every read fetches the bytes again
//! ([`StatsInput::READ_ONCE`]: objects read by ranged GETs), so that a column is read once
//! where the answer allows it, and the answer stays what it is otherwise.
//!
//! A number, date or timestamp column with more values than [`LIST_LIMIT`] cannot keep them
//! listed in a pass shared with other columns: it is always counted again in a pass of its own
//! ([`Accumulator::deferred`]), and its histogram needs its exact minimum and maximum before
//! the values are counted into bins. When the footers' null counts say a column has that many
//! values, it goes straight to a pass of its own (the first pass's counts would be dropped
//! unused), planned within the memory budget as it would be after a first pass; its histogram
//! is counted in the same pass into the bins that the footers' exact row-group bounds give.
//! Those bins are kept only when they are the bins of the exact minimum and maximum the pass
//! finds (a footer's bound may be an infinity or a NaN the statistics count as null, or −0.0
//! for 0.0); otherwise the histogram is counted in a later pass, as it would have been. Every
//! statistic is the same as without this plan: a column's counts in a pass of its own are
//! those it would have had after a first pass, and the histogram's counts depend only on its
//! bins and the values.
//!
//! Text and the other columns cannot be foreseen (their memory depends on their distinct
//! values): they are read in shared passes as before. With many files, a shared pass reads
//! the first file alone first: a text (or boolean, or other) column that outgrew its share
//! there is left out of the pass's other files, and counted from the first file on in a pass
//! of its own, which gives every statistic of it (it needs no histogram, so nothing of its
//! first pass is kept). Such a column is read twice in the first file, once in the others;
//! a column that outgrows its share only past the first file is read again in all of them,
//! as before.

use arrow_array::{Array, ArrayRef};
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};

use super::accumulator::Accumulator;
use super::histogram::Binner;
use super::input::StatsInput;
use super::listed::LIST_LIMIT;
use super::parallel::map_indices_per_core;
use super::ranges::exact_group_bounds;
use super::source::in_file;
use super::values::{kind_of, Kind};
use super::{ColumnStats, StatsError};

/// A column read straight in a pass of its own.
pub(super) struct Foreseen {
    /// Stands for its first pass when the pass is planned: its name, type and values.
    pub first: Accumulator,
    /// Its histogram's bins from the footers' bounds, if every row group with a value has
    /// exact ones.
    pub binner: Option<Binner>,
}

/// One column of one file, from its footer: its non-null values (NaN counted), and its row
/// groups' exact bounds.
type Facts = Option<(u64, Option<(ArrayRef, ArrayRef)>)>;

/// The columns among the first `width` of `schema` (the files' columns) that go straight to a
/// pass of their own (module docs), read from every file's footer; `None` for the others.
pub(super) fn foresee<P: StatsInput>(
    paths: &[P],
    schema: &Schema,
    width: usize,
) -> Result<Vec<Option<Foreseen>>, StatsError> {
    let listed = |i: usize| binnable(schema.field(i).data_type());
    let mut all: Vec<Option<Foreseen>> = (0..schema.fields().len()).map(|_| None).collect();
    if !P::READ_ONCE || !(0..width).any(listed) {
        return Ok(all);
    }
    let files = map_indices_per_core(paths.len(), P::THREADS_PER_CORE, |i| {
        let path = &paths[i];
        let metadata = ArrowReaderMetadata::load(&path.open()?, ArrowReaderOptions::default())
            .map_err(|e| in_file(path)(e.into()))?;
        Ok::<_, StatsError>(
            (0..width)
                .map(|c| listed(c).then(|| facts(&metadata, schema, c)).flatten())
                .collect::<Vec<Facts>>(),
        )
    })?;
    let files = files.into_iter().collect::<Result<Vec<_>, _>>()?;
    for (c, foreseen) in all.iter_mut().enumerate().take(width) {
        let field = schema.field(c);
        let mut values = 0u64;
        // The bounds counted as values: their minimum and maximum as the column's own.
        let mut bounds = Some(Accumulator::new(field.name(), field.data_type(), None));
        for file in &files {
            let Some((file_values, file_bounds)) = file.get(c).cloned().flatten() else {
                values = 0;
                break;
            };
            values = values.saturating_add(file_values);
            let added = match (file_bounds, bounds.as_mut()) {
                (Some((mins, maxes)), Some(b)) => b.add(&mins).and_then(|_| b.add(&maxes)).is_ok(),
                (None, _) => file_values == 0,
                (Some(_), None) => false,
            };
            if !added {
                bounds = None;
            }
        }
        if values > LIST_LIMIT as u64 {
            *foreseen = Some(Foreseen {
                first: Accumulator::foreseen(field.name(), field.data_type(), values),
                binner: bounds.and_then(|b| b.binner()),
            });
        }
    }
    Ok(all)
}

/// Whether a column of this type has a histogram (numbers, dates and timestamps): its values
/// are listed, and its bins need its exact minimum and maximum.
pub(super) fn binnable(data_type: &arrow_schema::DataType) -> bool {
    matches!(
        kind_of(data_type),
        Kind::Int
            | Kind::Date32
            | Kind::Date64
            | Kind::Timestamp(..)
            | Kind::Float
            | Kind::Decimal(_)
    )
}

/// Column `c` of `schema` in one file's footer (matched by name): `None` without a null count
/// in every row group.
fn facts(metadata: &ArrowReaderMetadata, schema: &Schema, c: usize) -> Facts {
    let parquet = metadata.metadata();
    let converter = StatisticsConverter::try_new(
        schema.field(c).name(),
        metadata.schema(),
        parquet.file_metadata().schema_descr(),
    )
    .ok()?
    .with_missing_null_counts_as_zero(false);
    converter.parquet_column_index()?;
    let groups = parquet.row_groups();
    let nulls = converter.row_group_null_counts(groups).ok()?;
    if nulls.null_count() > 0 {
        return None;
    }
    let rows: u64 = groups
        .iter()
        .map(|g| u64::try_from(g.num_rows()).unwrap_or(0))
        .sum();
    let values = rows.checked_sub(nulls.values().iter().sum())?;
    Some((values, exact_group_bounds(&converter, groups, &nulls)))
}

/// A column read straight in a pass of its own, finished: its histogram from the bins
/// foreseen when they are its exact bins; otherwise the exact bins, to count in a later pass.
pub(super) fn finish(
    own: Accumulator,
    foreseen: Option<Binner>,
    rows: u64,
) -> Result<(ColumnStats, Option<Binner>), StatsError> {
    let exact = own.binner();
    let mut stats = own.finish(rows)?;
    if stats.histogram.is_some() {
        return Ok((stats, None));
    }
    match (foreseen, exact) {
        (Some(binner), Some(exact)) if binner.same_bins(&exact) => {
            stats.histogram = Some(binner.finish());
            Ok((stats, None))
        }
        (_, exact) => Ok((stats, exact)),
    }
}

#[cfg(test)]
mod tests;
