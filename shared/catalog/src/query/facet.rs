//! Facets: the `category`, `tag` and `license` values a listing can be narrowed by, normalized
//! the same way for filters and for the lists the writer keeps.

use crate::input::Tag;

/// The three single-valued attributes a listing can be narrowed by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FacetKind {
    Category,
    Tag,
    License,
}

impl FacetKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Category => "category",
            Self::Tag => "tag",
            Self::License => "license",
        }
    }
}

/// A `category`, `tag` or `license` value that is blank (nothing but whitespace), or longer
/// than [`Facet::MAX_LEN`] characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{} must be 1 to {} characters", .kind.name(), Facet::MAX_LEN)]
pub struct FacetError {
    pub kind: FacetKind,
}

/// One facet value, normalized (trimmed, lowercase): filters match case-insensitively. Made by
/// [`Facet::new`] (checked) or, from stored values (written through `new`'s rules),
/// [`Facet::of`] and [`Facet::from_key`]; read through [`Facet::kind`] and [`Facet::value`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Facet {
    kind: FacetKind,
    pub(super) value: String,
}

impl Facet {
    pub fn kind(&self) -> FacetKind {
        self.kind
    }

    /// The normalized value (trimmed, lowercase).
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Longest accepted filter value, in characters, as received. At least [`Tag::MAX_LEN`]:
    /// a tag publish accepts has at most that many bytes, so a filter can always name it
    /// (checked when compiling, below).
    pub const MAX_LEN: usize = 128;

    /// openapi.yaml's `pattern` for a filter value: at least one character that is not
    /// whitespace as [`char::is_whitespace`] (what `trim` removes) defines it. The characters
    /// are listed rather than written `\S`, whose meaning differs between regex engines
    /// (Python's includes U+001C to U+001F, JavaScript's leaves out U+0085).
    pub const NOT_BLANK_PATTERN: &str =
        r"[^\u0009-\u000d\u0020\u0085\u00a0\u1680\u2000-\u200a\u2028-\u2029\u202f\u205f\u3000]";

    /// `raw` trimmed and lowercased. `raw` must hold 1 to [`Self::MAX_LEN`] characters, not
    /// all of them whitespace: what openapi.yaml states (`minLength`, `maxLength` and
    /// [`Self::NOT_BLANK_PATTERN`]), so that a value the document allows is never refused.
    pub fn new(kind: FacetKind, raw: &str) -> Result<Self, FacetError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() || raw.chars().count() > Self::MAX_LEN {
            return Err(FacetError { kind });
        }
        Ok(Self {
            kind,
            value: trimmed.to_lowercase(),
        })
    }

    /// Every facet a dataset with these attributes belongs to. A stored value no filter could
    /// name (blank, or longer than [`Self::MAX_LEN`]) belongs to none.
    pub fn of(category: &str, tags: &[String], license: &str) -> Vec<Self> {
        let mut facets: Vec<Self> = [
            (FacetKind::Category, category),
            (FacetKind::License, license),
        ]
        .into_iter()
        .chain(tags.iter().map(|t| (FacetKind::Tag, t.as_str())))
        .filter_map(|(kind, raw)| Self::new(kind, raw).ok())
        .collect();
        facets.sort();
        facets.dedup();
        facets
    }

    /// `category#biology`: the facet's name in storage keys.
    pub fn key(&self) -> String {
        format!("{}#{}", self.kind.name(), self.value)
    }

    /// The facet a storage key names (as written from [`Self::key`]; not checked again).
    pub fn from_key(key: &str) -> Option<Self> {
        let (kind, value) = key.split_once('#')?;
        let kind = match kind {
            "category" => FacetKind::Category,
            "tag" => FacetKind::Tag,
            "license" => FacetKind::License,
            _ => return None,
        };
        Some(Self {
            kind,
            value: value.to_owned(),
        })
    }
}

// Every tag publish accepts can be a `tag` filter.
const _: () = assert!(Tag::MAX_LEN <= Facet::MAX_LEN);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facet_new_trims_lowercases_and_bounds_by_characters() {
        let f = Facet::new(FacetKind::Tag, "  Birds\t").unwrap();
        assert_eq!((f.kind, f.value.as_str()), (FacetKind::Tag, "birds"));
        let longest = "é".repeat(Facet::MAX_LEN);
        assert_eq!(Facet::new(FacetKind::Tag, &longest).unwrap().value, longest);
        // The length is the value's as received: lowercasing may lengthen it, trimming shorten.
        let lengthens = "İ".repeat(Facet::MAX_LEN);
        assert!(
            Facet::new(FacetKind::Tag, &lengthens)
                .unwrap()
                .value
                .chars()
                .count()
                > 128
        );
        let over = "É".repeat(Facet::MAX_LEN + 1);
        let padded = format!(" {} ", "x".repeat(Facet::MAX_LEN - 1));
        for bad in [
            "",
            " ",
            "\n\t",
            "\u{85}",
            "\u{3000}\u{a0}",
            over.as_str(),
            padded.as_str(),
        ] {
            assert_eq!(
                Facet::new(FacetKind::License, bad),
                Err(FacetError {
                    kind: FacetKind::License
                }),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn a_dataset_belongs_to_the_facets_a_filter_could_name() {
        let tags = [
            "Birds".to_owned(),
            " birds ".to_owned(),
            "  ".to_owned(),
            "x".repeat(Facet::MAX_LEN + 1),
            "x".repeat(Facet::MAX_LEN),
        ];
        let keys: Vec<String> = Facet::of("Biology", &tags, "")
            .iter()
            .map(Facet::key)
            .collect();
        assert_eq!(
            keys,
            [
                "category#biology".to_owned(),
                "tag#birds".to_owned(),
                format!("tag#{}", "x".repeat(Facet::MAX_LEN)),
            ]
        );
        let f = Facet::new(FacetKind::License, "CC-BY-4.0").unwrap();
        assert_eq!(Facet::from_key(&f.key()), Some(f));
    }

    /// The pattern written from `char::is_whitespace` itself: every whitespace character,
    /// ranges where consecutive.
    fn whitespace_class() -> String {
        let mut ranges: Vec<(char, char)> = Vec::new();
        for c in (0..=0x10FFFF)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
        {
            match ranges.last_mut() {
                Some((_, end)) if *end as u32 + 1 == c as u32 => *end = c,
                _ => ranges.push((c, c)),
            }
        }
        let mut class = String::from("[^");
        for (start, end) in ranges {
            class.push_str(&format!("\\u{:04x}", start as u32));
            if end != start {
                class.push_str(&format!("-\\u{:04x}", end as u32));
            }
        }
        class.push(']');
        class
    }

    #[test]
    fn the_documents_pattern_names_exactly_the_whitespace_a_filter_value_is_trimmed_of() {
        assert_eq!(Facet::NOT_BLANK_PATTERN, whitespace_class());
        // category, license and each tag of the list endpoint carry it in openapi.yaml, and so
        // does a rejection's reason (trimmed the same way: crate::grants::Decision::reject).
        let doc = include_str!("../../../../openapi.yaml");
        let quoted = format!("pattern: '{}'", Facet::NOT_BLANK_PATTERN);
        assert_eq!(doc.matches(&quoted).count(), 4, "{quoted}");
    }
}
