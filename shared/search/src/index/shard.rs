//! A shard: one small tantivy index in memory, what it holds of each dataset ([`Terms`]), how
//! it is built ([`ShardWriter`], [`split_into`]) and read back.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use tantivy::directory::RamDirectory;
use tantivy::postings::Postings;
use tantivy::schema::{Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST};
use tantivy::tokenizer::{PreTokenizedString, Token};
use tantivy::{
    DocId, DocSet, Index, IndexSettings, ReloadPolicy, Searcher, SegmentOrdinal,
    SingleSegmentIndexWriter, TantivyDocument, Term, TERMINATED,
};

use super::layout::Bounds;
use super::{facet_term, words, SearchError, TextDoc, MAX_WORD_BYTES};

/// The three searched fields, in the order of the score's field weights.
const FIELDS: [&str; 3] = ["name", "tags", "description"];
/// The field of facet terms, after the searched ones in [`Terms::fields`].
const FACET_FIELD: usize = 3;

/// A dataset as a shard holds it: for each searched field, its words in the shard's range, each
/// with how often it occurs; then its facet terms in the range (each once).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Terms {
    pub(super) seq: u64,
    pub(super) fields: [BTreeMap<String, u32>; 4],
}

impl Terms {
    pub(super) fn of(doc: &TextDoc) -> Self {
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
    pub(super) fn within(&self, range: &Bounds) -> Option<Self> {
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

pub(super) struct SchemaFields {
    seq: Field,
    pub(super) text: [Field; 3],
    pub(super) facet: Field,
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

pub(super) fn schema() -> (Schema, SchemaFields) {
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
    pub(super) searcher: Searcher,
    /// Its files as stored (what the index reads goes through tantivy's managed layer, which
    /// strips each file's footer).
    pub(super) files: RamDirectory,
    pub(super) fields: Arc<SchemaFields>,
    pub(super) bytes: usize,
}

impl fmt::Debug for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shard")
            .field("docs", &self.searcher.num_docs())
            .field("bytes", &self.bytes)
            .finish()
    }
}

/// The indexing budget of one shard's writer: what sizes its first hash table (it grows as
/// needed, and a shard is always one segment). Small, as a full build has one writer per shard
/// open at once.
const WRITER_BUDGET: usize = 1 << 20;

/// Builds one shard, a dataset at a time.
pub(super) struct ShardWriter {
    pub(super) writer: SingleSegmentIndexWriter<TantivyDocument>,
    pub(super) files: RamDirectory,
    fields: SchemaFields,
}

impl ShardWriter {
    pub(super) fn new() -> Result<Self, SearchError> {
        let (schema, fields) = schema();
        let files = RamDirectory::create();
        let index = Index::create(files.clone(), schema, IndexSettings::default())?;
        Ok(Self {
            writer: SingleSegmentIndexWriter::new(index, WRITER_BUDGET)?,
            files,
            fields,
        })
    }

    pub(super) fn add(&mut self, doc: &Terms) -> Result<(), SearchError> {
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

    pub(super) fn finish(self) -> Result<Shard, SearchError> {
        let index = self.writer.finalize()?;
        let bytes = blob_len(&Shard::files(&index, &self.files)?);
        Shard::open(index, self.files, Arc::new(self.fields), bytes)
    }
}

impl Shard {
    pub(super) fn build(docs: &[Terms]) -> Result<Self, SearchError> {
        let mut writer = ShardWriter::new()?;
        for doc in docs {
            writer.add(doc)?;
        }
        writer.finish()
    }

    pub(super) fn open(
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

    /// Its size as stored, in bytes.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// How many datasets it holds.
    pub fn docs(&self) -> u64 {
        self.searcher.num_docs()
    }

    /// Every dataset it holds, with its words: what a rewrite starts from.
    pub(super) fn terms(&self) -> Result<Vec<Terms>, SearchError> {
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

    /// The positions of the datasets holding facet `term` here.
    pub(super) fn holding(&self, term: &str) -> Result<Vec<u64>, SearchError> {
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

/// Builds `docs` (all within `bounds`) into shards of at most `max_bytes`: a larger piece is
/// split at its median word, or, holding one word, at its median position.
pub(super) fn split_into(
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

/// How many bytes a shard's files take as one stored blob (`super::blob`).
pub(super) fn blob_len(files: &[(std::path::PathBuf, Vec<u8>)]) -> usize {
    1 + files
        .iter()
        .map(|(p, b)| 2 + p.as_os_str().len() + 4 + b.len())
        .sum::<usize>()
}
