//! Rows of a dataset version for the rows API, read from its Parquet object with as few bytes
//! as the file allows:
//!
//! - [`footer`]: each object's footer (with its offset index) read at most once per function
//!   instance, then cached by object key (a version of many files is read file by file, each
//!   file as a version of one: `catalog::rows::read_version_rows`);
//! - [`plan`]: from the footer alone, the row groups and pages that cover the rows, and the
//!   bytes each column needs, within a memory [`plan::Budget`];
//! - [`source`]: ranged GETs of the object (S3, or anything else in tests), merged and counted;
//! - [`cells`]: Arrow values as JSON a person reads; [`dtype`]: type names as pyarrow prints
//!   them (the metadata's `dtype`).
//!
//! Only the rows function links this crate (and with it Arrow and Parquet); the other
//! functions stay as small as they were.

pub mod cells;
pub mod dtype;
pub mod footer;
pub mod plan;
pub mod source;

use std::sync::Arc;

use catalog::error::StoreError;
use catalog::records::ActiveVersion;
use catalog::rows::{Row, RowColumn, RowWindow, RowsError, RowsPage, RowsReader};
use futures_util::TryStreamExt;
use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::errors::ParquetError;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};

use crate::cells::Limits;
use crate::footer::FooterCache;
use crate::plan::Budget;
use crate::source::{ObjectReader, RangeSource, Reads};

pub use crate::source::S3Source;

/// The most an answer's rows may weigh as JSON (Lambda answers at most 6 MB): rows past it are
/// left for the next page (the same bound for a page over many files).
pub const ANSWER_BYTES: usize = catalog::rows::ANSWER_BYTES;
/// Bytes read from the end of a file to find its footer in one GET (most footers, and the
/// offset indexes just before them, fit).
pub const FOOTER_PREFETCH: usize = 64 * 1024;
/// Footers kept per function instance, in bytes of decoded metadata.
pub const FOOTER_CACHE_BYTES: usize = 64 << 20;
/// The most a version's footer may take in the file (its Thrift metadata), and its offset
/// index: a file whose footer or offset index is larger is refused (422 `preview_unavailable`)
/// before either is read. 8 MiB holds the metadata of tens of thousands of column chunks; once
/// decoded it takes several times that, within the rows function's 256 MB.
pub const MAX_FOOTER_BYTES: u64 = 8 << 20;

/// Reads rows of dataset versions from their Parquet objects in `source`.
pub struct ParquetRows<S> {
    source: Arc<S>,
    footers: FooterCache,
    budget: Budget,
    limits: Limits,
}

/// What one read cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReadCost {
    pub requests: u64,
    pub bytes: u64,
}

impl<S: RangeSource> ParquetRows<S> {
    pub fn new(source: S) -> Self {
        Self::with_budget(source, Budget::default())
    }

    pub fn with_budget(source: S, budget: Budget) -> Self {
        Self {
            source: Arc::new(source),
            footers: FooterCache::new(FOOTER_CACHE_BYTES),
            budget,
            limits: Limits::default(),
        }
    }

    /// The footers this instance holds: how many, and their bytes.
    pub fn footers_held(&self) -> (usize, usize) {
        self.footers.held()
    }

    /// [`RowsReader::read_rows`], with what it read from the object.
    pub async fn read_counted(
        &self,
        version: &ActiveVersion,
        window: RowWindow,
    ) -> Result<(RowsPage, ReadCost), RowsError> {
        let reads = Arc::new(Reads::default());
        let mut object = ObjectReader {
            source: self.source.clone(),
            key: Arc::from(version.s3_key.as_str()),
            reads: reads.clone(),
            metadata: None,
        };
        let footer = self
            .footers
            .get_or_load(&object.key, load_footer(object.clone(), version.size))
            .await
            .map_err(corrupt_or_unavailable)?;
        object.metadata = Some(footer.metadata().clone());
        let page = self.read_window(object, &footer, window).await?;
        let cost = ReadCost {
            requests: reads.requests(),
            bytes: reads.bytes(),
        };
        Ok((page, cost))
    }

    async fn read_window(
        &self,
        object: ObjectReader<S>,
        footer: &ArrowReaderMetadata,
        window: RowWindow,
    ) -> Result<RowsPage, RowsError> {
        let fields = footer.schema().fields();
        let columns: Vec<RowColumn> = fields
            .iter()
            .map(|f| RowColumn {
                name: f.name().clone(),
                dtype: dtype::column_dtype(f.name(), f.data_type()),
            })
            .collect();
        let total = u64::try_from(footer.metadata().file_metadata().num_rows()).unwrap_or(0);
        let rows = window.within(total);
        if rows.is_empty() {
            return Ok(RowsPage {
                columns,
                rows: Vec::new(),
            });
        }
        let plan = plan::plan(footer.metadata(), rows.clone(), &self.budget)
            .map_err(|e| RowsError::TooLarge(e.to_string()))?;
        let count = usize::try_from(rows.end - rows.start).unwrap_or(0);
        let mut cells: Vec<Vec<(cells::Value, bool)>> = vec![Vec::new(); columns.len()];
        let schema = footer.metadata().file_metadata().schema_descr();
        for group in &plan.column_groups {
            let stream =
                ParquetRecordBatchStreamBuilder::new_with_metadata(object.clone(), footer.clone())
                    .with_row_groups(plan.row_groups.clone())
                    .with_row_selection(plan.selection())
                    .with_projection(ProjectionMask::roots(schema, group.iter().copied()))
                    .with_batch_size(count.max(1))
                    .build()
                    .map_err(corrupt_or_unavailable)?;
            let batches: Vec<_> = stream.try_collect().await.map_err(corrupt_or_unavailable)?;
            for batch in batches {
                // The batch holds the group's columns, in the file's order.
                for (column, &root) in batch.columns().iter().zip(group) {
                    cells[root].extend(cells::column_cells(column, &self.limits));
                }
            }
        }
        let mut answer = Vec::with_capacity(count);
        let mut weight = 0usize;
        for (n, row_idx) in rows.enumerate() {
            let mut row = Row {
                row_idx,
                cells: Vec::with_capacity(columns.len()),
                truncated: Vec::new(),
            };
            for (c, column) in cells.iter_mut().enumerate() {
                let (value, cut) = column
                    .get_mut(n)
                    .map(|c| std::mem::replace(c, (cells::Value::Null, false)))
                    .ok_or_else(|| StoreError::Corrupt(format!("row {row_idx} missing")))?;
                let raw = value.to_raw();
                weight += raw.get().len();
                row.cells.push(raw);
                if cut {
                    row.truncated.push(c);
                }
            }
            if weight > ANSWER_BYTES && !answer.is_empty() {
                break;
            }
            if weight > ANSWER_BYTES {
                return Err(RowsError::TooLarge(format!(
                    "row {row_idx} alone is over the {} MB an answer may carry, even with its \
                     cells cut: download the file instead",
                    ANSWER_BYTES >> 20
                )));
            }
            answer.push(row);
        }
        Ok(RowsPage {
            columns,
            rows: answer,
        })
    }
}

/// A footer or offset index larger than [`MAX_FOOTER_BYTES`]: what the client reads.
#[derive(Debug)]
struct FooterTooLarge {
    bytes: u64,
}

impl std::fmt::Display for FooterTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "this version's Parquet footer (or its page index) takes {} MB, over the {} MB the \
             rows API reads: download the file instead, or ask the publisher for fewer row \
             groups or columns",
            self.bytes.div_ceil(1 << 20),
            MAX_FOOTER_BYTES >> 20
        )
    }
}

impl std::error::Error for FooterTooLarge {}

/// The footer's reads, each refused past [`MAX_FOOTER_BYTES`] before it is sent: the first read
/// is [`FOOTER_PREFETCH`] bytes; the metadata, when it is longer, and the offset index are each
/// one read of their length, which the file states.
struct Bounded<'a, S> {
    object: &'a mut ObjectReader<S>,
}

impl<S: RangeSource> parquet::arrow::async_reader::MetadataFetch for Bounded<'_, S> {
    fn fetch(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> futures_util::future::BoxFuture<'_, Result<bytes::Bytes, ParquetError>> {
        use futures_util::FutureExt;
        use parquet::arrow::async_reader::AsyncFileReader;
        let bytes = range.end.saturating_sub(range.start);
        if bytes > MAX_FOOTER_BYTES {
            let refused = ParquetError::External(Box::new(FooterTooLarge { bytes }));
            return async move { Err(refused) }.boxed();
        }
        self.object.get_bytes(range)
    }
}

/// Reads the footer and the offset index (not the column index: nothing here filters by
/// value), in one GET of the file's end when they fit [`FOOTER_PREFETCH`]; either past
/// [`MAX_FOOTER_BYTES`] is refused unread.
async fn load_footer<S: RangeSource>(
    mut object: ObjectReader<S>,
    size: u64,
) -> Result<ArrowReaderMetadata, ParquetError> {
    let metadata = ParquetMetaDataReader::new()
        .with_column_index_policy(PageIndexPolicy::Skip)
        .with_offset_index_policy(PageIndexPolicy::Optional)
        .with_prefetch_hint(Some(FOOTER_PREFETCH))
        .load_and_finish(
            Bounded {
                object: &mut object,
            },
            size,
        )
        .await?;
    let metadata = Arc::new(metadata);
    let read = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())?;
    match zoned_schema(&metadata, read.schema()) {
        Some(schema) => ArrowReaderMetadata::try_new(
            metadata,
            ArrowReaderOptions::new().with_schema(Arc::new(schema)),
        ),
        None => Ok(read),
    }
}

/// The schema with each timestamp column in the zone pyarrow wrote in the file's Arrow schema,
/// where Parquet changed the unit (pyarrow stores `timestamp[s]` as milliseconds, and the
/// Arrow schema's zone is then not applied): `None` when nothing changes.
fn zoned_schema(
    metadata: &parquet::file::metadata::ParquetMetaData,
    read: &arrow_schema::Schema,
) -> Option<arrow_schema::Schema> {
    use arrow_schema::{DataType, Field};
    use base64::Engine;
    let encoded = metadata
        .file_metadata()
        .key_value_metadata()?
        .iter()
        .find(|kv| kv.key == parquet::arrow::ARROW_SCHEMA_META_KEY)?
        .value
        .as_ref()?;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let message = match bytes.get(..4) {
        Some([255, 255, 255, 255]) => bytes.get(8..)?,
        _ => &bytes[..],
    };
    let written = arrow_ipc::convert::fb_to_schema(
        arrow_ipc::root_as_message(message)
            .ok()?
            .header_as_schema()?,
    );
    let mut changed = false;
    let fields: Vec<Field> = read
        .fields()
        .iter()
        .map(|field| {
            let zone = match (field.data_type(), written.field_with_name(field.name())) {
                (DataType::Timestamp(unit, zone), Ok(hint)) => match hint.data_type() {
                    DataType::Timestamp(hinted, Some(tz))
                        if hinted != unit && zone.as_ref() != Some(tz) =>
                    {
                        Some(DataType::Timestamp(*unit, Some(tz.clone())))
                    }
                    _ => None,
                },
                _ => None,
            };
            match zone {
                Some(t) => {
                    changed = true;
                    field.as_ref().clone().with_data_type(t)
                }
                None => field.as_ref().clone(),
            }
        })
        .collect();
    changed.then(|| arrow_schema::Schema::new_with_metadata(fields, read.metadata().clone()))
}

/// A read that failed: S3's trouble as the store's (503), a footer past [`MAX_FOOTER_BYTES`] a
/// 422 saying so, anything else a malformed file.
fn corrupt_or_unavailable(e: ParquetError) -> RowsError {
    match e {
        ParquetError::External(inner) => match inner.downcast::<StoreError>() {
            Ok(store) => RowsError::Store(*store),
            Err(other) => match other.downcast::<FooterTooLarge>() {
                Ok(large) => RowsError::TooLarge(large.to_string()),
                Err(other) => RowsError::Store(StoreError::Corrupt(other.to_string())),
            },
        },
        other => RowsError::Store(StoreError::Corrupt(other.to_string())),
    }
}

impl<S: RangeSource> RowsReader for ParquetRows<S> {
    async fn read_rows(
        &self,
        version: &ActiveVersion,
        window: RowWindow,
    ) -> Result<RowsPage, RowsError> {
        let (page, cost) = self.read_counted(version, window).await?;
        tracing::info!(
            s3_requests = cost.requests,
            s3_bytes = cost.bytes,
            object_bytes = version.size,
            "read rows"
        );
        catalog::metrics::record(catalog::metrics::Metric::RowsBytesRead(cost.bytes));
        Ok(page)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ops::Range;
    use std::sync::Mutex;

    /// An object of `size` bytes whose last bytes are `tail` (zeros before it), counting each
    /// range asked.
    struct Sparse {
        size: u64,
        tail: Vec<u8>,
        asked: Mutex<Vec<Range<u64>>>,
    }

    impl RangeSource for Sparse {
        async fn get_range(
            &self,
            _key: &str,
            range: Range<u64>,
        ) -> Result<bytes::Bytes, StoreError> {
            self.asked.lock().unwrap().push(range.clone());
            let tail_start = self.size - self.tail.len() as u64;
            let bytes: Vec<u8> = range
                .map(|at| {
                    at.checked_sub(tail_start)
                        .map_or(0, |i| self.tail[i as usize])
                })
                .collect();
            Ok(bytes.into())
        }
    }

    fn version(size: u64) -> ActiveVersion {
        ActiveVersion {
            version: 1,
            s3_key: "datasets/x/v1/x.parquet".into(),
            size,
            row_count: 1,
            columns: vec!["x".into()],
            sha256: "00".repeat(32),
            published_at: chrono::Utc::now(),
            files: None,
            ingested: None,
        }
    }

    #[tokio::test]
    async fn a_footer_past_the_bound_is_refused_unread_with_a_clear_error() {
        // GIVEN a 200 MiB object whose footer says its metadata takes 100 MiB
        let size = 200u64 << 20;
        let mut tail = vec![0u8; 16];
        tail.extend_from_slice(&(100u32 << 20).to_le_bytes());
        tail.extend_from_slice(b"PAR1");
        let source = Sparse {
            size,
            tail,
            asked: Mutex::default(),
        };
        let rows = ParquetRows::new(source);
        // WHEN its rows are asked for
        let refused = rows
            .read_counted(&version(size), RowWindow::new(0, 10))
            .await
            .unwrap_err();
        // THEN a 422's message says why, and nothing past the first read was fetched
        let RowsError::TooLarge(why) = refused else {
            panic!("not a 422: {refused:?}")
        };
        assert!(why.contains("footer") && why.contains("100 MB"), "{why}");
        assert!(why.contains("over the 8 MB"), "{why}");
        let asked = rows.source.asked.lock().unwrap().clone();
        assert_eq!(asked, vec![size - FOOTER_PREFETCH as u64..size]);
    }
}
