//! A file's per-column statistics: minimum, maximum and null count, each optional (unknown).

use std::cmp::Ordering;
use std::fmt;

use serde::{Deserialize, Serialize};

/// Longest text bound kept, in bytes: a longer minimum is cut to a prefix (still a lower
/// bound), a longer maximum is cut and its last character raised by one (still an upper bound),
/// or dropped when no character can be raised. Delta Sharing's own writers cut at 32 characters.
pub const MAX_STAT_TEXT_BYTES: usize = 64;

/// A minimum or maximum, as Delta Sharing's `stats` write it in JSON: integers and floats as
/// numbers, booleans as booleans, everything else as text (dates `YYYY-MM-DD`, timestamps
/// RFC 3339 in UTC, decimals as their digits), which orders as the values do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StatValue {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl StatValue {
    /// The order of two values; `None` across kinds (integers and floats compare as numbers).
    pub fn compare(&self, other: &Self) -> Option<Ordering> {
        match (self, other) {
            (Self::Bool(a), Self::Bool(b)) => Some(a.cmp(b)),
            (Self::Int(a), Self::Int(b)) => Some(a.cmp(b)),
            (Self::Float(a), Self::Float(b)) => a.partial_cmp(b),
            (Self::Int(a), Self::Float(b)) => (*a as f64).partial_cmp(b),
            (Self::Float(a), Self::Int(b)) => a.partial_cmp(&(*b as f64)),
            (Self::Text(a), Self::Text(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// The value as JSON (Delta Sharing's `minValues`, `maxValues`).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// A lower bound of `text` within [`MAX_STAT_TEXT_BYTES`].
    pub fn text_min(text: &str) -> Self {
        Self::Text(cut(text).to_owned())
    }

    /// An upper bound of `text` within [`MAX_STAT_TEXT_BYTES`]; `None` when there is none that
    /// short (every character of the prefix is the largest there is).
    pub fn text_max(text: &str) -> Option<Self> {
        if text.len() <= MAX_STAT_TEXT_BYTES {
            return Some(Self::Text(text.to_owned()));
        }
        let mut chars: Vec<char> = cut(text).chars().collect();
        while let Some(last) = chars.pop() {
            let raised = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
            if let Some(next) = raised {
                chars.push(next);
                let bound: String = chars.into_iter().collect();
                // A raised character may take one more byte: cut again if so.
                return (bound.len() <= MAX_STAT_TEXT_BYTES).then_some(Self::Text(bound));
            }
        }
        None
    }

    /// Whether the value is one that JSON can carry (a float that is not NaN or infinite).
    pub fn is_finite(&self) -> bool {
        !matches!(self, Self::Float(f) if !f.is_finite())
    }
}

/// The longest prefix of `text` within [`MAX_STAT_TEXT_BYTES`], on a character boundary.
fn cut(text: &str) -> &str {
    if text.len() <= MAX_STAT_TEXT_BYTES {
        return text;
    }
    let mut end = MAX_STAT_TEXT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

impl fmt::Display for StatValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(i) => write!(f, "{i}"),
            Self::Float(x) => write!(f, "{x}"),
            Self::Text(t) => write!(f, "'{}'", crate::input::echo(t)),
        }
    }
}

/// One column of one file: its minimum, maximum and null count, each `None` when unknown.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ColumnRange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<StatValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<StatValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub null_count: Option<u64>,
}

impl ColumnRange {
    /// The range as kept: text bounds cut to [`MAX_STAT_TEXT_BYTES`], floats that JSON cannot
    /// carry dropped.
    pub fn normalized(self) -> Self {
        let min = self.min.filter(StatValue::is_finite).map(|v| match v {
            StatValue::Text(t) => StatValue::text_min(&t),
            other => other,
        });
        let max = self.max.filter(StatValue::is_finite).and_then(|v| match v {
            StatValue::Text(t) => StatValue::text_max(&t),
            other => Some(other),
        });
        Self {
            min,
            max,
            null_count: self.null_count,
        }
    }
}
