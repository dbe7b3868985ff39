//! Where each shard starts ([`Layout`]), what a shard's range holds ([`Bounds`]), and which
//! shards a query reads within its budget.

use std::collections::BTreeSet;

use super::facet_term;

/// What a shard holds: the terms from `lower` (inclusive) to `upper` (exclusive; `None`: every
/// term after), of the datasets at positions from `seq_lower` to `seq_upper` (likewise). Shards
/// of one term range split by position hold a word too common to split by term: a change then
/// rewrites only the positions it falls in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Bounds {
    pub(super) lower: String,
    pub(super) upper: Option<String>,
    pub(super) seq_lower: u64,
    pub(super) seq_upper: Option<u64>,
}

impl Bounds {
    pub(super) const ALL: Self = Self {
        lower: String::new(),
        upper: None,
        seq_lower: 0,
        seq_upper: None,
    };

    pub(super) fn contains(&self, term: &str) -> bool {
        term >= self.lower.as_str() && self.upper.as_deref().is_none_or(|u| term < u)
    }

    pub(super) fn holds_seq(&self, seq: u64) -> bool {
        seq >= self.seq_lower && self.seq_upper.is_none_or(|u| seq < u)
    }

    /// Whether a term starting with `word` can fall in this range.
    fn overlaps_prefix(&self, word: &str) -> bool {
        let starts_before_upper = self.upper.as_deref().is_none_or(|u| word < u);
        let reaches_lower = word >= self.lower.as_str() || self.lower.starts_with(word);
        starts_before_upper && reaches_lower
    }
}

/// Where each shard starts, and what folding has reached: the part of the index a cold
/// listing reads first, to know which shards its words need.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct Layout {
    /// Each shard's lowest term, ascending; the first is `""`. Shards split by position share
    /// it.
    pub lowers: Vec<String>,
    /// Each shard's lowest position: 0, or where a shard of the same term range starts.
    pub seq_lowers: Vec<u64>,
    /// For each shard, the last change it has folded in.
    pub folded: Vec<u64>,
    /// How many datasets the catalog lists (BM25's count).
    pub datasets: u64,
    /// Whether the index holds every dataset's facets: true for an index built since filters
    /// were indexed, false for one built before (until `reindex`, filters are then answered
    /// elsewhere).
    #[serde(default)]
    pub filters: bool,
}

impl Layout {
    pub(super) fn range(&self, shard: usize) -> Bounds {
        let lower = &self.lowers[shard];
        let next = shard + 1;
        let same_terms = self.lowers.get(next) == Some(lower);
        Bounds {
            lower: lower.clone(),
            upper: self.lowers[next..].iter().find(|l| *l != lower).cloned(),
            seq_lower: self.seq_lowers[shard],
            seq_upper: same_terms.then(|| self.seq_lowers[next]),
        }
    }

    /// The shard the next change folds into: the one that has gone longest without.
    pub fn fold_target(&self) -> Option<usize> {
        self.folded
            .iter()
            .enumerate()
            .min_by_key(|(i, f)| (**f, *i))
            .map(|(i, _)| i)
    }

    /// The shards a query with these words and these facet keys reads, ascending.
    pub fn shards_for(&self, words: &[String], facets: &[String]) -> Vec<usize> {
        let mut needed = BTreeSet::new();
        for key in facets {
            let term = facet_term(key);
            needed.extend((0..self.lowers.len()).filter(|s| self.range(*s).contains(&term)));
        }
        for word in words {
            for shard in 0..self.lowers.len() {
                let range = self.range(shard);
                let hit = if word.chars().nth(1).is_some() {
                    range.overlaps_prefix(word)
                } else {
                    range.contains(word)
                };
                if hit {
                    needed.insert(shard);
                }
            }
        }
        needed.into_iter().collect()
    }

    /// The words of a query that its read budget takes (in the query's order), and those it
    /// leaves out (the costliest first): the facets' shards are read whatever they cost; then, one at a time, the
    /// word whose shards add the fewest bytes to those already taken (the first in the query
    /// on a tie), while the bytes stay within `budget`. The first word that does not fit is
    /// left out with every word still untaken: the most common words, whose shards are the
    /// largest, go first. `sizes` is each shard's bytes.
    pub fn words_within(
        &self,
        words: &[String],
        facets: &[String],
        sizes: &[u64],
        budget: u64,
    ) -> Budgeted {
        let size = |shard: &usize| sizes.get(*shard).copied().unwrap_or(0);
        let mut taken: BTreeSet<usize> = self.shards_for(&[], facets).into_iter().collect();
        let mut spent: u64 = taken.iter().map(size).sum();
        let needs: Vec<Vec<usize>> = words
            .iter()
            .map(|w| self.shards_for(std::slice::from_ref(w), &[]))
            .collect();
        let mut kept = vec![false; words.len()];
        loop {
            let cheapest = (0..words.len())
                .filter(|i| !kept[*i])
                .map(|i| {
                    let adds: u64 = needs[i]
                        .iter()
                        .filter(|s| !taken.contains(s))
                        .map(size)
                        .sum();
                    (adds, i)
                })
                .min();
            match cheapest {
                Some((adds, i)) if spent.saturating_add(adds) <= budget => {
                    spent += adds;
                    taken.extend(&needs[i]);
                    kept[i] = true;
                }
                _ => break,
            }
        }
        // The words left out, the costliest first.
        let mut left_out: Vec<(u64, usize)> = (0..words.len())
            .filter(|i| !kept[*i])
            .map(|i| (needs[i].iter().map(size).sum(), i))
            .collect();
        left_out.sort_by_key(|(cost, i)| (std::cmp::Reverse(*cost), *i));
        Budgeted {
            words: (0..words.len())
                .filter(|i| kept[*i])
                .map(|i| words[i].clone())
                .collect(),
            left_out: left_out
                .into_iter()
                .map(|(_, i)| words[i].clone())
                .collect(),
            bytes: spent,
        }
    }
}

/// A query's words as its read budget takes them ([`Layout::words_within`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Budgeted {
    /// The words the query is answered with.
    pub words: Vec<String>,
    /// The words too common to read within the budget, the costliest first: the answer
    /// ignores them.
    pub left_out: Vec<String>,
    /// The bytes of the shards the facets and the taken words read.
    pub bytes: u64,
}
