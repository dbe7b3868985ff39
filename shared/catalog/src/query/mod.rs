//! What the list endpoint is asked for (filters, words, sort order), parsed once, and which
//! access path serves it ([`Plan`]).
//!
//! - No filter and no words, sorted by publication (`created`, either direction): the catalog
//!   list, one range read of positions.
//! - One facet value (one `category`, one `tag` or one `license`), no words, sorted by
//!   publication: that facet's own list, kept gap-free in publication order, read the same way.
//! - Anything else (words, several facet values, or sorting by `updated`, `name` or
//!   `downloads`): the text index ([`catalog_search::index`]), which also holds each dataset's facets,
//!   finds the matching datasets and their scores, and the kept orders ([`catalog_search::order`])
//!   sort them ([`Plan::Search`]). See docs/api.md (Finding datasets) for the figures.
//!
//! With `facets=true`, the answer also counts every facet value of the whole catalog
//! ([`FacetCounts`]), read with the listing's first request.

use std::cmp::Ordering;
use std::collections::HashMap;

use crate::records::{Card, DatasetSummary};

mod counts;
mod facet;
mod sort;

pub use counts::{parse_facets_flag, FacetCounts, ValueCount};
pub use facet::{Facet, FacetError, FacetKind};
pub use sort::{Sort, SortField};

/// A page of the catalog as the store returns it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogPage {
    pub total: u64,
    pub items: Vec<DatasetSummary>,
    /// Every facet value of the whole catalog with its count, when the query asked for them
    /// ([`ListQuery::facet_counts`]) and the store has them (`None` otherwise).
    pub facets: Option<FacetCounts>,
    /// The words of `q` the answer leaves out: too common to read within a listing's read
    /// budget (the text index's `Layout::words_within`, in `catalog-search`); empty for most queries.
    pub ignored_words: Vec<String>,
}

/// Why a listing request was refused. The message is what the client reads; [`crate::error`]
/// turns every one into a 400.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error(transparent)]
    Facet(#[from] FacetError),
    #[error("at most {} tag parameters", ListQuery::MAX_TAGS)]
    TooManyTags,
    #[error("q must be at most {} characters", ListQuery::MAX_Q_LEN)]
    QTooLong,
    #[error("q must have at most {} words", ListQuery::MAX_WORDS)]
    TooManyWords,
    /// `sort`, as received up to its 40th character.
    #[error(
        "sort must be created, updated or name, optionally followed by :asc or :desc; got '{0}'"
    )]
    Sort(String),
    /// `facets`, as received up to its 40th character.
    #[error("facets must be true or false; got '{0}'")]
    FacetsFlag(String),
}

impl Card {
    /// The facet lists (category, tags, license) a dataset with this card belongs to.
    pub fn facets(&self) -> Vec<Facet> {
        Facet::of(&self.category, &self.tags, &self.license)
    }
}

/// How well each dataset matched the words of `q`, by position: what the text index found.
pub type Scores = HashMap<u64, f32>;

/// Longest indexed word, in bytes (tantivy's limit is 65,530). A longer run of letters is not
/// a word anyone types; the index leaves it out, and so does matching.
pub const MAX_WORD_BYTES: usize = 255;

/// The words of a text as `q`, the text index and matching split it: runs of letters and
/// digits (Unicode's), each lowercased on its own.
pub fn words(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

/// A summary with what matching and sorting need, computed once (a scan's list is kept and
/// queried many times): its facets, its words (as [`words`] splits the name, description and
/// tags, one per line) and its lowercase name.
#[derive(Debug, Clone)]
pub struct Indexed {
    pub summary: DatasetSummary,
    facets: Vec<Facet>,
    text: String,
    name: String,
}

impl Indexed {
    pub fn new(summary: DatasetSummary) -> Self {
        let card = &summary.card;
        let facets = card.facets();
        let mut text = String::new();
        let fields = std::iter::once(&card.name)
            .chain(card.description.iter())
            .chain(card.tags.iter());
        for word in fields
            .flat_map(|f| words(f))
            .filter(|w| w.len() <= MAX_WORD_BYTES)
        {
            text.push_str(&word);
            text.push('\n');
        }
        let name = card.name.to_lowercase();
        Self {
            summary,
            facets,
            text,
            name,
        }
    }

    /// What this entry holds in memory, estimated from above: the struct, and for each heap
    /// allocation (every string: the summary's, the tags, the search text, the lowercase name,
    /// the facet values; the two vectors) its bytes plus the allocator's overhead.
    /// `catalog-bench cache-memory` checks the estimate against resident memory.
    pub fn approx_bytes(&self) -> usize {
        const ALLOCATION: usize = 32;
        let heap = |len: usize| len.next_multiple_of(16) + ALLOCATION;
        let card = &self.summary.card;
        // Capacities, not lengths: a string built by pushing keeps its spare room.
        let strings = [
            self.summary.slug.as_str().len(),
            card.name.capacity(),
            card.description.as_ref().map_or(0, String::capacity),
            card.category.capacity(),
            card.license.capacity(),
            self.text.capacity(),
            self.name.capacity(),
        ];
        std::mem::size_of::<Self>()
            + strings.iter().map(|len| heap(*len)).sum::<usize>()
            + heap(card.tags.capacity() * std::mem::size_of::<String>())
            + card.tags.iter().map(|t| heap(t.capacity())).sum::<usize>()
            + heap(self.facets.capacity() * std::mem::size_of::<Facet>())
            + self
                .facets
                .iter()
                .map(|f| heap(f.value.capacity()))
                .sum::<usize>()
            + self.summary.files.as_ref().map_or(0, |f| {
                heap(std::mem::size_of::<crate::files::FilesBrief>()) + heap(f.heap_bytes())
            })
    }

    pub fn has(&self, facet: &Facet) -> bool {
        self.facets.contains(facet)
    }

    /// Whether `word` (lowercase, as [`ListQuery::parse`] splits `q`) starts a word of the name,
    /// description or a tag; a word of one character must be one. The same rule as the text
    /// index's, checked on one summary: what a listing checks of the datasets the index found,
    /// and how it matches in a catalog whose index is not built yet.
    pub fn has_word(&self, word: &str) -> bool {
        let one_char = word.chars().nth(1).is_none();
        self.text.lines().any(|w| {
            if one_char {
                w == word
            } else {
                w.starts_with(word)
            }
        })
    }
}

/// How a listing is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan<'a> {
    /// The catalog list by position.
    Listing { descending: bool },
    /// One facet's list by position.
    Facet { facet: &'a Facet, descending: bool },
    /// The text index finds the datasets matching the words and the filters (and their
    /// scores); the order applies to those, from a kept order unless it is relevance or
    /// publication.
    Search,
}

/// The list endpoint's query parameters as they arrived (`None` when absent): `category`,
/// `license`, `q`, `sort` and `facets` at most once (the caller rejects repeats), `tag` any
/// number of times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListParams<'a> {
    pub category: Option<&'a str>,
    pub tags: &'a [&'a str],
    pub license: Option<&'a str>,
    pub q: Option<&'a str>,
    pub sort: Option<&'a str>,
    pub facets: Option<&'a str>,
}

/// A listing request: filters (all must match), words (each must start a word of the dataset's
/// text) and the order; and whether the answer counts every facet value of the catalog
/// (`facets=true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub facets: Vec<Facet>,
    pub words: Vec<String>,
    pub sort: Sort,
    /// Best match first: words were given and no `sort`. Ties, and a catalog whose text index
    /// is not built yet, fall back to `sort` (newest first).
    pub relevance: bool,
    /// Also every facet value of the whole catalog with its count (not narrowed by the
    /// filters or words).
    pub facet_counts: bool,
}

impl Default for ListQuery {
    fn default() -> Self {
        Self {
            facets: Vec::new(),
            words: Vec::new(),
            sort: Sort::DEFAULT,
            relevance: false,
            facet_counts: false,
        }
    }
}

impl ListQuery {
    pub const MAX_TAGS: usize = 8;
    pub const MAX_Q_LEN: usize = 256;
    pub const MAX_WORDS: usize = 8;

    /// Parses the parameters; at most [`Self::MAX_TAGS`] `tag`s.
    pub fn parse(params: ListParams<'_>) -> Result<Self, QueryError> {
        let ListParams {
            category,
            tags,
            license,
            q,
            sort,
            facets: counts,
        } = params;
        if tags.len() > Self::MAX_TAGS {
            return Err(QueryError::TooManyTags);
        }
        let mut facets = Vec::new();
        if let Some(c) = category {
            facets.push(Facet::new(FacetKind::Category, c)?);
        }
        for t in tags {
            facets.push(Facet::new(FacetKind::Tag, t)?);
        }
        if let Some(l) = license {
            facets.push(Facet::new(FacetKind::License, l)?);
        }
        facets.sort();
        facets.dedup();
        let q = q.unwrap_or_default();
        if q.chars().count() > Self::MAX_Q_LEN {
            return Err(QueryError::QTooLong);
        }
        let mut words: Vec<String> = words(q).collect();
        words.sort();
        words.dedup();
        if words.len() > Self::MAX_WORDS {
            return Err(QueryError::TooManyWords);
        }
        Ok(Self {
            relevance: !words.is_empty() && sort.is_none(),
            facets,
            words,
            sort: Sort::parse(sort)?,
            facet_counts: parse_facets_flag(counts)?,
        })
    }

    pub fn plan(&self) -> Plan<'_> {
        let descending = self.sort.descending;
        match self.facets.as_slice() {
            _ if !self.words.is_empty() || self.sort.field != SortField::Created => Plan::Search,
            [] => Plan::Listing { descending },
            [facet] => Plan::Facet { facet, descending },
            _ => Plan::Search,
        }
    }

    /// Every facet matches and every word starts a word of the name, description or a tag.
    pub fn matches(&self, s: &Indexed) -> bool {
        self.facets.iter().all(|f| s.has(f)) && self.words.iter().all(|w| s.has_word(w))
    }

    /// The page of `candidates` this query asks for: the matches, in order, from `offset`
    /// (`None`: past any end), at most `limit`; `total` counts every match. With words,
    /// `scores` are what the text index found (a candidate it did not find does not match);
    /// without them (an index not built yet) the words are matched here, unranked.
    pub fn select<'a>(
        &self,
        candidates: impl Iterator<Item = &'a Indexed>,
        scores: Option<&Scores>,
        offset: Option<u64>,
        limit: u64,
    ) -> CatalogPage {
        let found = |s: &Indexed| scores.is_none_or(|found| found.contains_key(&s.summary.seq));
        let mut matches: Vec<&Indexed> =
            candidates.filter(|s| found(s) && self.matches(s)).collect();
        match scores.filter(|_| self.relevance) {
            Some(scores) => matches.sort_by(|a, b| {
                let score = |i: &Indexed| scores.get(&i.summary.seq).copied().unwrap_or(0.0);
                score(b).total_cmp(&score(a)).then_with(|| self.order(a, b))
            }),
            None => matches.sort_by(|a, b| self.order(a, b)),
        }
        let total = matches.len() as u64;
        let items = match offset {
            Some(o) => matches
                .into_iter()
                .skip(usize::try_from(o).unwrap_or(usize::MAX))
                .take(usize::try_from(limit).unwrap_or(usize::MAX))
                .map(|i| i.summary.clone())
                .collect(),
            None => Vec::new(),
        };
        CatalogPage {
            total,
            items,
            facets: None,
            ignored_words: Vec::new(),
        }
    }

    /// The requested order; ties fall back to publication order, so it is total.
    pub fn order(&self, a: &Indexed, b: &Indexed) -> Ordering {
        let (x, y) = (&a.summary, &b.summary);
        let ordering = match self.sort.field {
            SortField::Created => x.seq.cmp(&y.seq),
            SortField::Updated => x.updated_at.cmp(&y.updated_at).then(x.seq.cmp(&y.seq)),
            SortField::Name => a.name.cmp(&b.name).then_with(|| x.slug.cmp(&y.slug)),
            SortField::Downloads => x.downloads.cmp(&y.downloads).then(x.seq.cmp(&y.seq)),
        };
        if self.sort.descending {
            ordering.reverse()
        } else {
            ordering
        }
    }
}

#[cfg(test)]
mod tests;
