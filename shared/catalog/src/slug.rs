//! A dataset slug, the catalog's stable public name for a dataset (in URLs, in keys' dataset
//! limits), and the organisation name that may begin it: a module of its own that imports
//! nothing else of the crate.
//!
//! A slug is a catalog dataset's name (`air-quality`), or an organisation's dataset's full
//! name, `{org}~{name}` (`acme~sales-2025`): one URL segment, so that every route and protocol
//! names both alike (docs/organisations.md).

use std::fmt;

use uuid::Uuid;

/// A dataset slug: a name (1 to 64 characters of lowercase ASCII letters, digits and hyphens,
/// starting and ending with a letter or digit, and not itself a UUID: the metadata endpoint
/// accepts both), optionally after an organisation's name and `~`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slug(String);

/// Whether `raw` is 1 to `max` letters, digits and hyphens with a letter or digit at each end.
fn is_name(raw: &str, max: usize) -> bool {
    let bytes = raw.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-';
    let edge = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    !raw.is_empty()
        && raw.len() <= max
        && bytes.iter().all(allowed)
        && edge(&bytes[0])
        && edge(&bytes[bytes.len() - 1])
}

impl Slug {
    /// The longest name, within an organisation or not.
    pub const NAME_MAX_LEN: usize = 64;
    /// The longest slug: an organisation's name, `~` and a name.
    pub const MAX_LEN: usize = OrgName::MAX_LEN + 1 + Self::NAME_MAX_LEN;
    /// What separates an organisation's name from its dataset's name.
    pub const SEPARATOR: char = '~';

    pub fn parse(raw: &str) -> Result<Self, SlugError> {
        if raw.len() > Self::MAX_LEN {
            return Err(SlugError);
        }
        let name = match raw.split_once(Self::SEPARATOR) {
            Some((org, name)) => {
                OrgName::parse(org).map_err(|_| SlugError)?;
                name
            }
            None => raw,
        };
        if !is_name(name, Self::NAME_MAX_LEN) || Uuid::try_parse(name).is_ok() {
            return Err(SlugError);
        }
        Ok(Self(raw.to_owned()))
    }

    /// The slug of dataset `name` of organisation `org`.
    pub fn within(org: &OrgName, name: &str) -> Result<Self, SlugError> {
        Self::parse(&format!("{org}{}{name}", Self::SEPARATOR))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The organisation whose dataset this is; `None` for a catalog dataset.
    pub fn org(&self) -> Option<OrgName> {
        let (org, _) = self.0.split_once(Self::SEPARATOR)?;
        Some(OrgName(org.to_owned()))
    }

    /// The dataset's name within its organisation (the whole slug for a catalog dataset).
    pub fn name(&self) -> &str {
        self.0
            .split_once(Self::SEPARATOR)
            .map_or(self.0.as_str(), |(_, name)| name)
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
#[error("a slug is 1 to 64 lowercase letters, digits and hyphens, starting and ending with a letter or digit, optionally after an organisation's name and '~' (acme~sales)")]
pub struct SlugError;

/// An organisation's name: 2 to 32 lowercase ASCII letters, digits and hyphens, starting and
/// ending with a letter or digit, and not a reserved name ([`OrgName::RESERVED`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrgName(String);

impl OrgName {
    pub const MIN_LEN: usize = 2;
    pub const MAX_LEN: usize = 32;
    /// Names the site or the API use for something else.
    pub const RESERVED: [&'static str; 8] = [
        "admin",
        "api",
        "catalog",
        "default",
        "new",
        "operators",
        "settings",
        "www",
    ];

    pub fn parse(raw: &str) -> Result<Self, OrgNameError> {
        if raw.len() < Self::MIN_LEN || !is_name(raw, Self::MAX_LEN) {
            return Err(OrgNameError::Pattern);
        }
        if Self::RESERVED.contains(&raw) {
            return Err(OrgNameError::Reserved(raw.to_owned()));
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for OrgName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl serde::Serialize for OrgName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrgNameError {
    #[error("an organisation's name is 2 to 32 lowercase letters, digits and hyphens, starting and ending with a letter or digit")]
    Pattern,
    #[error("'{0}' is a reserved name: it cannot name an organisation")]
    Reserved(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_catalog_slug_has_no_organisation_and_is_its_own_name() {
        let slug = Slug::parse("air-quality").unwrap();
        assert_eq!(slug.org(), None);
        assert_eq!(slug.name(), "air-quality");
    }

    #[test]
    fn an_organisation_slug_names_its_organisation_and_its_name() {
        let slug = Slug::parse("acme~sales-2025").unwrap();
        assert_eq!(slug.org(), Some(OrgName::parse("acme").unwrap()));
        assert_eq!(slug.name(), "sales-2025");
        let org = OrgName::parse("acme").unwrap();
        assert_eq!(Slug::within(&org, "sales-2025").unwrap(), slug);
    }

    #[test]
    fn slugs_outside_the_pattern_are_refused() {
        let longest_org = "o".repeat(OrgName::MAX_LEN);
        let longest_name = "n".repeat(Slug::NAME_MAX_LEN);
        assert!(Slug::parse(&format!("{longest_org}~{longest_name}")).is_ok());
        for raw in [
            "",
            "~sales",
            "acme~",
            "a~sales",
            "acme~~sales",
            "acme~sales~more",
            "Acme~sales",
            "acme~-sales",
            "acme-~sales",
            "admin~sales",
            "acme/sales",
            "acme.sales",
            "acme~0e2d6c1e-7f2a-4c39-9a3e-6f1b2b0f8a11",
            &format!("{longest_org}o~sales"),
            &format!("acme~{longest_name}n"),
        ] {
            assert_eq!(Slug::parse(raw), Err(SlugError), "{raw:?}");
        }
    }

    #[test]
    fn organisation_names_outside_the_pattern_or_reserved_are_refused() {
        assert!(OrgName::parse("ab").is_ok());
        assert!(OrgName::parse(&"x".repeat(32)).is_ok());
        for raw in ["", "a", "-acme", "acme-", "ac~me", "ACME", &"x".repeat(33)] {
            assert_eq!(OrgName::parse(raw), Err(OrgNameError::Pattern), "{raw:?}");
        }
        for raw in OrgName::RESERVED {
            assert_eq!(
                OrgName::parse(raw),
                Err(OrgNameError::Reserved(raw.to_owned()))
            );
        }
    }
}
