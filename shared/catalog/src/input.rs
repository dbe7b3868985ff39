//! Parsed input: a type for each value that arrives from outside (a path segment, a query
//! parameter, a field of the publish input), each with one constructor that rejects bad input
//! ("parse, don't validate"). API keys have their own module, [`crate::keys`].

use std::fmt;

use uuid::Uuid;

use crate::keys::KEY_PREFIX;
pub use crate::slug::{Slug, SlugError};

/// Why a request's path or query parameter was refused. The message is what the client reads;
/// [`crate::error`] turns every one into a 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A path segment that is neither a UUID nor a slug.
    #[error("invalid dataset slug: {0}")]
    DatasetRef(SlugError),
    /// `page` or `page_size` (`name`) that is not a positive integer.
    #[error("{name} must be a positive integer, got '{raw}'")]
    NotPositive { name: &'static str, raw: String },
    /// The rows API's `offset` (`name`) that is not a non-negative integer.
    #[error("{name} must be a non-negative integer, got '{raw}'")]
    NotNonNegative { name: &'static str, raw: String },
    #[error("unsupported format '{0}': the allowed values are 'parquet' and 'original'")]
    Format(String),
    /// `version`, as received up to its 40th character.
    #[error("version must be a positive integer (a version number from the metadata), got '{0}'")]
    VersionPin(String),
}

/// One of a dataset's tags as publish accepts it: not blank, at most [`Tag::MAX_LEN`] bytes, kept
/// as given (filters match it trimmed and lowercased: see `query::Facet`). A dataset has at most
/// [`Tag::MAX_PER_DATASET`] of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag(String);

impl Tag {
    /// Longest tag, in bytes (characters, for ASCII tags).
    pub const MAX_LEN: usize = 64;
    /// Most tags one dataset can have.
    pub const MAX_PER_DATASET: usize = 32;

    pub fn parse(raw: &str) -> Result<Self, TagsError> {
        if raw.trim().is_empty() || raw.len() > Self::MAX_LEN {
            return Err(TagsError);
        }
        Ok(Self(raw.to_owned()))
    }

    /// A dataset's whole list of tags.
    pub fn parse_all(raw: &[String]) -> Result<Vec<Self>, TagsError> {
        if raw.len() > Self::MAX_PER_DATASET {
            return Err(TagsError);
        }
        raw.iter().map(|t| Self::parse(t)).collect()
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A tag, or a list of tags, that publish refuses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "tags are 1 to {} characters each, at most {} of them",
    Tag::MAX_LEN,
    Tag::MAX_PER_DATASET
)]
pub struct TagsError;

/// A dataset's description as publish accepts it: at most [`Description::MAX_BYTES`] bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Description(String);

impl Description {
    pub const MAX_BYTES: usize = 4096;

    pub fn parse(raw: &str) -> Result<Self, DescriptionError> {
        if raw.len() > Self::MAX_BYTES {
            return Err(DescriptionError);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the description is at most {} bytes", Description::MAX_BYTES)]
pub struct DescriptionError;

/// How a request names a dataset: by slug, or by its UUID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DatasetRef {
    Slug(Slug),
    Id(Uuid),
}

impl DatasetRef {
    /// Parses a path segment. A canonical hyphenated UUID is an id; anything else must be a slug.
    pub fn parse(raw: &str) -> Result<Self, ParseError> {
        if raw.len() == 36 {
            if let Ok(id) = Uuid::try_parse(raw) {
                return Ok(Self::Id(id));
            }
        }
        Slug::parse(raw)
            .map(Self::Slug)
            .map_err(ParseError::DatasetRef)
    }
}

impl fmt::Display for DatasetRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Slug(s) => write!(f, "'{s}'"),
            Self::Id(id) => write!(f, "with id {id}"),
        }
    }
}

/// A validated page request for the list endpoint: `page` at least 1, `page_size` from 1 to
/// [`Self::MAX_PAGE_SIZE`]. Only [`Self::parse`] makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    page: u64,
    page_size: u64,
}

impl PageRequest {
    pub const DEFAULT_PAGE: u64 = 1;
    pub const DEFAULT_PAGE_SIZE: u64 = 20;
    pub const MAX_PAGE_SIZE: u64 = 100;

    /// `page` and `page_size` as they arrived (`None` when absent). Each must be a positive
    /// integer written in decimal digits; `page_size` above the maximum is capped.
    pub fn parse(page: Option<&str>, page_size: Option<&str>) -> Result<Self, ParseError> {
        let page = match page {
            None => Self::DEFAULT_PAGE,
            Some(raw) => positive_integer("page", raw)?,
        };
        let page_size = match page_size {
            None => Self::DEFAULT_PAGE_SIZE,
            Some(raw) => positive_integer("page_size", raw)?.min(Self::MAX_PAGE_SIZE),
        };
        Ok(Self { page, page_size })
    }

    /// The page number, from 1.
    pub fn page(&self) -> u64 {
        self.page
    }

    /// Items per page, from 1 to [`Self::MAX_PAGE_SIZE`].
    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    /// Zero-based index of the first item of this page, or `None` when it does not fit in u64
    /// (such a page is past the end of any catalog).
    pub fn offset(&self) -> Option<u64> {
        (self.page - 1).checked_mul(self.page_size)
    }
}

/// Longest part of a client's value that an error message or a log line repeats.
pub const ECHO_CHARS: usize = 40;

/// A discussion's `path`, as publish accepts it: a path on the catalog's own site, which the
/// dataset page links to. It starts with one `/` and holds no backslash, whitespace or control
/// character, so that no browser reads it as another site (`//evil.example`, `/\evil.example`,
/// and `/<TAB>/evil.example` all are, once a URL parser drops or turns those characters); at
/// most [`SITE_PATH_MAX`] bytes.
pub fn is_site_path(raw: &str) -> bool {
    raw.len() <= SITE_PATH_MAX
        && raw.starts_with('/')
        && !raw.starts_with("//")
        && !raw
            .chars()
            .any(|c| c == '\\' || c.is_whitespace() || c.is_control())
}

/// Longest discussion path, in bytes.
pub const SITE_PATH_MAX: usize = 512;

/// What an error message repeats of a value a client sent: at most [`ECHO_CHARS`] characters,
/// then `…`, so that a huge value never makes a huge answer or log line; and nothing of a value
/// that holds an API key (sent in the wrong place by mistake), since messages are logged.
pub fn echo(raw: &str) -> String {
    if raw.contains(KEY_PREFIX) {
        return "(a value holding an API key, not repeated)".to_owned();
    }
    match raw.char_indices().nth(ECHO_CHARS) {
        None => raw.to_owned(),
        Some((cut, _)) => format!("{}…", &raw[..cut]),
    }
}

fn positive_integer(name: &'static str, raw: &str) -> Result<u64, ParseError> {
    let bad = || ParseError::NotPositive {
        name,
        raw: echo(raw),
    };
    if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    // All digits: the only failure left is overflow, which is a very large positive integer.
    let value = raw.parse::<u64>().unwrap_or(u64::MAX);
    if value == 0 {
        return Err(bad());
    }
    Ok(value)
}

/// What the data endpoint hands out: the version's Parquet (the default), or the files a
/// version converted from CSV or JSON Lines kept as they came (`original`,
/// [`crate::ingested::Original`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Parquet,
    Original,
}

impl Format {
    pub fn parse(raw: Option<&str>) -> Result<Self, ParseError> {
        match raw {
            None | Some("parquet") => Ok(Self::Parquet),
            Some("original") => Ok(Self::Original),
            Some(other) => Err(ParseError::Format(echo(other))),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Parquet => "parquet",
            Self::Original => "original",
        }
    }
}

/// `?version=N` on the data endpoint: a positive integer, at most 10 digits (the width of
/// stored version numbers). Only [`Self::parse`] makes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VersionPin(u64);

impl VersionPin {
    /// The version number asked for.
    pub fn get(self) -> u64 {
        self.0
    }

    pub fn parse(raw: Option<&str>) -> Result<Option<Self>, ParseError> {
        let Some(raw) = raw else {
            return Ok(None);
        };
        let bad = || ParseError::VersionPin(echo(raw));
        if raw.is_empty() || raw.len() > 10 || !raw.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        match raw.parse::<u64>() {
            Ok(0) | Err(_) => Err(bad()),
            Ok(v) => Ok(Some(Self(v))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discussion_path_stays_on_this_site() {
        for good in ["/datasets/a/discussions/q", "/", "/d?x=1#y", "/é"] {
            assert!(is_site_path(good), "{good:?}");
        }
        let long = format!("/{}", "a".repeat(SITE_PATH_MAX));
        for bad in [
            "",
            "datasets/a",
            "//evil.example",
            "/\\evil.example",
            "/\t/evil.example",
            "/\n/evil.example",
            "/ /evil.example",
            "/\u{0}x",
            "https://evil.example/",
            "javascript:alert(1)",
            long.as_str(),
        ] {
            assert!(!is_site_path(bad), "{bad:?}");
        }
    }

    #[test]
    fn echoes_are_bounded() {
        assert_eq!(echo("short"), "short");
        let exact = "é".repeat(ECHO_CHARS);
        assert_eq!(echo(&exact), exact);
        let long = "x".repeat(10_000);
        assert_eq!(echo(&long), format!("{}…", "x".repeat(ECHO_CHARS)));
        let err = PageRequest::parse(Some(&long), None)
            .unwrap_err()
            .to_string();
        assert!(err.len() < 120, "{err}");
        let err = Format::parse(Some(&long)).unwrap_err().to_string();
        assert!(err.len() < 120, "{err}");
        let key = "dcat_0123456789abcdef";
        assert!(!echo(key).contains("dcat_"), "{}", echo(key));
        assert!(!echo(&format!("x{key}")).contains("0123"));
    }

    #[test]
    fn version_pins_are_positive_integers() {
        assert_eq!(VersionPin::parse(None).unwrap(), None);
        let pin = |raw| VersionPin::parse(Some(raw)).unwrap().map(VersionPin::get);
        assert_eq!(pin("3"), Some(3));
        assert_eq!(pin("9999999999"), Some(9_999_999_999));
        for bad in ["", "0", "-1", "+1", "1.0", "v2", " 1", "12345678901", "１"] {
            let err = VersionPin::parse(Some(bad)).unwrap_err();
            assert!(matches!(err, ParseError::VersionPin(_)), "{bad}");
        }
    }

    #[test]
    fn slug_accepts_lowercase_digits_and_inner_hyphens() {
        for ok in ["a", "air-quality-hourly", "x9", "2024-census"] {
            assert!(Slug::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn slug_rejects_bad_characters_edges_length_and_uuids() {
        let long = "a".repeat(65);
        for bad in [
            "",
            "Air",
            "a_b",
            "-a",
            "a-",
            "a b",
            "é",
            long.as_str(),
            "0b7e0c52-8d7a-4a8f-9d77-6c1d2a0d4e11",
        ] {
            assert!(Slug::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn dataset_ref_tells_uuid_from_slug() {
        let id = "0b7e0c52-8d7a-4a8f-9d77-6c1d2a0d4e11";
        assert!(matches!(DatasetRef::parse(id), Ok(DatasetRef::Id(_))));
        assert!(matches!(
            DatasetRef::parse("city-bikes"),
            Ok(DatasetRef::Slug(_))
        ));
        assert!(matches!(
            DatasetRef::parse("City"),
            Err(ParseError::DatasetRef(SlugError))
        ));
    }

    #[test]
    fn page_defaults_are_1_and_20() {
        let p = PageRequest::parse(None, None).unwrap();
        assert_eq!((p.page(), p.page_size()), (1, 20));
        assert_eq!(p.offset(), Some(0));
    }

    #[test]
    fn page_size_above_100_is_capped() {
        let p = PageRequest::parse(Some("2"), Some("1000")).unwrap();
        assert_eq!(p.page_size(), 100);
        assert_eq!(p.page(), 2);
        assert_eq!(p.offset(), Some(100));
    }

    #[test]
    fn page_and_page_size_must_be_positive_integers() {
        for bad in ["0", "-1", "1.5", "abc", "", "+3", " 1", "1e3", "0x10"] {
            assert!(PageRequest::parse(Some(bad), None).is_err(), "page {bad:?}");
            assert!(
                PageRequest::parse(None, Some(bad)).is_err(),
                "page_size {bad:?}"
            );
        }
    }

    #[test]
    fn huge_page_is_accepted_and_lands_past_the_end() {
        let p = PageRequest::parse(Some("99999999999999999999999"), Some("100")).unwrap();
        assert_eq!(p.page(), u64::MAX);
        assert_eq!(p.offset(), None);
    }

    #[test]
    fn tags_are_1_to_64_bytes_at_most_32_per_dataset() {
        for ok in ["a", " Birds ", "río", &"t".repeat(Tag::MAX_LEN)] {
            assert_eq!(Tag::parse(ok).unwrap().as_str(), ok, "{ok:?}");
        }
        // Measured in bytes, as publish always has: 33 two-byte characters are too many.
        for bad in [
            "",
            "  ",
            "\t",
            &"t".repeat(Tag::MAX_LEN + 1),
            &"é".repeat(33),
        ] {
            assert_eq!(Tag::parse(bad), Err(TagsError), "{bad:?}");
        }
        let tags = |n| vec!["t".to_owned(); n];
        assert_eq!(
            Tag::parse_all(&tags(Tag::MAX_PER_DATASET)).unwrap().len(),
            32
        );
        assert!(Tag::parse_all(&[]).unwrap().is_empty());
        assert_eq!(
            Tag::parse_all(&tags(Tag::MAX_PER_DATASET + 1)),
            Err(TagsError)
        );
        assert_eq!(
            Tag::parse_all(&["ok".to_owned(), " ".to_owned()]),
            Err(TagsError)
        );
        assert_eq!(
            TagsError.to_string(),
            "tags are 1 to 64 characters each, at most 32 of them"
        );
    }

    #[test]
    fn descriptions_are_at_most_4096_bytes() {
        assert!(Description::parse("").is_ok());
        assert!(Description::parse(&"d".repeat(Description::MAX_BYTES)).is_ok());
        assert_eq!(
            Description::parse(&"d".repeat(Description::MAX_BYTES + 1)),
            Err(DescriptionError)
        );
        assert_eq!(Description::parse(&"é".repeat(2049)), Err(DescriptionError));
        assert_eq!(
            DescriptionError.to_string(),
            "the description is at most 4096 bytes"
        );
    }

    #[test]
    fn format_defaults_to_parquet_and_rejects_others() {
        assert_eq!(Format::parse(None).unwrap(), Format::Parquet);
        assert_eq!(Format::parse(Some("parquet")).unwrap(), Format::Parquet);
        assert_eq!(Format::parse(Some("original")).unwrap(), Format::Original);
        match Format::parse(Some("csv")) {
            Err(e @ ParseError::Format(_)) => assert!(e.to_string().contains("parquet")),
            other => panic!("{other:?}"),
        }
    }
}
