//! What the list endpoint is asked for (filters, words, sort order), parsed once, and which
//! access path serves it ([`Plan`]).
//!
//! - No filter and no words, sorted by publication (`created`, either direction): the catalog
//!   list, one range read of positions.
//! - One facet value (one `category`, one `tag` or one `license`), no words, sorted by
//!   publication: that facet's own list, kept gap-free in publication order, read the same way.
//! - Anything else (several facets, `q`, sorting by `updated` or `name`): a scan of the smallest
//!   candidate list, filtered and sorted in memory. Its cost grows with that list's size; see
//!   docs/api.md (Finding datasets) for the figures.
//!
//! With `facets=true`, the answer also counts every facet value of the whole catalog
//! ([`FacetCounts`]), read with the listing's first request.

use std::cmp::Ordering;

use crate::records::{Card, CatalogPage, DatasetSummary};

mod counts;
mod facet;
mod sort;

pub use counts::{parse_facets_flag, FacetCounts, ValueCount};
pub use facet::{Facet, FacetError, FacetKind};
pub use sort::{Sort, SortField};

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

/// A summary with what matching and sorting need, computed once (a scan's list is kept and
/// queried many times): its facets, its lowercase search text and its lowercase name.
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
        let mut text = card.name.to_lowercase();
        for part in card.description.iter().chain(card.tags.iter()) {
            text.push('\n');
            text.push_str(&part.to_lowercase());
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
    }

    pub fn has(&self, facet: &Facet) -> bool {
        self.facets.contains(facet)
    }
}

/// How a listing is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan<'a> {
    /// The catalog list by position.
    Listing { descending: bool },
    /// One facet's list by position.
    Facet { facet: &'a Facet, descending: bool },
    /// Filter and sort a whole candidate list.
    Scan,
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

/// A listing request: filters (all must match), words (all must occur) and the order; and
/// whether the answer counts every facet value of the catalog (`facets=true`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListQuery {
    pub facets: Vec<Facet>,
    pub words: Vec<String>,
    pub sort: Sort,
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
        let mut words: Vec<String> = q
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        words.sort();
        words.dedup();
        if words.len() > Self::MAX_WORDS {
            return Err(QueryError::TooManyWords);
        }
        Ok(Self {
            facets,
            words,
            sort: Sort::parse(sort)?,
            facet_counts: parse_facets_flag(counts)?,
        })
    }

    pub fn plan(&self) -> Plan<'_> {
        if !self.words.is_empty() || self.sort.field != SortField::Created {
            return Plan::Scan;
        }
        let descending = self.sort.descending;
        match self.facets.as_slice() {
            [] => Plan::Listing { descending },
            [facet] => Plan::Facet { facet, descending },
            _ => Plan::Scan,
        }
    }

    /// Every facet matches and every word occurs in the name, description or a tag.
    pub fn matches(&self, s: &Indexed) -> bool {
        self.facets.iter().all(|f| s.has(f))
            && self.words.iter().all(|w| s.text.contains(w.as_str()))
    }

    /// The page of `candidates` this query asks for: the matches, in order, from `offset`
    /// (`None`: past any end), at most `limit`; `total` counts every match.
    pub fn select<'a>(
        &self,
        candidates: impl Iterator<Item = &'a Indexed>,
        offset: Option<u64>,
        limit: u64,
    ) -> CatalogPage {
        let mut matches: Vec<&Indexed> = candidates.filter(|s| self.matches(s)).collect();
        matches.sort_by(|a, b| self.order(a, b));
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
mod tests {
    use super::*;

    fn with_category(category: &str) -> ListParams<'_> {
        ListParams {
            category: Some(category),
            ..ListParams::default()
        }
    }

    fn with_tags<'a>(tags: &'a [&'a str]) -> ListParams<'a> {
        ListParams {
            tags,
            ..ListParams::default()
        }
    }

    fn with_q(q: &str) -> ListParams<'_> {
        ListParams {
            q: Some(q),
            ..ListParams::default()
        }
    }

    fn with_sort(sort: &str) -> ListParams<'_> {
        ListParams {
            sort: Some(sort),
            ..ListParams::default()
        }
    }

    #[test]
    fn sort_takes_a_field_and_an_optional_direction() {
        let s = |raw| Sort::parse(Some(raw)).unwrap();
        assert_eq!(Sort::parse(None).unwrap(), Sort::DEFAULT);
        assert_eq!(s("created"), Sort::DEFAULT);
        assert!(!s("created:asc").descending);
        assert!(s("updated").descending);
        assert!(!s("name").descending, "names default to A to Z");
        assert!(s("name:desc").descending);
        for bad in [
            "",
            "size",
            "name:up",
            "Name",
            "created:",
            ":asc",
            "name:asc:desc",
        ] {
            assert_eq!(
                Sort::parse(Some(bad)).unwrap_err(),
                QueryError::Sort(bad.to_owned()),
                "{bad}"
            );
        }
    }

    #[test]
    fn the_plan_keeps_single_facets_on_positional_lists() {
        let plain = ListQuery::parse(ListParams::default()).unwrap();
        assert_eq!(plain.plan(), Plan::Listing { descending: true });
        let asc = ListQuery::parse(with_sort("created:asc")).unwrap();
        assert_eq!(asc.plan(), Plan::Listing { descending: false });
        for q in [
            ListQuery::parse(with_category("Biology")).unwrap(),
            ListQuery::parse(with_tags(&["birds"])).unwrap(),
            ListQuery::parse(ListParams {
                license: Some("CC0-1.0"),
                sort: Some("created:asc"),
                ..ListParams::default()
            })
            .unwrap(),
            ListQuery::parse(with_tags(&["birds", "BIRDS "])).unwrap(),
        ] {
            assert!(matches!(q.plan(), Plan::Facet { .. }), "{q:?}");
        }
        for q in [
            ListQuery::parse(ListParams {
                category: Some("biology"),
                tags: &["birds"],
                ..ListParams::default()
            })
            .unwrap(),
            ListQuery::parse(with_tags(&["a", "b"])).unwrap(),
            ListQuery::parse(with_q("river")).unwrap(),
            ListQuery::parse(ListParams {
                category: Some("biology"),
                sort: Some("name"),
                ..ListParams::default()
            })
            .unwrap(),
            ListQuery::parse(with_sort("updated")).unwrap(),
        ] {
            assert_eq!(q.plan(), Plan::Scan, "{q:?}");
        }
    }

    #[test]
    fn asking_for_facet_counts_does_not_change_the_plan() {
        let counted = ListQuery::parse(ListParams {
            facets: Some("true"),
            ..with_category("biology")
        })
        .unwrap();
        assert!(counted.facet_counts);
        assert!(matches!(counted.plan(), Plan::Facet { .. }));
        assert!(
            !ListQuery::parse(ListParams::default())
                .unwrap()
                .facet_counts
        );
        assert_eq!(
            ListQuery::parse(ListParams {
                facets: Some("1"),
                ..ListParams::default()
            }),
            Err(QueryError::FacetsFlag("1".into()))
        );
    }

    #[test]
    fn facet_values_are_normalized_and_bounded() {
        let q = ListQuery::parse(with_category("  Biology ")).unwrap();
        assert_eq!(
            q.facets,
            [Facet::new(FacetKind::Category, "biology").unwrap()]
        );
        assert_eq!(q.facets[0].key(), "category#biology");
        for bad in ["", "   ", &"x".repeat(129)] {
            assert_eq!(
                ListQuery::parse(with_category(bad)).unwrap_err(),
                QueryError::Facet(FacetError {
                    kind: FacetKind::Category
                })
            );
        }
        let nine = ["t"; 9];
        assert_eq!(
            ListQuery::parse(with_tags(&nine)).unwrap_err(),
            QueryError::TooManyTags
        );
    }

    #[test]
    fn q_is_split_into_lowercase_words() {
        let q = ListQuery::parse(with_q("River-Levels  2024, river")).unwrap();
        assert_eq!(q.words, ["2024", "levels", "river"]);
        assert!(ListQuery::parse(with_q("  ")).unwrap().words.is_empty());
        let long = "a ".repeat(129);
        assert_eq!(
            ListQuery::parse(with_q(&long)).unwrap_err(),
            QueryError::QTooLong
        );
        assert_eq!(
            ListQuery::parse(with_q("a b c d e f g h i")).unwrap_err(),
            QueryError::TooManyWords
        );
    }
}
