//! Full-text search of the listings (`q`), on tantivy, partitioned so that a query reads only
//! the parts of the index its words need.
//!
//! - **Shards by term range.** The index is split into [`Shard`]s, each a small tantivy index
//!   holding every posting of the terms from its lower bound up to the next shard's
//!   ([`Layout`]). A dataset is in a shard when one of its words falls in the shard's range, with
//!   those words only. A word of `q` reads only the shards its prefix range touches, whatever the
//!   catalog's size: a cold listing loads those, never the whole index.
//! - **A delta for recent changes.** A change to the catalog goes into the [`Delta`] (a tantivy
//!   index of the changed datasets' whole text, and the positions of removed ones), not into the
//!   shards. Each change then folds the delta into one shard, the one that has gone longest
//!   without ([`TextIndex::fold_one`]), so that the delta stays about as many datasets as there
//!   are shards, and a change rewrites the delta and one shard whatever the catalog's size.
//!   A shard that outgrows [`TextIndex::max_shard_bytes`] is split in two.
//! - **Matching.** A dataset matches when each word of `q` starts a word of its name, description
//!   or a tag (`bird` finds `Birds`); words are runs of letters and digits, lowercase
//!   ([`words`]). A word of one character matches only that word, so that no query reads a large
//!   share of the index.
//! - **Filters.** Each dataset's facets (`category#biology`, `tag#birds`, `license#cc0-1.0`)
//!   are terms of a field of their own, marked by [`FACET_MARK`] so that they sort before every
//!   word, into shards of their own. A filter reads the shards of its one term (several for a
//!   common value, split by position), and any number of filters, with or without words, is
//!   answered by intersecting them ([`TextIndex::find`]).
//! - **Ranking.** Each matching word scores, in each field, BM25 (tantivy's, over the catalog's
//!   counts) when it is a whole word of the field, plus a constant for starting one; the field
//!   weighs 3 for the name, 2 for tags and 1 for the description. The dataset's score is the sum.
//!   Length normalisation is off: a field's length in a shard is only its words in that range.
//!   So a dataset's score depends on its text and the catalog's counts, never on how the index
//!   is split, and the same catalog answers the same whichever changes built it.
//!
//! Datasets are known by their position in the catalog list (`seq`); a take-down, which
//! renumbers positions, rebuilds the index (`catalog-admin datasets reindex`).
//!
//! In files: `shard` (one tantivy index in memory, what it holds of a dataset, how it is built
//! and split), `blob` (a shard as stored), `layout` (where shards start, which a query reads),
//! `delta` (changes not yet folded), `score` (ranking) and this one (the index: build, change,
//! fold, filter).

use std::collections::{BTreeMap, HashMap, HashSet};

use catalog::query::Facet;
pub use catalog::query::{words, MAX_WORD_BYTES};
use tantivy::Score;

mod blob;
mod delta;
mod layout;
mod prefix;
mod score;
mod shard;

pub use delta::Delta;
pub use layout::{Budgeted, Layout};
pub use shard::Shard;

use layout::Bounds;
use shard::{split_into, ShardWriter, Terms};

/// Why the index could not be built, read or searched.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error("text index: {0}")]
    Tantivy(#[from] tantivy::TantivyError),
    #[error("text index: {0}")]
    Io(#[from] std::io::Error),
    #[error("text index: a stored shard is damaged: {0}")]
    Damaged(&'static str),
    /// Filters asked of an index built before it held them (a caller's bug: see
    /// [`Layout::filters`]).
    #[error("text index: built before it held filters")]
    NoFilters,
    /// A shard the query needs was not loaded (a caller's bug).
    #[error("text index: shard {0} is not loaded")]
    NotLoaded(usize),
}

/// A damaged stored shard is a malformed record; anything else tantivy reports is the backend's.
impl From<SearchError> for catalog::error::StoreError {
    fn from(e: SearchError) -> Self {
        match e {
            SearchError::Damaged(what) => {
                Self::Corrupt(format!("text index: a stored shard is damaged: {what}"))
            }
            other => Self::Other(Box::new(other)),
        }
    }
}

/// What the index holds of a listed dataset: its position, its text and its facets.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TextDoc {
    pub seq: u64,
    pub name: String,
    pub description: Option<String>,
    pub tags: Vec<String>,
    /// Its facets' keys ([`Facet::key`]: `category#biology`). Absent from a delta stored before
    /// filters were indexed (a manifest then says the index has none).
    #[serde(default)]
    pub facets: Vec<String>,
}

impl TextDoc {
    /// What the index holds of a listed dataset's card.
    pub fn of(seq: u64, card: &catalog::records::Card) -> Self {
        Self {
            seq,
            name: card.name.clone(),
            description: card.description.clone(),
            tags: card.tags.clone(),
            facets: Facet::of(&card.category, &card.tags, &card.license)
                .iter()
                .map(Facet::key)
                .collect(),
        }
    }

    /// Whether two cards are the same to the index: the same searched text and the same
    /// facets (a change to anything else leaves the index alone).
    pub fn same_terms(a: &catalog::records::Card, b: &catalog::records::Card) -> bool {
        Self::of(0, a) == Self::of(0, b)
    }
}

/// What a facet's term starts with: a character no word holds ([`words`] keeps letters and
/// digits), so that facet terms sort before every word and never match one.
pub const FACET_MARK: char = '\u{1}';

/// The term of a facet key in the index.
pub fn facet_term(key: &str) -> String {
    format!("{FACET_MARK}{key}")
}
/// A full build cuts shards where their estimated size reaches this share of the largest.
const SHARD_FILL: f64 = 0.6;
/// The estimate: bytes per dataset holding a word in a field, and per distinct word beside its
/// length (measured by `catalog-bench text`).
const BYTES_PER_POSTING: u64 = 2;
const BYTES_PER_TERM: u64 = 8;

/// A dataset found by a query, and its score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub seq: u64,
    pub score: Score,
}

/// The text index: its layout, its shards (those loaded; a listing loads only those its words
/// need) and its delta.
#[derive(Debug, Clone)]
pub struct TextIndex {
    pub layout: Layout,
    shards: Vec<Option<Shard>>,
    delta: Delta,
    /// The number of the last change.
    change: u64,
    max_shard_bytes: usize,
}

impl TextIndex {
    /// A shard is split when it grows past this many bytes.
    pub const MAX_SHARD_BYTES: usize = 256 * 1024;

    /// The index of these datasets, split into shards of at most `max_shard_bytes` (unless one
    /// word's postings alone are larger), with an empty delta.
    pub fn build(docs: &[TextDoc], max_shard_bytes: usize) -> Result<Self, SearchError> {
        // Where shards start: cut the vocabulary, in order, where the estimated size of the
        // postings so far reaches a share of the largest shard.
        let mut weights: HashMap<String, u64> = HashMap::new();
        for doc in docs {
            for field in Terms::of(doc).fields {
                for word in field.into_keys() {
                    *weights.entry(word).or_default() += 1;
                }
            }
        }
        let mut vocabulary: Vec<(String, u64)> = weights.into_iter().collect();
        vocabulary.sort_unstable();
        let target = (max_shard_bytes as f64 * SHARD_FILL) as u64;
        let mut lowers = vec![String::new()];
        let mut size = 0;
        for (word, postings) in vocabulary {
            let estimate = postings * BYTES_PER_POSTING + word.len() as u64 + BYTES_PER_TERM;
            if size > 0 && size + estimate > target {
                lowers.push(word);
                size = 0;
            }
            size += estimate;
        }
        // One writer per shard, each dataset added to the shards of its words.
        let mut writers = lowers
            .iter()
            .map(|_| ShardWriter::new())
            .collect::<Result<Vec<_>, _>>()?;
        for doc in docs {
            let terms = Terms::of(doc);
            let mut parts: BTreeMap<usize, Terms> = BTreeMap::new();
            for (i, field) in terms.fields.into_iter().enumerate() {
                for (word, count) in field {
                    let shard = lowers.partition_point(|l| l.as_str() <= word.as_str()) - 1;
                    let part = parts.entry(shard).or_insert_with(|| Terms {
                        seq: doc.seq,
                        ..Terms::default()
                    });
                    part.fields[i].insert(word, count);
                }
            }
            for (shard, part) in parts {
                writers[shard].add(&part)?;
            }
        }
        // A shard the estimate let grow too large is split.
        let mut pieces = Vec::new();
        for (i, writer) in writers.into_iter().enumerate() {
            let shard = writer.finish()?;
            let bounds = Bounds {
                lower: lowers[i].clone(),
                upper: lowers.get(i + 1).cloned(),
                ..Bounds::ALL
            };
            if shard.bytes <= max_shard_bytes {
                pieces.push((bounds, shard));
            } else {
                let terms = shard.terms()?;
                drop(shard);
                split_into(&terms, bounds, max_shard_bytes, &mut pieces)?;
            }
        }
        Ok(Self {
            layout: Layout {
                lowers: pieces.iter().map(|(b, _)| b.lower.clone()).collect(),
                seq_lowers: pieces.iter().map(|(b, _)| b.seq_lower).collect(),
                folded: vec![0; pieces.len()],
                datasets: docs.len() as u64,
                filters: true,
            },
            shards: pieces.into_iter().map(|(_, s)| Some(s)).collect(),
            delta: Delta::new(BTreeMap::new())?,
            change: 0,
            max_shard_bytes,
        })
    }

    /// An index as stored: its layout, the delta and the shards loaded (`None` for those not).
    pub fn from_parts(
        layout: Layout,
        delta: Delta,
        shards: Vec<Option<Shard>>,
        change: u64,
        max_shard_bytes: usize,
    ) -> Self {
        Self {
            layout,
            shards,
            delta,
            change,
            max_shard_bytes,
        }
    }

    pub fn shard(&self, i: usize) -> Option<&Shard> {
        self.shards.get(i).and_then(Option::as_ref)
    }

    pub fn delta(&self) -> &Delta {
        &self.delta
    }

    pub fn max_shard_bytes(&self) -> usize {
        self.max_shard_bytes
    }

    /// The bytes the shards hold, and the delta.
    pub fn bytes(&self) -> usize {
        self.shards
            .iter()
            .flatten()
            .map(Shard::bytes)
            .sum::<usize>()
            + self.delta.shard.bytes
    }

    /// Records a dataset's new text (a new dataset, or an edit), in the delta. The caller keeps
    /// [`Layout::datasets`] equal to the catalog's count.
    pub fn upsert(&mut self, doc: TextDoc) -> Result<(), SearchError> {
        let mut changes = self.delta.changes.clone();
        self.change += 1;
        changes.insert(doc.seq, (self.change, doc));
        self.delta = Delta::new(changes)?;
        Ok(())
    }

    /// The number of the last change.
    pub fn change(&self) -> u64 {
        self.change
    }

    /// Folds every pending change into the shard that has gone longest without, and drops from
    /// the delta what every shard now holds. Returns the shards written (the folded one, or
    /// the two it was split into), with their new positions in the layout.
    pub fn fold_one(&mut self) -> Result<Vec<usize>, SearchError> {
        let Some(target) = self.layout.fold_target() else {
            return Ok(Vec::new());
        };
        let since = self.layout.folded[target];
        let shard = self
            .shards
            .get(target)
            .and_then(Option::as_ref)
            .ok_or(SearchError::NotLoaded(target))?;
        let range = self.layout.range(target);
        let pending: Vec<(&u64, &(u64, TextDoc))> = self
            .delta
            .changes
            .iter()
            .filter(|(_, (change, _))| *change > since)
            .collect();
        let mut docs: BTreeMap<u64, Terms> =
            shard.terms()?.into_iter().map(|t| (t.seq, t)).collect();
        for (seq, (_, doc)) in &pending {
            docs.remove(seq);
            if let Some(terms) = Terms::of(doc).within(&range) {
                docs.insert(**seq, terms);
            }
        }
        let docs: Vec<Terms> = docs.into_values().collect();
        let mut pieces = Vec::new();
        split_into(&docs, range, self.max_shard_bytes, &mut pieces)?;
        let written: Vec<usize> = (target..target + pieces.len()).collect();
        let lowers: Vec<String> = pieces.iter().map(|(b, _)| b.lower.clone()).collect();
        let seq_lowers: Vec<u64> = pieces.iter().map(|(b, _)| b.seq_lower).collect();
        let shards: Vec<Option<Shard>> = pieces.into_iter().map(|(_, s)| Some(s)).collect();
        let n = lowers.len();
        self.layout.lowers.splice(target..=target, lowers);
        self.layout.seq_lowers.splice(target..=target, seq_lowers);
        self.layout
            .folded
            .splice(target..=target, std::iter::repeat_n(self.change, n));
        self.shards.splice(target..=target, shards);
        let everywhere = self.layout.folded.iter().copied().min().unwrap_or(0);
        let kept: BTreeMap<u64, (u64, TextDoc)> = self
            .delta
            .changes
            .iter()
            .filter(|(_, (change, _))| *change > everywhere)
            .map(|(seq, c)| (*seq, c.clone()))
            .collect();
        if kept.len() != self.delta.changes.len() {
            self.delta = Delta::new(kept)?;
        }
        Ok(written)
    }

    /// The datasets in every facet of `facets` (keys) where every word starts a word of the
    /// name, description or a tag: with words as [`Self::search`] ranks them; with none, every
    /// dataset in the facets, newest first (score 0). Neither: nothing.
    pub fn find(&self, words: &[String], facets: &[String]) -> Result<Vec<Hit>, SearchError> {
        if !facets.is_empty() && !self.layout.filters {
            return Err(SearchError::NoFilters);
        }
        let mut members: Option<HashSet<u64>> = None;
        for key in facets {
            let holding = self.facet_members(key)?;
            members = Some(match members {
                None => holding,
                Some(so_far) => so_far.intersection(&holding).copied().collect(),
            });
            if members.as_ref().is_some_and(HashSet::is_empty) {
                return Ok(Vec::new());
            }
        }
        let Some(members) = members else {
            return self.search(words);
        };
        if words.is_empty() {
            let mut hits: Vec<Hit> = members
                .into_iter()
                .map(|seq| Hit { seq, score: 0.0 })
                .collect();
            hits.sort_unstable_by_key(|h| std::cmp::Reverse(h.seq));
            return Ok(hits);
        }
        let mut hits = self.search(words)?;
        hits.retain(|h| members.contains(&h.seq));
        Ok(hits)
    }

    /// Every dataset holding a facet: from the shards holding its term (but those changed
    /// since), and the delta.
    fn facet_members(&self, key: &str) -> Result<HashSet<u64>, SearchError> {
        let term = facet_term(key);
        let changed = &self.delta.changes;
        let mut members = HashSet::new();
        for i in self
            .layout
            .shards_for(&[], std::slice::from_ref(&key.to_owned()))
        {
            let shard = self.shard(i).ok_or(SearchError::NotLoaded(i))?;
            members.extend(
                shard
                    .holding(&term)?
                    .into_iter()
                    .filter(|seq| !changed.contains_key(seq)),
            );
        }
        members.extend(self.delta.shard.holding(&term)?);
        Ok(members)
    }
}

#[cfg(test)]
mod tests;
