//! Numbers, dates and timestamps counted by listing them: one push per value while reading and
//! one sort at the end give the exact unique count, top values and median, with 8 bytes per
//! value (16 for unsigned 64-bit integers and decimals) and no hash table. Past
//! [`LIST_LIMIT`] values a column spills into counts ([`Counts`]), as text is counted.

use rustc_hash::FxHashMap;

use super::histogram::Binner;
use super::sketch::*;
use super::values::*;
use super::*;

/// Values listed per column before they spill into counts.
pub const LIST_LIMIT: usize = MEDIAN_LIMIT;

/// A column's values, as their ordered keys.
pub(super) enum Listed {
    Int(Vec<i64>),
    Wide(Vec<i128>),
    Float(Vec<u64>),
}

/// One value to list.
#[derive(Clone, Copy)]
pub(super) enum ListKey {
    Int(i64),
    Wide(i128),
    Float(u64),
}

/// What a sorted list says: its distinct count, top values and median.
pub(super) struct Summary {
    pub distinct: u64,
    pub top: Vec<(Key, u64)>,
    pub median: Option<f64>,
}

impl Listed {
    /// The list for a column counted in `counts`, if it is one of numbers, dates or timestamps.
    pub(super) fn for_counts(counts: &Counts) -> Option<Self> {
        match counts {
            Counts::Int(_) => Some(Self::Int(Vec::new())),
            Counts::Wide(_) => Some(Self::Wide(Vec::new())),
            Counts::Float(_) => Some(Self::Float(Vec::new())),
            Counts::Bool(_) | Counts::Text(_) => None,
        }
    }

    pub(super) fn len(&self) -> usize {
        match self {
            Self::Int(v) => v.len(),
            Self::Wide(v) => v.len(),
            Self::Float(v) => v.len(),
        }
    }

    fn capacity(&self) -> usize {
        match self {
            Self::Int(v) => v.capacity(),
            Self::Wide(v) => v.capacity(),
            Self::Float(v) => v.capacity(),
        }
    }

    /// The bytes of one listed value.
    pub(super) fn key_bytes(&self) -> usize {
        match self {
            Self::Wide(_) => 16,
            Self::Int(_) | Self::Float(_) => 8,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        self.capacity() * self.key_bytes()
    }

    /// The bytes the list takes when it grows by one value now (0 while it has room).
    pub(super) fn growth_bytes(&self) -> usize {
        if self.len() < self.capacity() {
            0
        } else {
            self.capacity().max(4) * self.key_bytes()
        }
    }

    pub(super) fn reserve_exact(&mut self, n: usize) {
        match self {
            Self::Int(v) => v.reserve_exact(n),
            Self::Wide(v) => v.reserve_exact(n),
            Self::Float(v) => v.reserve_exact(n),
        }
    }

    pub(super) fn push(&mut self, key: ListKey) {
        match (self, key) {
            (Self::Int(v), ListKey::Int(k)) => v.push(k),
            (Self::Wide(v), ListKey::Wide(k)) => v.push(k),
            (Self::Float(v), ListKey::Float(k)) => v.push(k),
            // A column's keys are all of one kind: not reached.
            _ => {}
        }
    }

    /// Counts every listed value into `binner`'s bins.
    pub(super) fn bin(&self, kind: &Kind, binner: &mut Binner) -> Result<(), StatsError> {
        match (self, kind) {
            (Self::Int(v), _) => v.iter().try_for_each(|k| binner.add_int(i128::from(*k))),
            (Self::Wide(v), Kind::Decimal(s)) => v
                .iter()
                .try_for_each(|k| binner.add_float(decimal_f64(*k, *s))),
            (Self::Wide(v), _) => v.iter().try_for_each(|k| binner.add_int(*k)),
            (Self::Float(v), _) => v.iter().try_for_each(|k| binner.add_float(float_of(*k))),
        }
    }

    /// Sorts the list and reads its distinct count, its [`TOP`] most frequent values (ties by
    /// value) and, for a numeric kind, its median.
    pub(super) fn summarize(self, kind: &Kind) -> Summary {
        let numeric = kind.numeric();
        match self {
            Self::Int(v) => summary(v, numeric, |k| Key::Int(i128::from(k)), |k| k as f64),
            Self::Wide(v) => {
                let scale = match kind {
                    Kind::Decimal(scale) => Some(*scale),
                    _ => None,
                };
                summary(v, numeric, Key::Int, move |k| match scale {
                    Some(s) => decimal_f64(k, s),
                    None => k as f64,
                })
            }
            Self::Float(v) => summary(v, numeric, Key::Float, float_of),
        }
    }

    /// Moves the listed values into counts: exact when they hold at most [`DISTINCT_LIMIT`]
    /// distinct values; otherwise the most frequent of them (ties by value), a sketch of every
    /// one, and, for a numeric kind, the values themselves kept for the median. Returns
    /// (counts, sketch, kept values).
    pub(super) fn spill(
        self,
        numeric_as: Option<&Kind>,
    ) -> (Counts, Option<HyperLogLog>, Option<Vec<f64>>) {
        match self {
            Self::Int(v) => {
                let (map, hll, v) = spill_sorted(v, int_hash);
                let kept = hll
                    .is_some()
                    .then(|| numeric_as.map(|_| v.into_iter().map(|k| k as f64).collect()))
                    .flatten();
                (Counts::Int(map), hll, kept)
            }
            Self::Wide(v) => {
                let (map, hll, v) = spill_sorted(v, |k| mixed_hash(&k));
                let kept = hll
                    .is_some()
                    .then(|| {
                        numeric_as.map(|kind| {
                            v.into_iter()
                                .map(|k| match kind {
                                    Kind::Decimal(s) => decimal_f64(k, *s),
                                    _ => k as f64,
                                })
                                .collect()
                        })
                    })
                    .flatten();
                (Counts::Wide(map), hll, kept)
            }
            Self::Float(v) => {
                let (map, hll, v) = spill_sorted(v, |k| mixed_hash(&k));
                let kept = hll
                    .is_some()
                    .then(|| numeric_as.map(|_| v.into_iter().map(float_of).collect()))
                    .flatten();
                (Counts::Float(map), hll, kept)
            }
        }
    }
}

/// Runs of equal keys in a sorted slice: (key, how many).
fn runs<K: Copy + PartialEq>(sorted: &[K]) -> impl Iterator<Item = (K, u64)> + '_ {
    sorted
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len() as u64))
}

fn summary<K: Ord + Copy>(
    mut keys: Vec<K>,
    numeric: bool,
    key: impl Fn(K) -> Key,
    number: impl Fn(K) -> f64,
) -> Summary {
    keys.sort_unstable();
    let n = keys.len();
    let median = (numeric && n > 0).then(|| {
        let upper = number(keys[n / 2]);
        if n % 2 == 1 {
            upper
        } else {
            (number(keys[n / 2 - 1]) + upper) / 2.0
        }
    });
    let mut distinct = 0;
    // The most frequent runs, most frequent first; runs come in ascending order, so a later
    // run with an equal count ranks after those already kept.
    let mut top: Vec<(K, u64)> = Vec::with_capacity(TOP + 1);
    for (k, count) in runs(&keys) {
        distinct += 1;
        if top.len() < TOP || count > top[top.len() - 1].1 {
            let at = top.partition_point(|(_, c)| *c >= count);
            top.insert(at, (k, count));
            top.truncate(TOP);
        }
    }
    Summary {
        distinct,
        top: top.into_iter().map(|(k, c)| (key(k), c)).collect(),
        median,
    }
}

/// Sorts `keys` and counts them into a map: every distinct key when there are at most
/// [`DISTINCT_LIMIT`]; otherwise the [`DISTINCT_LIMIT`] most frequent (ties by key) and a
/// sketch of all of them. Returns the sorted keys too.
fn spill_sorted<K: Ord + Copy + std::hash::Hash>(
    mut keys: Vec<K>,
    hash: impl Fn(K) -> u64,
) -> (FxHashMap<K, u64>, Option<HyperLogLog>, Vec<K>) {
    keys.sort_unstable();
    let distinct = runs(&keys).count();
    let mut map = FxHashMap::default();
    if distinct <= DISTINCT_LIMIT {
        map.reserve(distinct);
        map.extend(runs(&keys));
        return (map, None, keys);
    }
    // The smallest count that the DISTINCT_LIMIT most frequent runs reach: runs above it all
    // go in, then runs at it, in key order, until the map is full. Found from how many runs
    // have each length (few lengths, whatever the number of runs).
    let mut lengths: FxHashMap<u64, usize> = FxHashMap::default();
    for (_, c) in runs(&keys) {
        *lengths.entry(c).or_default() += 1;
    }
    let mut lengths: Vec<(u64, usize)> = lengths.into_iter().collect();
    lengths.sort_unstable_by_key(|l| std::cmp::Reverse(l.0));
    let mut above = 0;
    let mut threshold = 1;
    for (length, runs) in lengths {
        threshold = length;
        if above + runs >= DISTINCT_LIMIT {
            break;
        }
        above += runs;
    }
    map.reserve(DISTINCT_LIMIT);
    let mut hll = HyperLogLog::new();
    for (k, c) in runs(&keys) {
        hll.add(hash(k));
        if c > threshold {
            map.insert(k, c);
        }
    }
    for (k, c) in runs(&keys) {
        if map.len() >= DISTINCT_LIMIT {
            break;
        }
        if c == threshold {
            map.insert(k, c);
        }
    }
    (map, Some(hll), keys)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sorted_list_gives_distinct_count_top_values_and_median() {
        let list = Listed::Int(vec![5, 3, 5, 9, 3, 5, -2, 7]);
        let s = list.summarize(&Kind::Int);
        assert_eq!(s.distinct, 5);
        // 5 three times, 3 twice, then the ones by value.
        assert_eq!(
            s.top,
            [
                (Key::Int(5), 3),
                (Key::Int(3), 2),
                (Key::Int(-2), 1),
                (Key::Int(7), 1),
                (Key::Int(9), 1)
            ]
        );
        assert_eq!(s.median, Some(5.0));
        let odd = Listed::Float(vec![float_bits(2.5), float_bits(-1.0), float_bits(9.0)]);
        assert_eq!(odd.summarize(&Kind::Float).median, Some(2.5));
        let dates = Listed::Int(vec![3, 1]).summarize(&Kind::Date32);
        assert_eq!(dates.median, None, "dates have no median");
    }

    fn float_bits(v: f64) -> u64 {
        match float_key(v) {
            Key::Float(b) => b,
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_spill_keeps_every_distinct_value_when_they_fit() {
        let (counts, hll, kept) = Listed::Int(vec![1, 1, 2, 3, 3, 3]).spill(Some(&Kind::Int));
        assert!(hll.is_none() && kept.is_none());
        let mut keys = counts.into_keys();
        keys.sort();
        assert_eq!(keys, [(Key::Int(1), 2), (Key::Int(2), 1), (Key::Int(3), 3)]);
    }
}
