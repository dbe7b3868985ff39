//! Bounded-memory counting: exact counts up to a limit, then a HyperLogLog sketch; the median.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};

use super::values::*;

/// HyperLogLog with 2^14 registers (standard error about 0.8 %).
pub(super) struct HyperLogLog {
    registers: Vec<u8>,
}

impl HyperLogLog {
    const P: u32 = 14;

    pub(super) fn new() -> Self {
        Self {
            registers: vec![0; 1 << Self::P],
        }
    }

    pub(super) fn add(&mut self, hash: u64) {
        let index = (hash >> (64 - Self::P)) as usize;
        let rest = (hash << Self::P) | (1 << (Self::P - 1));
        let rank = rest.leading_zeros() as u8 + 1;
        if rank > self.registers[index] {
            self.registers[index] = rank;
        }
    }

    /// The registers, to write a sketch down ([`partial`](super::partial) keeps them in a
    /// file's partial statistics).
    pub(super) fn registers(&self) -> &[u8] {
        &self.registers
    }

    /// A sketch from registers written down: `None` unless there are 2^14 of them.
    pub(super) fn from_registers(registers: Vec<u8>) -> Option<Self> {
        (registers.len() == 1 << Self::P).then_some(Self { registers })
    }

    /// The sketch of the union: the register-wise maximum.
    pub(super) fn merge(&mut self, other: &Self) {
        for (mine, theirs) in self.registers.iter_mut().zip(&other.registers) {
            *mine = (*mine).max(*theirs);
        }
    }

    pub(super) fn estimate(&self) -> u64 {
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
pub(super) enum Counts {
    /// Integers, dates and timestamps (every one fits an i64).
    Int(FxHashMap<i64, u64>),
    /// Unsigned 64-bit integers and unscaled decimals.
    Wide(FxHashMap<i128, u64>),
    Float(FxHashMap<u64, u64>),
    Bool([u64; 2]),
    Text(FxHashMap<String, u64>),
}

impl Counts {
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Int(m) => m.len(),
            Self::Wide(m) => m.len(),
            Self::Float(m) => m.len(),
            Self::Bool(c) => c.iter().filter(|n| **n > 0).count(),
            Self::Text(m) => m.len(),
        }
    }

    /// An empty map of the same kind.
    pub(super) fn emptied(&self) -> Self {
        match self {
            Self::Int(_) => Self::Int(FxHashMap::default()),
            Self::Wide(_) => Self::Wide(FxHashMap::default()),
            Self::Float(_) => Self::Float(FxHashMap::default()),
            Self::Bool(_) => Self::Bool([0, 0]),
            Self::Text(_) => Self::Text(FxHashMap::default()),
        }
    }

    /// The bytes of the map's table (its text aside), as the allocator holds them.
    pub(super) fn table_bytes(&self) -> usize {
        match self {
            Self::Int(m) => table_bytes::<i64>(m.capacity()),
            Self::Wide(m) => table_bytes::<i128>(m.capacity()),
            Self::Float(m) => table_bytes::<u64>(m.capacity()),
            Self::Bool(_) => 0,
            Self::Text(m) => table_bytes::<String>(m.capacity()),
        }
    }

    /// The bytes of a table reserved for `n` distinct values.
    pub(super) fn table_bytes_for(&self, n: usize) -> usize {
        match self {
            Self::Int(_) => table_bytes::<i64>(n),
            Self::Wide(_) => table_bytes::<i128>(n),
            Self::Float(_) => table_bytes::<u64>(n),
            Self::Bool(_) => 0,
            Self::Text(_) => table_bytes::<String>(n),
        }
    }

    /// Each distinct number counted, as the median sees it, and how many times.
    pub(super) fn numbers(&self, kind: &Kind) -> Vec<(f64, u64)> {
        match (self, kind) {
            (Self::Int(m), _) => m.iter().map(|(k, n)| (*k as f64, *n)).collect(),
            (Self::Wide(m), Kind::Decimal(scale)) => m
                .iter()
                .map(|(k, n)| (decimal_f64(*k, *scale), *n))
                .collect(),
            (Self::Wide(m), _) => m.iter().map(|(k, n)| (*k as f64, *n)).collect(),
            (Self::Float(m), _) => m.iter().map(|(k, n)| (float_of(*k), *n)).collect(),
            _ => Vec::new(),
        }
    }

    /// The `n` most frequent values, most frequent first, ties by value: one walk over the
    /// counts, never a sort of all of them.
    pub(super) fn top(&self, n: usize) -> Vec<(Key, u64)> {
        match self {
            Self::Int(m) => top_of(m, n, |k| Key::Int(i128::from(*k))),
            Self::Wide(m) => top_of(m, n, |k| Key::Int(*k)),
            Self::Float(m) => top_of(m, n, |k| Key::Float(*k)),
            Self::Text(m) => top_of(m, n, |k| Key::Text(k.clone())),
            Self::Bool(_) => {
                let mut all = self.clone_bool_keys();
                all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
                all.truncate(n);
                all
            }
        }
    }

    fn clone_bool_keys(&self) -> Vec<(Key, u64)> {
        match self {
            Self::Bool(c) => [(false, c[0]), (true, c[1])]
                .into_iter()
                .filter(|(_, n)| *n > 0)
                .map(|(b, n)| (Key::Bool(b), n))
                .collect(),
            _ => Vec::new(),
        }
    }

    #[cfg(test)]
    pub(super) fn into_keys(self) -> Vec<(Key, u64)> {
        match self {
            Self::Int(m) => m
                .into_iter()
                .map(|(k, n)| (Key::Int(i128::from(k)), n))
                .collect(),
            Self::Wide(m) => m.into_iter().map(|(k, n)| (Key::Int(k), n)).collect(),
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

/// The `n` entries of `map` with the highest counts, ties by key ascending, best first.
fn top_of<K: Ord>(map: &FxHashMap<K, u64>, n: usize, key: impl Fn(&K) -> Key) -> Vec<(Key, u64)> {
    let mut top: Vec<(&K, u64)> = Vec::with_capacity(n + 1);
    let ranks_before = |a: (&K, u64), b: (&K, u64)| a.1 > b.1 || (a.1 == b.1 && a.0 < b.0);
    for (k, c) in map {
        let entry = (k, *c);
        if top.len() < n || top.last().is_some_and(|last| ranks_before(entry, *last)) {
            let at = top.partition_point(|t| ranks_before(*t, entry));
            top.insert(at, entry);
            top.truncate(n);
        }
    }
    top.into_iter().map(|(k, c)| (key(k), c)).collect()
}

/// The bytes of a hash table (hashbrown, as `std` and `FxHashMap` use) of `(K, u64)` entries
/// with room for `capacity` of them: its buckets, a power of two at most 7/8 full, each with the
/// entry and one control byte.
pub(super) fn table_bytes<K>(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    let buckets = if capacity < 8 {
        if capacity < 4 {
            4
        } else {
            8
        }
    } else {
        (capacity * 8 / 7).next_power_of_two()
    };
    buckets * (std::mem::size_of::<(K, u64)>() + 1)
}

/// What the allocator holds for a string of `len` bytes: its rounded size and a header.
pub(super) fn heap_bytes(len: usize) -> usize {
    len.next_multiple_of(16) + 16
}

/// A well-mixed 64-bit hash for the HyperLogLog sketch.
pub(super) fn mixed_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    // splitmix64's finalizer: FxHash's high bits alone are too regular for HyperLogLog.
    let mut z = hasher.finish().wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The median of numbers counted with their multiplicities, as [`median`] computes it over
/// every copy: `None` when there are none.
pub(super) fn weighted_median(mut counted: Vec<(f64, u64)>) -> Option<f64> {
    counted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: u64 = counted.iter().map(|(_, n)| n).sum();
    if total == 0 {
        return None;
    }
    // The value at 0-based position `i` of the sorted copies.
    let at = |i: u64| {
        let mut seen = 0;
        counted
            .iter()
            .find(|(_, n)| {
                seen += n;
                seen > i
            })
            .map(|(v, _)| *v)
    };
    let upper = at(total / 2)?;
    if total % 2 == 1 {
        return Some(upper);
    }
    Some((at(total / 2 - 1)? + upper) / 2.0)
}

/// The median of the values (mean of the two middle ones for an even count).
pub(super) fn median(values: &mut [f64]) -> f64 {
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

/// [`mixed_hash`] of an integer as the wide counts hash it, so an estimate does not depend on
/// which map counted the column.
pub(super) fn int_hash(v: i64) -> u64 {
    mixed_hash(&i128::from(v))
}
