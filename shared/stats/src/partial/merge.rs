//! Merging files' partial statistics, in the version's file order, into the [`FileStats`]
//! publish writes: exact where every file's partial is (see the module above), flagged
//! `approximate` where the merge is an estimate, with the estimate's bound ([`Estimate`]).

use rustc_hash::FxHashMap;
use serde::Serialize;
use serde_json::json;

use super::column::{kind_from, reduce};
use super::*;
use crate::histogram::Histogram;
use crate::sketch::{mixed_hash, weighted_median, HyperLogLog};
use crate::values::*;
use crate::{ColumnStats, DISTINCT_LIMIT, SAMPLES, TOP};

/// The merged statistics, and the bounds of the columns that are estimates.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Merged {
    #[serde(flatten)]
    pub stats: FileStats,
    pub estimates: Vec<Estimate>,
}

/// What an approximate column's estimates guarantee (see the module above).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Estimate {
    pub column: String,
    /// The unique count is HyperLogLog's (about 0.8 % standard error).
    pub unique_count_estimated: bool,
    /// Each top count is at most this far below the true count.
    pub top_count_error: u64,
    /// The median's rank is at most this far from the middle...
    pub median_rank_error: u64,
    /// ...unless a file's quantile points came from a sample.
    pub median_sampled: bool,
}

/// The statistics of the files whose partials these are, in this order (sample values come
/// from the first files). The partials must share one schema (the same columns and types, in
/// any order; the first's order is kept), and their histograms must have been counted into
/// bins fixed by these files' own minimum and maximum (`stats edges` over exactly these files).
pub fn merge(partials: &[FilePartial]) -> Result<Merged, PartialError> {
    let Some(first) = partials.first() else {
        return Err(StatsError::NoFiles.into());
    };
    for p in partials {
        if p.format != FORMAT {
            return Err(PartialError::Merge(format!(
                "{}: a partial of format {}, not {FORMAT}: compute it again with this version",
                p.file, p.format
            )));
        }
        if p.columns.len() != first.columns.len() {
            return Err(PartialError::Merge(format!(
                "{}: {} columns, where {} has {}: the files do not share one schema",
                p.file,
                p.columns.len(),
                first.file,
                first.columns.len()
            )));
        }
    }
    let mut columns = Vec::with_capacity(first.columns.len());
    let mut estimates = Vec::new();
    let row_count = partials.iter().map(|p| p.row_count).sum();
    for c0 in &first.columns {
        let cols = partials
            .iter()
            .map(|p| {
                let c = p.columns.iter().find(|c| c.name == c0.name);
                match c {
                    Some(c) if c.dtype == c0.dtype && c.kind == c0.kind => {
                        if c.nulls + c.count != p.row_count {
                            return Err(PartialError::Merge(format!(
                                "{}: column {:?} counts {} values and nulls in {} rows: a \
                                 damaged partial",
                                p.file,
                                c.name,
                                c.nulls + c.count,
                                p.row_count
                            )));
                        }
                        Ok(c)
                    }
                    Some(c) => Err(PartialError::Merge(format!(
                        "{}: column {:?} is {}, and {} in {}: the files do not share one schema",
                        p.file, c.name, c.dtype, c0.dtype, first.file
                    ))),
                    None => Err(PartialError::Merge(format!(
                        "{}: no column {:?}, which {} has: the files do not share one schema",
                        p.file, c0.name, first.file
                    ))),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        let files: Vec<&str> = partials.iter().map(|p| p.file.as_str()).collect();
        let (stats, estimate) = merge_column(&cols, &files, row_count)?;
        columns.push(stats);
        estimates.extend(estimate);
    }
    Ok(Merged {
        stats: FileStats {
            row_count,
            columns,
            passes: 1,
        },
        estimates,
    })
}

/// The HyperLogLog hash of a value, as the statistics of a whole version hash it.
fn key_hash(key: &Key) -> u64 {
    match key {
        Key::Int(i) => mixed_hash(i),
        Key::Float(bits) => mixed_hash(bits),
        Key::Text(t) => mixed_hash(t.as_str()),
        Key::Bool(b) => mixed_hash(b),
    }
}

fn number_of(kind: &Kind, key: &Key) -> Option<f64> {
    match (kind, key) {
        (Kind::Decimal(scale), Key::Int(u)) => Some(decimal_f64(*u, *scale)),
        (_, Key::Int(i)) => Some(*i as f64),
        (_, Key::Float(bits)) => Some(float_of(*bits)),
        _ => None,
    }
}

fn merge_column(
    cols: &[&ColumnPartial],
    files: &[&str],
    rows: u64,
) -> Result<(ColumnStats, Option<Estimate>), PartialError> {
    let c0 = cols[0];
    let kind = kind_from(&c0.kind)?;
    let damaged = |c: &ColumnPartial, what: &str| {
        PartialError::Merge(format!("column {:?}: {what} (a damaged partial)", c.name))
    };
    let (mut count, mut mean, mut m2, mut nulls) = (0u64, 0.0f64, 0.0f64, 0u64);
    let (mut min, mut max) = (f64::INFINITY, f64::NEG_INFINITY);
    let (mut min_int, mut max_int) = (i128::MAX, i128::MIN);
    let mut samples: Vec<&Key> = Vec::new();
    let mut counts: FxHashMap<Key, u64> = FxHashMap::default();
    let (mut all_listed, mut reduced, mut top_error) = (true, false, 0u64);
    for c in cols {
        nulls += c.nulls;
        // Chan, Golub and LeVeque's pairwise update.
        if c.count > 0 {
            if count == 0 {
                (mean, m2) = (c.mean, c.m2);
            } else {
                let (na, nb) = (count as f64, c.count as f64);
                let delta = c.mean - mean;
                mean += delta * nb / (na + nb);
                m2 += c.m2 + delta * delta * na * nb / (na + nb);
            }
            count += c.count;
        }
        // The earlier file's on a tie, as one pass over every file keeps the first of −0 and 0.
        if c.min < min {
            min = c.min;
        }
        if c.max > max {
            max = c.max;
        }
        min_int = min_int.min(c.min_int);
        max_int = max_int.max(c.max_int);
        samples.extend(c.samples.iter().take(SAMPLES - samples.len().min(SAMPLES)));
        let listed = match &c.values {
            Some(values) => values,
            None => {
                all_listed = false;
                top_error += c.top_error;
                &c.top
            }
        };
        for v in listed {
            *counts.entry(v.value.clone()).or_insert(0) += v.count;
        }
        if counts.len() > DISTINCT_LIMIT {
            top_error += reduce(&mut counts, |_| 0).0;
            reduced = true;
        }
    }
    let exact = all_listed && !reduced;
    let unique_count = if exact {
        counts.len() as u64
    } else {
        let mut sketch = HyperLogLog::new();
        for c in cols {
            match (&c.values, &c.hll) {
                (Some(values), _) => values.iter().for_each(|v| sketch.add(key_hash(&v.value))),
                (None, Some(hex)) => {
                    let other = hex::decode(hex)
                        .ok()
                        .and_then(HyperLogLog::from_registers)
                        .ok_or_else(|| damaged(c, "its sketch is not 2^14 registers in hex"))?;
                    sketch.merge(&other);
                }
                (None, None) => return Err(damaged(c, "neither values nor a sketch")),
            }
        }
        sketch.estimate()
    };
    let numeric = kind.numeric() && count > 0;
    let (mut rank_error, mut sampled) = (0u64, false);
    let median = match numeric {
        false => None,
        true if exact => weighted_median(
            counts
                .iter()
                .filter_map(|(k, n)| number_of(&kind, k).map(|x| (x, *n)))
                .collect(),
        ),
        true => {
            let mut points = Vec::new();
            for c in cols {
                match (&c.values, &c.quantiles) {
                    (Some(values), _) => points.extend(
                        values
                            .iter()
                            .filter_map(|v| number_of(&kind, &v.value).map(|x| (x, v.count))),
                    ),
                    (None, Some(q)) => {
                        rank_error += q.rank_error;
                        sampled |= q.sampled;
                        points.extend(q.points.iter().map(|p| (p.0, p.1)));
                    }
                    (None, None) if c.count == 0 => {}
                    (None, None) => return Err(damaged(c, "numbers without quantile points")),
                }
            }
            weighted_median(points)
        }
    };
    let mut top: Vec<(Key, u64)> = counts.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    top.truncate(TOP);
    let histogram = histogram(cols, files, &kind, count, (min, max), (min_int, max_int))?;
    let approximate = !exact || top_error > 0 || rank_error > 0 || sampled;
    let estimate = approximate.then(|| Estimate {
        column: c0.name.clone(),
        unique_count_estimated: !exact,
        top_count_error: top_error,
        median_rank_error: rank_error,
        median_sampled: sampled,
    });
    let std = (numeric && count > 1).then(|| (m2 / (count - 1) as f64).sqrt());
    let (min, max) = match kind {
        _ if !numeric => (None, None),
        Kind::Int => (Some(int_json(min_int)), Some(int_json(max_int))),
        _ => (Some(json!(min)), Some(json!(max))),
    };
    let stats = ColumnStats {
        name: c0.name.clone(),
        dtype: c0.dtype.clone(),
        null_count: nulls,
        null_percent: if rows == 0 {
            0.0
        } else {
            (100.0 * nulls as f64 / rows as f64 * 10_000.0).round() / 10_000.0
        },
        unique_count,
        mean: numeric.then_some(mean),
        std,
        min,
        max,
        median,
        top_values: top.iter().map(|(k, _)| kind.to_json(k)).collect(),
        top_counts: top.iter().map(|(_, n)| *n).collect(),
        sample_values: samples.iter().map(|k| kind.to_json(k)).collect(),
        approximate,
        histogram,
    };
    Ok((stats, estimate))
}

/// The files' histogram counts summed, in bins fixed by the files' own minimum and maximum:
/// an error if the partials were counted into other bins.
fn histogram(
    cols: &[&ColumnPartial],
    files: &[&str],
    kind: &Kind,
    count: u64,
    (min, max): (f64, f64),
    (min_int, max_int): (i128, i128),
) -> Result<Option<Histogram>, PartialError> {
    if count == 0 {
        return Ok(None);
    }
    let bounds = match kind {
        Kind::Int | Kind::Date32 | Kind::Date64 | Kind::Timestamp(..) => Bounds::Int {
            min: min_int,
            max: max_int,
        },
        Kind::Float | Kind::Decimal(_) => Bounds::Float { min, max },
        Kind::Bool | Kind::Text | Kind::Other => return Ok(None),
    };
    let name = &cols[0].name;
    let Some(binner) = bounds.binner(kind) else {
        return Ok(None);
    };
    let mut histogram = binner.finish();
    let mut summed = vec![0u64; histogram.counts.len()];
    for (c, file) in cols.iter().zip(files) {
        let fits = c
            .histogram
            .as_ref()
            .filter(|h| h.bounds == bounds && h.counts.len() == summed.len());
        let Some(h) = fits else {
            return Err(PartialError::Merge(format!(
                "{file}: column {name:?}'s histogram was not counted into the bins of these \
                 files' minimum and maximum ({bounds:?}): compute the edges over exactly these \
                 files (catalog-admin stats edges), then each file's partial with them"
            )));
        };
        for (s, n) in summed.iter_mut().zip(&h.counts) {
            *s += n;
        }
    }
    histogram.counts = summed;
    Ok(Some(histogram))
}
