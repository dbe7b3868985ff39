//! How column values are keyed, typed and written as JSON.

use std::hash::Hash;

use arrow_schema::{DataType, TimeUnit};
use chrono::{DateTime, NaiveDate, TimeDelta};
use serde_json::{json, Value};

use super::*;

/// A value as counted: ordered within its column's kind.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) enum Key {
    Bool(bool),
    Int(i128),
    /// f64 bits mapped so that integer order is numeric order.
    Float(u64),
    Text(String),
}

pub(super) fn float_key(v: f64) -> Key {
    let v = if v == 0.0 { 0.0 } else { v }; // -0.0 and 0.0 are one value
    let bits = v.to_bits();
    Key::Float(if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    })
}

pub(super) fn float_of(key_bits: u64) -> f64 {
    f64::from_bits(if key_bits >> 63 == 1 {
        key_bits & !(1 << 63)
    } else {
        !key_bits
    })
}

/// How a column's values become JSON.
#[derive(Debug, Clone)]
pub(super) enum Kind {
    Int,
    Float,
    Decimal(i8),
    Bool,
    Text,
    Date32,
    Date64,
    Timestamp(TimeUnit, bool),
    Other,
}

impl Kind {
    pub(super) fn numeric(&self) -> bool {
        matches!(self, Self::Int | Self::Float | Self::Decimal(_))
    }

    pub(super) fn to_json(&self, key: &Key) -> Value {
        match (self, key) {
            (_, Key::Bool(b)) => json!(b),
            (Self::Int, Key::Int(i)) => int_json(*i),
            (Self::Decimal(scale), Key::Int(i)) => json!(decimal_f64(*i, *scale)),
            (Self::Date32 | Self::Date64, Key::Int(days)) => date_json(*days),
            (Self::Timestamp(unit, tz), Key::Int(t)) => timestamp_json(*t, unit, *tz),
            (_, Key::Int(i)) => int_json(*i),
            (_, Key::Float(bits)) => json!(float_of(*bits)),
            (_, Key::Text(s)) => json!(shown(s)),
        }
    }
}

/// Text cut to [`SHOWN_CHARS`] characters, ending in `…` when cut, so a schema stays small.
pub(super) fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(SHOWN_CHARS) {
        None => s.into(),
        Some((end, _)) => format!("{}…", &s[..end]).into(),
    }
}

pub(super) fn int_json(i: i128) -> Value {
    if let Ok(v) = i64::try_from(i) {
        json!(v)
    } else if let Ok(v) = u64::try_from(i) {
        json!(v)
    } else {
        json!(i as f64)
    }
}

pub(super) fn decimal_f64(unscaled: i128, scale: i8) -> f64 {
    unscaled as f64 / 10f64.powi(i32::from(scale))
}

pub(super) fn date_json(days: i128) -> Value {
    NaiveDate::from_ymd_opt(1970, 1, 1)
        .zip(i64::try_from(days).ok().and_then(TimeDelta::try_days))
        .and_then(|(epoch, days)| epoch.checked_add_signed(days))
        .map_or(Value::Null, |d| json!(d.to_string()))
}

/// A timestamp in `unit` (an i128: a histogram's last edge can pass i64).
pub(super) fn timestamp_json(t: i128, unit: &TimeUnit, tz: bool) -> Value {
    let nanos = match unit {
        TimeUnit::Second => t.saturating_mul(1_000_000_000),
        TimeUnit::Millisecond => t.saturating_mul(1_000_000),
        TimeUnit::Microsecond => t.saturating_mul(1_000),
        TimeUnit::Nanosecond => t,
    };
    let Ok(secs) = i64::try_from(nanos.div_euclid(1_000_000_000)) else {
        return Value::Null;
    };
    let sub = nanos.rem_euclid(1_000_000_000) as u32;
    match DateTime::from_timestamp(secs, sub) {
        Some(dt) if tz => json!(dt.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)),
        Some(dt) => json!(dt.naive_utc().format("%Y-%m-%dT%H:%M:%S%.f").to_string()),
        None => Value::Null,
    }
}

pub use catalog_preview::dtype::column_dtype;

pub(super) fn kind_of(t: &DataType) -> Kind {
    match t {
        DataType::Int8
        | DataType::Int16
        | DataType::Int32
        | DataType::Int64
        | DataType::UInt8
        | DataType::UInt16
        | DataType::UInt32
        | DataType::UInt64 => Kind::Int,
        DataType::Float16 | DataType::Float32 | DataType::Float64 => Kind::Float,
        DataType::Decimal128(_, s) => Kind::Decimal(*s),
        DataType::Boolean => Kind::Bool,
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => Kind::Text,
        DataType::Date32 => Kind::Date32,
        DataType::Date64 => Kind::Date64,
        DataType::Timestamp(unit, tz) => Kind::Timestamp(*unit, tz.is_some()),
        DataType::Dictionary(_, value) => kind_of(value),
        _ => Kind::Other,
    }
}

pub(super) fn kind_value_type(t: &DataType) -> DataType {
    match t {
        DataType::Dictionary(_, value) => value.as_ref().clone(),
        other => other.clone(),
    }
}
