//! The facet summary (`CATALOG`/`FACETS`): every facet value's count and display form in one
//! item, which the list function reads for `facets=true` with the listing's first request.
//!
//! It changes with the facet counters, in the same transactions: a first activation sets each
//! value it joins to its counter's new total (and a new value's display form: the dataset is
//! the first to have it), and a catalog's first listing marks it complete; an activation that
//! changes the case of a value on the dataset first in that value's list sets the new form;
//! every facet list rewrite sets the list's new total and its first member's form with the
//! counter (a total of 0 removes the value). `reindex` builds it for a catalog from before it.
//! DynamoDB allows one operation per item in a transaction: every change an activation makes
//! to the summary is one update.
//!
//! One item holds at most 400 KB. A write that would take it past [`BUDGET_BYTES`] marks it
//! full instead; from then on writers leave it alone and the list answers without facets,
//! until `reindex` finds that the catalog's values fit again. The room above the budget is for
//! writers that checked it at the same moment (one activation adds at most 34 values).

use catalog_aws::dynamo::codec::{
    apply_summary_changes, is_marked, item_size, summary_mark, SummaryChange,
};
use catalog_aws::dynamo::layout::name::FULL;
use catalog_aws::dynamo::layout::{facet_summary_key, Item};

/// The most the summary may hold, in bytes as DynamoDB counts them (names and values): 300 KiB
/// of the item's 400 KB.
pub const BUDGET_BYTES: usize = 300 * 1024;

/// The summary as read before a write (an empty item when there is none yet).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredSummary(Item);

impl Default for StoredSummary {
    fn default() -> Self {
        Self(facet_summary_key())
    }
}

impl StoredSummary {
    pub fn new(item: Option<Item>) -> Self {
        item.map_or_else(Self::default, Self)
    }

    /// Writers leave a full summary alone.
    pub fn is_full(&self) -> bool {
        is_marked(&self.0, FULL)
    }

    /// Its size with `changes` applied.
    pub fn size_with(&self, changes: &[SummaryChange]) -> usize {
        let mut item = self.0.clone();
        apply_summary_changes(&mut item, changes);
        item_size(&item)
    }

    /// What a write sends: nothing when the summary is full; else `changes`, unless they and the
    /// values the rewrites that follow will add (`joining`) would take it past the budget, in
    /// which case only the full mark.
    pub fn guard(
        &self,
        changes: Vec<SummaryChange>,
        joining: &[SummaryChange],
    ) -> Vec<SummaryChange> {
        if self.is_full() {
            return Vec::new();
        }
        let all: Vec<SummaryChange> = changes.iter().chain(joining).cloned().collect();
        if !all.is_empty() && self.size_with(&all) > BUDGET_BYTES {
            return vec![summary_mark(FULL, true)];
        }
        changes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::query::{Facet, FacetKind};
    use catalog_aws::dynamo::codec::summary_entry;

    fn values(from: usize, to: usize) -> Vec<SummaryChange> {
        (from..to)
            .flat_map(|i| {
                let tag = format!("Tag-{i:05}-{}", "x".repeat(40));
                let facet = Facet::new(FacetKind::Tag, &tag).unwrap();
                summary_entry(&facet, &tag, 3)
            })
            .collect()
    }

    #[test]
    fn a_write_that_would_pass_the_budget_marks_the_summary_full_and_then_nothing_is_written() {
        let empty = StoredSummary::default();
        let some = values(0, 10);
        assert_eq!(empty.guard(some.clone(), &[]), some);
        // Each value here costs 164 bytes (names, count, form): about 1,870 fill the budget.
        let mut item = facet_summary_key();
        apply_summary_changes(&mut item, &values(0, 1_860));
        let nearly = StoredSummary::new(Some(item));
        assert!(nearly.size_with(&[]) <= BUDGET_BYTES);
        let more = values(1_860, 1_894);
        assert!(nearly.size_with(&more) > BUDGET_BYTES);
        assert_eq!(
            nearly.guard(more.clone(), &[]),
            [summary_mark(FULL, true)],
            "a first activation's values"
        );
        assert_eq!(
            nearly.guard(Vec::new(), &more),
            [summary_mark(FULL, true)],
            "the values its rewrites will add count too"
        );
        // Changes that do not pass it go through (these values are there already).
        assert_eq!(nearly.guard(values(0, 3), &[]), values(0, 3));
        let mut full = facet_summary_key();
        apply_summary_changes(&mut full, &[summary_mark(FULL, true)]);
        let full = StoredSummary::new(Some(full));
        assert!(full.is_full());
        assert!(full.guard(values(0, 1), &[]).is_empty());
    }
}
