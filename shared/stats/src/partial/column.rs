//! Phase 2: one file's partial statistics, read in one pass over every column (the columns
//! counted in parallel, batch by batch), each column's state bounded whatever the file's size:
//! at most [`COUNTERS`] counters and [`COUNTER_TEXT_BYTES`] of their text, a HyperLogLog
//! sketch, [`SAMPLE_LIMIT`] numbers and its histogram's bins.

use std::hash::Hash;

use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rustc_hash::FxHashMap;

use super::feed::{each, V};
use super::*;
use crate::histogram::Binner;
use crate::sketch::{mixed_hash, HyperLogLog};
use crate::source::in_file;
use crate::values::*;
use crate::{in_parallel, SAMPLES};

/// Rows decoded at a time.
const BATCH_ROWS: usize = 16 * 1024;

pub(super) fn file_partial<I: StatsInput + ?Sized>(
    input: &I,
    edges: &Edges,
) -> Result<FilePartial, PartialError> {
    let name = input.name();
    let builder = ParquetRecordBatchReaderBuilder::try_new(input.open().map_err(in_file(input))?)
        .map_err(|e| in_file(input)(e.into()))?;
    let row_count = u64::try_from(builder.metadata().file_metadata().num_rows()).unwrap_or(0);
    let schema = builder.schema().clone();
    if schema.fields().is_empty() {
        return Err(in_file(input)(StatsError::NoColumns).into());
    }
    let mut counters = schema
        .fields()
        .iter()
        .map(|field| {
            let dtype = column_dtype(field.name(), field.data_type());
            let edge = edges.column(field.name()).ok_or_else(|| {
                PartialError::Edges(format!(
                    "{name}: the edges have no column {:?}: compute them over every file of \
                     the version, this one included",
                    field.name()
                ))
            })?;
            if edge.dtype != dtype {
                return Err(PartialError::Edges(format!(
                    "{name}: column {:?} is {dtype} here and {} in the edges",
                    field.name(),
                    edge.dtype
                )));
            }
            Ok(Counter::new(
                field.name(),
                dtype,
                field.data_type(),
                &edge.bounds,
            ))
        })
        .collect::<Result<Vec<_>, PartialError>>()?;
    let reader = builder
        .with_batch_size(BATCH_ROWS)
        .build()
        .map_err(|e| in_file(input)(e.into()))?;
    for batch in reader {
        let batch = batch.map_err(|e| in_file(input)(e.into()))?;
        in_parallel(&mut counters, batch.columns(), |counter, array| {
            each(array, &mut |v| counter.add(v))
        })
        .map_err(in_file(input))?;
    }
    let columns = counters
        .into_iter()
        .map(|c| c.finish(&name))
        .collect::<Result<_, _>>()?;
    Ok(FilePartial {
        format: FORMAT,
        file: name,
        etag: None,
        row_count,
        columns,
    })
}

/// One column's running partial statistics.
struct Counter {
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
    samples: Vec<Key>,
    /// Misra–Gries counters: numbers, dates, timestamps and booleans, or text.
    keys: FxHashMap<Key, u64>,
    texts: FxHashMap<String, u64>,
    text_bytes: usize,
    /// The most any count lost to the summary's reductions.
    decremented: u64,
    hll: HyperLogLog,
    values: Vec<f64>,
    seen: u64,
    rng: u64,
    bounds: Option<Bounds>,
    binner: Option<Binner>,
    /// A value fell outside the edges' bounds.
    outside: bool,
}

impl Counter {
    fn new(
        name: &str,
        dtype: String,
        data_type: &arrow_schema::DataType,
        bounds: &Option<Bounds>,
    ) -> Self {
        let kind = kind_of(data_type);
        let binner = bounds.as_ref().and_then(|b| b.binner(&kind));
        Self {
            name: name.to_owned(),
            dtype,
            kind,
            nulls: 0,
            count: 0,
            mean: 0.0,
            m2: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            min_int: i128::MAX,
            max_int: i128::MIN,
            samples: Vec::new(),
            keys: FxHashMap::default(),
            texts: FxHashMap::default(),
            text_bytes: 0,
            decremented: 0,
            hll: HyperLogLog::new(),
            values: Vec::new(),
            seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            bounds: bounds.clone().filter(|_| binner.is_some()),
            binner,
            outside: false,
        }
    }

    /// Welford's running mean and M2, and the range.
    fn number(&mut self, x: f64) {
        self.count += 1;
        let delta = x - self.mean;
        self.mean += delta / self.count as f64;
        self.m2 += delta * (x - self.mean);
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
    }

    fn sample(&mut self, key: impl FnOnce() -> Key) {
        if self.samples.len() < SAMPLES {
            self.samples.push(key());
        }
    }

    /// Keeps a number for the quantile points: every one up to [`SAMPLE_LIMIT`], then a
    /// uniform reservoir sample.
    fn keep(&mut self, x: f64) {
        self.seen += 1;
        if self.values.len() < SAMPLE_LIMIT {
            self.values.push(x);
            return;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D) % self.seen;
        if (r as usize) < SAMPLE_LIMIT {
            self.values[r as usize] = x;
        }
    }

    fn count_key(&mut self, key: Key) {
        *self.keys.entry(key).or_insert(0) += 1;
        if self.keys.len() > COUNTERS {
            self.decremented += reduce(&mut self.keys, |_| 0).0;
        }
    }

    fn count_text(&mut self, text: &str) {
        if let Some(n) = self.texts.get_mut(text) {
            *n += 1;
            return;
        }
        self.texts.insert(text.to_owned(), 1);
        self.text_bytes += text.len();
        while self.texts.len() > COUNTERS || self.text_bytes > COUNTER_TEXT_BYTES {
            let (by, freed) = reduce(&mut self.texts, String::len);
            self.decremented += by;
            self.text_bytes -= freed;
        }
    }

    fn bin(&mut self, add: impl FnOnce(&mut Binner) -> Result<(), StatsError>) {
        if let Some(binner) = &mut self.binner {
            if add(binner).is_err() {
                self.outside = true;
            }
        }
    }

    fn add(&mut self, v: V<'_>) {
        match v {
            V::Null => self.nulls += 1,
            V::Int(i) => {
                let numeric = matches!(self.kind, Kind::Int);
                if numeric {
                    self.number(i as f64);
                } else {
                    self.count += 1;
                }
                self.min_int = self.min_int.min(i);
                self.max_int = self.max_int.max(i);
                self.sample(|| Key::Int(i));
                self.hll.add(mixed_hash(&i));
                self.count_key(Key::Int(i));
                if numeric {
                    self.keep(i as f64);
                }
                self.bin(|b| b.add_int(i));
            }
            V::Float(x) => {
                self.number(x);
                let key = float_key(x);
                self.sample(|| key.clone());
                if let Key::Float(bits) = &key {
                    self.hll.add(mixed_hash(bits));
                }
                self.count_key(key);
                self.keep(x);
                self.bin(|b| b.add_float(x));
            }
            V::Decimal(unscaled, scale) => {
                let x = decimal_f64(unscaled, scale);
                self.number(x);
                self.sample(|| Key::Int(unscaled));
                self.hll.add(mixed_hash(&unscaled));
                self.count_key(Key::Int(unscaled));
                self.keep(x);
                self.bin(|b| b.add_float(x));
            }
            V::Bool(b) => {
                self.count += 1;
                self.sample(|| Key::Bool(b));
                self.count_key(Key::Bool(b));
            }
            V::Text(t) => {
                self.count += 1;
                // Cut as shown: a sample is only ever shown.
                self.sample(|| Key::Text(shown(t).into_owned()));
                self.hll.add(mixed_hash(t));
                self.count_text(t);
            }
        }
    }

    fn finish(self, file: &str) -> Result<ColumnPartial, PartialError> {
        if self.outside {
            return Err(PartialError::Edges(format!(
                "{file}: column {:?} holds values outside the edges' bounds: compute the edges \
                 over every file of the version, this one included",
                self.name
            )));
        }
        let distinct = self.keys.len() + self.texts.len();
        let exact = self.decremented == 0
            && distinct <= PARTIAL_VALUES
            && self.text_bytes <= PARTIAL_TEXT_BYTES;
        let mut all: Vec<Counted> = self
            .keys
            .into_iter()
            .map(|(value, count)| Counted { value, count })
            .chain(self.texts.into_iter().map(|(t, count)| Counted {
                value: Key::Text(t),
                count,
            }))
            .collect();
        let numeric = self.kind.numeric() && self.count > 0;
        let (values, top, top_error, hll, quantiles) = if exact {
            all.sort_by(|a, b| a.value.cmp(&b.value));
            (Some(all), Vec::new(), 0, None, None)
        } else {
            all.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.value.cmp(&b.value)));
            // The most frequent, at most TOP_KEPT of them holding at most PARTIAL_TEXT_BYTES.
            let mut text = 0;
            let kept = all
                .iter()
                .take(TOP_KEPT)
                .take_while(|c| {
                    text += match &c.value {
                        Key::Text(t) => t.len(),
                        _ => 0,
                    };
                    text <= PARTIAL_TEXT_BYTES
                })
                .count();
            let unlisted = all.get(kept).map_or(0, |c| c.count);
            all.truncate(kept);
            let quantiles = numeric.then(|| quantiles(self.values, self.count, self.seen));
            (
                None,
                all,
                self.decremented + unlisted,
                Some(hex::encode(self.hll.registers())),
                quantiles,
            )
        };
        let histogram = match (self.binner, self.bounds) {
            (Some(binner), Some(bounds)) => Some(BinCounts {
                bounds,
                counts: binner.finish().counts,
            }),
            _ => None,
        };
        Ok(ColumnPartial {
            name: self.name,
            dtype: self.dtype,
            kind: tag_of(&self.kind),
            nulls: self.nulls,
            count: self.count,
            mean: self.mean,
            m2: self.m2,
            min: self.min,
            max: self.max,
            min_int: self.min_int,
            max_int: self.max_int,
            samples: self.samples,
            values,
            top,
            top_error,
            hll,
            quantiles,
            histogram,
        })
    }
}

/// Misra–Gries' reduction, by the median count: every count is lowered by it and the counters
/// at or below it dropped (at least half of them). Returns by how much, and what `bytes` says
/// the dropped keys held.
pub(super) fn reduce<K: Eq + Hash>(
    map: &mut FxHashMap<K, u64>,
    bytes: impl Fn(&K) -> usize,
) -> (u64, usize) {
    let mut counts: Vec<u64> = map.values().copied().collect();
    if counts.is_empty() {
        return (0, 0);
    }
    let middle = counts.len() / 2;
    let by = *counts.select_nth_unstable(middle).1;
    let mut freed = 0;
    map.retain(|k, n| {
        if *n > by {
            *n -= by;
            true
        } else {
            freed += bytes(k);
            false
        }
    });
    (by, freed)
}

/// [`QUANTILE_POINTS`] points of `count` numbers, from the `kept` ones (all of them, or a
/// uniform sample once more than [`SAMPLE_LIMIT`] were `seen`): point `j` is the first of
/// block `j` of the sorted numbers, weighing the block's size.
fn quantiles(mut kept: Vec<f64>, count: u64, seen: u64) -> Quantiles {
    kept.sort_by(f64::total_cmp);
    let s = kept.len() as u64;
    let m = (QUANTILE_POINTS as u64).min(s).max(1);
    let block = |j: u64| (u128::from(j) * u128::from(count) / u128::from(m)) as u64;
    let points: Vec<Point> = (0..m)
        .filter_map(|j| {
            let at = (u128::from(j) * u128::from(s) / u128::from(m)) as usize;
            kept.get(at)
                .map(|value| Point(*value, block(j + 1) - block(j)))
        })
        .collect();
    Quantiles {
        rank_error: points.iter().map(|p| p.1).max().unwrap_or(0),
        points,
        sampled: seen > SAMPLE_LIMIT as u64,
    }
}

pub(super) fn tag_of(kind: &Kind) -> KindTag {
    match kind {
        Kind::Int => KindTag::Int,
        Kind::Float => KindTag::Float,
        Kind::Decimal(scale) => KindTag::Decimal { scale: *scale },
        Kind::Bool => KindTag::Bool,
        Kind::Text => KindTag::Text,
        Kind::Date32 => KindTag::Date32,
        Kind::Date64 => KindTag::Date64,
        Kind::Timestamp(unit, tz) => KindTag::Timestamp {
            unit: match unit {
                arrow_schema::TimeUnit::Second => "s",
                arrow_schema::TimeUnit::Millisecond => "ms",
                arrow_schema::TimeUnit::Microsecond => "us",
                arrow_schema::TimeUnit::Nanosecond => "ns",
            }
            .to_owned(),
            tz: *tz,
        },
        Kind::Other => KindTag::Other,
    }
}

pub(super) fn kind_from(tag: &KindTag) -> Result<Kind, PartialError> {
    use arrow_schema::TimeUnit;
    Ok(match tag {
        KindTag::Int => Kind::Int,
        KindTag::Float => Kind::Float,
        KindTag::Decimal { scale } => Kind::Decimal(*scale),
        KindTag::Bool => Kind::Bool,
        KindTag::Text => Kind::Text,
        KindTag::Date32 => Kind::Date32,
        KindTag::Date64 => Kind::Date64,
        KindTag::Timestamp { unit, tz } => {
            let unit = match unit.as_str() {
                "s" => TimeUnit::Second,
                "ms" => TimeUnit::Millisecond,
                "us" => TimeUnit::Microsecond,
                "ns" => TimeUnit::Nanosecond,
                other => {
                    return Err(PartialError::Merge(format!(
                        "unknown timestamp unit {other:?}"
                    )))
                }
            };
            Kind::Timestamp(unit, *tz)
        }
        KindTag::Other => Kind::Other,
    })
}
