//! A dataset's card: its README, Markdown text that the dataset page renders (sanitised, in
//! the browser: docs/site.md) below the description. Kept in the dataset's descriptive metadata
//! ([`crate::records::DatasetMeta::readme`]), never in its list entries or the text index.

/// A card as an operator gives it: UTF-8 Markdown, not blank, at most [`Readme::MAX_BYTES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readme(String);

impl Readme {
    /// 32 KiB: a page of documentation, and a twelfth of a DynamoDB item (the dataset item and
    /// its UUID alias each carry it).
    pub const MAX_BYTES: usize = 32 * 1024;

    pub fn parse(raw: &str) -> Result<Self, ReadmeError> {
        if raw.len() > Self::MAX_BYTES {
            return Err(ReadmeError::TooLarge(raw.len()));
        }
        if raw.trim().is_empty() {
            return Err(ReadmeError::Blank);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

/// A card that publish and `catalog-admin meta readme` refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadmeError {
    #[error(
        "the card (README) is {0} bytes, over the {max} bytes (32 KiB) a card may hold",
        max = Readme::MAX_BYTES
    )]
    TooLarge(usize),
    #[error("the card (README) is empty; to remove a card, clear it instead")]
    Blank,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_is_at_most_32_kib_of_utf8_bytes() {
        let at_limit = "a".repeat(Readme::MAX_BYTES);
        assert_eq!(Readme::parse(&at_limit).unwrap().as_str(), at_limit);
        // Counted in bytes, not characters: 'é' is two.
        let over = "é".repeat(Readme::MAX_BYTES / 2 + 1);
        assert_eq!(over.chars().count(), Readme::MAX_BYTES / 2 + 1);
        let err = Readme::parse(&over).unwrap_err();
        assert_eq!(err, ReadmeError::TooLarge(Readme::MAX_BYTES + 2));
        assert_eq!(
            err.to_string(),
            "the card (README) is 32770 bytes, over the 32768 bytes (32 KiB) a card may hold"
        );
    }

    #[test]
    fn a_blank_card_is_refused() {
        assert_eq!(Readme::parse(""), Err(ReadmeError::Blank));
        assert_eq!(Readme::parse(" \n\t"), Err(ReadmeError::Blank));
        assert!(Readme::parse("# Title").is_ok());
    }
}
