//! A file's path as published, and a split's name.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{FilesError, PathProblem};
use crate::input::echo;

/// Whether a file or directory name is left out of a version wherever its files are found (a
/// directory walked, a staged prefix listed, a fan-out's items): names starting with `.` or `_`
/// (Spark's `_SUCCESS` and `_temporary/`, editors' `.swp`).
pub fn is_hidden_name(name: &str) -> bool {
    name.starts_with('.') || name.starts_with('_')
}

/// Whether a file name is a Parquet file's: `.parquet` at the end, in any case, after a name.
pub fn is_parquet_name(name: &str) -> bool {
    name.len() > 8
        && name.is_char_boundary(name.len() - 8)
        && name[name.len() - 8..].eq_ignore_ascii_case(".parquet")
}

/// Whether a path relative to where a version's files are found (a directory, a staged
/// prefix) names one of its Parquet files: no empty or hidden segment, a Parquet name.
pub fn is_version_parquet(relative: &str) -> bool {
    !relative.is_empty()
        && relative
            .split('/')
            .all(|segment| !segment.is_empty() && !is_hidden_name(segment))
        && relative.rsplit('/').next().is_some_and(is_parquet_name)
}

#[cfg(test)]
mod names {
    use super::*;

    #[test]
    fn hidden_and_non_parquet_files_are_not_a_versions() {
        for taken in ["part-0.parquet", "train/year=2024/a.PARQUET", "x.Parquet"] {
            assert!(is_version_parquet(taken), "{taken}");
        }
        for left in [
            "",
            ".parquet",
            "_SUCCESS",
            "_temporary/0/part-0.parquet",
            "train/.part-0.parquet.crc",
            "train/_meta/a.parquet",
            "a//b.parquet",
            "notes.csv",
            "é.parquet.é",
        ] {
            assert!(!is_version_parquet(left), "{left}");
        }
    }
}

/// A file's path inside its version, as published: relative, `/`-separated, with no empty,
/// `.` or `..` segment, no backslash, no control character, at most [`Self::MAX_BYTES`] bytes.
/// It is appended to the version's S3 prefix as it stands, and is what clients see.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct RelPath(String);

impl RelPath {
    /// Longest path, in bytes (S3 keys are at most 1,024 bytes with the version's prefix; the
    /// prefix is checked where the key is built).
    pub const MAX_BYTES: usize = 1_024;

    pub fn parse(raw: &str) -> Result<Self, FilesError> {
        let bad = |problem| FilesError::Path {
            path: echo(raw),
            problem,
        };
        if raw.is_empty() {
            return Err(bad(PathProblem::Empty));
        }
        if raw.len() > Self::MAX_BYTES {
            return Err(bad(PathProblem::TooLong(raw.len())));
        }
        if raw.chars().any(char::is_control) {
            return Err(bad(PathProblem::Control));
        }
        if raw.contains('\\') {
            return Err(bad(PathProblem::Backslash));
        }
        let drive =
            raw.len() >= 2 && raw.as_bytes()[1] == b':' && raw.as_bytes()[0].is_ascii_alphabetic();
        if raw.starts_with('/') || drive {
            return Err(bad(PathProblem::Absolute));
        }
        for segment in raw.split('/') {
            match segment {
                "" => return Err(bad(PathProblem::EmptySegment)),
                "." => return Err(bad(PathProblem::DotSegment("."))),
                ".." => return Err(bad(PathProblem::DotSegment(".."))),
                _ => {}
            }
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The directory segments (every segment but the file's name).
    pub fn directories(&self) -> impl Iterator<Item = &str> {
        let dirs = self.0.rsplit_once('/').map_or("", |(dirs, _)| dirs);
        dirs.split('/').filter(|s| !s.is_empty())
    }

    /// The file's name (the last segment).
    pub fn file_name(&self) -> &str {
        self.0.rsplit_once('/').map_or(&self.0, |(_, name)| name)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for RelPath {
    type Error = FilesError;
    fn try_from(raw: String) -> Result<Self, FilesError> {
        Self::parse(&raw)
    }
}

impl From<RelPath> for String {
    fn from(p: RelPath) -> String {
        p.0
    }
}

/// A split's name: one or more parts of ASCII letters, digits and `_`, separated by single dots
/// (`[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*`, Hugging Face's `\w+(\.\w+)*` restricted to ASCII), at
/// most [`Self::MAX_LEN`] characters, case kept. Every such name is safe as it stands in a URL's
/// query and path, and in an S3 key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct SplitName(String);

impl SplitName {
    pub const MAX_LEN: usize = 64;

    pub fn parse(raw: &str) -> Result<Self, FilesError> {
        let word = |part: &str| {
            !part.is_empty() && part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        };
        if raw.len() > Self::MAX_LEN || !raw.split('.').all(word) {
            return Err(FilesError::SplitName(echo(raw)));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SplitName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for SplitName {
    type Error = FilesError;
    fn try_from(raw: String) -> Result<Self, FilesError> {
        Self::parse(&raw)
    }
}

impl From<SplitName> for String {
    fn from(s: SplitName) -> String {
        s.0
    }
}
