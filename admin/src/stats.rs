//! Per-column statistics of a Parquet file (spec 2.2), read batch by batch.
//!
//! Conventions (the same as `dev/samples.py` and the README):
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
//!   ascending. `sample_values`: the first up to 5 non-null values in file order. Dates and
//!   timestamps as ISO 8601 strings; text longer than 200 characters is cut and ends in `…`.
//!   Values of other types (binary, lists, structs) are counted by their text form, so cut.
//!
//! Memory is bounded per column, whatever the file's size: exact up to [`DISTINCT_LIMIT`]
//! distinct values (unique count, top values) and [`MEDIAN_LIMIT`] values (median); beyond, the
//! unique count comes from a HyperLogLog sketch (about 0.8 % error), top values from the values
//! seen before the limit, the median from a uniform reservoir sample of [`MEDIAN_LIMIT`] values,
//! and the column is flagged `"approximate": true`.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, TimeDelta};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rustc_hash::{FxHashMap, FxHasher};
use serde::Serialize;
use serde_json::{json, Value};

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
            (Self::Date64, Key::Int(days)) => date_json(*days as i64),
            (Self::Timestamp(unit, tz), Key::Int(t)) => timestamp_json(*t as i64, unit, *tz),
            (_, Key::Int(i)) => int_json(*i),
            (_, Key::Float(bits)) => json!(float_of(*bits)),
            (_, Key::Text(s)) => json!(shown(s)),
        }
    }
}

/// Text cut to [`SHOWN_CHARS`] characters, ending in `…` when cut, so a schema stays small.
fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => s.into(),
        Some((end, _)) => format!("{}…", &s[..end]).into(),
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

/// Exact counts of distinct values, typed so that a value already seen costs no allocation.
enum Counts {
    Int(FxHashMap<i128, u64>),
    Float(FxHashMap<u64, u64>),
    Bool([u64; 2]),
    Text(FxHashMap<String, u64>),
}

impl Counts {
    fn len(&self) -> usize {
        match self {
            Self::Int(m) => m.len(),
            Self::Float(m) => m.len(),
            Self::Bool(c) => c.iter().filter(|n| **n > 0).count(),
            Self::Text(m) => m.len(),
        }
    }

    fn into_keys(self) -> Vec<(Key, u64)> {
        match self {
            Self::Int(m) => m.into_iter().map(|(k, n)| (Key::Int(k), n)).collect(),
            Self::Float(m) => m.into_iter().map(|(k, n)| (Key::Float(k), n)).collect(),
            Self::Bool(c) => [(false, c[0]), (true, c[1])]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(b, n)| (Key::Bool(b), n))
                .collect(),
            Self::Text(m) => m.into_iter().map(|(k, n)| (Key::Text(k), n)).collect(),
        }
    }
}

/// A well-mixed 64-bit hash for the HyperLogLog sketch.
fn mixed_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    // splitmix64's finalizer: FxHash's high bits alone are too regular for HyperLogLog.
    let mut z = hasher.finish().wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
    min: f64,
    max: f64,
    min_int: i128,
    max_int: i128,
    counts: Counts,
    /// Set once the distinct values outgrow [`DISTINCT_LIMIT`]: from then on the unique count
    /// comes from this sketch, which has seen every distinct value.
    hll: Option<HyperLogLog>,
    values: Vec<f64>,
    values_seen: u64,
    rng: u64,
    samples: Vec<Key>,
}

impl Accumulator {
    fn new(name: &str, data_type: &DataType) -> Self {
        let kind = kind_of(data_type);
        let counts = match kind {
            Kind::Float => Counts::Float(FxHashMap::default()),
            Kind::Bool => Counts::Bool([0, 0]),
            Kind::Text | Kind::Other => Counts::Text(FxHashMap::default()),
            _ => Counts::Int(FxHashMap::default()),
        };
        Self {
            name: name.to_owned(),
            dtype: dtype_name(data_type),
            kind,
            nulls: 0,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            min_int: i128::MAX,
            max_int: i128::MIN,
            counts,
            hll: None,
            values: Vec::new(),
            values_seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            samples: Vec::new(),
        }
    }

    fn null(&mut self) {
        self.nulls += 1;
    }

    /// Mean, variance and median of a numeric value.
    fn number(&mut self, x: f64) {
        self.count += 1;
        // Welford's online mean and variance.
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
        self.values_seen += 1;
        if self.values.len() < MEDIAN_LIMIT {
            self.values.push(x);
        } else {
            // Reservoir sampling (xorshift64*): every value kept with equal probability.
            self.rng ^= self.rng >> 12;
            self.rng ^= self.rng << 25;
            self.rng ^= self.rng >> 27;
            let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % self.values_seen;
            if (r as usize) < MEDIAN_LIMIT {
                self.values[r as usize] = x;
            }
        }
    }

    fn sample(&mut self, key: impl FnOnce() -> Key) {
        if self.samples.len() < SAMPLES {
            self.samples.push(key());
        }
    }

    /// Counts a value in a typed map; past the limit, only the sketch sees new values.
    fn count_in<K, Q>(
        map: &mut FxHashMap<K, u64>,
        hll: &mut Option<HyperLogLog>,
        value: &Q,
        own: impl FnOnce() -> K,
    ) where
        K: std::borrow::Borrow<Q> + Hash + Eq,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(c) = map.get_mut(value) {
            *c += 1;
            return;
        }
        if map.len() < DISTINCT_LIMIT {
            map.insert(own(), 1);
            return;
        }
        let sketch = hll.get_or_insert_with(|| {
            let mut sketch = HyperLogLog::new();
            for k in map.keys() {
                sketch.add(mixed_hash(k.borrow()));
            }
            sketch
        });
        sketch.add(mixed_hash(value));
    }

    fn int(&mut self, v: i128, numeric: bool) {
        if numeric {
            self.number(v as f64);
            self.min_int = self.min_int.min(v);
            self.max_int = self.max_int.max(v);
        } else {
            self.count += 1;
        }
        self.sample(|| Key::Int(v));
        if let Counts::Int(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &v, || v);
        }
    }

    fn float(&mut self, v: f64) {
        self.number(v);
        let Key::Float(bits) = float_key(v) else {
            return;
        };
        self.sample(|| Key::Float(bits));
        if let Counts::Float(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &bits, || bits);
        }
    }

    fn decimal(&mut self, unscaled: i128, scale: i8) {
        self.number(decimal_f64(unscaled, scale));
        self.sample(|| Key::Int(unscaled));
        if let Counts::Int(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &unscaled, || unscaled);
        }
    }

    fn boolean(&mut self, v: bool) {
        self.count += 1;
        self.sample(|| Key::Bool(v));
        if let Counts::Bool(c) = &mut self.counts {
            c[usize::from(v)] += 1;
        }
    }

    fn text(&mut self, v: &str) {
        self.count += 1;
        self.sample(|| Key::Text(v.to_owned()));
        if let Counts::Text(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, v, || v.to_owned());
        }
    }

    fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
        macro_rules! each {
            ($array:expr, $on:expr) => {{
                for v in $array.iter() {
                    match v {
                        Some(v) => $on(self, v),
                        None => self.null(),
                    }
                }
            }};
        }
        macro_rules! ints {
            ($t:ty, $numeric:expr) => {
                each!(array.as_primitive::<$t>(), |a: &mut Self, v| a
                    .int(v as i128, $numeric))
            };
        }
        macro_rules! floats {
            ($t:ty) => {
                each!(array.as_primitive::<$t>(), |a: &mut Self, v| {
                    let v = f64::from(v);
                    if !v.is_finite() {
                        a.null()
                    } else {
                        a.float(v)
                    }
                })
            };
        }
        match array.data_type() {
            DataType::Int8 => ints!(Int8Type, true),
            DataType::Int16 => ints!(Int16Type, true),
            DataType::Int32 => ints!(Int32Type, true),
            DataType::Int64 => ints!(Int64Type, true),
            DataType::UInt8 => ints!(UInt8Type, true),
            DataType::UInt16 => ints!(UInt16Type, true),
            DataType::UInt32 => ints!(UInt32Type, true),
            DataType::UInt64 => ints!(UInt64Type, true),
            DataType::Float16 => floats!(Float16Type),
            DataType::Float32 => floats!(Float32Type),
            DataType::Float64 => floats!(Float64Type),
            DataType::Decimal128(_, scale) => {
                let scale = *scale;
                each!(array.as_primitive::<Decimal128Type>(), |a: &mut Self, v| a
                    .decimal(v, scale))
            }
            DataType::Date32 => ints!(Date32Type, false),
            // Dates in milliseconds: counted (and shown) by day.
            DataType::Date64 => each!(array.as_primitive::<Date64Type>(), |a: &mut Self, v| a
                .int(i128::from(v).div_euclid(86_400_000), false)),
            DataType::Timestamp(TimeUnit::Second, _) => ints!(TimestampSecondType, false),
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                ints!(TimestampMillisecondType, false)
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                ints!(TimestampMicrosecondType, false)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                ints!(TimestampNanosecondType, false)
            }
            DataType::Boolean => each!(array.as_boolean(), |a: &mut Self, v| a.boolean(v)),
            DataType::Utf8 => each!(array.as_string::<i32>(), |a: &mut Self, v| a.text(v)),
            DataType::LargeUtf8 => each!(array.as_string::<i64>(), |a: &mut Self, v| a.text(v)),
            DataType::Utf8View => each!(array.as_string_view(), |a: &mut Self, v| a.text(v)),
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
                        // Counted by their text form, cut like the shown values so that large
                        // binary values cannot fill memory.
                        let text = formatter.value(i).to_string();
                        self.text(&shown(&text));
                    }
                }
            }
        }
        Ok(())
    }

    fn finish(mut self, rows: u64) -> ColumnStats {
        let approximate = self.hll.is_some() || self.values_seen as usize > MEDIAN_LIMIT;
        let unique_count = match &self.hll {
            Some(sketch) => sketch.estimate(),
            None => self.counts.len() as u64,
        };
        let counts = std::mem::replace(&mut self.counts, Counts::Bool([0, 0]));
        let mut top = counts.into_keys();
        top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let kind = self.kind.clone();
        let numeric = kind.numeric() && self.count > 0;
        let median = (numeric && !self.values.is_empty()).then(|| median(&mut self.values));
        let std = (numeric && self.count > 1).then(|| (self.m2 / (self.count - 1) as f64).sqrt());
        let (min, max) = match kind {
            _ if !numeric => (None, None),
            Kind::Int => (Some(int_json(self.min_int)), Some(int_json(self.max_int))),
            _ => (Some(json!(self.min)), Some(json!(self.max))),
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
            min,
            max,
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
    // Columns are independent: each thread takes a share of them for every batch.
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(columns.len());
    let share = columns.len().div_ceil(threads);
    for batch in builder.with_batch_size(BATCH_ROWS).build()? {
        let batch = batch?;
        let arrays = batch.columns();
        std::thread::scope(|scope| {
            let jobs: Vec<_> = columns
                .chunks_mut(share)
                .zip(arrays.chunks(share))
                .map(|(accs, arrays)| {
                    scope.spawn(move || {
                        accs.iter_mut()
                            .zip(arrays)
                            .try_for_each(|(acc, array)| acc.add(array))
                    })
                })
                .collect();
            jobs.into_iter()
                .try_for_each(|job| job.join().unwrap_or_else(|_| Err(StatsError::Panicked)))
        })?;
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
