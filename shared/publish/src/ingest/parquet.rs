//! The Parquet `publish` writes from a text input: zstd, a page index (column and offset
//! index), page statistics, row groups of at most [`ROW_GROUP_ROWS`] rows or
//! [`ROW_GROUP_BYTES`] in memory, pages of at most [`PAGE_BYTES`] or [`PAGE_ROWS`] rows,
//! dictionaries of at most [`DICTIONARY_BYTES`]; split into files of about the target size. So
//! written, a file draws no warning from `publish` (`catalog_preview::plan::preview_warning`):
//! a preview of 100 rows reads their pages and dictionaries, well under 1 MB.

use std::fs::File;
use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties};

use super::error::IngestError;

/// Most rows in a row group.
pub const ROW_GROUP_ROWS: usize = 128 * 1024;
/// A row group is closed once its encoded pages held in memory reach this.
pub const ROW_GROUP_BYTES: usize = 128 << 20;
/// A data page's target size (encoded, before compression).
pub const PAGE_BYTES: usize = 1 << 20;
/// Most rows in a data page: a page of the rows API reads little beyond the rows it shows.
pub const PAGE_ROWS: usize = 20_000;
/// A column chunk's dictionary page stops growing here (the rest of the chunk is written
/// plain): a preview reads the dictionary of every column it shows, so a column of many
/// distinct values must not carry a large one.
pub const DICTIONARY_BYTES: usize = 128 * 1024;
/// The default target size of one Parquet file (`--target-file-size`).
pub const DEFAULT_TARGET: u64 = 256 << 20;

/// zstd's level: 2, as small as level 3 on numbers written plain, for less of the writer's
/// time (level 1 made 8-byte numbers written plain twice as large):
/// `bench/results/2026-11-29-csv-to-parquet-2.md`.
pub const ZSTD_LEVEL: i32 = 2;

/// The writer's settings.
pub fn properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(
            ZstdLevel::try_new(ZSTD_LEVEL).unwrap_or_default(),
        ))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_offset_index_disabled(false)
        .set_max_row_group_size(ROW_GROUP_ROWS)
        .set_data_page_size_limit(PAGE_BYTES)
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_dictionary_page_size_limit(DICTIONARY_BYTES)
        .set_created_by("catalog-admin publish (arrow-rs parquet)".into())
        .build()
}

/// Parquet files of one input, `<stem>-part-00000.parquet`, `…-00001` …, each closed once it
/// reaches the target size; one file alone is renamed `<stem>.parquet` at the end.
pub struct Parts {
    dir: PathBuf,
    stem: String,
    schema: SchemaRef,
    target: u64,
    current: Option<(PathBuf, ArrowWriter<File>)>,
    done: Vec<PathBuf>,
    pub rows: u64,
}

impl Parts {
    /// Files go to `dir` (created), named from `stem` (the input's name without extensions).
    pub fn new(dir: &Path, stem: &str, schema: SchemaRef, target: u64) -> Self {
        Parts {
            dir: dir.to_owned(),
            stem: stem.to_owned(),
            schema,
            target: target.max(1),
            current: None,
            done: Vec::new(),
            rows: 0,
        }
    }

    fn fail(path: &Path, e: impl std::fmt::Display) -> IngestError {
        IngestError::Write(path.display().to_string(), e.to_string())
    }

    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), IngestError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.current.is_none() {
            std::fs::create_dir_all(&self.dir)
                .map_err(|e| IngestError::Io(format!("cannot create {}", self.dir.display()), e))?;
            let path = self
                .dir
                .join(format!("{}-part-{:05}.parquet", self.stem, self.done.len()));
            let file = File::create(&path)
                .map_err(|e| IngestError::Io(format!("cannot create {}", path.display()), e))?;
            let writer = ArrowWriter::try_new(file, self.schema.clone(), Some(properties()))
                .map_err(|e| Self::fail(&path, e))?;
            self.current = Some((path, writer));
        }
        let Some((path, writer)) = self.current.as_mut() else {
            return Ok(());
        };
        writer.write(batch).map_err(|e| Self::fail(path, e))?;
        self.rows += batch.num_rows() as u64;
        if writer.in_progress_size() >= ROW_GROUP_BYTES {
            writer.flush().map_err(|e| Self::fail(path, e))?;
        }
        let size = (writer.bytes_written() + writer.in_progress_size()) as u64;
        if size >= self.target {
            self.close_current()?;
        }
        Ok(())
    }

    fn close_current(&mut self) -> Result<(), IngestError> {
        if let Some((path, writer)) = self.current.take() {
            writer.close().map_err(|e| Self::fail(&path, e))?;
            self.done.push(path);
        }
        Ok(())
    }

    /// Closes the last file; returns the files written, in order.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, IngestError> {
        self.close_current()?;
        if let [only] = self.done.as_slice() {
            let single = self.dir.join(format!("{}.parquet", self.stem));
            std::fs::rename(only, &single)
                .map_err(|e| IngestError::Io(format!("cannot rename {}", only.display()), e))?;
            return Ok(vec![single]);
        }
        Ok(self.done)
    }
}
