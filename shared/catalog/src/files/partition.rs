//! Hive partitions: the `key=value` directory segments of a file's path, typed.
//!
//! **Segments.** A directory segment holding `=` is a partition: the key is what comes before
//! the first `=` (1 to 128 ASCII letters, digits, `_` and `-`), the value what follows it,
//! percent-decoded as Hive, Spark, pyarrow and DuckDB write it (`%2F` is `/`, `%3D` is `=`; the
//! result must be UTF-8; a `%` not followed by two hex digits is refused). The value
//! `__HIVE_DEFAULT_PARTITION__` is null (Hive's and Spark's name for it); an empty value is
//! refused (writers write null as that name). Directory segments without `=` (a split's
//! directory, `data/`) are not partitions. Every file of a version has the same keys in the same
//! order.
//!
//! **Types.** A key's type is declared by the publisher or inferred from every file's value of
//! it (nulls aside), so that pyarrow and DuckDB read the values back equal:
//! - `int64` when every value is an integer: an optional `-` and decimal digits (leading zeros
//!   allowed: `month=01` is 1, as both read it), within 64 bits;
//! - else `date` when every value is `YYYY-MM-DD` and a real date (DuckDB reads a DATE, pyarrow
//!   a string of the same text);
//! - else `string`. A key whose values are all null is a `string`.
//!
//! A value that does not parse as its key's declared type is refused, naming the file.

use std::cmp::Ordering;
use std::fmt;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use super::{FilesError, RelPath};
use crate::input::echo;

/// Hive's and Spark's directory name for a null partition value.
pub const HIVE_NULL: &str = "__HIVE_DEFAULT_PARTITION__";

/// Longest partition key, in bytes.
pub const MAX_KEY_LEN: usize = 128;

/// A partition column's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartitionType {
    Int64,
    Date,
    String,
}

impl PartitionType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Int64 => "int64",
            Self::Date => "date",
            Self::String => "string",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "int64" => Some(Self::Int64),
            "date" => Some(Self::Date),
            "string" => Some(Self::String),
            _ => None,
        }
    }
}

impl fmt::Display for PartitionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let article = match self {
            Self::Int64 => "an",
            _ => "a",
        };
        write!(f, "{article} {}", self.as_str())
    }
}

/// A partition column: its key and type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartitionColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: PartitionType,
}

/// One file's value of a partition column.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum PartitionValue {
    Null,
    Int(i64),
    Date(NaiveDate),
    Text(String),
}

impl PartitionValue {
    /// `text` (decoded; `None` is null) as a value of `kind`; `None` when it does not parse.
    pub fn parse(text: Option<&str>, kind: PartitionType) -> Option<Self> {
        let Some(text) = text else {
            return Some(Self::Null);
        };
        match kind {
            PartitionType::Int64 => parse_int(text).map(Self::Int),
            PartitionType::Date => parse_date(text).map(Self::Date),
            PartitionType::String => Some(Self::Text(text.to_owned())),
        }
    }

    /// The value as text (`None`: null), as Delta Sharing's `partitionValues` give it and as
    /// [`Self::parse`] reads it back.
    pub fn to_text(&self) -> Option<String> {
        match self {
            Self::Null => None,
            Self::Int(i) => Some(i.to_string()),
            Self::Date(d) => Some(d.format("%Y-%m-%d").to_string()),
            Self::Text(t) => Some(t.clone()),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    /// The order of two values of one type (nulls aside); `None` across types or with a null.
    pub fn compare(&self, other: &Self) -> Option<Ordering> {
        match (self, other) {
            (Self::Int(a), Self::Int(b)) => Some(a.cmp(b)),
            (Self::Date(a), Self::Date(b)) => Some(a.cmp(b)),
            (Self::Text(a), Self::Text(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }
}

fn parse_int(text: &str) -> Option<i64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

fn parse_date(text: &str) -> Option<NaiveDate> {
    let b = text.as_bytes();
    let shape = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shape {
        return None;
    }
    NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()
}

/// The type every value of a key reads back equal as (module docs), from its values (`None`:
/// null).
pub fn infer_type<'a>(values: impl Iterator<Item = Option<&'a str>>) -> PartitionType {
    let present = values.flatten();
    let mut any = false;
    let mut all_int = true;
    let mut all_date = true;
    for v in present {
        any = true;
        all_int &= parse_int(v).is_some();
        all_date &= parse_date(v).is_some();
        if !all_int && !all_date {
            break;
        }
    }
    match (any, all_int, all_date) {
        (true, true, _) => PartitionType::Int64,
        (true, false, true) => PartitionType::Date,
        _ => PartitionType::String,
    }
}

/// A path's partition segments, in order: each key and its decoded value (`None`: null).
pub fn segments(path: &RelPath) -> Result<Vec<(String, Option<String>)>, FilesError> {
    let mut out = Vec::new();
    for segment in path.directories() {
        let Some((key, raw)) = segment.split_once('=') else {
            continue;
        };
        let bad = |problem| FilesError::PartitionSegment {
            path: echo(path.as_str()),
            segment: echo(segment),
            problem,
        };
        let key_ok = !key.is_empty()
            && key.len() <= MAX_KEY_LEN
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
        if !key_ok {
            return Err(bad(
                "has a key that is not 1 to 128 ASCII letters, digits, '_' and '-'",
            ));
        }
        if out.iter().any(|(k, _): &(String, _)| k == key) {
            return Err(bad("repeats a key of an earlier segment"));
        }
        if raw.is_empty() {
            return Err(bad(
                "has an empty value (null is written __HIVE_DEFAULT_PARTITION__)",
            ));
        }
        let value = if raw == HIVE_NULL {
            None
        } else {
            Some(percent_decode(raw).ok_or_else(|| {
                bad("is not percent-encoded UTF-8 (a '%' must start two hex digits)")
            })?)
        };
        out.push((key.to_owned(), value));
    }
    Ok(out)
}

/// `%XX` sequences decoded; `None` for a malformed sequence or bytes that are not UTF-8.
pub fn percent_decode(raw: &str) -> Option<String> {
    if !raw.contains('%') {
        return Some(raw.to_owned());
    }
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The partition keys that are also columns of the files (an error when any: a column cannot
/// come from both the path and the file).
pub fn check_not_columns(keys: &[PartitionColumn], columns: &[String]) -> Result<(), FilesError> {
    let clash: Vec<String> = keys
        .iter()
        .filter(|k| columns.iter().any(|c| c == &k.name))
        .map(|k| k.name.clone())
        .collect();
    if clash.is_empty() {
        Ok(())
    } else {
        Err(FilesError::PartitionIsColumn(clash))
    }
}

/// The data endpoint's `partition=KEY=VALUE` filters as they arrived (AND of all), parsed for
/// their shape only: whether they name anything is [`super::Summary::resolve`]'s question.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionFilter(Vec<(String, Option<String>)>);

impl PartitionFilter {
    /// Each of `raw` is `KEY=VALUE`, the value as text (already URL-decoded by the query
    /// string), `__HIVE_DEFAULT_PARTITION__` for null. Malformed: no `=`, or an empty key.
    pub fn parse<'a>(raw: impl IntoIterator<Item = &'a str>) -> Result<Self, FilesError> {
        let mut out = Vec::new();
        for one in raw {
            match one.split_once('=') {
                Some((key, value)) if !key.is_empty() => out.push((
                    key.to_owned(),
                    (value != HIVE_NULL).then(|| value.to_owned()),
                )),
                _ => return Err(FilesError::MalformedFilter(echo(one))),
            }
        }
        Ok(Self(out))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn terms(&self) -> &[(String, Option<String>)] {
        &self.0
    }
}

/// A [`PartitionFilter`] against a version's partition columns: for each term, the column's
/// index and the typed value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResolvedFilter(pub Vec<(usize, PartitionValue)>);

impl ResolvedFilter {
    /// Whether a file's values (in the version's column order) pass every term.
    pub fn matches(&self, values: &[PartitionValue]) -> bool {
        self.0.iter().all(|(i, v)| values.get(*i) == Some(v))
    }
}
