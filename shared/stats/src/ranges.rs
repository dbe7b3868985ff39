//! Per-file statistics for a version's manifest: each file's row count and, per column, its
//! minimum, maximum and null count, written as the Delta Sharing protocol's `stats` write them
//! (`minValues`, `maxValues`, `nullCount`).
//!
//! They come from the Parquet footer where every row group of the column has them (no data
//! read), and are computed from the column's data where not (only those columns are read):
//! - `null_count` counts nulls (not NaN: as the Parquet footer and Delta count them; the Column
//!   objects' `null_count` counts NaN and ±infinity too). `None` for nested columns (lists,
//!   structs, maps), whose footer counts are their leaves'.
//! - `min` and `max` skip nulls and NaN: integers as JSON integers, floating-point numbers and
//!   decimals (as doubles) as numbers, booleans as `true`/`false`, dates and timestamps as ISO
//!   8601 strings written as the Column objects write them, text as its string. `None` where a
//!   column has no value, for types without an order (binary, lists, structs, maps, ...), and
//!   for an infinite bound (JSON has no number for it). Text longer than [`SHOWN_CHARS`]
//!   characters is a bound, not a value: `min` its first [`SHOWN_CHARS`] characters, `max` those
//!   with the last raised by one code point (every value lies between them, in code point order
//!   as Parquet and Spark order strings). -0.0 is written 0.
//! - The footer's bounds are used only when every row group of the column holding a value has
//!   them, exact (not truncated, as parquet-rs truncates long strings), and not NaN. Counts
//!   the footer omits read as 0 (the Parquet reader's convention).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, Schema, SchemaRef, TimeUnit};
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;
use parquet::file::metadata::RowGroupMetaData;
use serde::Serialize;
use serde_json::Value;

use super::input::StatsInput;
use super::parallel::map_indices_per_core;
use super::schemas::{duplicates, Disagreements, SchemaCheck};
use super::source::in_file;
use super::values::*;
use super::{StatsError, SHOWN_CHARS};

/// One column of one file: its minimum, maximum and null count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileColumnRange {
    pub column: String,
    pub min: Option<Value>,
    pub max: Option<Value>,
    pub null_count: Option<u64>,
}

/// One file's row count and its columns' ranges.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileRanges {
    pub row_count: u64,
    pub columns: Vec<FileColumnRange>,
    /// The columns whose ranges were computed from the data (the footer lacked them).
    #[serde(skip)]
    pub computed: Vec<String>,
}

impl FileColumnRange {
    /// The range as the manifest keeps it ([`catalog::files::ColumnRange`]): integers that fit
    /// 64 bits signed as integers, other numbers (decimals, unsigned integers past 2^63 − 1) as
    /// floats, booleans, and strings (dates, timestamps, text) as text. The manifest cuts text
    /// bounds further when it builds ([`catalog::files::MAX_STAT_TEXT_BYTES`]).
    pub fn to_catalog(&self) -> catalog::files::ColumnRange {
        catalog::files::ColumnRange {
            min: self.min.as_ref().and_then(stat_value),
            max: self.max.as_ref().and_then(stat_value),
            null_count: self.null_count,
        }
    }
}

impl From<&FileColumnRange> for catalog::files::ColumnRange {
    fn from(range: &FileColumnRange) -> Self {
        range.to_catalog()
    }
}

impl FileRanges {
    /// The file's statistics by column name, as [`catalog::files::FileInput::stats`] takes them.
    pub fn catalog_stats(&self) -> Vec<(String, catalog::files::ColumnRange)> {
        self.columns
            .iter()
            .map(|c| (c.column.clone(), c.to_catalog()))
            .collect()
    }
}

fn stat_value(value: &Value) -> Option<catalog::files::StatValue> {
    use catalog::files::StatValue;
    match value {
        Value::Bool(b) => Some(StatValue::Bool(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Some(StatValue::Int(i)),
            None => n.as_f64().map(StatValue::Float),
        },
        Value::String(s) => Some(StatValue::Text(s.clone())),
        _ => None,
    }
}

/// Many files' ranges, in the order given, and the schema they share (the first file's).
#[derive(Debug, Clone)]
pub struct ScannedFiles {
    pub schema: SchemaRef,
    pub files: Vec<FileRanges>,
}

/// One file's ranges, its columns in its own order.
pub fn file_ranges<I: StatsInput + ?Sized>(path: &I) -> Result<FileRanges, StatsError> {
    let metadata = footer(path)?;
    ranges_of(path, &metadata)
}

/// Every file's ranges, read in parallel (one file at a time on each core), after checking
/// that the files share one schema: the same column names and types in any order (otherwise
/// [`StatsError::Schemas`] names each file and column that disagrees with the first). Each
/// file's columns come in the first file's order. An error about a file names it
/// ([`StatsError::InFile`]), the first in the order given. Memory: the answer, and one footer
/// (and one batch of the columns computed from data) per core.
pub fn scan_files<P: StatsInput>(paths: &[P]) -> Result<ScannedFiles, StatsError> {
    let Some(first_path) = paths.first() else {
        return Err(StatsError::NoFiles);
    };
    let schema = footer(first_path)
        .map_err(in_file(first_path))?
        .schema()
        .clone();
    let first_name = first_path.name();
    let check = SchemaCheck::new(&first_name, &schema);
    let scanned = map_indices_per_core(paths.len(), P::THREADS_PER_CORE, |i| {
        let path = &paths[i];
        let metadata = footer(path).map_err(in_file(path))?;
        let name = path.name();
        let disagreements = match i {
            0 => duplicates(&name, metadata.schema()),
            _ => check.disagreements(&name, metadata.schema()),
        };
        if !disagreements.is_empty() {
            return Ok(Err(disagreements));
        }
        let mut ranges = ranges_of(path, &metadata).map_err(in_file(path))?;
        // In the first file's order.
        ranges
            .columns
            .sort_by_key(|c| schema.index_of(&c.column).unwrap_or(usize::MAX));
        Ok::<_, StatsError>(Ok(ranges))
    })?;
    let mut files = Vec::with_capacity(paths.len());
    let mut found = Disagreements::default();
    for file in scanned {
        match file? {
            Ok(ranges) => files.push(ranges),
            Err(disagreements) => found.extend(disagreements),
        }
    }
    found.finish()?;
    Ok(ScannedFiles { schema, files })
}

fn footer<I: StatsInput + ?Sized>(path: &I) -> Result<ArrowReaderMetadata, StatsError> {
    Ok(ArrowReaderMetadata::load(
        &path.open()?,
        ArrowReaderOptions::default(),
    )?)
}

fn ranges_of<I: StatsInput + ?Sized>(
    path: &I,
    metadata: &ArrowReaderMetadata,
) -> Result<FileRanges, StatsError> {
    let schema = metadata.schema();
    let parquet = metadata.metadata();
    let groups = parquet.row_groups();
    let mut columns = Vec::with_capacity(schema.fields().len());
    let mut lacking = Vec::new();
    for (i, field) in schema.fields().iter().enumerate() {
        let none = FileColumnRange {
            column: field.name().clone(),
            min: None,
            max: None,
            null_count: None,
        };
        if field.data_type().is_nested() {
            columns.push(none);
            continue;
        }
        let parquet_schema = parquet.file_metadata().schema_descr();
        match from_footer(field.name(), schema, parquet_schema, groups) {
            Some(range) => columns.push(range),
            None => {
                lacking.push(i);
                columns.push(none);
            }
        }
    }
    let computed: Vec<String> = lacking
        .iter()
        .map(|i| schema.field(*i).name().clone())
        .collect();
    if !lacking.is_empty() {
        let mut ranges: Vec<Range> = lacking
            .iter()
            .map(|i| Range::new(schema.field(*i).data_type()))
            .collect();
        let builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(path.open()?, metadata.clone());
        let mask = ProjectionMask::roots(builder.parquet_schema(), lacking.iter().copied());
        for batch in builder
            .with_projection(mask)
            .with_batch_size(8192)
            .build()?
        {
            let batch = batch?;
            for (range, array) in ranges.iter_mut().zip(batch.columns()) {
                range.add(array)?;
            }
        }
        for (i, range) in lacking.iter().zip(ranges) {
            let column = &mut columns[*i];
            column.null_count = Some(range.nulls);
            column.min = range.min_json();
            column.max = range.max_json();
        }
    }
    Ok(FileRanges {
        row_count: u64::try_from(parquet.file_metadata().num_rows()).unwrap_or(0),
        columns,
        computed,
    })
}

/// Each row group's minimum and maximum of a column, from the footer, when every row group
/// holding a value has both and both are exact; `None` otherwise. `nulls`: the row groups' null
/// counts (a row group of nulls only needs no bounds).
pub(crate) fn exact_group_bounds(
    converter: &StatisticsConverter,
    groups: &[RowGroupMetaData],
    nulls: &arrow_array::UInt64Array,
) -> Option<(ArrayRef, ArrayRef)> {
    let mins = converter.row_group_mins(groups).ok()?;
    let maxes = converter.row_group_maxes(groups).ok()?;
    let min_exact = converter.row_group_is_min_value_exact(groups).ok()?;
    let max_exact = converter.row_group_is_max_value_exact(groups).ok()?;
    for (g, group) in groups.iter().enumerate() {
        let all_null = u64::try_from(group.num_rows()).is_ok_and(|n| nulls.value(g) >= n);
        let exact = min_exact.is_valid(g)
            && min_exact.value(g)
            && max_exact.is_valid(g)
            && max_exact.value(g);
        if !all_null && (mins.is_null(g) || maxes.is_null(g) || !exact) {
            return None;
        }
    }
    Some((mins, maxes))
}

/// A column's range from the footer, when every row group holding a value has exact bounds and
/// every row group a null count.
fn from_footer(
    name: &str,
    schema: &Schema,
    parquet_schema: &parquet::schema::types::SchemaDescriptor,
    groups: &[RowGroupMetaData],
) -> Option<FileColumnRange> {
    let converter = StatisticsConverter::try_new(name, schema, parquet_schema)
        .ok()?
        .with_missing_null_counts_as_zero(false);
    converter.parquet_column_index()?;
    let nulls = converter.row_group_null_counts(groups).ok()?;
    if nulls.null_count() > 0 {
        return None;
    }
    let null_count = nulls.values().iter().sum();
    let data_type = converter.arrow_field().data_type();
    if matches!(kind_of(data_type), Kind::Other) {
        return Some(FileColumnRange {
            column: name.to_owned(),
            min: None,
            max: None,
            null_count: Some(null_count),
        });
    }
    let (mins, maxes) = exact_group_bounds(&converter, groups, &nulls)?;
    let (mut low, mut high) = (Range::new(data_type), Range::new(data_type));
    low.add(&mins).ok()?;
    high.add(&maxes).ok()?;
    if low.nan || high.nan {
        return None;
    }
    Some(FileColumnRange {
        column: name.to_owned(),
        min: low.min_json(),
        max: high.max_json(),
        null_count: Some(null_count),
    })
}

/// A column's running minimum, maximum and null count.
struct Range {
    kind: Kind,
    min: Option<Key>,
    max: Option<Key>,
    nulls: u64,
    /// A NaN was seen (not counted in the range).
    nan: bool,
}

impl Range {
    fn new(data_type: &DataType) -> Self {
        Self {
            kind: kind_of(data_type),
            min: None,
            max: None,
            nulls: 0,
            nan: false,
        }
    }

    fn key(&mut self, key: Key) {
        if self.min.as_ref().is_none_or(|m| key < *m) {
            self.min = Some(key.clone());
        }
        if self.max.as_ref().is_none_or(|m| key > *m) {
            self.max = Some(key);
        }
    }

    fn text(&mut self, v: &str) {
        if !matches!(&self.min, Some(Key::Text(m)) if m.as_str() <= v) {
            self.min = Some(Key::Text(v.to_owned()));
        }
        if !matches!(&self.max, Some(Key::Text(m)) if m.as_str() >= v) {
            self.max = Some(Key::Text(v.to_owned()));
        }
    }

    fn float(&mut self, v: f64) {
        if v.is_nan() {
            self.nan = true;
        } else {
            self.key(float_key(v));
        }
    }

    fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
        macro_rules! each {
            ($array:expr, $on:expr) => {{
                for v in $array.iter() {
                    match v {
                        Some(v) => $on(self, v),
                        None => self.nulls += 1,
                    }
                }
            }};
        }
        macro_rules! ints {
            ($t:ty) => {
                each!(array.as_primitive::<$t>(), |r: &mut Self, v| r
                    .key(Key::Int(v as i128)))
            };
        }
        macro_rules! floats {
            ($t:ty) => {
                each!(array.as_primitive::<$t>(), |r: &mut Self, v| r
                    .float(f64::from(v)))
            };
        }
        match array.data_type() {
            DataType::Int8 => ints!(Int8Type),
            DataType::Int16 => ints!(Int16Type),
            DataType::Int32 => ints!(Int32Type),
            DataType::Int64 => ints!(Int64Type),
            DataType::UInt8 => ints!(UInt8Type),
            DataType::UInt16 => ints!(UInt16Type),
            DataType::UInt32 => ints!(UInt32Type),
            DataType::UInt64 => ints!(UInt64Type),
            DataType::Decimal128(..) => ints!(Decimal128Type),
            DataType::Date32 => ints!(Date32Type),
            DataType::Date64 => each!(array.as_primitive::<Date64Type>(), |r: &mut Self, v| r
                .key(Key::Int(i128::from(v).div_euclid(86_400_000)))),
            DataType::Timestamp(TimeUnit::Second, _) => ints!(TimestampSecondType),
            DataType::Timestamp(TimeUnit::Millisecond, _) => ints!(TimestampMillisecondType),
            DataType::Timestamp(TimeUnit::Microsecond, _) => ints!(TimestampMicrosecondType),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => ints!(TimestampNanosecondType),
            DataType::Float16 => floats!(Float16Type),
            DataType::Float32 => floats!(Float32Type),
            DataType::Float64 => floats!(Float64Type),
            DataType::Boolean => each!(array.as_boolean(), |r: &mut Self, v| r.key(Key::Bool(v))),
            DataType::Utf8 => each!(array.as_string::<i32>(), |r: &mut Self, v| r.text(v)),
            DataType::LargeUtf8 => each!(array.as_string::<i64>(), |r: &mut Self, v| r.text(v)),
            DataType::Utf8View => each!(array.as_string_view(), |r: &mut Self, v| r.text(v)),
            DataType::Dictionary(_, _) => {
                let plain = arrow_cast::cast(array, &kind_value_type(array.data_type()))?;
                self.add(&plain)?;
            }
            // No order: only nulls are counted.
            _ => self.nulls += array.null_count() as u64,
        }
        Ok(())
    }

    fn min_json(&self) -> Option<Value> {
        match self.min.as_ref()? {
            Key::Text(s) => Some(Value::String(shown_prefix(s).to_owned())),
            key => self.bound(key),
        }
    }

    fn max_json(&self) -> Option<Value> {
        match self.max.as_ref()? {
            Key::Text(s) if shown_prefix(s).len() < s.len() => {
                upper_bound(shown_prefix(s)).map(Value::String)
            }
            Key::Text(s) => Some(Value::String(s.clone())),
            key => self.bound(key),
        }
    }

    fn bound(&self, key: &Key) -> Option<Value> {
        if let Key::Float(bits) = key {
            if !float_of(*bits).is_finite() {
                return None;
            }
        }
        Some(self.kind.to_json(key)).filter(|v| !v.is_null())
    }
}

/// The first [`SHOWN_CHARS`] characters of `s`.
fn shown_prefix(s: &str) -> &str {
    s.char_indices()
        .nth(SHOWN_CHARS)
        .map_or(s, |(end, _)| &s[..end])
}

/// The shortest string above every string that starts with `prefix`: `prefix` with its last
/// character raised by one code point (dropping trailing characters that cannot be raised).
fn upper_bound(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (u32::from(last) + 1..=u32::from(char::MAX)).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

#[cfg(test)]
mod tests;
