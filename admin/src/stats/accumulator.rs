//! One column's running statistics, fed batch by batch.

use std::hash::Hash;

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};
use rustc_hash::FxHashMap;
use serde_json::json;

use super::histogram::Binner;
use super::sketch::*;
use super::values::*;
use super::*;

/// One column's running statistics.
pub(super) struct Accumulator {
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
    pub(super) fn new(name: &str, data_type: &DataType) -> Self {
        let kind = kind_of(data_type);
        let counts = match kind {
            Kind::Float => Counts::Float(FxHashMap::default()),
            Kind::Bool => Counts::Bool([0, 0]),
            Kind::Text | Kind::Other => Counts::Text(FxHashMap::default()),
            _ => Counts::Int(FxHashMap::default()),
        };
        Self {
            name: name.to_owned(),
            dtype: column_dtype(name, data_type),
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

    pub(super) fn null(&mut self) {
        self.nulls += 1;
    }

    /// Mean, variance and median of a numeric value.
    pub(super) fn number(&mut self, x: f64) {
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

    pub(super) fn sample(&mut self, key: impl FnOnce() -> Key) {
        if self.samples.len() < SAMPLES {
            self.samples.push(key());
        }
    }

    /// Counts a value in a typed map; past the limit, only the sketch sees new values.
    pub(super) fn count_in<K, Q>(
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

    pub(super) fn int(&mut self, v: i128, numeric: bool) {
        if numeric {
            self.number(v as f64);
        } else {
            self.count += 1;
        }
        // Dates and timestamps too: their histogram's range.
        self.min_int = self.min_int.min(v);
        self.max_int = self.max_int.max(v);
        self.sample(|| Key::Int(v));
        if let Counts::Int(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &v, || v);
        }
    }

    pub(super) fn float(&mut self, v: f64) {
        self.number(v);
        let Key::Float(bits) = float_key(v) else {
            return;
        };
        self.sample(|| Key::Float(bits));
        if let Counts::Float(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &bits, || bits);
        }
    }

    pub(super) fn decimal(&mut self, unscaled: i128, scale: i8) {
        self.number(decimal_f64(unscaled, scale));
        self.sample(|| Key::Int(unscaled));
        if let Counts::Int(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, &unscaled, || unscaled);
        }
    }

    pub(super) fn boolean(&mut self, v: bool) {
        self.count += 1;
        self.sample(|| Key::Bool(v));
        if let Counts::Bool(c) = &mut self.counts {
            c[usize::from(v)] += 1;
        }
    }

    pub(super) fn text(&mut self, v: &str) {
        self.count += 1;
        self.sample(|| Key::Text(v.to_owned()));
        if let Counts::Text(map) = &mut self.counts {
            Self::count_in(map, &mut self.hll, v, || v.to_owned());
        }
    }

    pub(super) fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
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

    /// The bins of this column's histogram, once every value has been seen: none for a column
    /// of another type or without values.
    pub(super) fn binner(&self) -> Option<Binner> {
        if self.count == 0 {
            return None;
        }
        let kind = self.kind.clone();
        match kind {
            Kind::Int | Kind::Date32 | Kind::Date64 | Kind::Timestamp(..) => {
                Some(Binner::int(kind, self.min_int, self.max_int))
            }
            Kind::Float | Kind::Decimal(_) => Binner::float(kind, self.min, self.max),
            Kind::Bool | Kind::Text | Kind::Other => None,
        }
    }

    pub(super) fn finish(mut self, rows: u64, histogram: Option<Histogram>) -> ColumnStats {
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
            top_counts: top.iter().take(TOP).map(|(_, n)| *n).collect(),
            sample_values: self.samples.iter().map(|k| kind.to_json(k)).collect(),
            approximate,
            histogram,
            name: self.name,
            dtype: self.dtype,
        }
    }
}
