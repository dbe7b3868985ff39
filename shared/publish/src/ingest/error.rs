//! Bad input: a row that cannot be converted, named by file, line and column; and what
//! `--on-error skip` passed over.

use std::fmt;

/// How many skipped rows are named (each with its file, line and reason).
pub const FIRST_SKIPPED: usize = 10;

/// One bad row or file: where it is and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    /// The input's path as given.
    pub file: String,
    /// 1-based, the header counting as line 1 (a CSV record's first line when a quoted field
    /// spans several); 0 for the file as a whole.
    pub line: u64,
    /// The column, when one is to blame.
    pub column: Option<String>,
    /// What is wrong, without the data (a version records it as it is).
    pub reason: String,
    /// The value at fault, quoted, for the operator: shown as "VALUE is REASON".
    pub value: Option<String>,
    /// More for the operator (a parser's own message), shown after the reason.
    pub detail: Option<String>,
}

impl fmt::Display for BadRow {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ", line {}", self.line)?;
        }
        if let Some(column) = &self.column {
            write!(f, ", column '{column}'")?;
        }
        match &self.value {
            Some(value) => write!(f, ": {value} is {}", self.reason)?,
            None => write!(f, ": {}", self.reason)?,
        }
        match &self.detail {
            Some(detail) => write!(f, " ({detail})"),
            None => Ok(()),
        }
    }
}

/// What converting the inputs can fail with.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Bad input, named: nothing is published.
    #[error("{0}")]
    Bad(Box<BadRow>),
    /// A usage or settings error (a flag, the schema file).
    #[error("{0}")]
    Usage(String),
    #[error("{0}: {1}")]
    Io(String, std::io::Error),
    /// Writing the Parquet failed.
    #[error("writing {0}: {1}")]
    Write(String, String),
}

impl IngestError {
    pub fn bad(file: &str, line: u64, column: Option<&str>, reason: impl Into<String>) -> Self {
        IngestError::Bad(Box::new(BadRow {
            file: file.to_owned(),
            line,
            column: column.map(str::to_owned),
            reason: reason.into(),
            value: None,
            detail: None,
        }))
    }
}

/// What to do with a bad row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnError {
    /// Stop: nothing is published (the default).
    #[default]
    Fail,
    /// Leave the row out, count it and name the first [`FIRST_SKIPPED`].
    Skip,
}

/// The rows `--on-error skip` left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Skipped {
    pub count: u64,
    /// The first [`FIRST_SKIPPED`], in the order met.
    pub first: Vec<BadRow>,
}

impl Skipped {
    /// A bad row: an error under [`OnError::Fail`], counted under [`OnError::Skip`].
    pub fn take(&mut self, on_error: OnError, row: BadRow) -> Result<(), IngestError> {
        match on_error {
            OnError::Fail => Err(IngestError::Bad(Box::new(row))),
            OnError::Skip => {
                self.count += 1;
                if self.first.len() < FIRST_SKIPPED {
                    self.first.push(row);
                }
                Ok(())
            }
        }
    }

    pub fn merge(&mut self, other: Skipped) {
        self.count += other.count;
        for row in other.first {
            if self.first.len() < FIRST_SKIPPED {
                self.first.push(row);
            }
        }
    }
}
