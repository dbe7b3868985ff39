//! Hive partition columns in a version's statistics: each file's value of each partition
//! column, counted as a column of that file holding the value in every row. They come after
//! the files' columns, typed as pyarrow and DuckDB read them: `int64`, `date32[day]` (a date),
//! `string`.

use std::sync::Arc;

use arrow_array::{new_null_array, ArrayRef, Date32Array, Int64Array, StringArray};
use arrow_schema::{DataType, Field};
use catalog::files::{PartitionColumn, PartitionType, PartitionValue};

use super::StatsError;

/// The partition columns of a version, and each file's values of them.
#[derive(Debug, Clone, Copy)]
pub struct Partitions<'a> {
    pub columns: &'a [PartitionColumn],
    /// `values[i]`: file `i`'s value of each column, in the order of `columns`.
    pub values: &'a [Vec<PartitionValue>],
}

impl Partitions<'_> {
    /// No partition columns.
    pub const NONE: Partitions<'static> = Partitions {
        columns: &[],
        values: &[],
    };

    /// Checks that there is one row of values per file (or none at all without columns), one
    /// value per column, each null or of its column's type.
    pub(super) fn check(&self, files: usize) -> Result<(), StatsError> {
        if self.columns.is_empty() && self.values.iter().all(Vec::is_empty) {
            return Ok(());
        }
        if self.values.len() != files {
            return Err(StatsError::Partitions(format!(
                "{} files but partition values for {}",
                files,
                self.values.len()
            )));
        }
        for (i, values) in self.values.iter().enumerate() {
            if values.len() != self.columns.len() {
                return Err(StatsError::Partitions(format!(
                    "file {i} has {} partition values for {} partition columns",
                    values.len(),
                    self.columns.len()
                )));
            }
            for (column, value) in self.columns.iter().zip(values) {
                if !fits(column.kind, value) {
                    return Err(StatsError::Partitions(format!(
                        "file {i}'s value of {} is not {}",
                        column.name, column.kind
                    )));
                }
            }
        }
        Ok(())
    }

    pub(super) fn fields(&self) -> impl Iterator<Item = Field> + '_ {
        self.columns
            .iter()
            .map(|c| Field::new(&c.name, data_type(c.kind), true))
    }

    /// File `file`'s values as `rows` rows of the partition columns at `columns` (indices into
    /// [`Self::columns`]).
    pub(super) fn arrays(
        &self,
        file: usize,
        columns: &[usize],
        rows: usize,
    ) -> Result<Vec<ArrayRef>, StatsError> {
        columns
            .iter()
            .map(|c| {
                let kind = self.columns.get(*c).ok_or(StatsError::Changed)?.kind;
                let value = self
                    .values
                    .get(file)
                    .and_then(|v| v.get(*c))
                    .ok_or(StatsError::Changed)?;
                Ok(constant(kind, value, rows))
            })
            .collect()
    }
}

fn data_type(kind: PartitionType) -> DataType {
    match kind {
        PartitionType::Int64 => DataType::Int64,
        PartitionType::Date => DataType::Date32,
        PartitionType::String => DataType::Utf8,
    }
}

fn fits(kind: PartitionType, value: &PartitionValue) -> bool {
    matches!(
        (kind, value),
        (_, PartitionValue::Null)
            | (PartitionType::Int64, PartitionValue::Int(_))
            | (PartitionType::Date, PartitionValue::Date(_))
            | (PartitionType::String, PartitionValue::Text(_))
    )
}

fn constant(kind: PartitionType, value: &PartitionValue, rows: usize) -> ArrayRef {
    match value {
        PartitionValue::Int(i) => Arc::new(Int64Array::from_value(*i, rows)),
        PartitionValue::Date(d) => {
            let epoch = chrono::DateTime::UNIX_EPOCH.date_naive();
            let days = i32::try_from((*d - epoch).num_days()).unwrap_or(i32::MAX);
            Arc::new(Date32Array::from_value(days, rows))
        }
        PartitionValue::Text(t) => {
            Arc::new(StringArray::from_iter_values(std::iter::repeat_n(t, rows)))
        }
        PartitionValue::Null => new_null_array(&data_type(kind), rows),
    }
}
