//! Where a version's bytes come from: ranged GETs of one S3 object ([`S3Source`]), or any other
//! [`RangeSource`] (an in-memory file in tests), counted per request ([`Reads`]).

use std::future::Future;
use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use catalog::error::StoreError;
use futures_util::future::BoxFuture;
use futures_util::{FutureExt, StreamExt, TryStreamExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::errors::ParquetError;
use parquet::file::metadata::ParquetMetaData;

/// Reads byte ranges of immutable objects.
pub trait RangeSource: Send + Sync + 'static {
    /// Bytes `range` of the object `key` (the range lies within the object).
    fn get_range(
        &self,
        key: &str,
        range: Range<u64>,
    ) -> impl Future<Output = Result<Bytes, StoreError>> + Send;
}

/// The data bucket, read with `GetObject` and a `Range` header.
pub struct S3Source {
    client: aws_sdk_s3::Client,
    bucket: String,
}

impl S3Source {
    pub fn new(client: aws_sdk_s3::Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
        }
    }

    /// The bucket's client from the functions' SDK configuration, with the addressing style
    /// given and room for larger reads than DynamoDB's: 3 attempts of at most 4 s, 8 s in all
    /// (within the function's 10 s).
    pub fn from_sdk(sdk: &aws_config::SdkConfig, bucket: &str, force_path_style: bool) -> Self {
        let timeouts = aws_config::timeout::TimeoutConfig::builder()
            .connect_timeout(std::time::Duration::from_millis(500))
            .operation_attempt_timeout(std::time::Duration::from_secs(4))
            .operation_timeout(std::time::Duration::from_secs(8))
            .build();
        let config = aws_sdk_s3::config::Builder::from(sdk)
            .force_path_style(force_path_style)
            .timeout_config(timeouts)
            .build();
        Self::new(aws_sdk_s3::Client::from_conf(config), bucket)
    }
}

impl RangeSource for S3Source {
    async fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes, StoreError> {
        let last = range.end.saturating_sub(1);
        let object = self
            .client
            .get_object()
            .bucket(&self.bucket)
            .key(key)
            .range(format!("bytes={}-{last}", range.start))
            .send()
            .await
            .map_err(|e| {
                use aws_sdk_s3::error::ProvideErrorMetadata;
                let throttled = e.code().is_some_and(|c| c == "SlowDown");
                let e = Box::new(aws_sdk_s3::Error::from(e));
                if throttled {
                    StoreError::Throttled(e)
                } else {
                    StoreError::Unavailable(e)
                }
            })?;
        let body = object
            .body
            .collect()
            .await
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        Ok(body.into_bytes())
    }
}

/// What one request read: GETs sent and bytes received.
#[derive(Debug, Default)]
pub struct Reads {
    requests: AtomicU64,
    bytes: AtomicU64,
}

impl Reads {
    pub fn requests(&self) -> u64 {
        self.requests.load(Ordering::Relaxed)
    }

    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Ranges closer than this are fetched as one GET (fewer round trips for a few extra bytes).
const COALESCE_GAP: u64 = 64 * 1024;
/// GETs in flight at once for one request.
const CONCURRENT_GETS: usize = 8;

/// One object, as the Parquet reader asks for it: ranges merged when close, fetched
/// concurrently, counted.
pub(crate) struct ObjectReader<S> {
    pub source: Arc<S>,
    pub key: Arc<str>,
    pub reads: Arc<Reads>,
    /// The file's metadata, once read: the reader never asks S3 for it again.
    pub metadata: Option<Arc<ParquetMetaData>>,
}

impl<S> Clone for ObjectReader<S> {
    fn clone(&self) -> Self {
        Self {
            source: self.source.clone(),
            key: self.key.clone(),
            reads: self.reads.clone(),
            metadata: self.metadata.clone(),
        }
    }
}

impl<S: RangeSource> ObjectReader<S> {
    async fn fetch(&self, range: Range<u64>) -> Result<Bytes, ParquetError> {
        let bytes = self
            .source
            .get_range(&self.key, range.clone())
            .await
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        self.reads.requests.fetch_add(1, Ordering::Relaxed);
        self.reads
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if bytes.len() as u64 != range.end - range.start {
            return Err(ParquetError::General(format!(
                "asked for {} bytes at {}, got {}",
                range.end - range.start,
                range.start,
                bytes.len()
            )));
        }
        Ok(bytes)
    }
}

/// Merges ranges whose gap is at most `gap` (input in any order): the merged ranges, sorted.
pub(crate) fn coalesce(ranges: &[Range<u64>], gap: u64) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.start < r.end).cloned().collect();
    sorted.sort_by_key(|r| r.start);
    let mut merged: Vec<Range<u64>> = Vec::with_capacity(sorted.len());
    for r in sorted {
        match merged.last_mut() {
            Some(last) if r.start <= last.end.saturating_add(gap) => last.end = last.end.max(r.end),
            _ => merged.push(r),
        }
    }
    merged
}

impl<S: RangeSource> AsyncFileReader for ObjectReader<S> {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        async move { self.fetch(range).await }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, parquet::errors::Result<Vec<Bytes>>> {
        async move {
            let merged = coalesce(&ranges, COALESCE_GAP);
            let fetched: Vec<Bytes> = futures_util::stream::iter(merged.iter().cloned())
                .map(|r| self.fetch(r))
                .buffered(CONCURRENT_GETS)
                .try_collect()
                .await?;
            // Each asked range is a slice of the merged range that holds it.
            ranges
                .iter()
                .map(|r| {
                    let at = merged
                        .iter()
                        .position(|m| m.start <= r.start && r.end <= m.end)
                        .ok_or_else(|| ParquetError::General("range not fetched".into()))?;
                    let base = merged[at].start;
                    Ok(fetched[at].slice((r.start - base) as usize..(r.end - base) as usize))
                })
                .collect()
        }
        .boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let metadata = self.metadata.clone();
        async move {
            metadata.ok_or_else(|| ParquetError::General("the footer is read once, first".into()))
        }
        .boxed()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_ranges_are_merged_and_far_ones_kept_apart() {
        assert_eq!(
            coalesce(&[100..200, 0..50, 60..70, 10_000..10_010, 5..5], 20),
            vec![0..70, 100..200, 10_000..10_010]
        );
        assert_eq!(coalesce(&[0..50, 60..70, 80..90], 10), vec![0..90]);
        assert_eq!(coalesce(&[0..50, 61..70], 10), vec![0..50, 61..70]);
        assert_eq!(coalesce(&[0..100, 10..20], 0), vec![0..100]);
    }
}
