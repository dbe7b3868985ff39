//! A version's files, validated, sorted and cut into chunks, with the summary that finds them.

use serde::{Deserialize, Serialize};

use super::{
    ColumnRange, PartitionColumn, PartitionFilter, PartitionType, PartitionValue, RelPath,
    ResolvedFilter, SplitName,
};

/// One file as publish found it: partition values are read from its path by
/// [`Manifest::build`].
#[derive(Debug, Clone, PartialEq)]
pub struct FileInput {
    pub path: RelPath,
    pub split: Option<SplitName>,
    pub rows: u64,
    pub size: u64,
    /// The file's SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// Statistics by column name; a column not named is unknown.
    pub stats: Vec<(String, ColumnRange)>,
}

/// What [`Manifest::build`] validates.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ManifestInput {
    pub files: Vec<FileInput>,
    /// The files' columns (their common schema, partition columns not included).
    pub columns: Vec<String>,
    /// The splits the publisher named: each must receive at least one file.
    pub splits: Vec<SplitName>,
    /// Partition types the publisher declared; the others are inferred.
    pub partition_types: Vec<(String, PartitionType)>,
}

/// One file of a version, as the manifest keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct FileEntry {
    pub path: RelPath,
    pub split: Option<SplitName>,
    /// In the order of [`Summary::partitions`].
    pub partitions: Vec<PartitionValue>,
    pub rows: u64,
    pub size: u64,
    pub sha256: String,
    /// In the order of [`Summary::columns`], `None` where unknown; empty when the reader did not
    /// ask for statistics.
    pub stats: Vec<Option<ColumnRange>>,
}

/// A split: its files are `first_file..first_file + files` of the manifest, in chunks
/// `first_chunk..first_chunk + chunks`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitSummary {
    pub name: SplitName,
    pub files: u64,
    pub rows: u64,
    pub bytes: u64,
    pub first_file: u64,
    pub first_row: u64,
    pub first_chunk: u32,
    pub chunks: u32,
}

/// The smallest and largest non-null value of one partition column in a chunk (as text, see
/// [`PartitionValue::to_text`]), and whether a null is among them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ValueRange {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nulls: bool,
}

impl ValueRange {
    /// Whether a file holding `value` may be in the chunk.
    pub fn may_hold(&self, value: &PartitionValue, kind: PartitionType) -> bool {
        if value.is_null() {
            return self.nulls;
        }
        let bound = |b: &Option<String>| PartitionValue::parse(Some(b.as_deref()?), kind);
        match (bound(&self.min), bound(&self.max)) {
            (Some(min), Some(max)) => {
                min.compare(value).is_some_and(|o| o.is_le())
                    && max.compare(value).is_some_and(|o| o.is_ge())
            }
            _ => false,
        }
    }
}

/// A chunk: files `first_file..first_file + files` of the manifest, rows
/// `first_row..first_row + rows` of the version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkSummary {
    pub first_file: u64,
    pub files: u32,
    pub first_row: u64,
    pub rows: u64,
    /// Per partition column, in [`Summary::partitions`]' order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<ValueRange>,
    /// How many stored items the chunk's files take: set by the store's writer (0 until it
    /// wrote them).
    #[serde(default)]
    pub file_parts: u32,
    /// How many stored items the chunk's statistics take, likewise.
    #[serde(default)]
    pub stat_parts: u32,
}

/// A version's files in brief: what the version item holds, enough to find the chunk(s) of any
/// page, row offset or partition filter without reading the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub files: u64,
    pub rows: u64,
    pub bytes: u64,
    /// The manifest hash (the module's docs say what it covers).
    pub sha256: String,
    /// The files' columns: the order of each file's statistics.
    pub columns: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<PartitionColumn>,
    /// Empty when the files have no split.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub splits: Vec<SplitSummary>,
    pub chunks: Vec<ChunkSummary>,
}

/// Files `first_file..first_file + files`, rows `first_row..first_row + rows`, chunks
/// `first_chunk..first_chunk + chunks`: a split, or the whole version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub first_file: u64,
    pub files: u64,
    pub first_row: u64,
    pub rows: u64,
    pub first_chunk: usize,
    pub chunks: usize,
}

impl Summary {
    /// A split's span (`None`: the whole version); `None` when no split has that name.
    pub fn span(&self, split: Option<&str>) -> Option<Span> {
        match split {
            None => Some(Span {
                first_file: 0,
                files: self.files,
                first_row: 0,
                rows: self.rows,
                first_chunk: 0,
                chunks: self.chunks.len(),
            }),
            Some(name) => self
                .splits
                .iter()
                .find(|s| s.name.as_str() == name)
                .map(|s| Span {
                    first_file: s.first_file,
                    files: s.files,
                    first_row: s.first_row,
                    rows: s.rows,
                    first_chunk: s.first_chunk as usize,
                    chunks: s.chunks as usize,
                }),
        }
    }

    /// The chunk that is page `page` (from 0) of a split's (or the version's) files: a page of
    /// files is one chunk. `None` past the last page or for an unknown split.
    pub fn page_chunk(&self, split: Option<&str>, page: u64) -> Option<usize> {
        let span = self.span(split)?;
        let page = usize::try_from(page).ok()?;
        (page < span.chunks).then_some(span.first_chunk + page)
    }

    /// The chunk holding row `offset` of a split (or the version), and that row's position in
    /// the version; `None` past the end.
    pub fn chunk_of_row(&self, split: Option<&str>, offset: u64) -> Option<(usize, u64)> {
        let span = self.span(split)?;
        if offset >= span.rows {
            return None;
        }
        let row = span.first_row + offset;
        let chunks = &self.chunks[span.first_chunk..span.first_chunk + span.chunks];
        let i = chunks.partition_point(|c| c.first_row + c.rows <= row);
        (i < chunks.len()).then_some((span.first_chunk + i, row))
    }

    /// The filter against this version's partition columns; `None` when it names nothing (a
    /// key that is not a partition column, a value that is not of its column's type), which is
    /// an empty answer, not an error.
    pub fn resolve(&self, filter: &PartitionFilter) -> Option<ResolvedFilter> {
        let mut out = Vec::new();
        for (key, value) in filter.terms() {
            let i = self.partitions.iter().position(|p| &p.name == key)?;
            let value = PartitionValue::parse(value.as_deref(), self.partitions[i].kind)?;
            out.push((i, value));
        }
        Some(ResolvedFilter(out))
    }

    /// The chunks of a split (or the version) that may hold files passing `filter`, in order.
    pub fn chunks_matching(&self, split: Option<&str>, filter: &ResolvedFilter) -> Vec<usize> {
        let Some(span) = self.span(split) else {
            return Vec::new();
        };
        (span.first_chunk..span.first_chunk + span.chunks)
            .filter(|&c| {
                filter.0.iter().all(|(i, value)| {
                    self.chunks[c]
                        .partitions
                        .get(*i)
                        .is_some_and(|r| r.may_hold(value, self.partitions[*i].kind))
                })
            })
            .collect()
    }
}

/// One chunk's files, as read back.
#[derive(Debug, Clone, PartialEq)]
pub struct FileChunk {
    pub index: usize,
    pub first_file: u64,
    pub first_row: u64,
    pub files: Vec<FileEntry>,
}

impl FileChunk {
    /// The file holding row `row` of the version (a position from
    /// [`Summary::chunk_of_row`]): its index in this chunk and the row's offset in it.
    pub fn locate_row(&self, row: u64) -> Option<(usize, u64)> {
        let mut start = self.first_row;
        for (i, f) in self.files.iter().enumerate() {
            if row < start + f.rows && row >= start {
                return Some((i, row - start));
            }
            start += f.rows;
        }
        None
    }
}

/// A version's files: sorted by split then path, cut in chunks, and summed up.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifest {
    pub entries: Vec<FileEntry>,
    pub summary: Summary,
}

impl Manifest {
    /// The manifest hash (module docs): the version's `sha256` when it has many files.
    pub fn sha256(&self) -> &str {
        &self.summary.sha256
    }

    /// Chunk `index`'s files, as a reader gets them back.
    pub fn chunk(&self, index: usize) -> Option<FileChunk> {
        let c = self.summary.chunks.get(index)?;
        let first = c.first_file as usize;
        Some(FileChunk {
            index,
            first_file: c.first_file,
            first_row: c.first_row,
            files: self.entries[first..first + c.files as usize].to_vec(),
        })
    }
}
