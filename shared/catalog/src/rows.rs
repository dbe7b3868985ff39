//! The rows API's terms: which rows a request asks for ([`RowWindow`]), what a reader returns
//! ([`RowsPage`]), and the port that reads them ([`RowsReader`]). The reader itself, which links
//! Arrow and Parquet, is the `catalog-preview` crate: only the rows function links it. A version
//! of many files is read file by file through the same port ([`many`]: [`read_version_rows`]).

use std::future::Future;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;

use crate::input::{echo, ParseError};
use crate::records::ActiveVersion;
use crate::store::StoreError;

pub mod many;

pub use many::{read_version_rows, VersionRows};

/// The most an answer's rows may weigh as JSON (Lambda answers at most 6 MB): rows past it are
/// left for the next page.
pub const ANSWER_BYTES: usize = 4 << 20;

/// Which rows to show: `length` rows from the zero-based `offset`. Only [`Self::parse`] (or
/// [`Self::new`], which applies the same bounds) makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowWindow {
    offset: u64,
    length: u64,
}

impl RowWindow {
    pub const DEFAULT_LENGTH: u64 = 100;
    /// At most this many rows an answer; a larger `length` is capped, as `page_size` is.
    pub const MAX_LENGTH: u64 = 100;

    /// `offset` (default 0) and `length` (default and cap 100, at least 1), as they arrived:
    /// decimal digits only.
    pub fn parse(offset: Option<&str>, length: Option<&str>) -> Result<Self, ParseError> {
        let offset = match offset {
            None => 0,
            Some(raw) => digits("offset", raw)?,
        };
        let length = match length {
            None => Self::DEFAULT_LENGTH,
            Some(raw) => match digits("length", raw)? {
                0 => {
                    return Err(ParseError::NotPositive {
                        name: "length",
                        raw: echo(raw),
                    })
                }
                n => n,
            },
        };
        Ok(Self::new(offset, length))
    }

    /// The window, with `length` capped at [`Self::MAX_LENGTH`] and at least 1.
    pub fn new(offset: u64, length: u64) -> Self {
        Self {
            offset,
            length: length.clamp(1, Self::MAX_LENGTH),
        }
    }

    pub fn offset(&self) -> u64 {
        self.offset
    }

    pub fn length(&self) -> u64 {
        self.length
    }

    /// The rows of a file of `total` rows that this window covers: `start..end`, empty when
    /// the offset is at or past the end.
    pub fn within(&self, total: u64) -> std::ops::Range<u64> {
        let start = self.offset.min(total);
        start..self.offset.saturating_add(self.length).min(total)
    }
}

/// A non-negative integer in decimal digits (an `offset`, a `length`); overflow is a very large
/// number, which every bound then handles.
fn digits(name: &'static str, raw: &str) -> Result<u64, ParseError> {
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ParseError::NotNonNegative {
            name,
            raw: echo(raw),
        });
    }
    Ok(raw.parse::<u64>().unwrap_or(u64::MAX))
}

/// A column as the rows API shows it: its name and its type, named as pyarrow prints it (the
/// metadata's `dtype`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub dtype: String,
}

/// One row: its zero-based index in the file, a value per column (in column order, as JSON
/// text: a struct's fields keep their order), and the indexes of the columns whose value was
/// cut.
#[derive(Debug, Clone)]
pub struct Row {
    pub row_idx: u64,
    pub cells: Vec<Box<RawValue>>,
    pub truncated: Vec<usize>,
}

impl PartialEq for Row {
    fn eq(&self, other: &Self) -> bool {
        self.row_idx == other.row_idx
            && self.truncated == other.truncated
            && self.cells.len() == other.cells.len()
            && self
                .cells
                .iter()
                .zip(&other.cells)
                .all(|(a, b)| a.get() == b.get())
    }
}

/// What a reader returns: the columns and the rows of one version.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RowsPage {
    pub columns: Vec<RowColumn>,
    pub rows: Vec<Row>,
}

impl RowsPage {
    /// The rows as JSON, each `{"row_idx": n, "row": {column: value, …}, "truncated_cells":
    /// [column, …]}` with the columns in the file's order.
    pub fn rows_json(&self) -> RowsJson<'_> {
        RowsJson(self)
    }
}

/// [`RowsPage::rows_json`].
pub struct RowsJson<'a>(&'a RowsPage);

impl Serialize for RowsJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.rows.iter().map(|row| RowJson {
            columns: &self.0.columns,
            row,
        }))
    }
}

struct RowJson<'a> {
    columns: &'a [RowColumn],
    row: &'a Row,
}

struct Cells<'a>(&'a RowJson<'a>);

impl Serialize for RowJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let truncated: Vec<&str> = self
            .row
            .truncated
            .iter()
            .filter_map(|&i| self.columns.get(i).map(|c| c.name.as_str()))
            .collect();
        let mut s = serializer.serialize_struct("Row", 3)?;
        s.serialize_field("row_idx", &self.row.row_idx)?;
        s.serialize_field("row", &Cells(self))?;
        s.serialize_field("truncated_cells", &truncated)?;
        s.end()
    }
}

impl Serialize for Cells<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.columns.len()))?;
        for (column, value) in self.0.columns.iter().zip(&self.0.row.cells) {
            map.serialize_entry(&column.name, value)?;
        }
        map.end()
    }
}

/// Why rows could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RowsError {
    /// Reading the object failed (S3 unreachable, throttling, a malformed file).
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Showing these rows would read more than a function may hold at once: the file's row
    /// groups are too large and it has no page index. The message says what it would take.
    #[error("{0}")]
    TooLarge(String),
}

/// Reads rows of a dataset's version from its Parquet object.
pub trait RowsReader: Send + Sync {
    /// The columns, and the rows of `window` that exist (none when the offset is at or past the
    /// end). Every row comes from `version`'s object, which never changes.
    fn read_rows(
        &self,
        version: &ActiveVersion,
        window: RowWindow,
    ) -> impl Future<Output = Result<RowsPage, RowsError>> + Send;
}

/// Rows that could not be read: a storage failure as any other, or a 422 saying why.
impl From<RowsError> for crate::error::ApiError {
    fn from(e: RowsError) -> Self {
        match e {
            RowsError::Store(e) => e.into(),
            RowsError::TooLarge(why) => Self::PreviewUnavailable(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_defaults_to_the_first_hundred_rows_and_caps_its_length() {
        assert_eq!(
            RowWindow::parse(None, None).unwrap(),
            RowWindow::new(0, 100)
        );
        assert_eq!(
            RowWindow::parse(Some("250"), Some("1000")).unwrap(),
            RowWindow::new(250, 100)
        );
        assert_eq!(RowWindow::parse(Some("0"), Some("1")).unwrap().length(), 1);
        assert_eq!(
            RowWindow::parse(Some("99999999999999999999999"), None)
                .unwrap()
                .offset(),
            u64::MAX
        );
    }

    #[test]
    fn a_window_refuses_what_is_not_a_count() {
        for (offset, length) in [
            (Some("-1"), None),
            (Some(""), None),
            (Some("1e3"), None),
            (Some(" 1"), None),
            (None, Some("0")),
            (None, Some("-5")),
            (None, Some("ten")),
            (None, Some("")),
        ] {
            assert!(
                RowWindow::parse(offset, length).is_err(),
                "{offset:?} {length:?}"
            );
        }
    }

    #[test]
    fn a_window_covers_what_exists() {
        assert_eq!(RowWindow::new(0, 100).within(720), 0..100);
        assert_eq!(RowWindow::new(700, 100).within(720), 700..720);
        assert_eq!(RowWindow::new(720, 100).within(720), 720..720);
        assert_eq!(RowWindow::new(u64::MAX, 100).within(720), 720..720);
        assert_eq!(
            RowWindow::new(u64::MAX - 1, 100).within(u64::MAX),
            u64::MAX - 1..u64::MAX
        );
    }

    #[test]
    fn rows_serialize_as_objects_in_column_order() {
        let page = RowsPage {
            columns: vec![
                RowColumn {
                    name: "zeta".into(),
                    dtype: "int64".into(),
                },
                RowColumn {
                    name: "alpha".into(),
                    dtype: "string".into(),
                },
            ],
            rows: vec![Row {
                row_idx: 7,
                cells: vec![
                    RawValue::from_string("1".into()).unwrap(),
                    RawValue::from_string(r#""x""#.into()).unwrap(),
                ],
                truncated: vec![1],
            }],
        };
        assert_eq!(
            serde_json::to_string(&page.rows_json()).unwrap(),
            r#"[{"row_idx":7,"row":{"zeta":1,"alpha":"x"},"truncated_cells":["alpha"]}]"#
        );
    }
}
