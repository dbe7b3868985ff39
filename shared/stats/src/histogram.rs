//! Histograms of numeric, date and timestamp columns: at most [`BINS`] bins, counted in a second
//! pass over the file once the first has found each column's exact minimum and maximum, so that
//! the counts are exact whatever the file's size, in O(bins) memory per column.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef, ArrowPrimitiveType};
use arrow_schema::{DataType, TimeUnit};
use serde::Serialize;
use serde_json::{json, Value};

use super::values::*;
use super::StatsError;

/// Most bins in a histogram.
pub const BINS: usize = 20;

/// A column's histogram, shaped as in Hugging Face dataset-viewer's `/statistics`: `counts[i]`
/// values fall between `bin_edges[i]` and `bin_edges[i + 1]`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Histogram {
    pub bin_edges: Vec<Edge>,
    pub counts: Vec<u64>,
}

/// A bin edge: an integer (exact, also beyond 64 bits: the last edge of a uint64 column can
/// pass 2^64 − 1), or a number or ISO 8601 string.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Edge {
    Int(i128),
    Json(Value),
}

/// Integer bins of one width: bin `i` holds `[min + i·width, min + (i + 1)·width)`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct IntBins {
    min: i128,
    max: i128,
    width: i128,
    counts: Vec<u64>,
}

impl IntBins {
    /// The fewest bins of one integer width, at most [`BINS`], that cover `min..=max`.
    pub(super) fn new(min: i128, max: i128) -> Self {
        let span = max - min + 1; // at most 2^64: no overflow in i128
        let width = (span + BINS as i128 - 1) / BINS as i128;
        let bins = (span + width - 1) / width;
        Self {
            min,
            max,
            width,
            counts: vec![0; bins as usize],
        }
    }

    fn add(&mut self, v: i128) -> Result<(), StatsError> {
        if v < self.min || v > self.max {
            return Err(StatsError::Changed);
        }
        // v − min < 2^64 and width ≤ 2^64 / 20: a 64-bit division is enough.
        self.counts[((v - self.min) as u64 / self.width as u64) as usize] += 1;
        Ok(())
    }

    /// The edges: `min + i·width` for i = 0..=bins, the last an exclusive bound ≥ max + 1.
    pub(super) fn edges(&self) -> Vec<i128> {
        (0..=self.counts.len())
            .map(|i| self.min + i as i128 * self.width)
            .collect()
    }
}

/// numpy.histogram(values, bins=20)'s equal-width bins, replicated operation for operation.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FloatBins {
    min: f64,
    max: f64,
    first: f64,
    last: f64,
    edges: [f64; BINS + 1],
    counts: [u64; BINS],
}

impl FloatBins {
    /// The bins of values in `min..=max`; `None` where numpy.histogram refuses ("Too many bins
    /// for data range"): when its edges do not increase strictly, that is, when fewer than 21
    /// doubles lie in the range (a single value so large that ± 0.5 is lost, two neighbouring
    /// doubles) or when max − min overflows.
    pub(super) fn new(min: f64, max: f64) -> Option<Self> {
        // numpy's `_get_outer_edges`: an empty range is widened by 0.5 each side.
        let (first, last) = if min == max {
            (min - 0.5, max + 0.5)
        } else {
            (min, max)
        };
        // numpy.linspace(first, last, 21): i·step + first, the last edge set to `last`. (Its
        // other path, for a step that underflows to 0, only serves ranges numpy then refuses.)
        let delta = last - first;
        if !delta.is_finite() {
            return None;
        }
        let step = delta / BINS as f64;
        let mut edges = [0.0; BINS + 1];
        for (i, edge) in edges.iter_mut().enumerate() {
            *edge = i as f64 * step + first;
        }
        edges[BINS] = last;
        if edges.windows(2).any(|pair| pair[0] >= pair[1]) {
            return None;
        }
        Some(Self {
            min,
            max,
            first,
            last,
            edges,
            counts: [0; BINS],
        })
    }

    /// The bin of `x` as numpy.histogram computes it for equal-width bins: scaled and truncated,
    /// the last edge in the last bin, then corrected by one against the edges themselves.
    pub(super) fn index(&self, x: f64) -> usize {
        let f = (x - self.first) / (self.last - self.first) * BINS as f64;
        let mut i = (f as usize).min(BINS); // f ≥ 0; `as` truncates like numpy's astype(intp)
        if i == BINS {
            i -= 1;
        }
        if x < self.edges[i] {
            i = i.saturating_sub(1);
        }
        if x >= self.edges[i + 1] && i != BINS - 1 {
            i += 1;
        }
        i
    }

    fn add(&mut self, x: f64) -> Result<(), StatsError> {
        if x < self.min || x > self.max {
            return Err(StatsError::Changed);
        }
        let i = self.index(x);
        self.counts[i] += 1;
        Ok(())
    }
}

/// One column's bins, fed batch by batch in the second pass.
pub(super) struct Binner {
    kind: Kind,
    bins: Bins,
}

enum Bins {
    Int(IntBins),
    Float(Box<FloatBins>),
}

impl Binner {
    /// Integer bins for an integer, date (in days) or timestamp (in its unit) column.
    pub(super) fn int(kind: Kind, min: i128, max: i128) -> Self {
        Self {
            kind,
            bins: Bins::Int(IntBins::new(min, max)),
        }
    }

    /// numpy's bins for a floating-point or decimal column (as doubles).
    pub(super) fn float(kind: Kind, min: f64, max: f64) -> Option<Self> {
        Some(Self {
            kind,
            bins: Bins::Float(Box::new(FloatBins::new(min, max)?)),
        })
    }

    /// Whether `other` has these bins, whatever either counted: bins made from bounds
    /// foreseen count as those made from the exact minimum and maximum when the bounds are
    /// the same numbers ([`crate::once`]).
    pub(super) fn same_bins(&self, other: &Binner) -> bool {
        match (&self.bins, &other.bins) {
            (Bins::Int(a), Bins::Int(b)) => (a.min, a.max) == (b.min, b.max),
            (Bins::Float(a), Bins::Float(b)) => {
                (a.min.to_bits(), a.max.to_bits()) == (b.min.to_bits(), b.max.to_bits())
            }
            _ => false,
        }
    }

    fn each_int<T: ArrowPrimitiveType>(
        &mut self,
        array: &dyn Array,
        to: impl Fn(T::Native) -> i128,
    ) -> Result<(), StatsError> {
        let Bins::Int(bins) = &mut self.bins else {
            return Err(StatsError::Changed);
        };
        let array = array.as_primitive::<T>();
        if array.null_count() == 0 {
            array.values().iter().try_for_each(|v| bins.add(to(*v)))
        } else {
            array.iter().flatten().try_for_each(|v| bins.add(to(v)))
        }
    }

    fn each_float<T: ArrowPrimitiveType>(
        &mut self,
        array: &dyn Array,
        to: impl Fn(T::Native) -> f64,
    ) -> Result<(), StatsError> {
        let Bins::Float(bins) = &mut self.bins else {
            return Err(StatsError::Changed);
        };
        // NaN and ±infinity count as nulls.
        let mut add = |x: f64| if x.is_finite() { bins.add(x) } else { Ok(()) };
        let array = array.as_primitive::<T>();
        if array.null_count() == 0 {
            array.values().iter().try_for_each(|v| add(to(*v)))
        } else {
            array.iter().flatten().try_for_each(|v| add(to(v)))
        }
    }

    /// One integer (a date in days, a timestamp in its unit).
    pub(super) fn add_int(&mut self, v: i128) -> Result<(), StatsError> {
        match &mut self.bins {
            Bins::Int(bins) => bins.add(v),
            Bins::Float(_) => Err(StatsError::Changed),
        }
    }

    /// One finite number.
    pub(super) fn add_float(&mut self, x: f64) -> Result<(), StatsError> {
        match &mut self.bins {
            Bins::Float(bins) => bins.add(x),
            Bins::Int(_) => Err(StatsError::Changed),
        }
    }

    pub(super) fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
        let a = array.as_ref();
        match array.data_type() {
            DataType::Int8 => self.each_int::<Int8Type>(a, i128::from),
            DataType::Int16 => self.each_int::<Int16Type>(a, i128::from),
            DataType::Int32 => self.each_int::<Int32Type>(a, i128::from),
            DataType::Int64 => self.each_int::<Int64Type>(a, i128::from),
            DataType::UInt8 => self.each_int::<UInt8Type>(a, i128::from),
            DataType::UInt16 => self.each_int::<UInt16Type>(a, i128::from),
            DataType::UInt32 => self.each_int::<UInt32Type>(a, i128::from),
            DataType::UInt64 => self.each_int::<UInt64Type>(a, i128::from),
            DataType::Date32 => self.each_int::<Date32Type>(a, i128::from),
            // Dates in milliseconds: binned by day, as they are counted.
            DataType::Date64 => {
                self.each_int::<Date64Type>(a, |v| i128::from(v).div_euclid(86_400_000))
            }
            DataType::Timestamp(TimeUnit::Second, _) => {
                self.each_int::<TimestampSecondType>(a, i128::from)
            }
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                self.each_int::<TimestampMillisecondType>(a, i128::from)
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                self.each_int::<TimestampMicrosecondType>(a, i128::from)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                self.each_int::<TimestampNanosecondType>(a, i128::from)
            }
            DataType::Float16 => self.each_float::<Float16Type>(a, f64::from),
            DataType::Float32 => self.each_float::<Float32Type>(a, f64::from),
            DataType::Float64 => self.each_float::<Float64Type>(a, |v| v),
            DataType::Decimal128(_, scale) => {
                let scale = *scale;
                self.each_float::<Decimal128Type>(a, |v| decimal_f64(v, scale))
            }
            DataType::Dictionary(_, _) => {
                let plain = arrow_cast::cast(array, &kind_value_type(array.data_type()))?;
                self.add(&plain)
            }
            _ => Err(StatsError::Changed),
        }
    }

    pub(super) fn finish(self) -> Histogram {
        match self.bins {
            Bins::Int(bins) => {
                let kind = self.kind;
                let edge = |e: i128| match &kind {
                    Kind::Date32 | Kind::Date64 => Edge::Json(date_json(e)),
                    Kind::Timestamp(unit, tz) => Edge::Json(timestamp_json(e, unit, *tz)),
                    _ => Edge::Int(e),
                };
                Histogram {
                    bin_edges: bins.edges().into_iter().map(edge).collect(),
                    counts: bins.counts,
                }
            }
            Bins::Float(bins) => Histogram {
                bin_edges: bins.edges.iter().map(|e| Edge::Json(json!(e))).collect(),
                counts: bins.counts.to_vec(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next double up (f64::next_up is newer than this crate's minimum Rust).
    fn next_up(x: f64) -> f64 {
        match x {
            0.0 => f64::from_bits(1),
            x if x > 0.0 => f64::from_bits(x.to_bits() + 1),
            x => f64::from_bits(x.to_bits() - 1),
        }
    }

    fn next_down(x: f64) -> f64 {
        -next_up(-x)
    }

    fn int_histogram(min: i128, max: i128, values: &[i128]) -> (Vec<i128>, Vec<u64>) {
        let mut bins = IntBins::new(min, max);
        for v in values {
            bins.add(*v).unwrap();
        }
        (bins.edges(), bins.counts)
    }

    #[test]
    fn a_single_integer_has_one_bin_of_width_one() {
        assert_eq!(int_histogram(7, 7, &[7, 7]), (vec![7, 8], vec![2]));
    }

    #[test]
    fn a_span_under_twenty_has_one_bin_per_integer() {
        let (edges, counts) = int_histogram(-2, 2, &[-2, 0, 2, 2]);
        assert_eq!(edges, [-2, -1, 0, 1, 2, 3]);
        assert_eq!(counts, [1, 0, 1, 0, 2]);
        // 21 integers: width 2, 11 bins, the last edge past max + 1.
        let (edges, counts) = int_histogram(0, 20, &[0, 1, 19, 20]);
        assert_eq!(edges.len(), 12);
        assert_eq!((edges[1], edges[11]), (2, 22));
        assert_eq!((counts[0], counts[9], counts[10]), (2, 1, 1));
    }

    #[test]
    fn negative_integers_bin_from_the_minimum() {
        // int8: 256 integers, width 13, 20 bins.
        let (edges, counts) = int_histogram(-128, 127, &[-128, -116, -115, -1, 0, 127]);
        assert_eq!(edges.len(), 21);
        assert_eq!((edges[0], edges[1], edges[20]), (-128, -115, 132));
        assert_eq!(counts[0], 2);
        assert_eq!(counts[1], 1);
        assert_eq!(counts[9], 2); // -11..2
        assert_eq!(counts[19], 1);
    }

    #[test]
    fn integer_extremes_do_not_overflow() {
        let max = i128::from(u64::MAX);
        let (edges, counts) = int_histogram(0, max, &[0, max, max - 1, 1 << 63]);
        assert_eq!(edges[1], 922_337_203_685_477_581); // ceil(2^64 / 20)
        assert_eq!(edges[20], 18_446_744_073_709_551_620); // past u64::MAX
                                                           // 2^63 is just below 10 widths.
        assert_eq!((counts[0], counts[9], counts[19]), (1, 1, 2));
        let (min, max) = (i128::from(i64::MIN), i128::from(i64::MAX));
        let (edges, counts) = int_histogram(min, max, &[min, max, 0]);
        assert_eq!(edges[20], 9_223_372_036_854_775_812);
        assert_eq!((counts[0], counts[9], counts[19]), (1, 1, 1));
        // Written exactly, beyond what a serde_json::Value holds.
        let histogram = Binner::int(Kind::Int, 0, i128::from(u64::MAX)).finish();
        let json = serde_json::to_string(&histogram).unwrap();
        assert!(
            json.contains(",18446744073709551620],\"counts\":["),
            "{json}"
        );
    }

    #[test]
    fn a_value_out_of_the_first_pass_range_is_an_error() {
        let mut bins = IntBins::new(0, 9);
        assert!(matches!(bins.add(10), Err(StatsError::Changed)));
        let mut bins = FloatBins::new(0.0, 1.0).unwrap();
        assert!(matches!(bins.add(1.5), Err(StatsError::Changed)));
    }

    #[test]
    fn float_edges_are_numpy_linspace() {
        // numpy.linspace(-1.3, 2.9, 21), as numpy 2.4 prints it.
        let numpy = [
            -1.3,
            -1.09,
            -0.88,
            -0.669_999_999_999_999_9,
            -0.459_999_999_999_999_96,
            -0.25,
            -0.039_999_999_999_999_813,
            0.170_000_000_000_000_15,
            0.380_000_000_000_000_1,
            0.590_000_000_000_000_1,
            0.8,
            1.01,
            1.220_000_000_000_000_4,
            1.430_000_000_000_000_4,
            1.640_000_000_000_000_3,
            1.850_000_000_000_000_3,
            2.060_000_000_000_000_5,
            2.270_000_000_000_000_5,
            2.480_000_000_000_000_4,
            2.690_000_000_000_000_4,
            2.9,
        ];
        let bins = FloatBins::new(-1.3, 2.9).unwrap();
        assert_eq!(bins.edges, numpy);
        // numpy's last edge is `last` itself, not 20·step + first.
        let bins = FloatBins::new(-7.31, 15.83).unwrap();
        assert_eq!(
            20.0 * ((15.83 - -7.31) / 20.0) + -7.31,
            15.830_000_000_000_002
        );
        assert_eq!(bins.edges[BINS], 15.83);
    }

    #[test]
    fn float_values_fall_as_numpy_puts_them() {
        let bins = FloatBins::new(-1.3, 2.9).unwrap();
        assert_eq!(bins.index(-1.3), 0);
        // The last bin includes the last edge.
        assert_eq!(bins.index(2.9), BINS - 1);
        assert_eq!(bins.index(2.690_000_000_000_000_4), BINS - 1);
        // Every other bin includes its left edge and not its right one, to the last ULP,
        // whatever the scaled index said before numpy's corrections.
        for i in 1..BINS {
            let edge = bins.edges[i];
            assert_eq!(bins.index(edge), i, "edge {i}");
            assert_eq!(bins.index(next_down(edge)), i - 1, "below edge {i}");
            assert_eq!(bins.index(next_up(edge)), i, "above edge {i}");
        }
    }

    #[test]
    fn a_single_float_is_widened_by_a_half() {
        let bins = FloatBins::new(0.1, 0.1).unwrap();
        assert_eq!((bins.edges[0], bins.edges[BINS]), (-0.4, 0.6));
        assert_eq!(bins.edges[1], -0.350_000_000_000_000_03);
        assert_eq!(bins.index(0.1), 10);
        let bins = FloatBins::new(-3.75, -3.75).unwrap();
        assert_eq!(bins.index(-3.75), 10);
    }

    #[test]
    fn no_float_bins_where_numpy_refuses_the_range() {
        // ± 0.5 is lost on 1e300; two neighbouring doubles; max − min overflows.
        assert_eq!(FloatBins::new(1e300, 1e300), None);
        assert_eq!(FloatBins::new(1.0, next_up(1.0)), None);
        assert_eq!(FloatBins::new(-f64::MAX, f64::MAX), None);
        assert!(FloatBins::new(0.0, 1e-300).is_some());
    }
}
