//! The facet summary (`CATALOG`, `FACETS`): every facet value's count and display form in one
//! item, so that `facets=true` costs one more item in the listing's first read. Read here into
//! [`FacetSummary`]; its attributes as the writer sets them: [`summary_entry`],
//! [`summary_count`], [`summary_display`], [`summary_mark`].

use std::collections::HashMap;

use aws_sdk_dynamodb::types::AttributeValue;

use super::super::attr::{corrupt, get_u64, n, s};
use super::super::layout::name::{COMPLETE, FULL, TOTAL};
use super::super::layout::{summary_attribute, summary_attribute_of, Item, SummaryPart};
use catalog::error::StoreError;
use catalog::query::{Facet, FacetCounts};

/// What the facet summary answers.
#[derive(Debug, Clone, PartialEq)]
pub enum FacetSummary {
    /// Every facet value of the catalog with its count.
    Counts(FacetCounts),
    /// Not built: a catalog listed before the summary existed, until `reindex` builds it.
    NotBuilt,
    /// The catalog has more values than the summary holds; writers leave it alone.
    Full,
}

impl FacetSummary {
    /// From the summary item and the catalog counter, read together. A catalog with neither
    /// is empty: no values. A summary is believed only once marked complete.
    pub fn read(
        summary: Option<&Item>,
        catalog_counter: Option<&Item>,
    ) -> Result<Self, StoreError> {
        let Some(item) = summary else {
            let listed = match catalog_counter {
                Some(counter) if counter.contains_key(TOTAL) => get_u64(counter, TOTAL)?,
                _ => 0,
            };
            return Ok(if listed == 0 {
                Self::Counts(FacetCounts::default())
            } else {
                Self::NotBuilt
            });
        };
        if is_marked(item, FULL) {
            return Ok(Self::Full);
        }
        if !is_marked(item, COMPLETE) {
            return Ok(Self::NotBuilt);
        }
        let mut values: HashMap<Facet, (Option<String>, u64)> = HashMap::new();
        for (name, value) in item {
            let Some((part, facet)) = summary_attribute_of(name) else {
                continue;
            };
            let entry = values.entry(facet).or_default();
            match (part, value) {
                (SummaryPart::Count, AttributeValue::N(count)) => {
                    entry.1 = count.parse().map_err(|_| corrupt(name))?;
                }
                (SummaryPart::Display, AttributeValue::S(display)) => {
                    entry.0 = Some(display.clone());
                }
                _ => return Err(corrupt(name)),
            }
        }
        Ok(Self::Counts(FacetCounts::from_counts(
            values.into_iter().map(|(facet, (display, count))| {
                let display = display.unwrap_or_else(|| facet.value().to_owned());
                (facet, display, count)
            }),
        )))
    }
}

/// A boolean mark set to true.
pub fn is_marked(item: &Item, mark: &str) -> bool {
    matches!(item.get(mark), Some(AttributeValue::Bool(true)))
}

/// An attribute of the summary to set (`Some`) or remove (`None`).
pub type SummaryChange = (String, Option<AttributeValue>);

/// A value's attributes: its count and its display form; a count of 0 removes both.
pub fn summary_entry(facet: &Facet, display: &str, count: u64) -> [SummaryChange; 2] {
    let count_name = summary_attribute(SummaryPart::Count, facet);
    if count == 0 {
        return [
            (count_name, None),
            (summary_attribute(SummaryPart::Display, facet), None),
        ];
    }
    [
        (count_name, Some(n(count))),
        summary_display(facet, display),
    ]
}

/// A value's count alone (its display form stays).
pub fn summary_count(facet: &Facet, count: u64) -> SummaryChange {
    let name = summary_attribute(SummaryPart::Count, facet);
    (name, (count > 0).then(|| n(count)))
}

/// A value's display form: stored only when it is not the value itself.
pub fn summary_display(facet: &Facet, display: &str) -> SummaryChange {
    let name = summary_attribute(SummaryPart::Display, facet);
    if display == facet.value() {
        (name, None)
    } else {
        (name, Some(s(display)))
    }
}

/// A mark ([`COMPLETE`] or [`FULL`]) set or removed.
pub fn summary_mark(mark: &'static str, on: bool) -> SummaryChange {
    (mark.to_owned(), on.then_some(AttributeValue::Bool(true)))
}

/// `changes` applied to `item`, as DynamoDB would apply them.
pub fn apply_summary_changes(item: &mut Item, changes: &[SummaryChange]) {
    for (name, value) in changes {
        match value {
            Some(value) => {
                item.insert(name.clone(), value.clone());
            }
            None => {
                item.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamo::layout::facet_summary_key;
    use catalog::query::FacetKind;

    fn summary(changes: &[SummaryChange]) -> Item {
        let mut item = facet_summary_key();
        apply_summary_changes(&mut item, changes);
        item
    }

    fn counter(total: u64) -> Item {
        HashMap::from([(TOTAL.to_owned(), n(total))])
    }

    #[test]
    fn a_complete_summary_reads_as_every_value_in_its_display_form() {
        let biology = Facet::new(FacetKind::Category, "Biology").unwrap();
        let birds = Facet::new(FacetKind::Tag, "birds").unwrap();
        let gone = Facet::new(FacetKind::Tag, "gone").unwrap();
        let mut changes = Vec::new();
        changes.extend(summary_entry(&biology, "Biology", 2));
        changes.extend(summary_entry(&birds, "birds", 3));
        changes.extend(summary_entry(&gone, "Gone", 1));
        changes.extend(summary_entry(&gone, "Gone", 0));
        changes.push(summary_mark(COMPLETE, true));
        let item = summary(&changes);
        assert!(
            !item.contains_key("d#tag#birds"),
            "a lowercase value's form is the value"
        );
        assert_eq!(item.get("d#category#biology"), Some(&s("Biology")));
        let FacetSummary::Counts(counts) =
            FacetSummary::read(Some(&item), Some(&counter(3))).unwrap()
        else {
            panic!("complete");
        };
        assert_eq!(counts.category[0].value, "Biology");
        assert_eq!(counts.category[0].count, 2);
        assert_eq!(counts.tag.len(), 1, "a value counted 0 is gone");
        assert_eq!(
            (counts.tag[0].value.as_str(), counts.tag[0].count),
            ("birds", 3)
        );
    }

    #[test]
    fn only_a_complete_summary_is_believed_and_an_empty_catalog_has_no_values() {
        let partial = summary(&summary_entry(
            &Facet::new(FacetKind::Tag, "a").unwrap(),
            "a",
            1,
        ));
        let read = |item: Option<&Item>, counter: Option<&Item>| {
            FacetSummary::read(item, counter).unwrap()
        };
        assert_eq!(
            read(Some(&partial), Some(&counter(5))),
            FacetSummary::NotBuilt
        );
        assert_eq!(read(None, Some(&counter(5))), FacetSummary::NotBuilt);
        assert_eq!(
            read(None, None),
            FacetSummary::Counts(FacetCounts::default())
        );
        assert_eq!(
            read(None, Some(&counter(0))),
            FacetSummary::Counts(FacetCounts::default())
        );
        let full = summary(&[summary_mark(COMPLETE, true), summary_mark(FULL, true)]);
        assert_eq!(read(Some(&full), Some(&counter(5))), FacetSummary::Full);
        let mut corrupt = summary(&[summary_mark(COMPLETE, true)]);
        corrupt.insert("n#tag#a".into(), s("three"));
        assert!(FacetSummary::read(Some(&corrupt), None).is_err());
    }
}
