//! Columns' types: the names a schema file and `--column` use, what inference yields made
//! into those types, and the overrides applied over it.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use arrow_schema::{DataType, Field, Schema, SchemaRef, TimeUnit};

use super::error::IngestError;

/// A column's type as a schema file or `--column NAME=TYPE` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    Int64,
    Float64,
    Bool,
    String,
    Date,
    /// Without a zone: microseconds, as written.
    Timestamp,
    /// With a zone: microseconds since the epoch in UTC (values with an offset are converted;
    /// values without one are read as UTC).
    TimestampTz,
}

pub const TYPE_NAMES: &str = "int64, float64, bool, string, date, timestamp or timestamp_tz";

impl ColumnType {
    pub fn parse(raw: &str) -> Option<ColumnType> {
        Some(match raw.trim().to_ascii_lowercase().as_str() {
            "int64" | "int" | "integer" => ColumnType::Int64,
            "float64" | "float" | "double" => ColumnType::Float64,
            "bool" | "boolean" => ColumnType::Bool,
            "string" | "str" | "utf8" => ColumnType::String,
            "date" => ColumnType::Date,
            "timestamp" => ColumnType::Timestamp,
            "timestamp_tz" => ColumnType::TimestampTz,
            _ => return None,
        })
    }

    pub fn data_type(self) -> DataType {
        match self {
            ColumnType::Int64 => DataType::Int64,
            ColumnType::Float64 => DataType::Float64,
            ColumnType::Bool => DataType::Boolean,
            ColumnType::String => DataType::Utf8,
            ColumnType::Date => DataType::Date32,
            ColumnType::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, None),
            ColumnType::TimestampTz => {
                DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
            }
        }
    }

    /// The name of an Arrow type this module writes (for messages).
    pub fn name_of(data_type: &DataType) -> &'static str {
        match data_type {
            DataType::Int64 => "int64",
            DataType::Float64 => "float64",
            DataType::Boolean => "bool",
            DataType::Date32 => "date",
            DataType::Timestamp(_, None) => "timestamp",
            DataType::Timestamp(_, Some(_)) => "timestamp_tz",
            _ => "string",
        }
    }
}

/// Columns' types given by the operator: a schema file's, then `--column`'s over them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Overrides {
    pub types: BTreeMap<String, ColumnType>,
}

impl Overrides {
    /// Reads a schema file (YAML when it ends in `.yaml` or `.yml`, JSON otherwise): an object
    /// of column name to type name.
    pub fn from_file(path: &Path) -> Result<Self, IngestError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| IngestError::Io(format!("cannot read {}", path.display()), e))?;
        let yaml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
        let bad = |e: &dyn std::fmt::Display| {
            IngestError::Usage(format!(
                "{}: {e} (expected an object of column name to type: {TYPE_NAMES})",
                path.display()
            ))
        };
        let raw: BTreeMap<String, String> = if yaml {
            serde_norway::from_str(&text).map_err(|e| bad(&e))?
        } else {
            serde_json::from_str(&text).map_err(|e| bad(&e))?
        };
        let mut types = BTreeMap::new();
        for (column, name) in raw {
            let kind = ColumnType::parse(&name).ok_or_else(|| {
                IngestError::Usage(format!(
                    "{}: column '{column}': unknown type '{name}' (the types are {TYPE_NAMES})",
                    path.display()
                ))
            })?;
            types.insert(column, kind);
        }
        Ok(Overrides { types })
    }

    /// `--column NAME=TYPE`, over what is there.
    pub fn add_flag(&mut self, raw: &str) -> Result<(), IngestError> {
        let (name, kind) = raw
            .rsplit_once('=')
            .ok_or_else(|| IngestError::Usage(format!("--column {raw}: expected NAME=TYPE")))?;
        let kind = ColumnType::parse(kind).ok_or_else(|| {
            IngestError::Usage(format!(
                "--column {raw}: unknown type '{kind}' (the types are {TYPE_NAMES})"
            ))
        })?;
        if name.is_empty() {
            return Err(IngestError::Usage(format!(
                "--column {raw}: the column name is empty"
            )));
        }
        self.types.insert(name.to_owned(), kind);
        Ok(())
    }

    /// The schema with the overrides applied; a name that is no column of `file` is an error.
    pub fn apply(&self, schema: Schema, file: &str) -> Result<SchemaRef, IngestError> {
        for name in self.types.keys() {
            if schema.field_with_name(name).is_err() {
                let columns: Vec<&str> =
                    schema.fields().iter().map(|f| f.name().as_str()).collect();
                return Err(IngestError::bad(
                    file,
                    0,
                    Some(name),
                    format!(
                        "the schema names a column the file does not have (its columns: {})",
                        columns.join(", ")
                    ),
                ));
            }
        }
        let fields: Vec<Field> = schema
            .fields()
            .iter()
            .map(|f| match self.types.get(f.name()) {
                Some(kind) => Field::new(f.name(), kind.data_type(), true),
                None => f.as_ref().clone(),
            })
            .collect();
        Ok(Arc::new(Schema::new(fields)))
    }
}

/// An inferred type made one this module writes: no type (every value sampled was null) is a
/// string; a timestamp is in microseconds, with the zone UTC when every value sampled had a
/// zone (`zoned`).
pub fn settle(data_type: &DataType, zoned: bool) -> DataType {
    match data_type {
        DataType::Null => DataType::Utf8,
        DataType::Timestamp(_, _) if zoned => ColumnType::TimestampTz.data_type(),
        DataType::Timestamp(_, _) => ColumnType::Timestamp.data_type(),
        other => other.clone(),
    }
}

/// Whether a value written as a timestamp carries a zone: `Z`, or an offset `+hh:mm`,
/// `-hh:mm`, `+hhmm`, `+hh` after the time.
pub fn has_zone(value: &str) -> bool {
    let value = value.trim_end();
    if value.ends_with(['Z', 'z']) {
        return true;
    }
    // The date and the time take 19 characters: a sign after them is an offset's.
    value.len() > 19 && value.is_char_boundary(19) && value[19..].contains(['+', '-'])
}

/// Whether a string is a date, `YYYY-MM-DD`, as arrow-csv's inference takes one.
pub fn looks_like_date(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
        && chrono::NaiveDate::parse_from_str(value, "%Y-%m-%d").is_ok()
}

/// Whether a string is a timestamp, `YYYY-MM-DD[T ]hh:mm:ss[.fraction][zone]`, as arrow-csv's
/// inference takes one, and parses.
pub fn looks_like_timestamp(value: &str) -> bool {
    let b = value.as_bytes();
    b.len() >= 19
        && looks_like_date(&value[..10])
        && (b[10] == b'T' || b[10] == b' ')
        && b[13] == b':'
        && b[16] == b':'
        && arrow_cast::parse::string_to_datetime(&chrono::Utc, value).is_ok()
}

/// Checks a header's names: none empty, none twice.
pub fn check_names(names: &[String], file: &str) -> Result<(), IngestError> {
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, name) in names.iter().enumerate() {
        if name.trim().is_empty() {
            return Err(IngestError::bad(
                file,
                1,
                None,
                format!("the header's column {} has no name", i + 1),
            ));
        }
        if let Some(first) = seen.insert(name, i) {
            return Err(IngestError::bad(
                file,
                1,
                Some(name),
                format!(
                    "the header names this column twice (columns {} and {})",
                    first + 1,
                    i + 1
                ),
            ));
        }
    }
    Ok(())
}
