//! What the statistics read a Parquet file from: a local file (any `AsRef<Path>`), or another
//! source of bytes by ranges, such as an object in S3 read by ranged GETs
//! ([`remote`](super::remote)). Every reader of the statistics (the footers, the per-file
//! ranges, the passes over the columns) opens its input through this trait, so the same code
//! counts a file on disk and an object in the bucket.

use std::fs::File;
use std::path::Path;

use parquet::file::reader::ChunkReader;

use super::StatsError;

/// A Parquet file to read: its name in messages, and a reader of its bytes by ranges.
pub trait StatsInput: Sync {
    /// What reads the bytes: each call of [`StatsInput::open`] gives a new one.
    type Reader: ChunkReader + 'static;
    /// Files read at once per core: more than one for inputs whose reads wait on the network
    /// rather than on the disk or the CPU.
    const THREADS_PER_CORE: usize = 1;
    /// Whether every read fetches the bytes again (an object read by ranged GETs), rather
    /// than finding them in the page cache: the statistics then plan their passes from the
    /// footers so that a column is read once where the answer allows it
    /// ([`once`](super::once)).
    const READ_ONCE: bool = false;
    /// How errors name it (a path, or `s3://bucket/key`).
    fn name(&self) -> String;
    fn open(&self) -> Result<Self::Reader, StatsError>;
}

impl<P: AsRef<Path> + Sync + ?Sized> StatsInput for P {
    type Reader = File;

    fn name(&self) -> String {
        self.as_ref().display().to_string()
    }

    fn open(&self) -> Result<File, StatsError> {
        File::open(self.as_ref()).map_err(|e| StatsError::Io(self.name(), e))
    }
}
