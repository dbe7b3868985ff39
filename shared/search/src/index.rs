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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::directory::RamDirectory;
use tantivy::postings::Postings;
use tantivy::query::{
    AutomatonWeight, Bm25StatisticsProvider, BooleanQuery, BoostQuery, EnableScoring, Occur, Query,
    TermQuery, Weight,
};
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{
    Directory, DocId, DocSet, Index, IndexSettings, ReloadPolicy, Score, Searcher, SegmentOrdinal,
    SegmentReader, SingleSegmentIndexWriter, TantivyDocument, Term, TERMINATED,
};

mod prefix;

use prefix::Prefix;

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

/// The three searched fields, in the order of [`FIELD_WEIGHTS`].
const FIELDS: [&str; 3] = ["name", "tags", "description"];
/// The field of facet terms, after the searched ones in [`Terms::fields`].
const FACET_FIELD: usize = 3;
/// What a facet's term starts with: a character no word holds ([`words`] keeps letters and
/// digits), so that facet terms sort before every word and never match one.
pub const FACET_MARK: char = '\u{1}';

/// The term of a facet key in the index.
pub fn facet_term(key: &str) -> String {
    format!("{FACET_MARK}{key}")
}
/// How much a word found in each field counts.
const FIELD_WEIGHTS: [Score; 3] = [3.0, 2.0, 1.0];
/// The score of starting a word of a field (before the field's weight), beside BM25 for the
/// whole word.
const PREFIX_SCORE: Score = 0.5;
/// A full build cuts shards where their estimated size reaches this share of the largest.
const SHARD_FILL: f64 = 0.6;
/// The estimate: bytes per dataset holding a word in a field, and per distinct word beside its
/// length (measured by `catalog-bench text`).
const BYTES_PER_POSTING: u64 = 2;
const BYTES_PER_TERM: u64 = 8;
use catalog::query::Facet;
pub use catalog::query::{words, MAX_WORD_BYTES};

/// A dataset as a shard holds it: for each searched field, its words in the shard's range, each
/// with how often it occurs; then its facet terms in the range (each once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Terms {
    seq: u64,
    fields: [BTreeMap<String, u32>; 4],
}

impl Terms {
    fn of(doc: &TextDoc) -> Self {
        let mut fields: [BTreeMap<String, u32>; 4] = Default::default();
        let mut count = |field: usize, text: &str| {
            for word in words(text).filter(|w| w.len() <= MAX_WORD_BYTES) {
                *fields[field].entry(word).or_default() += 1;
            }
        };
        count(0, &doc.name);
        for tag in &doc.tags {
            count(1, tag);
        }
        if let Some(d) = &doc.description {
            count(2, d);
        }
        for key in &doc.facets {
            fields[FACET_FIELD].insert(facet_term(key), 1);
        }
        Self {
            seq: doc.seq,
            fields,
        }
    }

    /// Only the words in `range`; `None` when none is, or the dataset is not in its positions.
    fn within(&self, range: &Bounds) -> Option<Self> {
        if !range.holds_seq(self.seq) {
            return None;
        }
        let fields = self.fields.clone().map(|mut f| {
            f.retain(|w, _| range.contains(w));
            f
        });
        fields.iter().any(|f| !f.is_empty()).then_some(Self {
            seq: self.seq,
            fields,
        })
    }
}

/// What a shard holds: the terms from `lower` (inclusive) to `upper` (exclusive; `None`: every
/// term after), of the datasets at positions from `seq_lower` to `seq_upper` (likewise). Shards
/// of one term range split by position hold a word too common to split by term: a change then
/// rewrites only the positions it falls in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Bounds {
    lower: String,
    upper: Option<String>,
    seq_lower: u64,
    seq_upper: Option<u64>,
}

impl Bounds {
    const ALL: Self = Self {
        lower: String::new(),
        upper: None,
        seq_lower: 0,
        seq_upper: None,
    };

    fn contains(&self, term: &str) -> bool {
        term >= self.lower.as_str() && self.upper.as_deref().is_none_or(|u| term < u)
    }

    fn holds_seq(&self, seq: u64) -> bool {
        seq >= self.seq_lower && self.seq_upper.is_none_or(|u| seq < u)
    }

    /// Whether a term starting with `word` can fall in this range.
    fn overlaps_prefix(&self, word: &str) -> bool {
        let starts_before_upper = self.upper.as_deref().is_none_or(|u| word < u);
        let reaches_lower = word >= self.lower.as_str() || self.lower.starts_with(word);
        starts_before_upper && reaches_lower
    }
}

struct SchemaFields {
    seq: Field,
    text: [Field; 3],
    facet: Field,
}

impl SchemaFields {
    /// Every indexed field, in the order of [`Terms::fields`], with what its postings hold.
    fn all(&self) -> [(Field, IndexRecordOption); 4] {
        let [name, tags, description] = self.text;
        let text = IndexRecordOption::WithFreqs;
        [
            (name, text),
            (tags, text),
            (description, text),
            (self.facet, IndexRecordOption::Basic),
        ]
    }
}

fn schema() -> (Schema, SchemaFields) {
    let mut builder = Schema::builder();
    let seq = builder.add_u64_field("seq", FAST);
    let options = TextOptions::default().set_indexing_options(
        TextFieldIndexing::default()
            .set_index_option(IndexRecordOption::WithFreqs)
            .set_fieldnorms(false),
    );
    let text = FIELDS.map(|name| builder.add_text_field(name, options.clone()));
    let facet = builder.add_text_field(
        "facet",
        TextOptions::default().set_indexing_options(
            TextFieldIndexing::default()
                .set_index_option(IndexRecordOption::Basic)
                .set_fieldnorms(false),
        ),
    );
    (builder.build(), SchemaFields { seq, text, facet })
}

/// One tantivy index in memory: a shard, or the delta.
#[derive(Clone)]
pub struct Shard {
    searcher: Searcher,
    /// Its files as stored (what the index reads goes through tantivy's managed layer, which
    /// strips each file's footer).
    files: RamDirectory,
    fields: Arc<SchemaFields>,
    bytes: usize,
}

impl fmt::Debug for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shard")
            .field("docs", &self.searcher.num_docs())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// Blob format: this byte, then for each file a u16 path length, the path, a u32 length and
/// the bytes.
const BLOB_FORMAT: u8 = 1;
/// The indexing budget of one shard's writer: what sizes its first hash table (it grows as
/// needed, and a shard is always one segment). Small, as a full build has one writer per shard
/// open at once.
const WRITER_BUDGET: usize = 1 << 20;

/// Builds one shard, a dataset at a time.
struct ShardWriter {
    writer: SingleSegmentIndexWriter<TantivyDocument>,
    files: RamDirectory,
    fields: SchemaFields,
}

impl ShardWriter {
    fn new() -> Result<Self, SearchError> {
        let (schema, fields) = schema();
        let files = RamDirectory::create();
        let index = Index::create(files.clone(), schema, IndexSettings::default())?;
        Ok(Self {
            writer: SingleSegmentIndexWriter::new(index, WRITER_BUDGET)?,
            files,
            fields,
        })
    }

    fn add(&mut self, doc: &Terms) -> Result<(), SearchError> {
        let mut document = TantivyDocument::new();
        document.add_u64(self.fields.seq, doc.seq);
        for ((field, _), words) in self.fields.all().iter().zip(&doc.fields) {
            if !words.is_empty() {
                document.add_pre_tokenized_text(*field, pre_tokenized(words));
            }
        }
        self.writer.add_document(document)?;
        Ok(())
    }

    fn finish(self) -> Result<Shard, SearchError> {
        let index = self.writer.finalize()?;
        let bytes = blob_len(&Shard::files(&index, &self.files)?);
        Shard::open(index, self.files, Arc::new(self.fields), bytes)
    }
}

impl Shard {
    fn build(docs: &[Terms]) -> Result<Self, SearchError> {
        let mut writer = ShardWriter::new()?;
        for doc in docs {
            writer.add(doc)?;
        }
        writer.finish()
    }

    fn open(
        index: Index,
        files: RamDirectory,
        fields: Arc<SchemaFields>,
        bytes: usize,
    ) -> Result<Self, SearchError> {
        let reader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()?;
        Ok(Self {
            searcher: reader.searcher(),
            files,
            fields,
            bytes,
        })
    }

    /// The index's files: `meta.json` and its segments'.
    fn files(
        index: &Index,
        directory: &RamDirectory,
    ) -> Result<Vec<(PathBuf, Vec<u8>)>, SearchError> {
        let meta = Path::new("meta.json");
        let mut files = vec![(
            meta.to_owned(),
            directory
                .atomic_read(meta)
                .map_err(|_| SearchError::Damaged("no meta.json"))?,
        )];
        let mut paths: Vec<PathBuf> = index
            .searchable_segment_metas()?
            .iter()
            .flat_map(|m| m.list_files())
            .collect();
        paths.sort();
        for path in paths {
            // A file the segment does not have (no positions are kept) is absent.
            let Ok(handle) = directory.open_read(&path) else {
                continue;
            };
            let bytes = handle
                .read_bytes()
                .map_err(|_| SearchError::Damaged("unreadable file"))?;
            let bytes = if path.extension().is_some_and(|e| e == "store") {
                empty_store()?.to_vec()
            } else {
                bytes.as_slice().to_vec()
            };
            files.push((path, bytes));
        }
        Ok(files)
    }

    /// The shard as bytes, to store.
    pub fn to_blob(&self) -> Result<Vec<u8>, SearchError> {
        let files = Self::files(self.searcher.index(), &self.files)?;
        let mut blob = Vec::with_capacity(blob_len(&files));
        blob.push(BLOB_FORMAT);
        for (path, bytes) in &files {
            let path = path.to_string_lossy();
            blob.extend_from_slice(&(path.len() as u16).to_le_bytes());
            blob.extend_from_slice(path.as_bytes());
            blob.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            blob.extend_from_slice(bytes);
        }
        Ok(blob)
    }

    /// A shard from its stored bytes.
    pub fn from_blob(blob: &[u8]) -> Result<Self, SearchError> {
        let damaged = SearchError::Damaged;
        let (&format, mut rest) = blob.split_first().ok_or(damaged("empty"))?;
        if format != BLOB_FORMAT {
            return Err(damaged("unknown format"));
        }
        let directory = RamDirectory::create();
        fn take<'a>(rest: &mut &'a [u8], n: usize) -> Result<&'a [u8], SearchError> {
            if rest.len() < n {
                return Err(SearchError::Damaged("truncated"));
            }
            let (head, tail) = rest.split_at(n);
            *rest = tail;
            Ok(head)
        }
        while !rest.is_empty() {
            let len = take(&mut rest, 2)?;
            let path_len = u16::from_le_bytes([len[0], len[1]]) as usize;
            let path = std::str::from_utf8(take(&mut rest, path_len)?)
                .map_err(|_| damaged("path"))?
                .to_owned();
            let len = take(&mut rest, 4)?;
            let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
            let bytes = take(&mut rest, len)?;
            directory
                .atomic_write(Path::new(&path), bytes)
                .map_err(|_| damaged("unwritable"))?;
        }
        let index = Index::open(directory.clone())?;
        let (_, fields) = schema();
        Self::open(index, directory, Arc::new(fields), blob.len())
    }

    /// Its bytes as stored by kind of file (`term`, `idx`, `fast`, `store`, `json`…).
    pub fn bytes_by_kind(&self) -> Result<BTreeMap<String, usize>, SearchError> {
        let mut kinds = BTreeMap::new();
        for (path, bytes) in Self::files(self.searcher.index(), &self.files)? {
            let kind = path
                .extension()
                .map_or_else(String::new, |e| e.to_string_lossy().into_owned());
            *kinds.entry(kind).or_default() += bytes.len();
        }
        Ok(kinds)
    }

    /// Its size as stored, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many datasets it holds.
    pub fn docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// Every dataset it holds, with its words: what a rewrite starts from.
    fn terms(&self) -> Result<Vec<Terms>, SearchError> {
        let mut docs: BTreeMap<(SegmentOrdinal, DocId), Terms> = BTreeMap::new();
        for (ordinal, segment) in self.searcher.segment_readers().iter().enumerate() {
            let ordinal = ordinal as SegmentOrdinal;
            let seqs = segment.fast_fields().u64("seq")?;
            for (i, (field, record)) in self.fields.all().into_iter().enumerate() {
                let inverted = segment.inverted_index(field)?;
                let mut stream = inverted.terms().stream()?;
                while let Some((term, info)) = stream.next() {
                    let word = std::str::from_utf8(term)
                        .map_err(|_| SearchError::Damaged("term"))?
                        .to_owned();
                    let mut postings = inverted.read_postings_from_terminfo(info, record)?;
                    let mut doc = postings.doc();
                    while doc != TERMINATED {
                        let seq = seqs.first(doc).ok_or(SearchError::Damaged("seq"))?;
                        let entry = docs.entry((ordinal, doc)).or_insert_with(|| Terms {
                            seq,
                            ..Terms::default()
                        });
                        let count = match record {
                            IndexRecordOption::Basic => 1,
                            _ => postings.term_freq(),
                        };
                        entry.fields[i].insert(word.clone(), count);
                        doc = postings.advance();
                    }
                }
            }
        }
        Ok(docs.into_values().collect())
    }

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

    /// The positions of the datasets holding facet `term` here.
    fn holding(&self, term: &str) -> Result<Vec<u64>, SearchError> {
        let term = Term::from_field_text(self.fields.facet, term);
        let mut seqs = Vec::new();
        for segment in self.searcher.segment_readers() {
            let positions = segment.fast_fields().u64("seq")?;
            let inverted = segment.inverted_index(self.fields.facet)?;
            let Some(mut postings) = inverted.read_postings(&term, IndexRecordOption::Basic)?
            else {
                continue;
            };
            let mut doc = postings.doc();
            while doc != TERMINATED {
                seqs.push(positions.first(doc).ok_or(SearchError::Damaged("seq"))?);
                doc = postings.advance();
            }
        }
        Ok(seqs)
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

/// The document store of a segment with no document. Shards store no field and search never
/// reads a stored document, yet a store holds an empty entry and a 4-byte offset per dataset
/// (about half a shard's bytes): a shard is stored with this one in its place, which tantivy
/// opens as it opens any store (a document fetched from it would be an error, never wrong).
fn empty_store() -> Result<&'static [u8], SearchError> {
    static EMPTY: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    if let Some(store) = EMPTY.get() {
        return Ok(store);
    }
    let writer = ShardWriter::new()?;
    let files = writer.files.clone();
    let index = writer.writer.finalize()?;
    let metas = index.searchable_segment_metas()?;
    let path = metas
        .iter()
        .flat_map(|m| m.list_files())
        .find(|p| p.extension().is_some_and(|e| e == "store"))
        .ok_or(SearchError::Damaged("no document store"))?;
    let store = files
        .open_read(&path)
        .map_err(|_| SearchError::Damaged("no document store"))?
        .read_bytes()?;
    Ok(EMPTY.get_or_init(|| store.as_slice().to_vec()))
}

fn blob_len(files: &[(PathBuf, Vec<u8>)]) -> usize {
    1 + files
        .iter()
        .map(|(p, b)| 2 + p.as_os_str().len() + 4 + b.len())
        .sum::<usize>()
}

fn pre_tokenized(words: &BTreeMap<String, u32>) -> PreTokenizedString {
    let mut tokens = Vec::new();
    for (word, &count) in words {
        for _ in 0..count {
            tokens.push(Token {
                offset_from: 0,
                offset_to: 0,
                position: tokens.len(),
                text: word.clone(),
                position_length: 1,
            });
        }
    }
    PreTokenizedString {
        text: String::new(),
        tokens,
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
    fn range(&self, shard: usize) -> Bounds {
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

/// The changes not yet folded into every shard: the changed datasets' whole text (a tantivy
/// index), and for each the number of its last change.
#[derive(Debug, Clone)]
pub struct Delta {
    shard: Shard,
    /// For each changed dataset, the number of its last change and its new text.
    changes: BTreeMap<u64, (u64, TextDoc)>,
}

impl Delta {
    fn new(changes: BTreeMap<u64, (u64, TextDoc)>) -> Result<Self, SearchError> {
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

/// Builds `docs` (all within `bounds`) into shards of at most `max_bytes`: a larger piece is
/// split at its median word, or, holding one word, at its median position.
fn split_into(
    docs: &[Terms],
    bounds: Bounds,
    max_bytes: usize,
    out: &mut Vec<(Bounds, Shard)>,
) -> Result<(), SearchError> {
    let shard = Shard::build(docs)?;
    if shard.bytes <= max_bytes || docs.len() < 2 {
        out.push((bounds, shard));
        return Ok(());
    }
    drop(shard);
    // The word at which about half the postings lie before.
    let mut weights: BTreeMap<&str, u64> = BTreeMap::new();
    for doc in docs {
        for field in &doc.fields {
            for word in field.keys() {
                *weights.entry(word.as_str()).or_default() += 1;
            }
        }
    }
    let total: u64 = weights.values().sum();
    let mut seen = 0;
    let mut middle = None;
    for (word, weight) in &weights {
        if seen >= total / 2 && *word > bounds.lower.as_str() {
            middle = Some(word.to_string());
            break;
        }
        seen += weight;
    }
    let (left, right) = match middle {
        Some(middle) => (
            Bounds {
                upper: Some(middle.clone()),
                ..bounds.clone()
            },
            Bounds {
                lower: middle,
                ..bounds
            },
        ),
        None => {
            // One word: split the positions.
            let mut seqs: Vec<u64> = docs.iter().map(|d| d.seq).collect();
            seqs.sort_unstable();
            let middle = seqs[seqs.len() / 2];
            (
                Bounds {
                    seq_upper: Some(middle),
                    ..bounds.clone()
                },
                Bounds {
                    seq_lower: middle,
                    ..bounds
                },
            )
        }
    };
    let left_docs: Vec<Terms> = docs.iter().filter_map(|d| d.within(&left)).collect();
    let right_docs: Vec<Terms> = docs.iter().filter_map(|d| d.within(&right)).collect();
    split_into(&left_docs, left, max_bytes, out)?;
    split_into(&right_docs, right, max_bytes, out)
}

#[cfg(test)]
mod tests;
