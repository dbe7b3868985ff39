//! A file's path as published, and a split's name.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{FilesError, PathProblem};
use crate::input::echo;

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
