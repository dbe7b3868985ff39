//! What is known of a column over a file's (or a chunk's) rows, and the outcomes a comparison
//! may have over them.

use std::cmp::Ordering;

use chrono::NaiveDate;

use super::{Kind, Op, ValueType};
use catalog::files::{ColumnRange, PartitionType, PartitionValue, StatValue};

/// A value, for ordering.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Val {
    Bool(bool),
    Int(i64),
    Float(f64),
    Date(NaiveDate),
    Text(String),
}

impl Val {
    pub(super) fn compare(&self, other: &Self) -> Option<Ordering> {
        match (self, other) {
            (Self::Bool(a), Self::Bool(b)) => Some(a.cmp(b)),
            (Self::Int(a), Self::Int(b)) => Some(a.cmp(b)),
            (Self::Float(a), Self::Float(b)) => a.partial_cmp(b),
            (Self::Int(a), Self::Float(b)) => (*a as f64).partial_cmp(b),
            (Self::Float(a), Self::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Self::Date(a), Self::Date(b)) => Some(a.cmp(b)),
            (Self::Text(a), Self::Text(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// A literal's text as a value of `ty`; `None` when it does not parse.
    pub(super) fn parse(text: &str, ty: ValueType) -> Option<Self> {
        let text_trimmed = text.trim();
        match ty {
            ValueType::Bool => match text_trimmed.to_ascii_lowercase().as_str() {
                "true" => Some(Self::Bool(true)),
                "false" => Some(Self::Bool(false)),
                _ => None,
            },
            ValueType::Int => text_trimmed.parse().ok().map(Self::Int),
            ValueType::Float => text_trimmed
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Self::Float),
            ValueType::String => Some(Self::Text(text.to_owned())),
            ValueType::Date => PartitionValue::parse(Some(text_trimmed), PartitionType::Date)
                .and_then(|v| match v {
                    PartitionValue::Date(d) => Some(Self::Date(d)),
                    _ => None,
                }),
        }
    }

    pub(super) fn of_partition(value: &PartitionValue) -> Option<Self> {
        match value {
            PartitionValue::Null => None,
            PartitionValue::Int(i) => Some(Self::Int(*i)),
            PartitionValue::Date(d) => Some(Self::Date(*d)),
            PartitionValue::Text(t) => Some(Self::Text(t.clone())),
        }
    }

    /// A statistics bound of a column of `kind`; `None` (unknown) when it is not of that kind.
    fn of_stat(value: &StatValue, kind: Kind) -> Option<Self> {
        match (kind, value) {
            (Kind::Bool, StatValue::Bool(b)) => Some(Self::Bool(*b)),
            (Kind::Int | Kind::Float, StatValue::Int(i)) => Some(Self::Int(*i)),
            (Kind::Int | Kind::Float, StatValue::Float(f)) if f.is_finite() => {
                Some(Self::Float(*f))
            }
            (Kind::Date, StatValue::Text(t)) => Self::parse(t, ValueType::Date),
            (Kind::Text, StatValue::Text(t)) => Some(Self::Text(t.clone())),
            _ => None,
        }
    }
}

/// The outcomes a predicate may have over the rows of a file (or a chunk of files).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tri {
    pub can_true: bool,
    pub can_false: bool,
    pub can_null: bool,
}

impl Tri {
    /// Anything: what is not understood.
    pub const ANY: Self = Self {
        can_true: true,
        can_false: true,
        can_null: true,
    };

    pub(super) fn exactly(value: bool) -> Self {
        Self {
            can_true: value,
            can_false: !value,
            can_null: false,
        }
    }
}

/// What is known of one column over a file's (or chunk's) rows.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Domain {
    pub(super) may_null: bool,
    pub(super) may_value: bool,
    /// Bounds of the non-null values (`None`: unknown).
    pub(super) lo: Option<Val>,
    pub(super) hi: Option<Val>,
}

impl Domain {
    pub(super) const UNKNOWN: Self = Self {
        may_null: true,
        may_value: true,
        lo: None,
        hi: None,
    };

    pub(super) fn exact(value: Option<Val>) -> Self {
        Self {
            may_null: value.is_none(),
            may_value: value.is_some(),
            lo: value.clone(),
            hi: value,
        }
    }

    pub(super) fn of_stats(range: Option<&ColumnRange>, rows: u64, kind: Kind) -> Self {
        let Some(range) = range else {
            return Self::UNKNOWN;
        };
        Self {
            may_null: range.null_count.is_none_or(|n| n > 0),
            may_value: range.null_count.is_none_or(|n| n < rows),
            lo: range.min.as_ref().and_then(|v| Val::of_stat(v, kind)),
            hi: range.max.as_ref().and_then(|v| Val::of_stat(v, kind)),
        }
    }

    /// The outcomes of `column op literal` over these values.
    pub(super) fn compare(&self, op: Op, lit: &Val) -> Tri {
        if !self.may_value {
            return Tri {
                can_true: false,
                can_false: false,
                can_null: self.may_null,
            };
        }
        // Whether some value in the bounds may stand in `want` to the literal: unknown
        // bounds or orders may.
        let lo = |want: fn(Ordering) -> bool| {
            self.lo
                .as_ref()
                .and_then(|v| v.compare(lit))
                .is_none_or(want)
        };
        let hi = |want: fn(Ordering) -> bool| {
            self.hi
                .as_ref()
                .and_then(|v| v.compare(lit))
                .is_none_or(want)
        };
        let (can_true, can_false) = match op {
            Op::LessThan => (lo(Ordering::is_lt), hi(Ordering::is_ge)),
            Op::LessThanOrEqual => (lo(Ordering::is_le), hi(Ordering::is_gt)),
            Op::GreaterThan => (hi(Ordering::is_gt), lo(Ordering::is_le)),
            Op::GreaterThanOrEqual => (hi(Ordering::is_ge), lo(Ordering::is_lt)),
            Op::Equal => {
                let single = |b: &Option<Val>| {
                    b.as_ref()
                        .and_then(|v| v.compare(lit))
                        .is_some_and(Ordering::is_eq)
                };
                (
                    lo(Ordering::is_le) && hi(Ordering::is_ge),
                    !(single(&self.lo) && single(&self.hi)),
                )
            }
        };
        Tri {
            can_true,
            can_false,
            can_null: self.may_null,
        }
    }
}
