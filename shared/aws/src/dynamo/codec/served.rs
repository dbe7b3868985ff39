//! Which versions of a dataset may be read by number (Delta Sharing's time travel): those that
//! were activated and not withdrawn since. The dataset item (and its alias) holds them as
//! `served_versions`, ranges of version numbers as text (`1-3,5`), set by every activation in
//! its transaction ([`ServedVersions::activated`]), so the reader learns them from the dataset
//! item it reads anyway.

use std::fmt;

use aws_sdk_dynamodb::types::AttributeValue;

use crate::dynamo::codec::prelude::*;
use crate::dynamo::layout::name::SERVED_VERSIONS;
use crate::dynamo::layout::Item;
use catalog::error::StoreError;
use catalog::records::ActiveVersion;

/// A set of version numbers, as sorted ranges that neither overlap nor touch.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServedVersions(Vec<(u64, u64)>);

impl ServedVersions {
    /// What a dataset item says. An item written before `served_versions` existed (or a new
    /// dataset's, with no active version) names none: its active version alone is served, the
    /// only one known to have been activated and not withdrawn.
    pub fn of_item(item: &Item) -> Result<Self, StoreError> {
        match item.get(SERVED_VERSIONS) {
            None | Some(AttributeValue::Null(_)) => Ok(ActiveVersion::from_item(item)?
                .map(|active| Self(vec![(active.version, active.version)]))
                .unwrap_or_default()),
            Some(AttributeValue::S(text)) => Self::parse(text).ok_or_else(|| {
                StoreError::Corrupt(format!("{SERVED_VERSIONS} '{text}' is not a version list"))
            }),
            Some(_) => Err(StoreError::Corrupt(format!(
                "{SERVED_VERSIONS} is not a string"
            ))),
        }
    }

    /// `1-3,5`: sorted ranges (a single version alone), none touching another; `` is none.
    pub fn parse(text: &str) -> Option<Self> {
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        if text.is_empty() {
            return Some(Self(ranges));
        }
        for part in text.split(',') {
            let (low, high) = match part.split_once('-') {
                Some((low, high)) => (number(low)?, number(high)?),
                None => (number(part)?, number(part)?),
            };
            let after_last = ranges.last().is_none_or(|(_, end)| low > end + 1);
            if low > high || !after_last {
                return None;
            }
            ranges.push((low, high));
        }
        Some(Self(ranges))
    }

    /// Whether `version` may be read.
    pub fn contains(&self, version: u64) -> bool {
        self.0
            .iter()
            .any(|(low, high)| (*low..=*high).contains(&version))
    }

    /// The set once `version` is activated: it is added, and every version above it is
    /// withdrawn (a rollback; nothing is above it otherwise, the highest being the active one).
    pub fn activated(&self, version: u64) -> Self {
        let mut ranges: Vec<(u64, u64)> = self
            .0
            .iter()
            .filter(|(low, _)| *low <= version)
            .map(|(low, high)| (*low, (*high).min(version)))
            .collect();
        match ranges.last_mut() {
            Some((_, high)) if *high + 1 >= version => *high = version,
            _ => ranges.push((version, version)),
        }
        Self(ranges)
    }

    /// The attribute that stores the set.
    pub fn to_attribute(&self) -> AttributeValue {
        AttributeValue::S(self.to_string())
    }
}

fn number(text: &str) -> Option<u64> {
    if text.is_empty() || text.len() > 10 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

impl fmt::Display for ServedVersions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (low, high)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match low == high {
                true => write!(f, "{low}")?,
                false => write!(f, "{low}-{high}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn served(text: &str) -> ServedVersions {
        ServedVersions::parse(text).unwrap()
    }

    #[test]
    fn activations_add_their_version_and_a_rollback_withdraws_what_is_above_it() {
        let mut set = ServedVersions::default();
        for v in [1, 2, 3] {
            set = set.activated(v);
        }
        assert_eq!(set.to_string(), "1-3");
        // Rolled back to 1: 2 and 3 withdrawn; a new version 4 is served, 2 and 3 are not.
        set = set.activated(1);
        assert_eq!(set.to_string(), "1");
        set = set.activated(4);
        assert_eq!(set.to_string(), "1,4");
        assert!(!set.contains(2) && !set.contains(3));
        // A version recorded by a failed publish (5) is never activated: never served.
        set = set.activated(6);
        assert_eq!(set.to_string(), "1,4,6");
        // Activating a withdrawn version again serves it again, and withdraws what is above.
        set = set.activated(3);
        assert_eq!(set.to_string(), "1,3");
        // The same version again (a restore) changes nothing.
        assert_eq!(set.activated(3), set);
        assert_eq!(served("1-3,5").activated(4).to_string(), "1-4");
        assert_eq!(served("1-3").activated(4).to_string(), "1-4");
        assert_eq!(served("1-3,5-9").activated(2).to_string(), "1-2");
    }

    #[test]
    fn the_stored_text_reads_back_and_anything_else_is_refused() {
        for text in ["", "7", "1-3,5", "1-3,5,7-9", "1,3"] {
            assert_eq!(served(text).to_string(), text);
        }
        let set = served("1-3,5");
        assert_eq!(
            (1..=6).map(|v| set.contains(v)).collect::<Vec<_>>(),
            [true, true, true, false, true, false]
        );
        for bad in [
            "x", "1-", "-1", "3-1", "1,1", "1-3,2", "1-3,4", "5,1", "1,,2", " 1",
        ] {
            assert_eq!(ServedVersions::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn an_item_without_the_attribute_serves_its_active_version_alone() {
        use crate::dynamo::layout::name::ACTIVE;
        let mut item = Item::new();
        assert_eq!(
            ServedVersions::of_item(&item).unwrap(),
            ServedVersions::default(),
            "a new dataset serves nothing"
        );
        let active = ActiveVersion {
            version: 3,
            s3_key: "datasets/a/v3/x.parquet".into(),
            size: 1,
            row_count: 1,
            columns: vec!["a".into()],
            sha256: "ab".repeat(32),
            published_at: chrono::DateTime::UNIX_EPOCH,
            files: None,
            ingested: None,
        };
        item.insert(ACTIVE.to_owned(), active.to_value());
        assert_eq!(ServedVersions::of_item(&item).unwrap().to_string(), "3");
        item.insert(
            SERVED_VERSIONS.to_owned(),
            AttributeValue::S("1,3-4".into()),
        );
        assert_eq!(ServedVersions::of_item(&item).unwrap().to_string(), "1,3-4");
        item.insert(SERVED_VERSIONS.to_owned(), AttributeValue::S("4-3".into()));
        assert!(ServedVersions::of_item(&item).is_err());
    }
}
