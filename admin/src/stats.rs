//! Per-column statistics of a Parquet file (spec 2.2), read batch by batch.
//!
//! Conventions (the same as `dev/samples.py` and the README):
//! - `dtype` is the Arrow type as pyarrow prints it (`int64`, `double`, `string`, `bool`,
//!   `date32[day]`, `timestamp[us, tz=UTC]`, `decimal128(10, 2)`, ...).
//! - `null_count` counts nulls and, in floating-point columns, NaN. `null_percent` is
//!   100 × null_count / row_count, rounded to 4 decimals.
//! - `unique_count` counts distinct non-null values.
//! - `mean`, `std` (sample, ddof = 1), `min`, `max`, `median` are numbers for integer, floating
//!   point and decimal columns (decimals in double precision), computed over non-null, non-NaN
//!   values; `null` when there are none (`std` when fewer than two), and `null` for every other
//!   type. `min` and `max` of integer columns are integers.
//! - `top_values`: up to 5 most frequent non-null values, most frequent first, ties by value
//!   ascending. `sample_values`: the first up to 5 non-null values in file order. Dates and
//!   timestamps as ISO 8601 strings.
//!
//! Memory is bounded per column, whatever the file's size: exact up to [`DISTINCT_LIMIT`]
//! distinct values (unique count, top values) and [`MEDIAN_LIMIT`] values (median); beyond, the
//! unique count comes from a HyperLogLog sketch (about 0.8 % error), top values from the values
//! seen before the limit, the median from a uniform reservoir sample of [`MEDIAN_LIMIT`] values,
//! and the column is flagged `"approximate": true`.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, TimeDelta};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Serialize;
use serde_json::{json, Value};

/// Distinct values counted exactly per column.
pub const DISTINCT_LIMIT: usize = 1 << 20;
/// Values kept per column for an exact median.
pub const MEDIAN_LIMIT: usize = 1 << 22;
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
}

/// Spec 2.2, plus `approximate`.
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
    pub sample_values: Vec<Value>,
    /// True when a memory bound made `unique_count`, `top_values` or `median` an estimate.
    pub approximate: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FileStats {
    pub row_count: u64,
    pub columns: Vec<ColumnStats>,
}

/// A value as counted: ordered within its column's kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    Bool(bool),
    Int(i128),
    /// f64 bits mapped so that integer order is numeric order.
    Float(u64),
    Text(String),
}

fn float_key(v: f64) -> Key {
    let v = if v == 0.0 { 0.0 } else { v }; // -0.0 and 0.0 are one value
    let bits = v.to_bits();
    Key::Float(if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    })
}

fn float_of(key_bits: u64) -> f64 {
    f64::from_bits(if key_bits >> 63 == 1 {
        key_bits & !(1 << 63)
    } else {
        !key_bits
    })
}

/// How a column's values become JSON.
#[derive(Debug, Clone)]
enum Kind {
    Int,
    Float,
    Decimal(i8),
    Bool,
    Text,
    Date32,
    Date64,
    Timestamp(TimeUnit, bool),
    Other,
}

impl Kind {
    fn numeric(&self) -> bool {
        matches!(self, Self::Int | Self::Float | Self::Decimal(_))
    }

    fn to_json(&self, key: &Key) -> Value {
        match (self, key) {
            (_, Key::Bool(b)) => json!(b),
            (Self::Int, Key::Int(i)) => int_json(*i),
            (Self::Decimal(scale), Key::Int(i)) => json!(decimal_f64(*i, *scale)),
            (Self::Date32, Key::Int(days)) => date_json(*days as i64),
            (Self::Date64, Key::Int(ms)) => date_json((*ms as i64).div_euclid(86_400_000)),
            (Self::Timestamp(unit, tz), Key::Int(t)) => timestamp_json(*t as i64, unit, *tz),
            (_, Key::Int(i)) => int_json(*i),
            (_, Key::Float(bits)) => json!(float_of(*bits)),
            (_, Key::Text(s)) => json!(s),
        }
    }
}

fn int_json(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        json!(v)
    } else if let Ok(v) = u64::try_from(i) {
        json!(v)
    } else {
        json!(i as f64)
    }
}

fn decimal_f64(unscaled: i128, scale: i8) -> f64 {
    unscaled as f64 / 10f64.powi(i32::from(scale))
}

fn date_json(days: i64) -> Value {
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .and_then(|epoch| epoch.checked_add_signed(TimeDelta::days(days)))
        .map_or(Value::Null, |d| json!(d.to_string()))
}

fn timestamp_json(t: i64, unit: &TimeUnit, tz: bool) -> Value {
    let nanos: i128 = match unit {
        TimeUnit::Second => i128::from(t) * 1_000_000_000,
        TimeUnit::Millisecond => i128::from(t) * 1_000_000,
        TimeUnit::Microsecond => i128::from(t) * 1_000,
        TimeUnit::Nanosecond => i128::from(t),
    };
    let secs = nanos.div_euclid(1_000_000_000) as i64;
    let sub = nanos.rem_euclid(1_000_000_000) as u32;
    match DateTime::from_timestamp(secs, sub) {
        Some(dt) if tz => json!(dt.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        Some(dt) => json!(dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f").to_string()),
        None => Value::Null,
    }
}

/// The type name as pyarrow prints it.
pub fn dtype_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "halffloat".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 | DataType::Utf8View => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Binary | DataType::BinaryView => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::Date32 => "date32[day]".into(),
        DataType::Date64 => "date64[ms]".into(),
        DataType::Timestamp(unit, tz) => {
            let unit = unit_name(unit);
            match tz {
                Some(tz) => format!("timestamp[{unit}, tz={tz}]"),
                None => format!("timestamp[{unit}]"),
            }
        }
        DataType::Decimal128(p, s) => format!("decimal128({p}, {s})"),
        DataType::Decimal256(p, s) => format!("decimal256({p}, {s})"),
        DataType::Dictionary(_, value) => dtype_name(value),
        other => other.to_string().to_lowercase(),
    }
}

fn unit_name(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}

fn kind_of(t: &DataType) -> Kind {
    match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Kind::Int,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
        DataType::Decimal128(_, s) => Kind::Decimal(*s),
        DataType::Boolean => Kind::Bool,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::Text,
        DataType::Date32 => Kind::Date32,
        DataType::Date64 => Kind::Date64,
        DataType::Timestamp(unit, tz) => Kind::Timestamp(*unit, tz.is_some()),
        DataType::Dictionary(_, value) => kind_of(value),
        _ => Kind::Other,
    }
}

/// HyperLogLog with 2^14 registers (standard error about 0.8 %).
struct HyperLogLog {
    registers: Vec<u8>,
}

impl HyperLogLog {
    const P: u32 = 14;

    fn new() -> Self {
        Self {
            registers: vec![0; 1 << Self::P],
        }
    }

    fn add(&mut self, hash: u64) {
        let index = (hash >> (64 - Self::P)) as usize;
        let rest = (hash << Self::P) | (1 << (Self::P - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    fn estimate(&self) -> u64 {
        let m = self.registers.len() as f64;
        let alpha = 0.7213 / (1.0 + 1.079 / m);
        let sum: f64 = self
            .registers
            .iter()
            .map(|r| 2f64.powi(-i32::from(*r)))
            .sum();
        let raw = alpha * m * m / sum;
        let zeros = self.registers.iter().filter(|r| **r == 0).count();
        let estimate = if raw <= 2.5 * m && zeros > 0 {
            m * (m / zeros as f64).ln()
        } else {
            raw
        };
        estimate.round() as u64
    }
}

/// One column's running statistics.
struct Accumulator {
    name: String,
    dtype: String,
    kind: Kind,
    nulls: u64,
    count: u64,
    mean: f64,
    m2: f64,
    min: Option<Key>,
    max: Option<Key>,
    counts: HashMap<Key, u64>,
    counts_full: bool,
    hll: HyperLogLog,
    values: Vec<f64>,
    values_seen: u64,
    rng: u64,
    samples: Vec<Key>,
}

impl Accumulator {
    fn new(name: &str, data_type: &DataType) -> Self {
        Self {
            name: name.to_owned(),
            dtype: dtype_name(data_type),
            kind: kind_of(data_type),
            nulls: 0,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: None,
            max: None,
            counts: HashMap::new(),
            counts_full: false,
            hll: HyperLogLog::new(),
            values: Vec::new(),
            values_seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            samples: Vec::new(),
        }
    }

    fn null(&mut self) {
        self.nulls += 1;
    }

    /// A non-null value; `number` is its numeric value for numeric columns.
    fn value(&mut self, key: Key, number: Option<f64>) {
        self.count += 1;
        if self.samples.len() < SAMPLES {
            self.samples.push(key.clone());
        }
        if self.min.as_ref().is_none_or(|m| key < *m) {
            self.min = Some(key.clone());
        }
        if self.max.as_ref().is_none_or(|m| key > *m) {
            self.max = Some(key.clone());
        }
        if let Some(x) = number {
            // Welford's online mean and variance.
            let delta = x - self.mean;
            self.mean += delta / self.count as f64;
            self.m2 += delta * (x - self.mean);
            self.values_seen += 1;
            if self.values.len() < MEDIAN_LIMIT {
                self.values.push(x);
            } else {
                // Reservoir sampling (xorshift64*): each value kept with equal probability.
                self.rng ^= self.rng >> 12;
                self.rng ^= self.rng << 25;
                self.rng ^= self.rng >> 27;
                let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % self.values_seen;
                if (r as usize) < MEDIAN_LIMIT {
                    self.values[r as usize] = x;
                }
            }
        }
        let mut hasher = DefaultHasher::new();
        key.hash(&mut hasher);
        self.hll.add(hasher.finish());
        let room = self.counts.len() < DISTINCT_LIMIT;
        match self.counts.get_mut(&key) {
            Some(c) => *c += 1,
            None if room => {
                self.counts.insert(key, 1);
            }
            None => self.counts_full = true,
        }
    }

    fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
        macro_rules! ints {
            ($t:ty) => {{
                for v in array.as_primitive::<$t>().iter() {
                    match v {
                        Some(v) => self.value(Key::Int(v as i128), Some(v as f64)),
                        None => self.null(),
                    }
                }
            }};
        }
        macro_rules! floats {
            ($t:ty) => {{
                for v in array.as_primitive::<$t>().iter() {
                    match v.map(f64::from) {
                        Some(v) if !v.is_nan() => self.value(float_key(v), Some(v)),
                        _ => self.null(),
                    }
                }
            }};
        }
        macro_rules! keyed {
            ($t:ty) => {{
                for v in array.as_primitive::<$t>().iter() {
                    match v {
                        Some(v) => self.value(Key::Int(v as i128), None),
                        None => self.null(),
                    }
                }
            }};
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
            DataType::Float16 => {
                for v in array.as_primitive::<Float16Type>().iter() {
                    match v.map(f64::from) {
                        Some(v) if !v.is_nan() => self.value(float_key(v), Some(v)),
                        _ => self.null(),
                    }
                }
            }
            DataType::Float32 => floats!(Float32Type),
            DataType::Float64 => floats!(Float64Type),
            DataType::Decimal128(_, scale) => {
                let scale = *scale;
                for v in array.as_primitive::<Decimal128Type>().iter() {
                    match v {
                        Some(v) => self.value(Key::Int(v), Some(decimal_f64(v, scale))),
                        None => self.null(),
                    }
                }
            }
            DataType::Date32 => keyed!(Date32Type),
            DataType::Date64 => keyed!(Date64Type),
            DataType::Timestamp(TimeUnit::Second, _) => keyed!(TimestampSecondType),
            DataType::Timestamp(TimeUnit::Millisecond, _) => keyed!(TimestampMillisecondType),
            DataType::Timestamp(TimeUnit::Microsecond, _) => keyed!(TimestampMicrosecondType),
            DataType::Timestamp(TimeUnit::Nanosecond, _) => keyed!(TimestampNanosecondType),
            DataType::Boolean => {
                for v in array.as_boolean().iter() {
                    match v {
                        Some(v) => self.value(Key::Bool(v), None),
                        None => self.null(),
                    }
                }
            }
            DataType::Utf8 => {
                for v in array.as_string::<i32>().iter() {
                    match v {
                        Some(v) => self.value(Key::Text(v.to_owned()), None),
                        None => self.null(),
                    }
                }
            }
            DataType::LargeUtf8 => {
                for v in array.as_string::<i64>().iter() {
                    match v {
                        Some(v) => self.value(Key::Text(v.to_owned()), None),
                        None => self.null(),
                    }
                }
            }
            DataType::Dictionary(_, _) => {
                let plain = arrow_cast::cast(array, &kind_value_type(array.data_type()))?;
                self.add(&plain)?;
            }
            _ => {
                // Anything else counts by its display form.
                let formatter = arrow_cast::display::ArrayFormatter::try_new(
                    array.as_ref(),
                    &arrow_cast::display::FormatOptions::default(),
                )?;
                for i in 0..array.len() {
                    if array.is_null(i) {
                        self.null();
                    } else {
                        self.value(Key::Text(formatter.value(i).to_string()), None);
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, rows: u64) -> ColumnStats {
        let approximate = self.counts_full || self.values_seen as usize > MEDIAN_LIMIT;
        let unique_count = if self.counts_full {
            self.hll.estimate()
        } else {
            self.counts.len() as u64
        };
        let mut top: Vec<(Key, u64)> = self.counts.drain().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let kind = self.kind.clone();
        let numeric = kind.numeric() && self.count > 0;
        let median = if numeric && !self.values.is_empty() {
            Some(median(&mut self.values))
        } else {
            None
        };
        let std = (numeric && self.count > 1).then(|| (self.m2 / (self.count - 1) as f64).sqrt());
        let min_max = |k: &Option<Key>| {
            if !numeric {
                return None;
            }
            k.as_ref().map(|k| match (&kind, k) {
                (Kind::Float, Key::Float(bits)) => json!(float_of(*bits)),
                _ => kind.to_json(k),
            })
        };
        ColumnStats {
            null_percent: if rows == 0 {
                0.0
            } else {
                (100.0 * self.nulls as f64 / rows as f64 * 10_000.0).round() / 10_000.0
            },
            null_count: self.nulls,
            unique_count,
            mean: numeric.then_some(self.mean),
            std,
            min: min_max(&self.min),
            max: min_max(&self.max),
            median,
            top_values: top.iter().take(TOP).map(|(k, _)| kind.to_json(k)).collect(),
            sample_values: self.samples.iter().map(|k| kind.to_json(k)).collect(),
            approximate,
            name: self.name,
            dtype: self.dtype,
        }
    }
}

fn kind_value_type(t: &DataType) -> DataType {
    match t {
        DataType::Dictionary(_, value) => value.as_ref().clone(),
        other => other.clone(),
    }
}

/// The median of the values (mean of the two middle ones for an even count).
fn median(values: &mut [f64]) -> f64 {
    let n = values.len();
    let mid = n / 2;
    let (_, upper, _) = values.select_nth_unstable_by(mid, f64::total_cmp);
    let upper = *upper;
    if n % 2 == 1 {
        return upper;
    }
    let lower = values[..mid]
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    (lower + upper) / 2.0
}

/// Reads the file batch by batch and summarizes every column.
pub fn summarize(path: &Path) -> Result<FileStats, StatsError> {
    let file = File::open(path).map_err(|e| StatsError::Io(path.display().to_string(), e))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)?;
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
    for batch in builder.with_batch_size(BATCH_ROWS).build()? {
        let batch = batch?;
        for (acc, array) in columns.iter_mut().zip(batch.columns()) {
            acc.add(array)?;
        }
    }
    Ok(FileStats {
        row_count,
        columns: columns.into_iter().map(|c| c.finish(row_count)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [5.0]), 5.0);
    }

    #[test]
    fn hyperloglog_is_within_two_percent_on_a_million() {
        let mut hll = HyperLogLog::new();
        for i in 0..1_000_000u64 {
            let mut h = DefaultHasher::new();
            Key::Int(i128::from(i)).hash(&mut h);
            hll.add(h.finish());
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
