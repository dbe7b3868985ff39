//! A shard as stored: its files in one blob, with an empty document store in place of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tantivy::directory::RamDirectory;
use tantivy::{Directory, Index};

use super::shard::{blob_len, schema, Shard, ShardWriter};
use super::SearchError;

/// Blob format: this byte, then for each file a u16 path length, the path, a u32 length and
/// the bytes.
const BLOB_FORMAT: u8 = 1;

impl Shard {
    /// The index's files: `meta.json` and its segments'.
    pub(super) fn files(
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
