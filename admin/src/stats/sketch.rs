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
    Int(FxHashMap<i128, u64>),
    Float(FxHashMap<u64, u64>),
    Bool([u64; 2]),
    Text(FxHashMap<String, u64>),
}

impl Counts {
    pub(super) fn len(&self) -> usize {
        match self {
            Self::Int(m) => m.len(),
            Self::Float(m) => m.len(),
            Self::Bool(c) => c.iter().filter(|n| **n > 0).count(),
            Self::Text(m) => m.len(),
        }
    }

    pub(super) fn into_keys(self) -> Vec<(Key, u64)> {
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
pub(super) fn mixed_hash<T: Hash + ?Sized>(value: &T) -> u64 {
    let mut hasher = FxHasher::default();
    value.hash(&mut hasher);
    // splitmix64's finalizer: FxHash's high bits alone are too regular for HyperLogLog.
    let mut z = hasher.finish().wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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
