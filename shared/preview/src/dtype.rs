//! Type names as pyarrow prints them (`int64`, `timestamp[ms, tz=UTC]`, `list<element: int64>`):
//! the metadata's `dtype` (computed at publish by `catalog-admin`) and the rows API's column
//! `type` are one function's output.

use arrow_schema::{DataType, TimeUnit};

/// The type name as pyarrow prints it.
pub fn dtype_name(t: &DataType) -> String {
    named_dtype(t, None)
}

/// The dtype of a column (or nested field) called `name`: pyarrow, reading a Parquet map,
/// names its entries after the field that holds it, and prints that name when it is not the
/// default `entries`.
pub fn column_dtype(name: &str, t: &DataType) -> String {
    named_dtype(t, Some(name))
}

fn named_dtype(t: &DataType, field: Option<&str>) -> String {
    match t {
        DataType::Boolean => "bool".into(),
        DataType::Int8 => "int8".into(),
        DataType::Int16 => "int16".into(),
        DataType::Int32 => "int32".into(),
        DataType::Int64 => "int64".into(),
        DataType::UInt8 => "uint8".into(),
        DataType::UInt16 => "uint16".into(),
        DataType::UInt32 => "uint32".into(),
        DataType::UInt64 => "uint64".into(),
        DataType::Float16 => "halffloat".into(),
        DataType::Float32 => "float".into(),
        DataType::Float64 => "double".into(),
        DataType::Utf8 | DataType::Utf8View => "string".into(),
        DataType::LargeUtf8 => "large_string".into(),
        DataType::Binary | DataType::BinaryView => "binary".into(),
        DataType::LargeBinary => "large_binary".into(),
        DataType::Date32 => "date32[day]".into(),
        DataType::Date64 => "date64[ms]".into(),
        DataType::Timestamp(unit, tz) => {
            let unit = unit_name(unit);
            match tz {
                Some(tz) => format!("timestamp[{unit}, tz={tz}]"),
                None => format!("timestamp[{unit}]"),
            }
        }
        DataType::Time32(unit) | DataType::Time64(unit) => {
            let bits = if matches!(t, DataType::Time32(_)) {
                32
            } else {
                64
            };
            format!("time{bits}[{}]", unit_name(unit))
        }
        DataType::Duration(unit) => format!("duration[{}]", unit_name(unit)),
        DataType::Interval(arrow_schema::IntervalUnit::MonthDayNano) => {
            "month_day_nano_interval".into()
        }
        DataType::Decimal128(p, s) => format!("decimal128({p}, {s})"),
        DataType::Decimal256(p, s) => format!("decimal256({p}, {s})"),
        DataType::Dictionary(_, value) => dtype_name(value),
        // Nested types as pyarrow prints them: `list<element: int64>`, `struct<a: int64, b:
        // string>`, `map<string, int64>`, `fixed_size_binary[16]`.
        DataType::List(item) => format!("list<{}>", field_name(item)),
        DataType::LargeList(item) => format!("large_list<{}>", field_name(item)),
        DataType::FixedSizeList(item, n) => format!("fixed_size_list<{}>[{n}]", field_name(item)),
        DataType::Struct(fields) => format!(
            "struct<{}>",
            fields
                .iter()
                .map(|f| field_name(f))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) if kv.len() == 2 => {
                let named = match field.unwrap_or(entries.name().as_str()) {
                    "entries" => String::new(),
                    name => format!(" ('{name}')"),
                };
                format!(
                    "map<{}, {}{named}>",
                    dtype_name(kv[0].data_type()),
                    dtype_name(kv[1].data_type())
                )
            }
            other => format!("map<{}>", dtype_name(other)),
        },
        DataType::FixedSizeBinary(n) => format!("fixed_size_binary[{n}]"),
        other => other.to_string().to_lowercase(),
    }
}

/// A nested field as pyarrow prints it: `name: type`, and ` not null` when it cannot be null.
fn field_name(field: &arrow_schema::Field) -> String {
    let null = if field.is_nullable() { "" } else { " not null" };
    format!(
        "{}: {}{null}",
        field.name(),
        column_dtype(field.name(), field.data_type())
    )
}

/// The unit of a timestamp, time or duration, as pyarrow prints it.
pub fn unit_name(unit: &TimeUnit) -> &'static str {
    match unit {
        TimeUnit::Second => "s",
        TimeUnit::Millisecond => "ms",
        TimeUnit::Microsecond => "us",
        TimeUnit::Nanosecond => "ns",
    }
}
