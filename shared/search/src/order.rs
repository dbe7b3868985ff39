//! The listings' orders other than publication: by name, by last update and by downloads,
//! kept so that a sorted page reads a few small parts whatever the catalog's size.
//!
//! - **Chunks by key range.** Each order is cut into [`Chunk`]s: consecutive runs of the
//!   catalog in that order, each at most [`MAX_CHUNK`] datasets. A chunk is stored twice: the
//!   positions of its datasets in order (4 bytes each: what a listing reads), and their keys
//!   (what a writer needs to put a dataset in its place). The order's manifest names each
//!   chunk with its first key and its length ([`Bounds`]).
//! - **A page with no words or filters** reads the chunks that hold its ranks, found from the
//!   lengths ([`covering`]): one or two chunks of positions, whatever the page.
//! - **A page of matches** (words, filters) reads every chunk's positions (4 bytes a dataset)
//!   and keeps the matches in the order's sequence ([`walk`]).
//! - **A change** that moves a dataset (a new name, an update, a new download count) rewrites
//!   the chunk it leaves and the one it joins ([`edit`]), splitting one that outgrows
//!   [`MAX_CHUNK`]. A dataset's key is compared as the listing compares
//!   ([`catalog::query::ListQuery::order`]): the answers are those of a sort of the whole list.

use std::collections::BTreeMap;
use std::ops::Range;

use serde::{Deserialize, Serialize};

use catalog::query::SortField;
use catalog::records::DatasetSummary;

/// The most datasets in a chunk: a larger one is split in two.
pub const MAX_CHUNK: usize = 2048;
/// How full `reindex` builds chunks, so that the first changes split none.
pub const BUILD_CHUNK: usize = 1536;

/// An order kept beside the catalog list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sorted {
    Name,
    Updated,
    Downloads,
}

impl Sorted {
    pub const ALL: [Self; 3] = [Self::Name, Self::Updated, Self::Downloads];

    /// The order kept for a sort field (publication order is the list's own).
    pub fn of(field: SortField) -> Option<Self> {
        match field {
            SortField::Created => None,
            SortField::Name => Some(Self::Name),
            SortField::Updated => Some(Self::Updated),
            SortField::Downloads => Some(Self::Downloads),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Name => "name",
            Self::Updated => "updated",
            Self::Downloads => "downloads",
        }
    }

    /// Where a listed dataset sits in this order.
    pub fn key(self, summary: &DatasetSummary) -> Key {
        match self {
            Self::Name => Key::Name(summary.card.name.to_lowercase(), summary.slug.to_string()),
            Self::Updated => Key::Updated(
                summary.updated_at.timestamp(),
                summary.updated_at.timestamp_subsec_nanos(),
                summary.seq,
            ),
            Self::Downloads => Key::Downloads(summary.downloads, summary.seq),
        }
    }
}

/// A dataset's place in one order, ascending, ties broken as the listing breaks them: the
/// name (lowercase) then the slug; the update time then the position; the downloads then the
/// position. All keys of one order have the same variant.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Key {
    Name(String, String),
    Updated(i64, u32, u64),
    Downloads(u64, u64),
}

/// Why an order could not be read or changed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrderError {
    #[error("order: a stored chunk is damaged")]
    Damaged,
    /// The dataset is not where its recorded key says (a change that did not reach the
    /// order): `reindex` rebuilds it.
    #[error("order: dataset {0} is not at its recorded place")]
    Missing(u64),
    #[error("order: position {0} does not fit 4 bytes")]
    TooFar(u64),
    /// A chunk the edit needs was not loaded (a caller's bug).
    #[error("order: chunk {0} is not loaded")]
    NotLoaded(usize),
}

/// A chunk as its manifest names it: its first key and how many datasets it holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bounds {
    pub lower: Key,
    pub len: u32,
}

/// A run of an order: its datasets' keys and positions, ascending.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chunk {
    entries: Vec<(Key, u64)>,
}

impl Chunk {
    /// A chunk of these entries, sorted.
    pub fn new(mut entries: Vec<(Key, u64)>) -> Self {
        entries.sort_unstable();
        Self { entries }
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Its manifest entry (`None` when empty).
    pub fn bounds(&self) -> Option<Bounds> {
        self.entries.first().map(|(lower, _)| Bounds {
            lower: lower.clone(),
            len: self.entries.len() as u32,
        })
    }

    /// Positions in order.
    pub fn seqs(&self) -> impl Iterator<Item = u64> + '_ {
        self.entries.iter().map(|(_, seq)| *seq)
    }

    fn insert(&mut self, key: Key, seq: u64) {
        let at = self.entries.partition_point(|e| *e < (key.clone(), seq));
        if self.entries.get(at) != Some(&(key.clone(), seq)) {
            self.entries.insert(at, (key, seq));
        }
    }

    fn remove(&mut self, key: &Key, seq: u64) -> bool {
        match self
            .entries
            .binary_search_by(|(k, s)| k.cmp(key).then(s.cmp(&seq)))
        {
            Ok(at) => {
                self.entries.remove(at);
                true
            }
            Err(_) => false,
        }
    }

    /// Itself, or its two halves when it outgrew [`MAX_CHUNK`]; nothing when empty.
    fn settled(mut self) -> Vec<Self> {
        if self.entries.len() > MAX_CHUNK {
            let upper = self.entries.split_off(self.entries.len() / 2);
            vec![self, Self { entries: upper }]
        } else if self.entries.is_empty() {
            Vec::new()
        } else {
            vec![self]
        }
    }

    /// The positions as a listing reads them, in order, each in the fewest bits that hold the
    /// largest (20 at a million datasets), packed little-endian: that width and the bytes.
    pub fn seqs_packed(&self) -> Result<(u8, Vec<u8>), OrderError> {
        let mut largest = 0u32;
        for (_, seq) in &self.entries {
            largest = largest.max(u32::try_from(*seq).map_err(|_| OrderError::TooFar(*seq))?);
        }
        let bits = (u32::BITS - largest.leading_zeros()).max(1) as u8;
        let mut bytes = Vec::with_capacity(packed_len(self.entries.len(), bits));
        let (mut acc, mut held) = (0u64, 0u32);
        for (_, seq) in &self.entries {
            acc |= *seq << held;
            held += u32::from(bits);
            while held >= 8 {
                bytes.push(acc as u8);
                acc >>= 8;
                held -= 8;
            }
        }
        if held > 0 {
            bytes.push(acc as u8);
        }
        Ok((bits, bytes))
    }

    /// The keys and positions as a writer reads them: deflated JSON.
    pub fn keys_bytes(&self) -> Vec<u8> {
        // Strings and numbers always serialize.
        let json = serde_json::to_vec(&self.entries).unwrap_or_default();
        miniz_oxide::deflate::compress_to_vec(&json, 6)
    }

    pub fn from_keys_bytes(bytes: &[u8]) -> Result<Self, OrderError> {
        let json = miniz_oxide::inflate::decompress_to_vec_with_limit(bytes, KEYS_MAX_BYTES)
            .map_err(|_| OrderError::Damaged)?;
        let entries: Vec<(Key, u64)> =
            serde_json::from_slice(&json).map_err(|_| OrderError::Damaged)?;
        if !entries.windows(2).all(|w| w[0] < w[1]) {
            return Err(OrderError::Damaged);
        }
        Ok(Self { entries })
    }
}

/// A chunk's keys inflate to at most this (2,049 keys of a 200-character name and a slug).
const KEYS_MAX_BYTES: usize = 4 << 20;

/// How many bytes `len` positions of `bits` bits each take packed.
pub fn packed_len(len: usize, bits: u8) -> usize {
    (len * usize::from(bits)).div_ceil(8)
}

/// `len` positions read back from [`Chunk::seqs_packed`]'s bytes, `bits` bits each; `bits` 0:
/// 4 bytes each, little-endian (chunks written before positions were packed).
pub fn seqs_from(bytes: &[u8], len: usize, bits: u8) -> Result<Vec<u32>, OrderError> {
    if bits == 0 {
        if bytes.len() != len * 4 {
            return Err(OrderError::Damaged);
        }
        return Ok(bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect());
    }
    if bits > 32 || bytes.len() != packed_len(len, bits) {
        return Err(OrderError::Damaged);
    }
    let mask = (1u64 << bits) - 1;
    let mut seqs = Vec::with_capacity(len);
    let (mut acc, mut held) = (0u64, 0u32);
    let mut next = bytes.iter();
    for _ in 0..len {
        while held < u32::from(bits) {
            let byte = next.next().ok_or(OrderError::Damaged)?;
            acc |= u64::from(*byte) << held;
            held += 8;
        }
        seqs.push((acc & mask) as u32);
        acc >>= bits;
        held -= u32::from(bits);
    }
    Ok(seqs)
}

/// An order built whole from every listed dataset's key and position.
pub fn build(mut entries: Vec<(Key, u64)>) -> Vec<Chunk> {
    entries.sort_unstable();
    entries.dedup();
    entries
        .chunks(BUILD_CHUNK)
        .map(|c| Chunk {
            entries: c.to_vec(),
        })
        .collect()
}

/// The chunk a key belongs in: the last whose first key is not after it (the first chunk for
/// a key before every other).
pub fn chunk_for(bounds: &[Bounds], key: &Key) -> usize {
    bounds
        .partition_point(|b| b.lower <= *key)
        .saturating_sub(1)
}

/// The chunks a move from `old` to `new` rewrites (none are when the order is empty).
pub fn touched(bounds: &[Bounds], old: Option<&Key>, new: &Key) -> Vec<usize> {
    if bounds.is_empty() {
        return Vec::new();
    }
    let mut touched: Vec<usize> = old
        .into_iter()
        .chain(std::iter::once(new))
        .map(|k| chunk_for(bounds, k))
        .collect();
    touched.sort_unstable();
    touched.dedup();
    touched
}

/// What replaces the chunks an edit touched: for each, by index ascending, the chunks now in
/// its place (none, one, or two when it split).
pub type Replacements = Vec<(usize, Vec<Chunk>)>;

/// Moves the dataset at `seq` from `old` (`None`: it was not in the order) to `new`, in the
/// chunks `loaded` (those [`touched`] names, read).
pub fn edit(
    bounds: &[Bounds],
    mut loaded: BTreeMap<usize, Chunk>,
    seq: u64,
    old: Option<&Key>,
    new: Key,
) -> Result<Replacements, OrderError> {
    if bounds.is_empty() {
        return Ok(vec![(0, Chunk::new(vec![(new, seq)]).settled())]);
    }
    if let Some(old) = old {
        let at = chunk_for(bounds, old);
        let chunk = loaded.get_mut(&at).ok_or(OrderError::NotLoaded(at))?;
        if !chunk.remove(old, seq) {
            return Err(OrderError::Missing(seq));
        }
    }
    let at = chunk_for(bounds, &new);
    loaded
        .get_mut(&at)
        .ok_or(OrderError::NotLoaded(at))?
        .insert(new, seq);
    Ok(loaded
        .into_iter()
        .map(|(i, chunk)| (i, chunk.settled()))
        .collect())
}

/// The chunks (indices, ascending) holding ranks `offset..offset + limit` of an order of
/// chunks of these lengths, counted from its end when `descending`.
pub fn covering(lens: &[u32], descending: bool, offset: u64, limit: u64) -> Range<usize> {
    let total: u64 = lens.iter().map(|l| u64::from(*l)).sum();
    if limit == 0 || offset >= total {
        return 0..0;
    }
    let end = offset.saturating_add(limit).min(total);
    // Ascending ranks `first..last`.
    let (first, last) = match descending {
        false => (offset, end),
        true => (total - end, total - offset),
    };
    let mut start = 0u64;
    let mut held: Option<Range<usize>> = None;
    for (i, len) in lens.iter().enumerate() {
        let next = start + u64::from(*len);
        if next > first && start < last {
            held = Some(held.map_or(i, |r| r.start)..i + 1);
        }
        start = next;
    }
    held.unwrap_or(0..0)
}

/// Ranks `offset..offset + limit` (from the end when `descending`) of the order, given the
/// positions of the chunks `range` ([`covering`]) in order and the lengths of every chunk.
pub fn page<C: AsRef<[u32]>>(
    lens: &[u32],
    range: Range<usize>,
    seqs: &[C],
    descending: bool,
    offset: u64,
    limit: u64,
) -> Vec<u64> {
    let Some(earlier) = lens.get(..range.start) else {
        return Vec::new();
    };
    let before: u64 = earlier.iter().map(|l| u64::from(*l)).sum();
    let total: u64 = lens.iter().map(|l| u64::from(*l)).sum();
    let held = seqs.iter().flat_map(|c| c.as_ref()).map(|s| u64::from(*s));
    let end = offset.saturating_add(limit).min(total);
    // Ranks before the chunks read, or after them, are not theirs to give (a range that is
    // not `covering`'s gives nothing rather than another page).
    let first = if descending { total - end } else { offset };
    if offset >= end || first < before {
        return Vec::new();
    }
    match descending {
        false => held
            .skip(usize::try_from(offset - before).unwrap_or(usize::MAX))
            .take(usize::try_from(end - offset).unwrap_or(usize::MAX))
            .collect(),
        true => {
            let ascending: Vec<u64> = held.collect();
            // Ascending ranks `total - end..total - offset`, read backwards.
            let from = usize::try_from(total - end - before).unwrap_or(usize::MAX);
            let to = usize::try_from(total - offset - before).unwrap_or(usize::MAX);
            ascending
                .get(from..to.min(ascending.len()))
                .unwrap_or_default()
                .iter()
                .rev()
                .copied()
                .collect()
        }
    }
}

/// The members of `matches` in the order (every chunk's positions, in order), reversed when
/// `descending`; each once, where the order first has it. Membership is an array by position
/// (a bit a dataset), not a set: half a million matches are not hashed.
pub fn walk<C: AsRef<[u32]>>(chunks: &[C], descending: bool, matches: &[u64]) -> Vec<u64> {
    let Some(largest) = matches.iter().max() else {
        return Vec::new();
    };
    let mut member = vec![false; *largest as usize + 1];
    for seq in matches {
        member[*seq as usize] = true;
    }
    let mut found: Vec<u64> = Vec::with_capacity(matches.len());
    for seq in chunks.iter().flat_map(|c| c.as_ref()) {
        if let Some(m) = member.get_mut(*seq as usize) {
            if *m {
                *m = false;
                found.push(u64::from(*seq));
            }
        }
    }
    if descending {
        found.reverse();
    }
    found
}

#[cfg(test)]
mod tests;
