//! Phase 1: each column's minimum and maximum over every file, which fix its histogram's bins
//! as [`histogram`](crate::histogram) fixes them. From the footers where every row
//! group holding a value has exact, finite bounds (no data read); from the column's data where
//! not (a footer without statistics, text cut by the writer, an infinite or NaN bound: the
//! statistics count ±infinity and NaN as nulls, so the bound of the finite values is needed).

use arrow_array::Array;
use arrow_schema::Schema;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::RowGroupMetaData;
use serde::{Deserialize, Serialize};

use super::exact;
use super::feed::{each, V};
use super::{PartialError, FORMAT};
use crate::histogram::Binner;
use crate::parallel::map_indices;
use crate::ranges::exact_group_bounds;
use crate::schemas::{duplicates, Disagreements, SchemaCheck};
use crate::source::in_file;
use crate::values::*;
use crate::{StatsError, StatsInput};

/// The minimum and maximum that fix a column's bins: integers (dates in days, timestamps in
/// their unit), or numbers (floating point, decimals as doubles) without NaN and ±infinity.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Bounds {
    Int {
        #[serde(with = "exact::i128")]
        min: i128,
        #[serde(with = "exact::i128")]
        max: i128,
    },
    Float {
        #[serde(with = "exact::f64")]
        min: f64,
        #[serde(with = "exact::f64")]
        max: f64,
    },
}

impl Bounds {
    /// The bins these bounds fix for a column of `kind` (none where numpy refuses the range,
    /// or for a kind without a histogram).
    pub(crate) fn binner(&self, kind: &Kind) -> Option<Binner> {
        match (self, kind) {
            (
                Bounds::Int { min, max },
                Kind::Int | Kind::Date32 | Kind::Date64 | Kind::Timestamp(..),
            ) if min <= max => Some(Binner::int(kind.clone(), *min, *max)),
            (Bounds::Float { min, max }, Kind::Float | Kind::Decimal(_)) if min <= max => {
                Binner::float(kind.clone(), *min, *max)
            }
            _ => None,
        }
    }
}

/// Every column's bounds over the files, in the first file's column order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edges {
    pub format: u32,
    /// The files, in the order given.
    pub files: Vec<String>,
    pub columns: Vec<ColumnEdges>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnEdges {
    pub name: String,
    pub dtype: String,
    /// `None`: no histogram (another type, or no value in any file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
}

impl Edges {
    pub fn column(&self, name: &str) -> Option<&ColumnEdges> {
        self.columns.iter().find(|c| c.name == name)
    }
}

/// A column's running bounds.
#[derive(Default)]
struct Tracker {
    int: Option<(i128, i128)>,
    float: Option<(f64, f64)>,
    /// Nulls seen: with NaN and ±infinity, which the statistics count as nulls.
    nulls: usize,
}

impl Tracker {
    fn add(&mut self, v: V<'_>) {
        let float = |range: &mut Option<(f64, f64)>, x: f64| match range {
            None => *range = Some((x, x)),
            Some((lo, hi)) => {
                if x < *lo {
                    *lo = x;
                }
                if x > *hi {
                    *hi = x;
                }
            }
        };
        match v {
            V::Int(i) => {
                let (lo, hi) = self.int.get_or_insert((i, i));
                *lo = (*lo).min(i);
                *hi = (*hi).max(i);
            }
            V::Float(x) => float(&mut self.float, x),
            V::Decimal(u, scale) => float(&mut self.float, decimal_f64(u, scale)),
            V::Null => self.nulls += 1,
            V::Bool(_) | V::Text(_) => {}
        }
    }

    fn bounds(&self) -> Option<Bounds> {
        match (self.int, self.float) {
            (Some((min, max)), _) => Some(Bounds::Int { min, max }),
            (None, Some((min, max))) => Some(Bounds::Float { min, max }),
            _ => None,
        }
    }
}

/// Whether a column of this kind has a histogram.
fn binned(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::Int
            | Kind::Date32
            | Kind::Date64
            | Kind::Timestamp(..)
            | Kind::Float
            | Kind::Decimal(_)
    )
}

/// The bounds of every file's columns, merged, checking that the files share one schema (the
/// same column names and types in any order: otherwise [`StatsError::Schemas`] names each
/// file and column that disagrees). Footers are read in parallel, one file per core.
pub fn edges<P: StatsInput>(inputs: &[P]) -> Result<Edges, PartialError> {
    let Some(first) = inputs.first() else {
        return Err(StatsError::NoFiles.into());
    };
    let first_footer = footer(first).map_err(in_file(first))?;
    let schema = first_footer.schema().clone();
    let first_name = first.name();
    let check = SchemaCheck::new(&first_name, &schema);
    let scanned = map_indices(inputs.len(), |i| {
        let input = &inputs[i];
        let metadata = footer(input).map_err(in_file(input))?;
        let name = input.name();
        let disagreements = match i {
            0 => duplicates(&name, metadata.schema()),
            _ => check.disagreements(&name, metadata.schema()),
        };
        if !disagreements.is_empty() {
            return Ok(Err(disagreements));
        }
        let bounds = file_bounds(input, &metadata).map_err(in_file(input))?;
        Ok::<_, StatsError>(Ok(bounds))
    })?;
    let mut columns: Vec<ColumnEdges> = schema
        .fields()
        .iter()
        .map(|f| ColumnEdges {
            name: f.name().clone(),
            dtype: column_dtype(f.name(), f.data_type()),
            bounds: None,
        })
        .collect();
    let mut found = Disagreements::default();
    for file in scanned {
        match file? {
            Err(disagreements) => found.extend(disagreements),
            Ok(bounds) => {
                for (name, b) in bounds {
                    let Some(column) = columns.iter_mut().find(|c| c.name == name) else {
                        continue;
                    };
                    column.bounds = widen(column.bounds.take(), b);
                }
            }
        }
    }
    found.finish().map_err(StatsError::from)?;
    Ok(Edges {
        format: FORMAT,
        files: inputs.iter().map(|i| i.name()).collect(),
        columns,
    })
}

/// Bounds covering both, the earlier one kept on a tie (as the statistics keep the first of
/// −0.0 and 0.0).
fn widen(a: Option<Bounds>, b: Option<Bounds>) -> Option<Bounds> {
    match (a, b) {
        (Some(Bounds::Int { min, max }), Some(Bounds::Int { min: lo, max: hi })) => {
            Some(Bounds::Int {
                min: min.min(lo),
                max: max.max(hi),
            })
        }
        (Some(Bounds::Float { min, max }), Some(Bounds::Float { min: lo, max: hi })) => {
            Some(Bounds::Float {
                min: if lo < min { lo } else { min },
                max: if hi > max { hi } else { max },
            })
        }
        (a, None) => a,
        (_, b) => b,
    }
}

fn footer<I: StatsInput + ?Sized>(input: &I) -> Result<ArrowReaderMetadata, StatsError> {
    Ok(ArrowReaderMetadata::load(
        &input.open()?,
        ArrowReaderOptions::default(),
    )?)
}

/// One file's bounds of each column that has a histogram, by name.
fn file_bounds<I: StatsInput + ?Sized>(
    input: &I,
    metadata: &ArrowReaderMetadata,
) -> Result<Vec<(String, Option<Bounds>)>, StatsError> {
    let schema = metadata.schema();
    let parquet = metadata.metadata();
    let parquet_schema = parquet.file_metadata().schema_descr();
    let mut found = Vec::new();
    let mut lacking = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        if !binned(&kind_of(field.data_type())) {
            continue;
        }
        match from_footer(field.name(), schema, parquet_schema, parquet.row_groups()) {
            Some(bounds) => found.push((field.name().clone(), bounds)),
            None => lacking.push(i),
        }
    }
    if lacking.is_empty() {
        return Ok(found);
    }
    let mut trackers: Vec<Tracker> = lacking.iter().map(|_| Tracker::default()).collect();
    let builder =
        ParquetRecordBatchReaderBuilder::new_with_metadata(input.open()?, metadata.clone());
    let mask = ProjectionMask::roots(builder.parquet_schema(), lacking.iter().copied());
    for batch in builder
        .with_projection(mask)
        .with_batch_size(8192)
        .build()?
    {
        let batch = batch?;
        for (tracker, array) in trackers.iter_mut().zip(batch.columns()) {
            each(array, &mut |v| tracker.add(v))?;
        }
    }
    for (i, tracker) in lacking.iter().zip(trackers) {
        found.push((schema.field(*i).name().clone(), tracker.bounds()));
    }
    Ok(found)
}

/// A column's bounds from the footer (`Some(None)`: it holds no value), when every row group
/// holding a value has exact bounds, none of them NaN or infinite; `None` otherwise.
fn from_footer(
    name: &str,
    schema: &Schema,
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    groups: &[RowGroupMetaData],
) -> Option<Option<Bounds>> {
    let converter = StatisticsConverter::try_new(name, schema, parquet_schema)
        .ok()?
        .with_missing_null_counts_as_zero(false);
    converter.parquet_column_index()?;
    let nulls = converter.row_group_null_counts(groups).ok()?;
    if nulls.null_count() > 0 {
        return None;
    }
    let (mins, maxes) = exact_group_bounds(&converter, groups, &nulls)?;
    let mut tracker = Tracker::default();
    each(&mins, &mut |v| tracker.add(v)).ok()?;
    each(&maxes, &mut |v| tracker.add(v)).ok()?;
    // Nulls among the bounds are all-null row groups'; any more are NaN or infinite bounds.
    if tracker.nulls != mins.null_count() + maxes.null_count() {
        return None;
    }
    Some(tracker.bounds())
}
