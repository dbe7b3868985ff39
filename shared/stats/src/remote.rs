//! Statistics over objects in S3, read by ranged GETs ([`RemoteObject`], a [`StatsInput`]): the
//! footer from the object's tail, then only the column chunks a pass reads, each byte once a
//! pass, with several GETs in flight; never the whole object at once.
//!
//! **Reads.** Every read is a GET of a byte range, conditioned on the object's ETag
//! (`If-Match`), so that an object replaced while its statistics are computed fails with S3's
//! 412 rather than mixing two objects' bytes.
//! - The footer: the last [`TAIL`] bytes (and the rest of the footer if it is longer), kept
//!   for every footer read of the reader, and shared by the readers of the objects that share
//!   one [`ReadCounts`] (up to [`FOOTER_CACHE_BYTES`] of footers): each pass over an object
//!   opens a reader, and finds its footer there rather than by another GET.
//! - The column chunks: the footer gives each one's exact bytes. A read within a column chunk
//!   is served from that column's *pieces*: consecutive ranges of the chunk fetched by one GET
//!   each, never past the chunk's end; then the pieces after it (the same column's next row
//!   group's chunk after the last) are fetched ahead while the decoder reads, each column
//!   ahead by up to [`READER_BYTES`] shared among the columns read (pieces of
//!   [`PIECE_MIN`] to [`PIECE_MAX`]). A pass reads a column's pages one after another, so
//!   each byte of a column chunk is fetched once, and a piece is dropped as soon as the
//!   decoder is past it. A pass of one column keeps about four GETs in flight, a pass of
//!   eight about two per column.
//! - Anything else (a footer that does not decode, a read outside every column chunk, such as
//!   a page index): the [`BLOCK`] from where a smaller read starts, kept for the reads that
//!   follow (at most [`CACHE_BYTES`] of blocks, the least recently used dropped first); a
//!   read of a block or more is fetched as it is.
//!
//! **Memory.** Each open reader holds at most [`READER_BYTES`] of pieces, fetched or in
//! flight, plus the one read the decoder waits on when it is larger (a page), plus
//! [`CACHE_BYTES`] of blocks (none when every read falls in a column chunk) and its footer.
//! The statistics open one reader per thread at a time, on four threads a core for objects
//! ([`StatsInput::THREADS_PER_CORE`]), so the bytes held are bounded by the number of cores
//! (about 2 × 4 × 16 MiB on two), whatever the objects' sizes and number; the footers shared
//! add at most [`FOOTER_CACHE_BYTES`].
//!
//! **Threads.** The readers are synchronous (parquet's [`ChunkReader`]): each GET runs on the
//! tokio runtime given ([`RemoteObject::handle`]) and the reading thread waits for the piece it
//! needs. They must not be called on one of the runtime's own worker threads: the statistics
//! run on `spawn_blocking` threads and the threads they start.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use super::input::StatsInput;
use super::StatsError;

mod chunks;
mod pieces;

use chunks::{Footer, Footers};
use pieces::State;

/// A read outside every column chunk smaller than this fetches this much from where it
/// starts, and keeps it.
pub const BLOCK: u64 = 1 << 20;
/// The footer is read from the object's last bytes: at least this many.
pub const TAIL: u64 = 64 << 10;
/// The most bytes of blocks one open reader keeps.
pub const CACHE_BYTES: u64 = 8 << 20;
/// The most bytes of column-chunk pieces one open reader holds, fetched or in flight.
pub const READER_BYTES: u64 = 16 << 20;
/// The largest piece of a column chunk one GET fetches.
pub const PIECE_MAX: u64 = 4 << 20;
/// The smallest piece of a column chunk one GET fetches (but at a chunk's end).
pub const PIECE_MIN: u64 = 256 << 10;
/// The most bytes of footers kept for the readers of the objects that share a [`ReadCounts`].
pub const FOOTER_CACHE_BYTES: u64 = 16 << 20;

/// Requests and bytes of the ranged GETs made, shared by every reader of the objects that
/// share it; and the footers they read lately (module docs).
#[derive(Debug, Default)]
pub struct ReadCounts {
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
    in_flight: AtomicU64,
    most_in_flight: AtomicU64,
    footers: Mutex<Footers>,
}

impl ReadCounts {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    /// The most GETs that were in flight at once.
    pub fn most_in_flight(&self) -> u64 {
        self.most_in_flight.load(Ordering::Relaxed)
    }
}

/// An object in S3 to read by ranges: where it is, its size and ETag (from a listing or a
/// HeadObject), and the runtime its GETs run on.
#[derive(Debug, Clone)]
pub struct RemoteObject {
    pub s3: aws_sdk_s3::Client,
    pub bucket: String,
    pub key: String,
    pub size: u64,
    /// Every GET is conditioned on it (`If-Match`) when given.
    pub etag: Option<String>,
    pub handle: tokio::runtime::Handle,
    pub counts: Arc<ReadCounts>,
}

impl RemoteObject {
    /// `s3://bucket/key`.
    pub fn url(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.key)
    }

    /// Bytes `start..end` of the object: one ranged GET.
    async fn get(&self, start: u64, end: u64) -> Result<Bytes, String> {
        let counts = &self.counts;
        counts.requests.fetch_add(1, Ordering::Relaxed);
        let now = counts.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        counts.most_in_flight.fetch_max(now, Ordering::Relaxed);
        let got = async {
            let out = self
                .s3
                .get_object()
                .bucket(&self.bucket)
                .key(&self.key)
                .range(format!("bytes={start}-{}", end - 1))
                .set_if_match(self.etag.clone())
                .send()
                .await
                .map_err(|e| aws_sdk_s3::error::DisplayErrorContext(e).to_string())?;
            out.body
                .collect()
                .await
                .map(|b| b.into_bytes())
                .map_err(|e| e.to_string())
        }
        .await;
        counts.in_flight.fetch_sub(1, Ordering::Relaxed);
        let got = got?;
        if got.len() as u64 != end - start {
            return Err(format!(
                "asked for bytes {start} to {end}, got {} bytes: the object changed?",
                got.len()
            ));
        }
        counts.bytes.fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(got)
    }

    /// Bytes `start..end`, the calling thread waiting for them.
    fn fetch(&self, start: u64, end: u64) -> Result<Bytes, String> {
        self.handle.block_on(self.get(start, end))
    }
}

impl StatsInput for RemoteObject {
    type Reader = RemoteReader;
    /// A ranged GET mostly waits: four objects are read at once per core.
    const THREADS_PER_CORE: usize = 4;
    /// A column read twice is fetched twice.
    const READ_ONCE: bool = true;

    fn name(&self) -> String {
        self.url()
    }

    fn open(&self) -> Result<RemoteReader, StatsError> {
        Ok(RemoteReader {
            inner: Arc::new(Inner {
                object: Arc::new(self.clone()),
                state: Mutex::new(State::default()),
            }),
        })
    }
}

struct Inner {
    object: Arc<RemoteObject>,
    state: Mutex<State>,
}

impl Inner {
    fn failed(&self, why: impl std::fmt::Display) -> ParquetError {
        ParquetError::External(format!("reading {}: {why}", self.object.url()).into())
    }

    /// The object's footer: this reader's, the one the readers sharing its counts read, or
    /// fetched now (module docs).
    fn footer(&self, state: &mut State) -> Result<Arc<Footer>, ParquetError> {
        if let Some(footer) = &state.footer {
            return Ok(footer.clone());
        }
        let object = &self.object;
        let url = object.url();
        let shared = object
            .counts
            .footers
            .lock()
            .ok()
            .and_then(|footers| footers.get(&url, object.size, &object.etag));
        let footer = match shared {
            Some(footer) => footer,
            None => {
                let footer = Arc::new(self.fetch_footer(url)?);
                if let Ok(mut footers) = object.counts.footers.lock() {
                    footers.keep(footer.clone(), FOOTER_CACHE_BYTES);
                }
                footer
            }
        };
        state.footer = Some(footer.clone());
        Ok(footer)
    }

    /// The object's last [`TAIL`] bytes, and the rest of its footer if it is longer.
    fn fetch_footer(&self, url: String) -> Result<Footer, ParquetError> {
        let object = &self.object;
        let size = object.size;
        let from = size.saturating_sub(TAIL);
        let mut tail = object.fetch(from, size).map_err(|e| self.failed(e))?;
        let mut start = from;
        if let Some(needed) = chunks::needed_footer_len(&tail) {
            let needed = needed as u64;
            if needed > tail.len() as u64 && needed <= size {
                let front = object
                    .fetch(size - needed, from)
                    .map_err(|e| self.failed(e))?;
                let mut whole = Vec::with_capacity(needed as usize);
                whole.extend_from_slice(&front);
                whole.extend_from_slice(&tail);
                tail = Bytes::from(whole);
                start = size - needed;
            }
        }
        let chunks = chunks::Chunks::from_tail(&tail, size);
        // Only the footer is kept when the tail holds more than it.
        if let Some(len) = chunks::footer_len(&tail) {
            let at = tail.len() - len;
            start += at as u64;
            tail = Bytes::copy_from_slice(&tail[at..]);
        }
        Ok(Footer {
            url,
            size,
            etag: object.etag.clone(),
            start,
            bytes: tail,
            chunks,
        })
    }

    /// Bytes `start..start + len` (within the object); with `whole` false, at least one and
    /// at most `len` of them (as far as a piece or block goes).
    fn read(&self, start: u64, len: u64, whole: bool) -> Result<Bytes, ParquetError> {
        let size = self.object.size;
        if len == 0 {
            return Ok(Bytes::new());
        }
        let end = start.checked_add(len).filter(|end| *end <= size);
        let Some(end) = end else {
            return Err(ParquetError::EOF(format!(
                "{}: bytes {start} to {} asked of {size}",
                self.object.url(),
                start.saturating_add(len)
            )));
        };
        let mut state = self
            .state
            .lock()
            .map_err(|_| self.failed("a reader failed"))?;
        let footer = self.footer(&mut state)?;
        if start >= footer.start {
            let at = (start - footer.start) as usize;
            return Ok(footer.bytes.slice(at..at + len as usize));
        }
        if let Some(chunks) = &footer.chunks {
            if let Some(k) = chunks.find(start) {
                // A read of what there is (a page header) stops at the chunk's end.
                let chunk_end = chunks.list[k].end;
                let end = if whole { end } else { end.min(chunk_end) };
                if end <= chunk_end {
                    return state.chunk_read(&self.object, chunks, k, start, end, whole);
                }
            }
        }
        state.block_read(&self.object, start, end, whole)
    }
}

/// A [`ChunkReader`] over one [`RemoteObject`] (module docs).
pub struct RemoteReader {
    inner: Arc<Inner>,
}

impl Length for RemoteReader {
    fn len(&self) -> u64 {
        self.inner.object.size
    }
}

impl ChunkReader for RemoteReader {
    type T = RangeRead;

    fn get_read(&self, start: u64) -> Result<RangeRead, ParquetError> {
        Ok(RangeRead {
            inner: self.inner.clone(),
            at: start,
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        self.inner.read(start, length as u64, true)
    }
}

/// Reads an object from an offset on, as far as a piece or block goes at a time.
pub struct RangeRead {
    inner: Arc<Inner>,
    at: u64,
}

impl Read for RangeRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let size = self.inner.object.size;
        if self.at >= size || buf.is_empty() {
            return Ok(0);
        }
        let len = (buf.len() as u64).min(size - self.at);
        let bytes = self
            .inner
            .read(self.at, len, false)
            .map_err(std::io::Error::other)?;
        buf[..bytes.len()].copy_from_slice(&bytes);
        self.at += bytes.len() as u64;
        Ok(bytes.len())
    }
}

#[cfg(test)]
mod tests;
