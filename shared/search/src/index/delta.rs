//! The changes not yet folded into every shard.

use std::collections::BTreeMap;

use super::shard::{Shard, Terms};
use super::{SearchError, TextDoc};

/// The changes not yet folded into every shard: the changed datasets' whole text (a tantivy
/// index), and for each the number of its last change.
#[derive(Debug, Clone)]
pub struct Delta {
    pub(super) shard: Shard,
    /// For each changed dataset, the number of its last change and its new text.
    pub(super) changes: BTreeMap<u64, (u64, TextDoc)>,
}

impl Delta {
    pub(super) fn new(changes: BTreeMap<u64, (u64, TextDoc)>) -> Result<Self, SearchError> {
        let docs: Vec<Terms> = changes.values().map(|(_, doc)| Terms::of(doc)).collect();
        Ok(Self {
            shard: Shard::build(&docs)?,
            changes,
        })
    }

    /// The delta of these changes: each dataset's position, the number of its last change and
    /// its text (as [`Self::changes`] gives them, to store).
    pub fn from_changes(
        changes: impl IntoIterator<Item = (u64, TextDoc)>,
    ) -> Result<Self, SearchError> {
        Self::new(
            changes
                .into_iter()
                .map(|(change, doc)| (doc.seq, (change, doc)))
                .collect(),
        )
    }

    /// Each changed dataset's last change and text, by position.
    pub fn changes(&self) -> impl Iterator<Item = (u64, &TextDoc)> {
        self.changes.values().map(|(change, doc)| (*change, doc))
    }

    pub fn shard(&self) -> &Shard {
        &self.shard
    }

    /// How many datasets it holds.
    pub fn len(&self) -> usize {
        self.changes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.changes.is_empty()
    }
}
