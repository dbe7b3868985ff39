//! A dataset slug, the catalog's stable public name for a dataset (in URLs, in keys' dataset
//! limits): a module of its own that imports nothing else of the crate.

use std::fmt;

use uuid::Uuid;

/// A dataset slug: 1 to 64 characters of lowercase ASCII letters, digits and hyphens, starting
/// and ending with a letter or digit, and not itself a UUID (the metadata endpoint accepts both).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

impl Slug {
    pub const MAX_LEN: usize = 64;

    pub fn parse(raw: &str) -> Result<Self, SlugError> {
        if raw.is_empty() || raw.len() > Self::MAX_LEN {
            return Err(SlugError);
        }
        let bytes = raw.as_bytes();
        let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
        let edge = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
        if !bytes.iter().all(allowed) || !edge(&bytes[0]) || !edge(&bytes[bytes.len() - 1]) {
            return Err(SlugError);
        }
        if Uuid::try_parse(raw).is_ok() {
            return Err(SlugError);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Slug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for Slug {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

/// A slug read from a file (the sample manifest) is parsed like any other.
impl<'de> serde::Deserialize<'de> for Slug {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Slug::parse(&raw).map_err(serde::de::Error::custom)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a slug is 1 to 64 lowercase letters, digits and hyphens, starting and ending with a letter or digit")]
pub struct SlugError;
