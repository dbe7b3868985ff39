//! Ranking: each word's BM25 over the catalog's counts plus a constant for starting a word,
//! weighed by field, summed by position ([`TextIndex::search`]).

use std::collections::BTreeMap;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::query::{
    AutomatonWeight, Bm25StatisticsProvider, BooleanQuery, BoostQuery, EnableScoring, Occur, Query,
    TermQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentOrdinal, SegmentReader, Term, TERMINATED};

use super::prefix::Prefix;
use super::{Delta, Hit, SearchError, Shard, TextDoc, TextIndex};

/// How much a word found in each field counts.
const FIELD_WEIGHTS: [Score; 3] = [3.0, 2.0, 1.0];
/// The score of starting a word of a field (before the field's weight), beside BM25 for the
/// whole word.
const PREFIX_SCORE: Score = 0.5;

impl TextIndex {
    /// The datasets where every word starts a word of the name, description or a tag (a word of
    /// one character: is one), best first; ties in publication order, newest first.
    ///
    /// Scores are summed in arrays by position, not maps: a word in most of a million datasets
    /// is scored in a few arrays of a million entries rather than hashed a million times.
    pub fn search(&self, words: &[String]) -> Result<Vec<Hit>, SearchError> {
        if words.is_empty() {
            return Ok(Vec::new());
        }
        // Positions index arrays: one past any the catalog can hold is a damaged shard, not
        // an allocation of its size.
        let mut word = WordScores {
            limit: self.layout.datasets.saturating_mul(2).max(1 << 20),
            ..WordScores::default()
        };
        // Each dataset's sum so far, and how many words it has matched (those that missed one
        // are left behind: only a count equal to the words done so far goes on).
        let mut total: Vec<Score> = Vec::new();
        let mut matched: Vec<u8> = Vec::new();
        for (done, w) in words.iter().enumerate() {
            self.word_scores(w, &mut word)?;
            if word.past_limit {
                return Err(SearchError::Damaged("a position past the catalog"));
            }
            let done = u8::try_from(done).map_err(|_| SearchError::Damaged("too many words"))?;
            let mut any = false;
            for &seq in &word.touched {
                let at = seq as usize;
                if at >= total.len() {
                    total.resize(at + 1, 0.0);
                    matched.resize(at + 1, 0);
                }
                if matched[at] == done {
                    total[at] += word.weighed(at);
                    matched[at] = done + 1;
                    any = true;
                }
            }
            word.clear();
            if !any {
                return Ok(Vec::new());
            }
        }
        let all = words.len() as u8;
        let mut hits: Vec<Hit> = matched
            .iter()
            .enumerate()
            .filter(|(_, m)| **m == all)
            .map(|(at, _)| Hit {
                seq: at as u64,
                score: total[at],
            })
            .collect();
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
        Ok(hits)
    }

    /// One word's scores, into `into`: in each field the best of the shards that hold it (a
    /// field's whole word is in one shard; its prefix score is the same in each), the delta's
    /// for the datasets changed since the shards were written.
    fn word_scores(&self, word: &str, into: &mut WordScores) -> Result<(), SearchError> {
        let shards: Vec<&Shard> = self
            .layout
            .shards_for(std::slice::from_ref(&word.to_owned()), &[])
            .into_iter()
            .map(|i| self.shard(i).ok_or(SearchError::NotLoaded(i)))
            .collect::<Result<_, _>>()?;
        let stats = Stats {
            datasets: self.layout.datasets,
            shards: &shards,
            delta: &self.delta,
        };
        let changed = &self.delta.changes;
        for shard in &shards {
            shard.scores(word, &stats, |seq, field, score| {
                if !changed.contains_key(&seq) {
                    into.best(seq, field, score);
                }
            })?;
        }
        self.delta.shard.scores(word, &stats, |seq, field, score| {
            into.best(seq, field, score)
        })?;
        Ok(())
    }
}

/// One word's best score in each field of each dataset it matches, by position, and the
/// positions it matched (each once).
#[derive(Default)]
struct WordScores {
    fields: Vec<[Score; 3]>,
    touched: Vec<u64>,
    /// Positions from here on are not scored, and mark the word `past_limit`.
    limit: u64,
    past_limit: bool,
}

impl WordScores {
    fn best(&mut self, seq: u64, field: usize, score: Score) {
        if seq >= self.limit {
            self.past_limit = true;
            return;
        }
        let at = seq as usize;
        if at >= self.fields.len() {
            self.fields.resize(at + 1, [0.0; 3]);
        }
        let scores = &mut self.fields[at];
        // Every match scores above 0 (a whole word's BM25, or the constant for a start).
        if scores.iter().all(|s| *s == 0.0) {
            self.touched.push(seq);
        }
        scores[field] = scores[field].max(score);
    }

    /// The dataset's score for the word: its fields' scores, weighed and summed.
    fn weighed(&self, at: usize) -> Score {
        self.fields[at]
            .iter()
            .zip(FIELD_WEIGHTS)
            .map(|(s, w)| s * w)
            .sum()
    }

    /// Empty again, its arrays kept for the next word.
    fn clear(&mut self) {
        for &seq in &self.touched {
            self.fields[seq as usize] = [0.0; 3];
        }
        self.touched.clear();
    }
}

impl Shard {
    /// How many datasets hold `term` here, less those in `changed`.
    fn current_doc_freq(
        &self,
        term: &Term,
        changed: &BTreeMap<u64, (u64, TextDoc)>,
    ) -> tantivy::Result<u64> {
        if changed.is_empty() {
            return self.searcher.doc_freq(term);
        }
        let mut n = 0;
        for segment in self.searcher.segment_readers() {
            let seqs = segment.fast_fields().u64("seq")?;
            let inverted = segment.inverted_index(term.field())?;
            let Some(mut postings) = inverted.read_postings(term, IndexRecordOption::Basic)? else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                if seqs
                    .first(doc)
                    .is_some_and(|seq| !changed.contains_key(&seq))
                {
                    n += 1;
                }
                doc = postings.advance();
            }
        }
        Ok(n)
    }
    /// For each dataset where `word` starts a word of a field: `visit(seq, field, score)`.
    fn scores(
        &self,
        word: &str,
        stats: &Stats<'_>,
        mut visit: impl FnMut(u64, usize, Score),
    ) -> Result<(), SearchError> {
        if self.searcher.num_docs() == 0 {
            // tantivy's prefix search panics on an empty segment.
            return Ok(());
        }
        for (i, field) in self.fields.text.iter().enumerate() {
            let whole: Box<dyn Query> = Box::new(TermQuery::new(
                Term::from_field_text(*field, word),
                IndexRecordOption::WithFreqs,
            ));
            let mut clauses = vec![(Occur::Should, whole)];
            if word.chars().nth(1).is_some() {
                let prefix = PrefixQuery {
                    field: *field,
                    prefix: word.to_owned(),
                };
                clauses.push((
                    Occur::Should,
                    Box::new(BoostQuery::new(Box::new(prefix), PREFIX_SCORE)),
                ));
            }
            let query = BooleanQuery::new(clauses);
            let hits = self
                .searcher
                .search_with_statistics_provider(&query, &AllHits, stats)?;
            for (seq, score) in hits {
                visit(seq, i, score);
            }
        }
        Ok(())
    }
}

/// Every term starting with `prefix`, in one field; constant score 1 (times its boost).
#[derive(Debug, Clone)]
struct PrefixQuery {
    field: Field,
    prefix: String,
}

impl Query for PrefixQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(AutomatonWeight::new(
            self.field,
            Prefix::new(self.prefix.as_bytes()),
        )))
    }
}

/// BM25's counts over the whole catalog: its number of datasets, and a term's datasets, as the
/// shards that hold it (less the datasets changed since, whose words there are stale) and the
/// delta count them. Every dataset counts as one token long, so no length normalisation applies.
struct Stats<'a> {
    datasets: u64,
    shards: &'a [&'a Shard],
    delta: &'a Delta,
}

impl Bm25StatisticsProvider for Stats<'_> {
    fn total_num_tokens(&self, _: Field) -> tantivy::Result<u64> {
        Ok(self.datasets.max(1))
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.datasets.max(1))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut n = self.delta.shard.searcher.doc_freq(term)?;
        for shard in self.shards {
            n += shard.current_doc_freq(term, &self.delta.changes)?;
        }
        Ok(n.clamp(1, self.datasets.max(1)))
    }
}

/// Every matching document's `seq` and score.
struct AllHits;

struct SegmentHits {
    seqs: Column<u64>,
    hits: Vec<(u64, Score)>,
}

impl Collector for AllHits {
    type Fruit = Vec<(u64, Score)>;
    type Child = SegmentHits;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        segment: &SegmentReader,
    ) -> tantivy::Result<SegmentHits> {
        Ok(SegmentHits {
            seqs: segment.fast_fields().u64("seq")?,
            hits: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        true
    }

    fn merge_fruits(&self, fruits: Vec<Vec<(u64, Score)>>) -> tantivy::Result<Self::Fruit> {
        Ok(fruits.into_iter().flatten().collect())
    }
}

impl SegmentCollector for SegmentHits {
    type Fruit = Vec<(u64, Score)>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if let Some(seq) = self.seqs.first(doc) {
            self.hits.push((seq, score));
        }
    }

    fn harvest(self) -> Self::Fruit {
        self.hits
    }
}
