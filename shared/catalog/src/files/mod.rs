//! A dataset version of many Parquet files (issue 38): the vocabulary, with no I/O.
//!
//! - [`RelPath`]: a file's path as published, relative and `/`-separated.
//! - [`SplitName`]: a split's name (`train`, `validation`, `test`, `en.train`…).
//! - [`partition`]: Hive partitions (`key=value/` directory segments), typed.
//! - [`ColumnRange`] and [`StatValue`]: a file's per-column minimum, maximum and null count.
//! - [`Manifest`]: the version's files, validated, sorted by split then path and cut into chunks
//!   of at most [`CHUNK_FILES`]; its [`Summary`] says which chunk holds a page of files, a row
//!   offset or a partition value, so a reader reads only the chunks it needs.
//! - [`FilesBrief`]: the version in brief, as the metadata, the list and DCAT show it.
//! - [`FilesError`]: every refusal of this domain, naming the file(s) and column(s).
//!
//! **Limits.** A version holds 1 to [`MAX_FILES`] files; a path is at most
//! [`RelPath::MAX_BYTES`] bytes; a split name at most [`SplitName::MAX_LEN`] characters.
//!
//! **The manifest hash** ([`Manifest::sha256`]) is what a multi-file version shows as its
//! `sha256`: the SHA-256, in lowercase hex, of the files in manifest order (split, then path,
//! both compared as bytes; files without a split first), one line each:
//! `<split>\t<path>\t<size>\t<rows>\t<sha256>\n`, where `<split>` is empty for a file without
//! one, `<size>` and `<rows>` are decimal without leading zeros and `<sha256>` is the file's own
//! hash in lowercase hex. Partition values and statistics are left out: the path and the
//! content (its hash) determine them. A client recomputes it from the data endpoint's list.

mod brief;
mod build;
mod manifest;
pub mod partition;
mod path;
mod stats;

#[cfg(test)]
mod tests;

pub use brief::{FilesBrief, SplitBrief};
pub use manifest::{
    ChunkSummary, FileChunk, FileEntry, FileInput, Manifest, ManifestInput, Span, SplitSummary,
    Summary, ValueRange,
};
pub use partition::{
    PartitionColumn, PartitionFilter, PartitionType, PartitionValue, ResolvedFilter,
};
pub use path::{is_hidden_name, is_parquet_name, is_version_parquet, RelPath, SplitName};
pub use stats::{ColumnRange, StatValue, MAX_STAT_TEXT_BYTES};

/// Most files one version holds.
pub const MAX_FILES: usize = 100_000;

/// Most files one chunk of the manifest holds: the data endpoint's page of files is one chunk
/// (a chunk never spans two splits, so a split's page `p` is its `p`-th chunk).
pub const CHUNK_FILES: usize = 1_000;

/// What a problem with one path is (the path is named by [`FilesError::Path`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathProblem {
    Empty,
    TooLong(usize),
    Absolute,
    Backslash,
    Control,
    /// An empty segment (`a//b`, a trailing `/`).
    EmptySegment,
    /// A `.` or `..` segment.
    DotSegment(&'static str),
}

impl std::fmt::Display for PathProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Empty => write!(f, "is empty"),
            Self::TooLong(n) => write!(f, "is {n} bytes, over {}", RelPath::MAX_BYTES),
            Self::Absolute => write!(f, "is absolute: give it relative to the dataset's root"),
            Self::Backslash => write!(f, "holds a backslash: separate directories with '/'"),
            Self::Control => write!(f, "holds a control character"),
            Self::EmptySegment => write!(f, "has an empty segment ('//' or a trailing '/')"),
            Self::DotSegment(s) => write!(f, "has a '{s}' segment"),
        }
    }
}

/// Every refusal of a many-file version: the message names the file(s) and column(s), values
/// repeated through [`crate::input::echo`]. No HTTP here: the caller maps it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilesError {
    #[error("file path '{path}' {problem}")]
    Path { path: String, problem: PathProblem },
    #[error(
        "split name '{0}' is not allowed: 1 to {max} ASCII letters, digits and '_', in parts \
         separated by single dots (such as 'train' or 'en.validation')",
        max = SplitName::MAX_LEN
    )]
    SplitName(String),
    /// A directory segment with `=` that is not a partition `key=value`.
    #[error("file '{path}': partition segment '{segment}' {problem}")]
    PartitionSegment {
        path: String,
        segment: String,
        problem: &'static str,
    },
    /// Two files whose partition keys differ (names or order).
    #[error(
        "files '{first}' and '{other}' have different partition keys: [{}] and [{}]",
        first_keys.join(", "),
        other_keys.join(", ")
    )]
    PartitionKeys {
        first: String,
        first_keys: Vec<String>,
        other: String,
        other_keys: Vec<String>,
    },
    /// A partition value that does not parse as its key's type.
    #[error("file '{path}': partition value '{value}' of '{key}' is not {kind}")]
    PartitionValue {
        path: String,
        key: String,
        value: String,
        kind: PartitionType,
    },
    /// A type declared for a key that no path holds.
    #[error("a type is given for partition key '{0}', which no file path holds")]
    UnknownPartitionKey(String),
    #[error(
        "partition key(s) {} also column(s) of the files: rename the directories or drop the \
         column(s)",
        .0.join(", ")
    )]
    PartitionIsColumn(Vec<String>),
    #[error("a version holds at least one file")]
    NoFiles,
    #[error("{0} files, over the limit of {MAX_FILES} per version")]
    TooManyFiles(usize),
    #[error("two files have the path '{0}'")]
    DuplicatePath(String),
    #[error("split '{0}' has no files")]
    EmptySplit(String),
    #[error("file '{with}' is in split '{split}' but file '{without}' is in none: give every file a split, or none")]
    MixedSplits {
        with: String,
        split: String,
        without: String,
    },
    #[error("file '{path}': sha256 '{value}' is not 64 lowercase hex digits")]
    Sha256 { path: String, value: String },
    #[error("column '{0}' is named twice")]
    DuplicateColumn(String),
    #[error("file '{path}': statistics for column '{column}', which the version does not have")]
    UnknownColumn { path: String, column: String },
    #[error("file '{path}': column '{column}' has minimum {min} above (or not comparable with) its maximum {max}")]
    StatsOrder {
        path: String,
        column: String,
        min: String,
        max: String,
    },
    #[error("partition filter '{0}' is not KEY=VALUE")]
    MalformedFilter(String),
}
