//! Where an object's column chunks lie, from its footer: the reads of one column chunk are
//! fetched within its bounds, never past its end, and the next piece ahead of the decoder.

use bytes::Bytes;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

/// The bytes of a Parquet file's footer: the metadata, its length (4 bytes) and `PAR1`.
const FOOTER_TAIL: usize = 8;

/// One column chunk: its bytes in the object, its leaf column, and the same column's chunk in
/// the next row group (where its reads go on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Chunk {
    pub start: u64,
    pub end: u64,
    pub column: usize,
    pub next: Option<usize>,
}

/// Every column chunk of an object, in the order of their bytes, none overlapping another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Chunks {
    pub list: Vec<Chunk>,
}

impl Chunks {
    /// The column chunks the footer `metadata` names in an object of `size` bytes; `None` when
    /// one lies outside the object or two overlap (the reads then go by blocks).
    pub(super) fn from_metadata(metadata: &ParquetMetaData, size: u64) -> Option<Self> {
        // (start, end, row group, column)
        let mut found = Vec::new();
        for (group, row_group) in metadata.row_groups().iter().enumerate() {
            for (column, chunk) in row_group.columns().iter().enumerate() {
                let start = chunk
                    .dictionary_page_offset()
                    .unwrap_or_else(|| chunk.data_page_offset());
                let start = u64::try_from(start).ok()?;
                let len = u64::try_from(chunk.compressed_size()).ok()?;
                let end = start.checked_add(len)?;
                if end > size {
                    return None;
                }
                if len > 0 {
                    found.push((start, end, group, column));
                }
            }
        }
        found.sort_unstable();
        if found.windows(2).any(|w| w[1].0 < w[0].1) {
            return None;
        }
        // Each column's chunks in row group order: a chunk's next is the one after it.
        let mut by_column: rustc_hash::FxHashMap<usize, Vec<(usize, usize)>> =
            rustc_hash::FxHashMap::default();
        for (k, &(_, _, group, column)) in found.iter().enumerate() {
            by_column.entry(column).or_default().push((group, k));
        }
        let mut next = vec![None; found.len()];
        for chunks in by_column.values_mut() {
            chunks.sort_unstable();
            for pair in chunks.windows(2) {
                next[pair[0].1] = Some(pair[1].1);
            }
        }
        let list = found
            .iter()
            .zip(next)
            .map(|(&(start, end, _, column), next)| Chunk {
                start,
                end,
                column,
                next,
            })
            .collect();
        Some(Self { list })
    }

    /// The chunks the footer at the end of `tail` (an object's last bytes) names, when it holds
    /// the whole footer and the footer decodes.
    pub(super) fn from_tail(tail: &[u8], size: u64) -> Option<Self> {
        let metadata_len = footer_len(tail)?.checked_sub(FOOTER_TAIL)?;
        let end = tail.len() - FOOTER_TAIL;
        let metadata =
            ParquetMetaDataReader::decode_metadata(&tail[end - metadata_len..end]).ok()?;
        Self::from_metadata(&metadata, size)
    }

    /// The chunk that holds byte `at`.
    pub(super) fn find(&self, at: u64) -> Option<usize> {
        let k = self
            .list
            .partition_point(|c| c.start <= at)
            .checked_sub(1)?;
        (at < self.list[k].end).then_some(k)
    }
}

/// The bytes of the footer (metadata, length and magic) that `tail`, an object's last bytes,
/// ends with, when they are all there; `None` when the tail is not a Parquet footer's or holds
/// only part of it.
pub(super) fn footer_len(tail: &[u8]) -> Option<usize> {
    let needed = needed_footer_len(tail)?;
    (needed <= tail.len()).then_some(needed)
}

/// The bytes of the footer `tail` (an object's last bytes, at least 8) names, whether or not
/// it holds them all.
pub(super) fn needed_footer_len(tail: &[u8]) -> Option<usize> {
    let last = tail.len().checked_sub(FOOTER_TAIL)?;
    if &tail[last + 4..] != b"PAR1" {
        return None;
    }
    let len = u32::from_le_bytes(tail[last..last + 4].try_into().ok()?);
    usize::try_from(len).ok()?.checked_add(FOOTER_TAIL)
}

/// An object's footer, as the readers of one object share it: where it starts, its bytes, and
/// the column chunks it names (`None` if it does not decode).
#[derive(Debug)]
pub(super) struct Footer {
    pub url: String,
    pub size: u64,
    pub etag: Option<String>,
    pub start: u64,
    pub bytes: Bytes,
    pub chunks: Option<Chunks>,
}

/// The footers read lately, up to a number of bytes, shared by the readers of the objects that
/// share one [`ReadCounts`](super::ReadCounts): each pass over an object finds its footer here
/// rather than by another GET.
#[derive(Debug, Default)]
pub(super) struct Footers {
    kept: std::collections::VecDeque<std::sync::Arc<Footer>>,
    bytes: u64,
}

impl Footers {
    pub(super) fn get(
        &self,
        url: &str,
        size: u64,
        etag: &Option<String>,
    ) -> Option<std::sync::Arc<Footer>> {
        self.kept
            .iter()
            .find(|f| f.url == url && f.size == size && &f.etag == etag)
            .cloned()
    }

    /// Keeps `footer`, dropping the oldest while the footers kept pass `limit` bytes.
    pub(super) fn keep(&mut self, footer: std::sync::Arc<Footer>, limit: u64) {
        let len = footer.bytes.len() as u64;
        if len > limit {
            return;
        }
        self.kept.push_back(footer);
        self.bytes += len;
        while self.bytes > limit {
            match self.kept.pop_front() {
                Some(old) => self.bytes -= old.bytes.len() as u64,
                None => break,
            }
        }
    }
}
