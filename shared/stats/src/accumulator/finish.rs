//! A column's statistics once every value has been seen: the histogram's bins, and the
//! summary (counts, moments, median, top values, samples).

use serde_json::json;

use crate::histogram::Binner;
use crate::listed::*;
use crate::sketch::*;
use crate::values::*;
use crate::*;

use super::Accumulator;

impl Accumulator {
    /// The bins of this column's histogram, once every value has been seen: none for a column
    /// of another type or without values.
    pub(crate) fn binner(&self) -> Option<Binner> {
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

    /// Whether its histogram comes from its listed values when it finishes (it has at most
    /// [`LIST_LIMIT`] values, all listed), with no pass of its own.
    pub(crate) fn histogram_from_list(&self) -> bool {
        self.listed.is_some() && usize::try_from(self.count).is_ok_and(|n| n <= LIST_LIMIT)
    }

    /// Its statistics; the histogram too when its values are listed, otherwise (`None`) it is
    /// counted in a later pass.
    pub(crate) fn finish(mut self, rows: u64) -> Result<ColumnStats, StatsError> {
        let histogram = match (&self.listed, self.binner()) {
            (Some(list), Some(mut binner)) => {
                list.bin(&self.kind, &mut binner)?;
                Some(binner.finish())
            }
            _ => None,
        };
        let approximate = self.hll.is_some() || self.values_seen as usize > MEDIAN_LIMIT;
        let kind = self.kind.clone();
        let numeric = kind.numeric() && self.count > 0;
        let (unique_count, top, median) = match self.listed.take() {
            Some(list) => {
                let summary = list.summarize(&kind);
                (summary.distinct, summary.top, summary.median)
            }
            None => {
                let unique_count = match &self.hll {
                    Some(sketch) => sketch.estimate(),
                    None => self.counts.len() as u64,
                };
                let median = match numeric {
                    false => None,
                    true if self.keeping => {
                        (!self.values.is_empty()).then(|| median(&mut self.values))
                    }
                    true => weighted_median(self.counts.numbers(&kind)),
                };
                let top = self.counts.top(TOP);
                (unique_count, top, median)
            }
        };
        let std = (numeric && self.count > 1).then(|| (self.m2 / (self.count - 1) as f64).sqrt());
        let (min, max) = match kind {
            _ if !numeric => (None, None),
            Kind::Int => (Some(int_json(self.min_int)), Some(int_json(self.max_int))),
            _ => (Some(json!(self.min)), Some(json!(self.max))),
        };
        Ok(ColumnStats {
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
        })
    }
}
