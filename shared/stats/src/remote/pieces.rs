//! One reader's bytes: each column's pieces (fetched or in flight, in the column's order), and
//! blocks for the reads outside every column chunk (the module docs of [`super`]).

use std::collections::VecDeque;
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use parquet::errors::ParquetError;
use tokio::task::JoinHandle;

use super::chunks::{Chunks, Footer};
use super::{RemoteObject, BLOCK, CACHE_BYTES, PIECE_MAX, PIECE_MIN, READER_BYTES};

/// A piece's bytes: there, or on their way.
enum Data {
    Ready(Bytes),
    Pending(JoinHandle<Result<Bytes, String>>),
}

/// Bytes `start..end` of column chunk `chunk`.
struct Piece {
    start: u64,
    end: u64,
    chunk: usize,
    data: Data,
}

impl Piece {
    fn len(&self) -> u64 {
        self.end - self.start
    }
}

/// One column's pieces, in the order it is read, and where the next one starts.
struct Stream {
    column: usize,
    pieces: VecDeque<Piece>,
    /// (chunk, offset): where the next piece starts; `None` past the column's last chunk.
    next: Option<(usize, u64)>,
}

/// What one reader holds.
#[derive(Default)]
pub(super) struct State {
    pub footer: Option<Arc<Footer>>,
    /// Blocks kept, `(start, bytes)`, the most recently used last.
    blocks: Vec<(u64, Bytes)>,
    streams: Vec<Stream>,
    /// Bytes of the pieces held, fetched or in flight.
    held: u64,
}

impl Drop for State {
    fn drop(&mut self) {
        for piece in self.streams.iter().flat_map(|s| &s.pieces) {
            if let Data::Pending(handle) = &piece.data {
                handle.abort();
            }
        }
    }
}

fn failed(object: &RemoteObject, why: impl std::fmt::Display) -> ParquetError {
    ParquetError::External(format!("reading {}: {why}", object.url()).into())
}

/// Drops a piece: its bytes, or its GET if still in flight.
fn drop_piece(piece: Piece, held: &mut u64) {
    *held -= piece.len();
    if let Data::Pending(handle) = piece.data {
        handle.abort();
    }
}

impl State {
    /// Bytes `start..end`, within column chunk `k` (`whole` false: from `start` to the end of
    /// the piece that holds it, at most `end`).
    pub(super) fn chunk_read(
        &mut self,
        object: &Arc<RemoteObject>,
        chunks: &Chunks,
        k: usize,
        start: u64,
        end: u64,
        whole: bool,
    ) -> Result<Bytes, ParquetError> {
        let column = chunks.list[k].column;
        let at = match self.streams.iter().position(|s| s.column == column) {
            Some(at) => at,
            None => {
                self.streams.push(Stream {
                    column,
                    pieces: VecDeque::new(),
                    next: None,
                });
                self.streams.len() - 1
            }
        };
        let count = self.streams.len() as u64;
        let window = (READER_BYTES / count).max(2 * PIECE_MIN);
        let piece_len = (window / 2).clamp(PIECE_MIN, PIECE_MAX);
        let State { streams, held, .. } = self;
        let stream = &mut streams[at];
        // The pieces before the one holding `start` are read: dropped. A read elsewhere (not
        // the column's next bytes) starts the column's pieces again from it.
        match stream
            .pieces
            .iter()
            .position(|p| p.chunk == k && p.start <= start && start < p.end)
        {
            Some(before) => {
                for piece in stream.pieces.drain(..before) {
                    drop_piece(piece, held);
                }
            }
            None => {
                for piece in stream.pieces.drain(..) {
                    drop_piece(piece, held);
                }
                stream.next = Some((k, start));
            }
        }
        // The pieces that hold the read (all of it, or its first byte), fetched now if not yet.
        let needed = if whole { end } else { start + 1 };
        loop {
            let covered = stream
                .pieces
                .iter()
                .take_while(|p| p.chunk == k)
                .last()
                .map_or(start, |p| p.end);
            if covered >= needed {
                break;
            }
            if stream.next != Some((k, covered)) {
                return Err(failed(object, "the pieces of a column chunk went astray"));
            }
            schedule(object, chunks, stream, piece_len, held);
        }
        let mut parts = Vec::new();
        for piece in stream.pieces.iter_mut() {
            if piece.chunk != k || piece.start >= needed {
                break;
            }
            if let Data::Pending(handle) = &mut piece.data {
                let got = object
                    .handle
                    .block_on(handle)
                    .map_err(|e| failed(object, e))?
                    .map_err(|e| failed(object, e))?;
                piece.data = Data::Ready(got);
            }
            if let Data::Ready(bytes) = &piece.data {
                let from = (start.max(piece.start) - piece.start) as usize;
                let to = (end.min(piece.end) - piece.start) as usize;
                parts.push(bytes.slice(from..to));
            }
        }
        let bytes = match parts.len() {
            1 => parts.pop().unwrap_or_default(),
            _ => {
                let mut joined = BytesMut::with_capacity((end - start) as usize);
                parts.iter().for_each(|p| joined.extend_from_slice(p));
                joined.freeze()
            }
        };
        // The pieces read to their end are dropped; then the column's next pieces are
        // fetched ahead, within its share of the reader's bytes.
        let read_to = start + bytes.len() as u64;
        while stream
            .pieces
            .front()
            .is_some_and(|p| p.chunk == k && p.end <= read_to)
        {
            if let Some(piece) = stream.pieces.pop_front() {
                drop_piece(piece, held);
            }
        }
        loop {
            let ahead: u64 = stream.pieces.iter().map(Piece::len).sum();
            if stream.next.is_none() || ahead >= window || *held + piece_len > READER_BYTES {
                break;
            }
            schedule(object, chunks, stream, piece_len, held);
        }
        Ok(bytes)
    }

    /// Bytes `start..end` outside every column chunk: from a kept block, or fetched (a block
    /// from `start` for a smaller read, kept).
    pub(super) fn block_read(
        &mut self,
        object: &RemoteObject,
        start: u64,
        end: u64,
        whole: bool,
    ) -> Result<Bytes, ParquetError> {
        let len = end - start;
        if let Some(bytes) = self.cached_from(start, len) {
            if !whole || bytes.len() as u64 == len {
                return Ok(bytes);
            }
        }
        if whole && len >= BLOCK {
            return object.fetch(start, end).map_err(|e| failed(object, e));
        }
        let to = (start + BLOCK).min(object.size);
        let block = object.fetch(start, to).map_err(|e| failed(object, e))?;
        let bytes = block.slice(0..(len as usize).min(block.len()));
        self.keep(start, block);
        Ok(bytes)
    }

    /// Up to `len` bytes from `start` on, as far as the kept block that holds `start` goes.
    fn cached_from(&mut self, start: u64, len: u64) -> Option<Bytes> {
        let at = self
            .blocks
            .iter()
            .position(|(s, b)| *s <= start && start < s + b.len() as u64)?;
        let block = self.blocks.remove(at);
        let from = (start - block.0) as usize;
        let to = (from + len as usize).min(block.1.len());
        let bytes = block.1.slice(from..to);
        self.blocks.push(block);
        Some(bytes)
    }

    fn keep(&mut self, start: u64, bytes: Bytes) {
        self.blocks.push((start, bytes));
        let mut total: u64 = self.blocks.iter().map(|(_, b)| b.len() as u64).sum();
        while total > CACHE_BYTES && self.blocks.len() > 1 {
            total -= self.blocks.remove(0).1.len() as u64;
        }
    }
}

/// Starts the GET of `stream`'s next piece: up to `piece_len` bytes, never past its chunk's
/// end; the one after it in the same chunk, or the column's next chunk.
fn schedule(
    object: &Arc<RemoteObject>,
    chunks: &Chunks,
    stream: &mut Stream,
    piece_len: u64,
    held: &mut u64,
) {
    let Some((k, start)) = stream.next else {
        return;
    };
    let chunk = chunks.list[k];
    let end = start.saturating_add(piece_len).min(chunk.end);
    let fetching = object.clone();
    let handle = object
        .handle
        .spawn(async move { fetching.get(start, end).await });
    stream.pieces.push_back(Piece {
        start,
        end,
        chunk: k,
        data: Data::Pending(handle),
    });
    *held += end - start;
    stream.next = if end < chunk.end {
        Some((k, end))
    } else {
        chunk.next.map(|n| (n, chunks.list[n].start))
    };
}
