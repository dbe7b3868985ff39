//! Each value of an Arrow array as the statistics see it: integers (dates in days, timestamps
//! in their unit) as i128, finite floats, decimals unscaled, booleans, text, and values of any
//! other type by their display form, cut as shown values are (as `accumulator/arrow.rs` reads
//! them). NaN and ±infinity are nulls.

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::values::*;
use crate::StatsError;

/// One value.
pub(super) enum V<'a> {
    Null,
    Int(i128),
    Float(f64),
    Decimal(i128, i8),
    Bool(bool),
    Text(&'a str),
}

/// Calls `on` with every value of `array`, in order.
pub(super) fn each(array: &ArrayRef, on: &mut dyn FnMut(V<'_>)) -> Result<(), StatsError> {
    macro_rules! all {
        ($array:expr, $to:expr) => {{
            for v in $array.iter() {
                match v {
                    Some(v) => on($to(v)),
                    None => on(V::Null),
                }
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            all!(array.as_primitive::<$t>(), |v| V::Int(v as i128))
        };
    }
    let float = |v: f64| if v.is_finite() { V::Float(v) } else { V::Null };
    match array.data_type() {
        DataType::Int8 => ints!(Int8Type),
        DataType::Int16 => ints!(Int16Type),
        DataType::Int32 => ints!(Int32Type),
        DataType::Int64 => ints!(Int64Type),
        DataType::UInt8 => ints!(UInt8Type),
        DataType::UInt16 => ints!(UInt16Type),
        DataType::UInt32 => ints!(UInt32Type),
        DataType::UInt64 => ints!(UInt64Type),
        DataType::Float16 => all!(array.as_primitive::<Float16Type>(), |v| float(f64::from(v))),
        DataType::Float32 => all!(array.as_primitive::<Float32Type>(), |v| float(f64::from(v))),
        DataType::Float64 => all!(array.as_primitive::<Float64Type>(), float),
        DataType::Decimal128(_, scale) => {
            let scale = *scale;
            all!(array.as_primitive::<Decimal128Type>(), |v| V::Decimal(
                v, scale
            ))
        }
        DataType::Date32 => ints!(Date32Type),
        DataType::Date64 => all!(array.as_primitive::<Date64Type>(), |v| V::Int(
            i128::from(v).div_euclid(86_400_000)
        )),
        DataType::Timestamp(TimeUnit::Second, _) => ints!(TimestampSecondType),
        DataType::Timestamp(TimeUnit::Millisecond, _) => ints!(TimestampMillisecondType),
        DataType::Timestamp(TimeUnit::Microsecond, _) => ints!(TimestampMicrosecondType),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => ints!(TimestampNanosecondType),
        DataType::Boolean => all!(array.as_boolean(), V::Bool),
        DataType::Utf8 => all!(array.as_string::<i32>(), V::Text),
        DataType::LargeUtf8 => all!(array.as_string::<i64>(), V::Text),
        DataType::Utf8View => all!(array.as_string_view(), V::Text),
        DataType::Dictionary(_, _) => {
            let plain = arrow_cast::cast(array, &kind_value_type(array.data_type()))?;
            each(&plain, on)?;
        }
        _ => {
            let formatter = arrow_cast::display::ArrayFormatter::try_new(
                array.as_ref(),
                &arrow_cast::display::FormatOptions::default(),
            )?;
            for i in 0..array.len() {
                if array.is_null(i) {
                    on(V::Null);
                } else {
                    let text = formatter.value(i).to_string();
                    on(V::Text(&shown(&text)));
                }
            }
        }
    }
    Ok(())
}
