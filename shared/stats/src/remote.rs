//! Statistics over objects in S3, read by ranged GETs ([`RemoteObject`], a [`StatsInput`]): the
//! footer from the object's tail, then only the column chunks a pass reads, never the whole
//! object at once.
//!
//! **Reads.** Every read is a GET of a byte range, conditioned on the object's ETag
//! (`If-Match`), so that an object replaced while its statistics are computed fails with S3's
//! 412 rather than mixing two objects' bytes. A read ending at the object's end (the footer's
//! length and magic) fetches the last [`TAIL`] bytes, which usually hold the whole footer too;
//! a smaller read fetches the [`BLOCK`] from where it starts, kept for the reads that follow
//! (a column chunk's page headers and pages lie one after another); a read of a block or more
//! is fetched as it is and not kept.
//!
//! **Memory.** Each open reader keeps at most [`CACHE_BYTES`] of blocks (the least recently
//! used dropped first); the statistics open one reader per thread at a time, on four threads a
//! core for objects ([`StatsInput::THREADS_PER_CORE`]), so the bytes held are bounded by the
//! number of cores (about 2 × 4 × 8 MiB on two), whatever the objects' sizes and number.
//!
//! **Threads.** The readers are synchronous (parquet's [`ChunkReader`]): each GET runs on the
//! tokio runtime given ([`RemoteObject::handle`]) and the reading thread waits for it. They
//! must not be called on one of the runtime's own worker threads: the statistics run on
//! `spawn_blocking` threads and the threads they start.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, Length};

use super::input::StatsInput;
use super::StatsError;

/// A read smaller than this fetches this much from where it starts, and keeps it.
pub const BLOCK: u64 = 1 << 20;
/// A read ending at the object's end fetches at least this many of its last bytes.
pub const TAIL: u64 = 64 << 10;
/// The most bytes of blocks one open reader keeps.
pub const CACHE_BYTES: u64 = 8 << 20;

/// Requests and bytes of the ranged GETs made, shared by every reader of the objects that
/// share it.
#[derive(Debug, Default)]
pub struct ReadCounts {
    pub requests: AtomicU64,
    pub bytes: AtomicU64,
}

impl ReadCounts {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
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
    fn fetch(&self, start: u64, end: u64) -> Result<Bytes, String> {
        self.counts.requests.fetch_add(1, Ordering::Relaxed);
        let got = self.handle.block_on(async {
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
        })?;
        if got.len() as u64 != end - start {
            return Err(format!(
                "asked for bytes {start} to {end}, got {} bytes: the object changed?",
                got.len()
            ));
        }
        self.counts
            .bytes
            .fetch_add(got.len() as u64, Ordering::Relaxed);
        Ok(got)
    }
}

impl StatsInput for RemoteObject {
    type Reader = RemoteReader;
    /// A ranged GET mostly waits: four objects are read at once per core.
    const THREADS_PER_CORE: usize = 4;

    fn name(&self) -> String {
        self.url()
    }

    fn open(&self) -> Result<RemoteReader, StatsError> {
        Ok(RemoteReader {
            inner: Arc::new(Inner {
                object: self.clone(),
                cache: Mutex::new(Vec::new()),
            }),
        })
    }
}

struct Inner {
    object: RemoteObject,
    /// Blocks kept, `(start, bytes)`, the most recently used last.
    cache: Mutex<Vec<(u64, Bytes)>>,
}

impl Inner {
    /// Bytes `start..start + len` if a kept block holds them.
    fn cached(&self, start: u64, len: u64) -> Option<Bytes> {
        self.cached_from(start, len)
            .filter(|bytes| bytes.len() as u64 == len)
    }

    /// Up to `len` bytes from `start` on, as far as the kept block that holds `start` goes.
    fn cached_from(&self, start: u64, len: u64) -> Option<Bytes> {
        let mut cache = self.cache.lock().ok()?;
        let at = cache
            .iter()
            .position(|(s, b)| *s <= start && start < s + b.len() as u64)?;
        let block = cache.remove(at);
        let from = (start - block.0) as usize;
        let to = (from + len as usize).min(block.1.len());
        let bytes = block.1.slice(from..to);
        cache.push(block);
        Some(bytes)
    }

    fn keep(&self, start: u64, bytes: Bytes) {
        let Ok(mut cache) = self.cache.lock() else {
            return;
        };
        cache.push((start, bytes));
        let mut total: u64 = cache.iter().map(|(_, b)| b.len() as u64).sum();
        while total > CACHE_BYTES && cache.len() > 1 {
            total -= cache.remove(0).1.len() as u64;
        }
    }

    /// Bytes `start..start + len` (within the object): from a kept block, or fetched as the
    /// module docs say.
    fn bytes(&self, start: u64, len: u64) -> Result<Bytes, ParquetError> {
        let size = self.object.size;
        if len == 0 {
            return Ok(Bytes::new());
        }
        if start + len > size {
            return Err(ParquetError::EOF(format!(
                "{}: bytes {start} to {} asked of {size}",
                self.object.url(),
                start + len
            )));
        }
        if let Some(bytes) = self.cached(start, len) {
            return Ok(bytes);
        }
        let failed = |why: String| {
            ParquetError::External(format!("reading {}: {why}", self.object.url()).into())
        };
        if len >= BLOCK {
            return self.object.fetch(start, start + len).map_err(failed);
        }
        let (from, to) = if start + len == size {
            (size.saturating_sub(TAIL.max(len)), size)
        } else {
            (start, (start + BLOCK).min(size))
        };
        let block = self.object.fetch(from, to).map_err(failed)?;
        let at = (start - from) as usize;
        let bytes = block.slice(at..at + len as usize);
        self.keep(from, block);
        Ok(bytes)
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
        self.inner.bytes(start, length as u64)
    }
}

/// Reads an object from an offset on, a block at a time through the reader's kept blocks.
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
        // Within the block that holds `at`: a kept one, or the one fetched from `at`.
        let len = (buf.len() as u64).min(size - self.at);
        let bytes = match self.inner.cached_from(self.at, len) {
            Some(bytes) => bytes,
            None => {
                let want = len.clamp(1, BLOCK - 1);
                self.inner
                    .bytes(self.at, want)
                    .map_err(std::io::Error::other)?
            }
        };
        buf[..bytes.len()].copy_from_slice(&bytes);
        self.at += bytes.len() as u64;
        Ok(bytes.len())
    }
}
