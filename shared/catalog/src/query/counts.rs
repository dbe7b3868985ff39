//! Facet counts: every `category`, `tag` and `license` value of the catalog with how many listed
//! datasets have it, in the case an operator published it in (the list endpoint's
//! `facets=true`, a data browser's filter suggestions).
//!
//! A value is a facet ([`Facet`]): trimmed and lowercased, so `Biology` and `biology` are one
//! value. Its **display form** is the one the earliest published listed dataset having it gives
//! (the first entry of its facet list): adding datasets never changes it, and the writer can
//! keep it exact without reading other datasets.

use std::collections::HashMap;

use serde::Serialize;

use super::{Facet, FacetKind, QueryError};
use crate::records::Card;

/// One value and how many listed datasets have it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ValueCount {
    /// The display form.
    pub value: String,
    pub count: u64,
}

/// Every facet value of the catalog, by kind; each list sorted by count (most first), then by
/// value ignoring case (A to Z).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FacetCounts {
    pub category: Vec<ValueCount>,
    pub tag: Vec<ValueCount>,
    pub license: Vec<ValueCount>,
}

impl FacetCounts {
    /// From each value's display form and count, in any order; values counted 0 are left out.
    pub fn from_counts(entries: impl IntoIterator<Item = (Facet, String, u64)>) -> Self {
        let mut sorted: Vec<(Facet, String, u64)> =
            entries.into_iter().filter(|(_, _, n)| *n > 0).collect();
        // Within a kind, facets order by their normalized value: the display form ignoring case.
        sorted.sort_by(|(a, _, m), (b, _, n)| n.cmp(m).then_with(|| a.cmp(b)));
        let mut counts = Self::default();
        for (facet, value, count) in sorted {
            let list = match facet.kind() {
                FacetKind::Category => &mut counts.category,
                FacetKind::Tag => &mut counts.tag,
                FacetKind::License => &mut counts.license,
            };
            list.push(ValueCount { value, count });
        }
        counts
    }

    /// The counts of a catalog whose listed datasets have these cards, oldest published first:
    /// the rule itself, which the in-memory adapter applies and the stored summary keeps.
    pub fn tally<'a>(cards: impl IntoIterator<Item = &'a Card>) -> Self {
        let mut seen: HashMap<Facet, (String, u64)> = HashMap::new();
        for card in cards {
            for facet in card.facets() {
                let display = card.display_of(&facet).unwrap_or(facet.value()).to_owned();
                seen.entry(facet).or_insert((display, 0)).1 += 1;
            }
        }
        Self::from_counts(seen.into_iter().map(|(f, (d, n))| (f, d, n)))
    }

    /// How many values there are, of every kind.
    pub fn len(&self) -> usize {
        self.category.len() + self.tag.len() + self.license.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Card {
    /// The form this card gives `facet`'s value, as published (trimmed): its category or
    /// license, or the first of its tags that is that value. `None`: the card does not have it.
    pub fn display_of(&self, facet: &Facet) -> Option<&str> {
        let is = |raw: &str| Facet::new(facet.kind(), raw).is_ok_and(|f| f == *facet);
        let found = match facet.kind() {
            FacetKind::Category => Some(self.category.as_str()).filter(|c| is(c)),
            FacetKind::License => Some(self.license.as_str()).filter(|l| is(l)),
            FacetKind::Tag => self.tags.iter().map(String::as_str).find(|t| is(t)),
        };
        found.map(str::trim)
    }
}

/// The list endpoint's `facets` parameter: `true` or `false` (absent: false).
pub fn parse_facets_flag(raw: Option<&str>) -> Result<bool, QueryError> {
    match raw {
        None | Some("false") => Ok(false),
        Some("true") => Ok(true),
        Some(other) => Err(QueryError::FacetsFlag(crate::input::echo(other))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn card(category: &str, tags: &[&str], license: &str) -> Card {
        Card {
            name: "n".into(),
            description: None,
            category: category.into(),
            tags: tags.iter().map(|t| (*t).to_owned()).collect(),
            license: license.into(),
            access_level: Default::default(),
        }
    }

    fn counts(list: &[ValueCount]) -> Vec<(&str, u64)> {
        list.iter().map(|v| (v.value.as_str(), v.count)).collect()
    }

    #[test]
    fn every_value_is_counted_once_per_dataset_in_the_earliest_datasets_case() {
        let cards = [
            card(" Biology ", &["Birds", "birds", "wetlands"], "CC-BY-4.0"),
            card("biology", &["BIRDS", "Zebra"], "cc-by-4.0"),
            card("Transport", &["apple", "  "], "CC0-1.0"),
        ];
        let c = FacetCounts::tally(&cards);
        assert_eq!(counts(&c.category), [("Biology", 2), ("Transport", 1)]);
        // Most first, then A to Z ignoring case; a blank tag is no value.
        assert_eq!(
            counts(&c.tag),
            [("Birds", 2), ("apple", 1), ("wetlands", 1), ("Zebra", 1)]
        );
        assert_eq!(counts(&c.license), [("CC-BY-4.0", 2), ("CC0-1.0", 1)]);
        assert_eq!(c.len(), 8);
        assert!(FacetCounts::tally(&[]).is_empty());
    }

    #[test]
    fn a_card_shows_a_value_in_its_own_case() {
        let c = card("Biology", &["rivers", "Birds ", "birds"], "CC0-1.0");
        let tag = Facet::new(FacetKind::Tag, "BIRDS").unwrap();
        assert_eq!(c.display_of(&tag), Some("Birds"));
        let category = Facet::new(FacetKind::Category, "biology").unwrap();
        assert_eq!(c.display_of(&category), Some("Biology"));
        let other = Facet::new(FacetKind::License, "mit").unwrap();
        assert_eq!(c.display_of(&other), None);
        // The same text under another kind is not the value.
        let as_tag = Facet::new(FacetKind::Tag, "biology").unwrap();
        assert_eq!(c.display_of(&as_tag), None);
    }

    #[test]
    fn zero_counts_are_left_out() {
        let f = |v: &str| Facet::new(FacetKind::Tag, v).unwrap();
        let c =
            FacetCounts::from_counts([(f("a"), "A".to_owned(), 0), (f("b"), "b".to_owned(), 3)]);
        assert_eq!(counts(&c.tag), [("b", 3)]);
    }

    #[test]
    fn the_facets_flag_is_true_or_false() {
        assert_eq!(parse_facets_flag(None), Ok(false));
        assert_eq!(parse_facets_flag(Some("false")), Ok(false));
        assert_eq!(parse_facets_flag(Some("true")), Ok(true));
        for bad in ["", "1", "yes", "True", "TRUE", " true"] {
            assert_eq!(
                parse_facets_flag(Some(bad)),
                Err(QueryError::FacetsFlag(bad.to_owned())),
                "{bad:?}"
            );
        }
    }
}
