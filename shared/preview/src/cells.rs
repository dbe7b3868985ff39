//! Arrow values as a person reads them in JSON ([docs/api.md, Rows](../../../docs/api.md)):
//!
//! - numbers as numbers, booleans as booleans, nulls as `null`; a float that JSON cannot hold
//!   as the string `"NaN"`, `"Infinity"` or `"-Infinity"`;
//! - timestamps in ISO 8601: with their column's zone when it has one (`Z` for UTC, the offset
//!   of a named zone at that instant), without a zone when the column has none; dates
//!   `2026-01-31`, times `13:45:00.250`, durations `PT90S`;
//! - decimals exact, as strings (`"1234.50"`);
//! - binary as base64 of its first [`Limits::binary_bytes`] bytes;
//! - lists as arrays, structs as objects, maps as objects when their keys are strings (else
//!   arrays of `{"key", "value"}`), dictionaries as their values;
//! - strings cut at [`Limits::text_chars`] characters, lists at [`Limits::list_items`] items,
//!   and a cell whose JSON is still over [`Limits::cell_bytes`] replaced by the start of its
//!   JSON text: each such cell is flagged, as Hugging Face's viewer flags `truncated_cells`.

use arrow_array::cast::AsArray;
use arrow_array::temporal_conversions::{as_date, as_datetime, as_datetime_with_timezone, as_time};
use arrow_array::timezone::Tz;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, IntervalUnit, TimeUnit};
use base64::Engine;
use chrono::SecondsFormat;
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::Number;

/// A JSON value whose objects keep their keys in order (a struct's fields, a map's entries):
/// `serde_json::Value` sorts them.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Vec<(String, Value)>),
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => serializer.serialize_unit(),
            Self::Bool(b) => serializer.serialize_bool(*b),
            Self::Number(n) => n.serialize(serializer),
            Self::String(s) => serializer.serialize_str(s),
            Self::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Self::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

impl<T: Into<Number>> From<T> for Value {
    fn from(n: T) -> Self {
        Self::Number(n.into())
    }
}

impl Value {
    /// The value's JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|_| "null".to_owned())
    }

    /// The value as raw JSON, as an answer carries it.
    pub fn to_raw(&self) -> Box<RawValue> {
        RawValue::from_string(self.to_json()).unwrap_or_else(|_| RawValue::NULL.to_owned())
    }
}

/// How much of a value an answer shows.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub text_chars: usize,
    pub binary_bytes: usize,
    pub list_items: usize,
    pub cell_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            text_chars: 1_000,
            binary_bytes: 64,
            list_items: 100,
            cell_bytes: 16 * 1024,
        }
    }
}

/// Row `i` of `array` as JSON, and whether anything in it was cut.
pub fn cell(array: &dyn Array, i: usize, limits: &Limits) -> (Value, bool) {
    let mut cut = false;
    let value = value(array, i, limits, &mut cut);
    // A nested value can still be large (wide structs, lists of lists): past the cell's
    // budget it becomes the start of its own JSON text.
    let text_len = match &value {
        Value::Array(_) | Value::Object(_) => serde_json::to_string(&value).map_or(0, |t| t.len()),
        _ => 0,
    };
    if text_len > limits.cell_bytes {
        let text = serde_json::to_string(&value).unwrap_or_default();
        return (
            Value::String(prefix(&text, limits.text_chars).to_owned()),
            true,
        );
    }
    (value, cut)
}

/// The first `chars` characters of `text`.
fn prefix(text: &str, chars: usize) -> &str {
    match text.char_indices().nth(chars) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

fn text(s: &str, limits: &Limits, cut: &mut bool) -> Value {
    let shown = prefix(s, limits.text_chars);
    if shown.len() < s.len() {
        *cut = true;
    }
    Value::String(shown.to_owned())
}

fn binary(b: &[u8], limits: &Limits, cut: &mut bool) -> Value {
    let shown = &b[..b.len().min(limits.binary_bytes)];
    if shown.len() < b.len() {
        *cut = true;
    }
    Value::String(base64::engine::general_purpose::STANDARD.encode(shown))
}

fn float(f: f64) -> Value {
    match Number::from_f64(f) {
        Some(n) => Value::Number(n),
        None if f.is_nan() => Value::String("NaN".into()),
        None if f > 0.0 => Value::String("Infinity".into()),
        None => Value::String("-Infinity".into()),
    }
}

/// A timestamp of `unit` since the epoch, in ISO 8601, in `tz` when the column has one.
fn timestamp(v: i64, unit: TimeUnit, tz: Option<&str>) -> Value {
    let shown = match tz {
        Some(tz) => {
            let Ok(tz) = tz.parse::<Tz>() else {
                return Value::Null;
            };
            let at = match unit {
                TimeUnit::Second => as_datetime_with_timezone::<TimestampSecondType>(v, tz),
                TimeUnit::Millisecond => {
                    as_datetime_with_timezone::<TimestampMillisecondType>(v, tz)
                }
                TimeUnit::Microsecond => {
                    as_datetime_with_timezone::<TimestampMicrosecondType>(v, tz)
                }
                TimeUnit::Nanosecond => as_datetime_with_timezone::<TimestampNanosecondType>(v, tz),
            };
            at.map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
        }
        None => {
            let at = match unit {
                TimeUnit::Second => as_datetime::<TimestampSecondType>(v),
                TimeUnit::Millisecond => as_datetime::<TimestampMillisecondType>(v),
                TimeUnit::Microsecond => as_datetime::<TimestampMicrosecondType>(v),
                TimeUnit::Nanosecond => as_datetime::<TimestampNanosecondType>(v),
            };
            at.map(|t| t.format("%Y-%m-%dT%H:%M:%S%.f").to_string())
        }
    };
    shown.map_or(Value::Null, Value::String)
}

/// A duration of `v` `unit`s in ISO 8601 (`PT90S`, `PT0.25S`, `-PT3S`).
fn duration(v: i64, unit: TimeUnit) -> Value {
    let per_second: i128 = match unit {
        TimeUnit::Second => 1,
        TimeUnit::Millisecond => 1_000,
        TimeUnit::Microsecond => 1_000_000,
        TimeUnit::Nanosecond => 1_000_000_000,
    };
    let v = i128::from(v);
    let sign = if v < 0 { "-" } else { "" };
    let (secs, frac) = (v.abs() / per_second, v.abs() % per_second);
    let digits = per_second.ilog10() as usize;
    let shown = if frac == 0 {
        format!("{sign}PT{secs}S")
    } else {
        let frac = format!("{frac:0digits$}");
        format!("{sign}PT{secs}.{}S", frac.trim_end_matches('0'))
    };
    Value::String(shown)
}

fn value(array: &dyn Array, i: usize, limits: &Limits, cut: &mut bool) -> Value {
    if array.is_null(i) {
        return Value::Null;
    }
    match array.data_type() {
        DataType::Null => Value::Null,
        DataType::Boolean => Value::Bool(array.as_boolean().value(i)),
        DataType::Int8 => Value::from(array.as_primitive::<Int8Type>().value(i)),
        DataType::Int16 => Value::from(array.as_primitive::<Int16Type>().value(i)),
        DataType::Int32 => Value::from(array.as_primitive::<Int32Type>().value(i)),
        DataType::Int64 => Value::from(array.as_primitive::<Int64Type>().value(i)),
        DataType::UInt8 => Value::from(array.as_primitive::<UInt8Type>().value(i)),
        DataType::UInt16 => Value::from(array.as_primitive::<UInt16Type>().value(i)),
        DataType::UInt32 => Value::from(array.as_primitive::<UInt32Type>().value(i)),
        DataType::UInt64 => Value::from(array.as_primitive::<UInt64Type>().value(i)),
        DataType::Float16 => float(array.as_primitive::<Float16Type>().value(i).to_f64()),
        DataType::Float32 => float(f64::from(array.as_primitive::<Float32Type>().value(i))),
        DataType::Float64 => float(array.as_primitive::<Float64Type>().value(i)),
        DataType::Utf8 => text(array.as_string::<i32>().value(i), limits, cut),
        DataType::LargeUtf8 => text(array.as_string::<i64>().value(i), limits, cut),
        DataType::Utf8View => text(array.as_string_view().value(i), limits, cut),
        DataType::Binary => binary(array.as_binary::<i32>().value(i), limits, cut),
        DataType::LargeBinary => binary(array.as_binary::<i64>().value(i), limits, cut),
        DataType::BinaryView => binary(array.as_binary_view().value(i), limits, cut),
        DataType::FixedSizeBinary(_) => binary(array.as_fixed_size_binary().value(i), limits, cut),
        DataType::Decimal32(_, _) => {
            Value::String(array.as_primitive::<Decimal32Type>().value_as_string(i))
        }
        DataType::Decimal64(_, _) => {
            Value::String(array.as_primitive::<Decimal64Type>().value_as_string(i))
        }
        DataType::Decimal128(_, _) => {
            Value::String(array.as_primitive::<Decimal128Type>().value_as_string(i))
        }
        DataType::Decimal256(_, _) => {
            Value::String(array.as_primitive::<Decimal256Type>().value_as_string(i))
        }
        DataType::Date32 => {
            as_date::<Date32Type>(array.as_primitive::<Date32Type>().value(i).into())
                .map_or(Value::Null, |d| {
                    Value::String(d.format("%Y-%m-%d").to_string())
                })
        }
        DataType::Date64 => as_date::<Date64Type>(array.as_primitive::<Date64Type>().value(i))
            .map_or(Value::Null, |d| {
                Value::String(d.format("%Y-%m-%d").to_string())
            }),
        DataType::Time32(TimeUnit::Second) => {
            time::<Time32SecondType>(array.as_primitive::<Time32SecondType>().value(i).into())
        }
        DataType::Time32(_) => time::<Time32MillisecondType>(
            array
                .as_primitive::<Time32MillisecondType>()
                .value(i)
                .into(),
        ),
        DataType::Time64(TimeUnit::Microsecond) => {
            time::<Time64MicrosecondType>(array.as_primitive::<Time64MicrosecondType>().value(i))
        }
        DataType::Time64(_) => {
            time::<Time64NanosecondType>(array.as_primitive::<Time64NanosecondType>().value(i))
        }
        DataType::Timestamp(unit, tz) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<TimestampSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<TimestampMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<TimestampMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<TimestampNanosecondType>().value(i),
            };
            timestamp(v, *unit, tz.as_deref())
        }
        DataType::Duration(unit) => {
            let v = match unit {
                TimeUnit::Second => array.as_primitive::<DurationSecondType>().value(i),
                TimeUnit::Millisecond => array.as_primitive::<DurationMillisecondType>().value(i),
                TimeUnit::Microsecond => array.as_primitive::<DurationMicrosecondType>().value(i),
                TimeUnit::Nanosecond => array.as_primitive::<DurationNanosecondType>().value(i),
            };
            duration(v, *unit)
        }
        DataType::Interval(IntervalUnit::YearMonth | IntervalUnit::DayTime)
        | DataType::Interval(IntervalUnit::MonthDayNano) => displayed(array, i),
        DataType::List(_) => items(array.as_list::<i32>().value(i).as_ref(), limits, cut),
        DataType::LargeList(_) => items(array.as_list::<i64>().value(i).as_ref(), limits, cut),
        DataType::FixedSizeList(_, _) => {
            items(array.as_fixed_size_list().value(i).as_ref(), limits, cut)
        }
        DataType::ListView(_) => items(array.as_list_view::<i32>().value(i).as_ref(), limits, cut),
        DataType::LargeListView(_) => {
            items(array.as_list_view::<i64>().value(i).as_ref(), limits, cut)
        }
        DataType::Struct(fields) => {
            let s = array.as_struct();
            Value::Object(
                fields
                    .iter()
                    .zip(s.columns())
                    .map(|(field, column)| {
                        (field.name().clone(), value(column.as_ref(), i, limits, cut))
                    })
                    .collect(),
            )
        }
        DataType::Map(_, _) => map(array, i, limits, cut),
        DataType::Dictionary(_, _) => {
            let dictionary = array.as_any_dictionary();
            let key = dictionary.normalized_keys()[i];
            value(dictionary.values().as_ref(), key, limits, cut)
        }
        DataType::RunEndEncoded(_, _) => displayed(array, i),
        _ => displayed(array, i),
    }
}

fn time<T: arrow_array::ArrowPrimitiveType>(v: i64) -> Value {
    as_time::<T>(v).map_or(Value::Null, |t| {
        Value::String(t.format("%H:%M:%S%.f").to_string())
    })
}

/// Anything without a rule of its own: as Arrow displays it.
fn displayed(array: &dyn Array, i: usize) -> Value {
    let options = arrow_cast::display::FormatOptions::default();
    match arrow_cast::display::ArrayFormatter::try_new(array, &options) {
        Ok(formatter) => Value::String(formatter.value(i).to_string()),
        Err(_) => Value::Null,
    }
}

fn items(list: &dyn Array, limits: &Limits, cut: &mut bool) -> Value {
    if list.len() > limits.list_items {
        *cut = true;
    }
    Value::Array(
        (0..list.len().min(limits.list_items))
            .map(|j| value(list, j, limits, cut))
            .collect(),
    )
}

fn map(array: &dyn Array, i: usize, limits: &Limits, cut: &mut bool) -> Value {
    let entries = array.as_map().value(i);
    let (keys, values) = (entries.column(0), entries.column(1));
    let shown = entries.len().min(limits.list_items);
    if entries.len() > shown {
        *cut = true;
    }
    let string_keys = matches!(
        keys.data_type(),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View
    );
    if string_keys {
        Value::Object(
            (0..shown)
                .map(|j| {
                    let key = match value(keys.as_ref(), j, limits, cut) {
                        Value::String(k) => k,
                        other => other.to_json(),
                    };
                    (key, value(values.as_ref(), j, limits, cut))
                })
                .collect(),
        )
    } else {
        Value::Array(
            (0..shown)
                .map(|j| {
                    Value::Object(vec![
                        ("key".into(), value(keys.as_ref(), j, limits, cut)),
                        ("value".into(), value(values.as_ref(), j, limits, cut)),
                    ])
                })
                .collect(),
        )
    }
}

/// Every row of `column` (an answer's rows), as [`cell`] shows them.
pub fn column_cells(column: &ArrayRef, limits: &Limits) -> Vec<(Value, bool)> {
    (0..column.len())
        .map(|i| cell(column.as_ref(), i, limits))
        .collect()
}

#[cfg(test)]
mod tests;
