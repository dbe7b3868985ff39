//! One column's running statistics, fed batch by batch (an Arrow array at a time: `arrow`),
//! summed up at the end (`finish`).

use std::hash::Hash;

use arrow_schema::DataType;
use rustc_hash::FxHashMap;

use super::listed::*;
use super::sketch::*;
use super::values::*;
use super::*;

mod arrow;
mod finish;

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
    /// Numbers, dates and timestamps: every value listed, up to [`LIST_LIMIT`]; then `None`,
    /// and they are counted in `counts`.
    listed: Option<Listed>,
    /// Set once the distinct values outgrow [`DISTINCT_LIMIT`]: from then on the unique count
    /// comes from this sketch, which has seen every distinct value.
    hll: Option<HyperLogLog>,
    /// The values kept for the median once the counts no longer hold every value (past
    /// [`DISTINCT_LIMIT`] distinct ones): until then the median comes from the counts.
    values: Vec<f64>,
    keeping: bool,
    values_seen: u64,
    rng: u64,
    samples: Vec<Key>,
    /// The bytes this column's counts and values may take in a shared pass (`None`: a pass of
    /// its own, bounded by the exact limits alone). Past them it is [`deferred`](Self::deferred).
    cap: Option<usize>,
    /// Its counts and values were dropped for want of room: a pass of its own counts them again.
    deferred: bool,
    /// The heap bytes of the text keys counted.
    text_heap: usize,
    /// The bytes of every text value seen (an average for planning a pass of its own).
    text_bytes: u64,
    /// The heap bytes of a distinct text value counted before it was deferred: long distinct
    /// values among many short repeated ones cost more than the average of every value says.
    distinct_text_average: usize,
    /// In a pass of its own: how many values the column holds (known from the first pass), so
    /// that its counts and kept values are allocated once, at their final size.
    expected: usize,
}

impl Accumulator {
    /// A column's statistics, its counts and values within `cap` bytes (`None`: the exact
    /// limits alone bound them).
    pub(super) fn new(name: &str, data_type: &DataType, cap: Option<usize>) -> Self {
        let kind = kind_of(data_type);
        let wide = matches!(
            kind_value_type(data_type),
            DataType::UInt64 | DataType::Decimal128(..)
        );
        let counts = match kind {
            Kind::Float => Counts::Float(FxHashMap::default()),
            Kind::Bool => Counts::Bool([0, 0]),
            Kind::Text | Kind::Other => Counts::Text(FxHashMap::default()),
            _ if wide => Counts::Wide(FxHashMap::default()),
            _ => Counts::Int(FxHashMap::default()),
        };
        let listed = Listed::for_counts(&counts);
        Self {
            listed,
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
            keeping: false,
            values_seen: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
            samples: Vec::new(),
            cap,
            deferred: false,
            text_heap: 0,
            text_bytes: 0,
            expected: 0,
            distinct_text_average: 0,
        }
    }

    /// The same column, for a pass of its own after `first` (whose values it now knows): its
    /// list is allocated once, at its final size.
    pub(super) fn own_pass(name: &str, data_type: &DataType, first: &Accumulator) -> Self {
        let mut own = Self::new(name, data_type, None);
        own.expected = usize::try_from(first.count).unwrap_or(usize::MAX);
        own.reserve_list(own.expected);
        own
    }

    /// Stands for the first pass of a column read straight in a pass of its own, its `values`
    /// foreseen from the footers ([`crate::once`]): what [`Self::own_pass`] and
    /// [`Self::own_pass_bytes`] take from a first pass. Never finished.
    pub(super) fn foreseen(name: &str, data_type: &DataType, values: u64) -> Self {
        let mut column = Self::new(name, data_type, None);
        column.count = values;
        column
    }

    /// Allocates the list for `values` values (at most [`LIST_LIMIT`]) now, when they fit the
    /// cap: it then never grows (a growing list holds its old and new buffers at once).
    pub(super) fn reserve_list(&mut self, values: usize) {
        let fits = match (&self.listed, self.cap) {
            (Some(list), Some(cap)) => values.min(LIST_LIMIT) * list.key_bytes() <= cap,
            (Some(_), None) => true,
            (None, _) => false,
        };
        if let (true, Some(list)) = (fits, &mut self.listed) {
            list.reserve_exact(values.min(LIST_LIMIT));
        }
    }

    /// Lists a number, date or timestamp: false when the column is not listed (any more), and
    /// the value is to be counted.
    fn list(&mut self, key: ListKey) -> bool {
        let Some(list) = &self.listed else {
            return false;
        };
        if list.len() >= LIST_LIMIT {
            // Spilling builds counts beside the list, and kept values: in a shared pass, the
            // column is counted again in a pass of its own instead (the answer is the same).
            if self.cap.is_some() {
                self.defer();
                return true;
            }
            self.spill();
            return false;
        }
        let grown = list.growth_bytes();
        if grown > 0 && !self.has_room(grown) {
            self.defer();
            return true;
        }
        if let Some(list) = &mut self.listed {
            list.push(key);
        }
        true
    }

    /// Past [`LIST_LIMIT`] values: the list becomes counts (and kept values for the median).
    fn spill(&mut self) {
        let Some(list) = self.listed.take() else {
            return;
        };
        let numeric = self.kind.numeric().then_some(&self.kind);
        let (counts, hll, kept) = list.spill(numeric);
        self.counts = counts;
        self.hll = hll;
        if let Some(kept) = kept {
            self.values_seen = kept.len() as u64;
            self.values = kept;
            self.keeping = true;
        }
    }

    /// Whether its counts and values were dropped for want of room in a shared pass.
    pub(super) fn deferred(&self) -> bool {
        self.deferred
    }

    /// What its counts and values hold now.
    fn held_bytes(&self) -> usize {
        self.counts.table_bytes()
            + self.text_heap
            + self.values.capacity() * 8
            + self.listed.as_ref().map_or(0, Listed::bytes)
    }

    /// Room for `more` bytes within the cap.
    fn has_room(&self, more: usize) -> bool {
        self.cap
            .is_none_or(|cap| self.held_bytes().saturating_add(more) <= cap)
    }

    /// Drops the counts and values: a pass of its own will count them again.
    fn defer(&mut self) {
        if let (Counts::Text(map), false) = (&self.counts, self.deferred) {
            if !map.is_empty() {
                self.distinct_text_average = self.text_heap / map.len();
            }
        }
        self.deferred = true;
        self.counts = self.counts.emptied();
        self.listed = Listed::for_counts(&self.counts);
        self.hll = None;
        self.values = Vec::new();
        self.text_heap = 0;
    }

    /// The most its counts and values can take in a pass of its own (the exact limits, or the
    /// values it holds if fewer), for planning passes within a memory budget.
    pub(super) fn own_pass_bytes(&self) -> usize {
        let values = usize::try_from(self.count).unwrap_or(usize::MAX);
        if let Some(list) = &self.listed {
            let listed = values.min(LIST_LIMIT) * list.key_bytes();
            if values <= LIST_LIMIT {
                return listed;
            }
            // The sorted list and the counts it spills into, then kept values for the median.
            let kept = if self.kind.numeric() {
                LIST_LIMIT * 8
            } else {
                0
            };
            return listed + self.counts.table_bytes_for(DISTINCT_LIMIT) + kept;
        }
        let distinct = values.min(DISTINCT_LIMIT);
        let table = self.counts.table_bytes_for(distinct);
        let text = if matches!(self.counts, Counts::Text(_)) && self.count > 0 {
            let average = usize::try_from(self.text_bytes / self.count).unwrap_or(usize::MAX);
            distinct.saturating_mul(heap_bytes(average).max(self.distinct_text_average))
        } else {
            0
        };
        // A table grows by doubling: the old and the new are held together meanwhile.
        table + table / 2 + text
    }

    /// Takes the counts and values of a pass of its own (its other statistics are this one's).
    pub(super) fn adopt(&mut self, own: Accumulator) {
        self.counts = own.counts;
        self.listed = own.listed;
        self.hll = own.hll;
        self.values = own.values;
        self.keeping = own.keeping;
        self.values_seen = own.values_seen;
        self.text_heap = own.text_heap;
        self.deferred = false;
    }

    pub(super) fn null(&mut self) {
        self.nulls += 1;
    }

    /// Count, mean, variance and range of a numeric value.
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
    }

    /// A numeric value counted: while the counts hold every distinct value, the median comes
    /// from them; once they do not, from the values kept, starting with every value the counts
    /// held.
    fn for_median(&mut self, x: f64) {
        if self.deferred {
            return;
        }
        if !self.keeping {
            if self.hll.is_none() {
                return;
            }
            self.keeping = true;
            self.values.reserve_exact(self.expected.min(MEDIAN_LIMIT));
            for (v, n) in self.counts.numbers(&self.kind) {
                for _ in 0..n {
                    self.keep(v);
                }
            }
        }
        self.keep(x);
    }

    /// Keeps a value for the median: every value up to [`MEDIAN_LIMIT`], then a uniform sample.
    fn keep(&mut self, x: f64) {
        if self.deferred {
            return;
        }
        self.values_seen += 1;
        if self.values.len() < MEDIAN_LIMIT {
            if self.values.len() == self.values.capacity() {
                let grown = self.values.capacity().max(4) * 8;
                if !self.has_room(grown) {
                    self.defer();
                    return;
                }
            }
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

    /// Counts a value in a typed map; past the limit, only the sketch sees new values. False
    /// when a new value would grow the map past `room` bytes (nothing is counted then).
    pub(super) fn count_in<K, Q>(
        map: &mut FxHashMap<K, u64>,
        hll: &mut Option<HyperLogLog>,
        value: &Q,
        own: impl FnOnce() -> K,
        hash: impl Fn(&Q) -> u64,
        room: Option<usize>,
    ) -> bool
    where
        K: std::borrow::Borrow<Q> + Hash + Eq,
        Q: Hash + Eq + ?Sized,
    {
        if let Some(c) = map.get_mut(value) {
            *c += 1;
            return true;
        }
        if map.len() < DISTINCT_LIMIT {
            if let Some(room) = room {
                // Growing moves the table into one twice its size: both are held meanwhile.
                let now = table_bytes::<K>(map.capacity());
                if map.len() == map.capacity() && now + 2 * now.max(64) > room {
                    return false;
                }
            }
            map.insert(own(), 1);
            return true;
        }
        let sketch = hll.get_or_insert_with(|| {
            let mut sketch = HyperLogLog::new();
            for k in map.keys() {
                sketch.add(hash(k.borrow()));
            }
            sketch
        });
        sketch.add(hash(value));
        true
    }

    /// The room left for the map itself (`None`: no cap).
    fn map_room(&self) -> Option<usize> {
        self.cap.map(|cap| {
            cap.saturating_sub(self.held_bytes().saturating_sub(self.counts.table_bytes()))
        })
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
        if self.deferred {
            return;
        }
        let key = match i64::try_from(v) {
            Ok(k) if matches!(self.counts, Counts::Int(_)) => ListKey::Int(k),
            _ => ListKey::Wide(v),
        };
        if self.list(key) {
            return;
        }
        let room = self.map_room();
        let counted = match &mut self.counts {
            Counts::Int(map) => match i64::try_from(v) {
                Ok(v) => Self::count_in(map, &mut self.hll, &v, || v, |v| int_hash(*v), room),
                // Not reached: such columns are counted in a wide map.
                Err(_) => true,
            },
            Counts::Wide(map) => Self::count_in(map, &mut self.hll, &v, || v, mixed_hash, room),
            _ => true,
        };
        if !counted {
            self.defer();
        } else if numeric {
            self.for_median(v as f64);
        }
    }

    pub(super) fn float(&mut self, v: f64) {
        self.number(v);
        let Key::Float(bits) = float_key(v) else {
            return;
        };
        self.sample(|| Key::Float(bits));
        if self.deferred || self.list(ListKey::Float(bits)) {
            return;
        }
        let room = self.map_room();
        if let Counts::Float(map) = &mut self.counts {
            if !Self::count_in(map, &mut self.hll, &bits, || bits, mixed_hash, room) {
                self.defer();
                return;
            }
        }
        self.for_median(v);
    }

    pub(super) fn decimal(&mut self, unscaled: i128, scale: i8) {
        self.number(decimal_f64(unscaled, scale));
        self.sample(|| Key::Int(unscaled));
        if self.deferred || self.list(ListKey::Wide(unscaled)) {
            return;
        }
        let room = self.map_room();
        if let Counts::Wide(map) = &mut self.counts {
            if !Self::count_in(map, &mut self.hll, &unscaled, || unscaled, mixed_hash, room) {
                self.defer();
                return;
            }
        }
        self.for_median(decimal_f64(unscaled, scale));
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
        self.text_bytes += v.len() as u64;
        if self.deferred {
            return;
        }
        let room = self.map_room();
        let before = self.counts.len();
        if let Counts::Text(map) = &mut self.counts {
            if !Self::count_in(map, &mut self.hll, v, || v.to_owned(), mixed_hash, room) {
                self.defer();
                return;
            }
        }
        if self.counts.len() > before {
            self.text_heap += heap_bytes(v.len());
            if !self.has_room(0) {
                self.defer();
            }
        }
    }
}
