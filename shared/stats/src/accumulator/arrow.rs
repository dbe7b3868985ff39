//! Feeding an Arrow array to a column's statistics: each value by its type (dates in
//! milliseconds by day, dictionaries by their values, anything else by its display form).

use arrow_array::cast::AsArray;
use arrow_array::types::*;
use arrow_array::{Array, ArrayRef};
use arrow_schema::{DataType, TimeUnit};

use crate::values::*;
use crate::*;

use super::Accumulator;

impl Accumulator {
    pub(crate) fn add(&mut self, array: &ArrayRef) -> Result<(), StatsError> {
        macro_rules! each {
            ($array:expr, $on:expr) => {{
                for v in $array.iter() {
                    match v {
                        Some(v) => $on(self, v),
                        None => self.null(),
                    }
                }
            }};
        }
        macro_rules! ints {
            ($t:ty, $numeric:expr) => {
                each!(array.as_primitive::<$t>(), |a: &mut Self, v| a
                    .int(v as i128, $numeric))
            };
        }
        macro_rules! floats {
            ($t:ty) => {
                each!(array.as_primitive::<$t>(), |a: &mut Self, v| {
                    let v = f64::from(v);
                    if !v.is_finite() {
                        a.null()
                    } else {
                        a.float(v)
                    }
                })
            };
        }
        match array.data_type() {
            DataType::Int8 => ints!(Int8Type, true),
            DataType::Int16 => ints!(Int16Type, true),
            DataType::Int32 => ints!(Int32Type, true),
            DataType::Int64 => ints!(Int64Type, true),
            DataType::UInt8 => ints!(UInt8Type, true),
            DataType::UInt16 => ints!(UInt16Type, true),
            DataType::UInt32 => ints!(UInt32Type, true),
            DataType::UInt64 => ints!(UInt64Type, true),
            DataType::Float16 => floats!(Float16Type),
            DataType::Float32 => floats!(Float32Type),
            DataType::Float64 => floats!(Float64Type),
            DataType::Decimal128(_, scale) => {
                let scale = *scale;
                each!(array.as_primitive::<Decimal128Type>(), |a: &mut Self, v| a
                    .decimal(v, scale))
            }
            DataType::Date32 => ints!(Date32Type, false),
            // Dates in milliseconds: counted (and shown) by day.
            DataType::Date64 => each!(array.as_primitive::<Date64Type>(), |a: &mut Self, v| a
                .int(i128::from(v).div_euclid(86_400_000), false)),
            DataType::Timestamp(TimeUnit::Second, _) => ints!(TimestampSecondType, false),
            DataType::Timestamp(TimeUnit::Millisecond, _) => {
                ints!(TimestampMillisecondType, false)
            }
            DataType::Timestamp(TimeUnit::Microsecond, _) => {
                ints!(TimestampMicrosecondType, false)
            }
            DataType::Timestamp(TimeUnit::Nanosecond, _) => {
                ints!(TimestampNanosecondType, false)
            }
            DataType::Boolean => each!(array.as_boolean(), |a: &mut Self, v| a.boolean(v)),
            DataType::Utf8 => each!(array.as_string::<i32>(), |a: &mut Self, v| a.text(v)),
            DataType::LargeUtf8 => each!(array.as_string::<i64>(), |a: &mut Self, v| a.text(v)),
            DataType::Utf8View => each!(array.as_string_view(), |a: &mut Self, v| a.text(v)),
            DataType::Dictionary(_, _) => {
                let plain = arrow_cast::cast(array, &kind_value_type(array.data_type()))?;
                self.add(&plain)?;
            }
            _ => {
                // Anything else counts by its display form.
                let formatter = arrow_cast::display::ArrayFormatter::try_new(
                    array.as_ref(),
                    &arrow_cast::display::FormatOptions::default(),
                )?;
                for i in 0..array.len() {
                    if array.is_null(i) {
                        self.null();
                    } else {
                        // Counted by their text form, cut like the shown values so that large
                        // binary values cannot fill memory.
                        let text = formatter.value(i).to_string();
                        self.text(&shown(&text));
                    }
                }
            }
        }
        Ok(())
    }
}
