//! What statistics read: one Parquet file, or many sharing one schema (columns matched by name,
//! in any order), read one after another so that every statistic sees the rows in the order of
//! one file holding them all.
//!
//! One file's footer is read once and kept for every pass, as it always was. Many files' footers
//! are read once up front, in parallel, for their schemas and row counts (only the first file's
//! schema is kept), then again by each pass, one file at a time: memory does not grow with the
//! number of files. While the statistics count one file's batches, the next files are decoded
//! on other threads (as many as there are cores), each a batch ahead at most.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use arrow_array::ArrayRef;
use arrow_schema::SchemaRef;
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, ParquetRecordBatchReaderBuilder,
};
use parquet::arrow::ProjectionMask;

use super::input::StatsInput;
use super::parallel::{map_indices_per_core, threads_per_core_for};
use super::partitions::Partitions;
use super::schemas::{duplicates, Disagreements, SchemaCheck};
use super::{StatsError, BATCH_BYTES, BATCH_ROWS, MIN_BATCH_ROWS};

/// A file's footer and each root column's decoded bytes over every row group.
struct Footer {
    metadata: ArrowReaderMetadata,
    root_bytes: Vec<u64>,
}

impl Footer {
    fn load<I: StatsInput + ?Sized>(path: &I) -> Result<Self, StatsError> {
        let file = path.open()?;
        let metadata = ArrowReaderMetadata::load(&file, ArrowReaderOptions::default())?;
        let parquet = metadata.metadata();
        let schema = parquet.file_metadata().schema_descr();
        let mut root_bytes = vec![0u64; metadata.schema().fields().len()];
        for group in parquet.row_groups() {
            for (leaf, column) in group.columns().iter().enumerate() {
                if let Some(bytes) = root_bytes.get_mut(schema.get_column_root_idx(leaf)) {
                    *bytes += u64::try_from(column.uncompressed_size()).unwrap_or(0);
                }
            }
        }
        Ok(Self {
            metadata,
            root_bytes,
        })
    }

    fn rows(&self) -> u64 {
        u64::try_from(self.metadata.metadata().file_metadata().num_rows()).unwrap_or(0)
    }

    /// Reads the root columns at `roots` (ascending, this file's indices) batch by batch, each
    /// batch about `batch_bytes` decoded.
    fn read<I: StatsInput + ?Sized>(
        &self,
        path: &I,
        roots: &[usize],
        batch_bytes: u64,
        mut each: impl FnMut(&[ArrayRef]) -> Result<(), StatsError>,
    ) -> Result<(), StatsError> {
        let builder =
            ParquetRecordBatchReaderBuilder::new_with_metadata(path.open()?, self.metadata.clone());
        let bytes: u64 = roots.iter().filter_map(|i| self.root_bytes.get(*i)).sum();
        let per_row = (bytes / self.rows().max(1)).max(1);
        let batch = usize::try_from(batch_bytes / per_row)
            .unwrap_or(BATCH_ROWS)
            .clamp(MIN_BATCH_ROWS, BATCH_ROWS);
        let mask = ProjectionMask::roots(builder.parquet_schema(), roots.iter().copied());
        for read in builder
            .with_projection(mask)
            .with_batch_size(batch)
            .build()?
        {
            each(read?.columns())?;
        }
        Ok(())
    }
}

/// An error about one of many files names it.
pub(super) fn in_file<I: StatsInput + ?Sized>(path: &I) -> impl Fn(StatsError) -> StatsError + '_ {
    move |e| match e {
        StatsError::InFile(..) => e,
        e => StatsError::InFile(path.name(), Box::new(e)),
    }
}

/// The files whose rows the statistics count, in order.
pub(super) struct Source<'a, P> {
    paths: &'a [P],
    /// The first file's columns, in its order, then the partition columns.
    schema: SchemaRef,
    /// How many of the columns the files hold (the others are partition columns).
    file_width: usize,
    partitions: Partitions<'a>,
    rows: u64,
    /// A single file's footer, read once for every pass.
    single: Option<Footer>,
}

/// A decoded batch, or the end of a file, from a thread reading ahead.
enum Read {
    Batch(Vec<ArrayRef>),
    End,
    Failed(StatsError),
}

impl<'a, P: StatsInput> Source<'a, P> {
    /// Reads every file's footer: the first's schema, the rows of all, and whether they share
    /// one schema (an error naming the files and columns that disagree, otherwise).
    pub(super) fn open(paths: &'a [P], partitions: Partitions<'a>) -> Result<Self, StatsError> {
        let Some(first_path) = paths.first() else {
            return Err(StatsError::NoFiles);
        };
        partitions.check(paths.len())?;
        if paths.len() == 1 && partitions.columns.is_empty() {
            let footer = Footer::load(first_path)?;
            return Ok(Self {
                paths,
                schema: footer.metadata.schema().clone(),
                file_width: footer.metadata.schema().fields().len(),
                partitions,
                rows: footer.rows(),
                single: Some(footer),
            });
        }
        let first = Footer::load(first_path).map_err(in_file(first_path))?;
        let schema = first.metadata.schema().clone();
        let first_name = first_path.name();
        let mut found = Disagreements::default();
        found.extend(duplicates(&first_name, &schema));
        let check = SchemaCheck::new(&first_name, &schema);
        let scanned =
            map_indices_per_core(paths.len().saturating_sub(1), P::THREADS_PER_CORE, |i| {
                let path = &paths[i + 1];
                let footer = Footer::load(path).map_err(in_file(path))?;
                let name = path.name();
                Ok::<_, StatsError>((
                    footer.rows(),
                    check.disagreements(&name, footer.metadata.schema()),
                ))
            })?;
        let mut rows = first.rows();
        for file in scanned {
            let (file_rows, disagreements) = file?;
            rows = rows.saturating_add(file_rows);
            found.extend(disagreements);
        }
        found.finish()?;
        let file_width = schema.fields().len();
        if let Some(column) = partitions
            .columns
            .iter()
            .find(|c| schema.field_with_name(&c.name).is_ok())
        {
            return Err(StatsError::Partitions(format!(
                "{} is both a partition column and a column of the files",
                column.name
            )));
        }
        let mut fields: Vec<arrow_schema::Field> =
            schema.fields().iter().map(|f| f.as_ref().clone()).collect();
        fields.extend(partitions.fields());
        Ok(Self {
            paths,
            schema: std::sync::Arc::new(arrow_schema::Schema::new(fields)),
            file_width,
            partitions,
            rows,
            single: None,
        })
    }

    pub(super) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows over every file.
    pub(super) fn rows(&self) -> u64 {
        self.rows
    }

    /// Reads the columns at `indices` (ascending, in the first file's order) batch by batch,
    /// file after file, each batch's arrays in that order; a batch holds about [`BATCH_BYTES`]
    /// of them, decoded (a share of it when several threads read ahead).
    pub(super) fn read_columns(
        &self,
        indices: &[usize],
        each: impl FnMut(&[ArrayRef]) -> Result<(), StatsError>,
    ) -> Result<(), StatsError> {
        self.read_columns_of(0..self.paths.len(), indices, each)
    }

    /// How many files.
    pub(super) fn files(&self) -> usize {
        self.paths.len()
    }

    /// [`Source::read_columns`] over the files at `files` only.
    pub(super) fn read_columns_of(
        &self,
        files: std::ops::Range<usize>,
        indices: &[usize],
        mut each: impl FnMut(&[ArrayRef]) -> Result<(), StatsError>,
    ) -> Result<(), StatsError> {
        let files = files.start..files.end.min(self.paths.len());
        if files.is_empty() {
            return Ok(());
        }
        if let (Some(footer), Some(path)) = (&self.single, self.paths.first()) {
            return footer.read(path, indices, BATCH_BYTES, each);
        }
        let readers = threads_per_core_for(files.len(), P::THREADS_PER_CORE);
        let batch_bytes = (BATCH_BYTES / readers as u64).max(1 << 20);
        let end = files.end;
        std::thread::scope(|scope| {
            let mut queues: Vec<Receiver<Read>> = Vec::with_capacity(readers);
            for first in 0..readers {
                let (send, receive) = sync_channel(1);
                queues.push(receive);
                let first = files.start + first;
                scope.spawn(move || {
                    self.read_ahead(first..end, readers, indices, batch_bytes, send)
                });
            }
            for i in files.clone() {
                loop {
                    match queues[(i - files.start) % readers].recv() {
                        Ok(Read::Batch(arrays)) => each(&arrays)?,
                        Ok(Read::End) => break,
                        Ok(Read::Failed(e)) => return Err(e),
                        Err(_) => return Err(StatsError::Panicked),
                    }
                }
            }
            Ok(())
        })
    }

    /// Reads files `files.start`, `files.start + step`, ... before `files.end` in turn, sending their batches
    /// (the columns at `indices` in the first file's order), each file followed by
    /// [`Read::End`]. Stops when the reader no longer listens.
    fn read_ahead(
        &self,
        files: std::ops::Range<usize>,
        step: usize,
        indices: &[usize],
        batch_bytes: u64,
        send: SyncSender<Read>,
    ) {
        let (first, end) = (files.start, files.end);
        for (i, path) in self
            .paths
            .iter()
            .enumerate()
            .take(end)
            .skip(first)
            .step_by(step)
        {
            let read = self
                .read_file(i, path, indices, batch_bytes, &send)
                .map_err(in_file(path));
            let message = match read {
                Ok(()) => Read::End,
                Err(e) => Read::Failed(e),
            };
            let failed = matches!(message, Read::Failed(_));
            if send.send(message).is_err() || failed {
                return;
            }
        }
    }

    /// Sends file `file`'s batches: its columns among `indices`, then its partition values.
    fn read_file(
        &self,
        file: usize,
        path: &P,
        indices: &[usize],
        batch_bytes: u64,
        send: &SyncSender<Read>,
    ) -> Result<(), StatsError> {
        let footer = Footer::load(path)?;
        let file_schema = footer.metadata.schema();
        let split = indices.partition_point(|i| *i < self.file_width);
        let (in_file, partition) = indices.split_at(split);
        let partition: Vec<usize> = partition.iter().map(|i| i - self.file_width).collect();
        if in_file.is_empty() {
            // Only partition columns: as many rows as the file holds, none read.
            let mut left = usize::try_from(footer.rows()).unwrap_or(usize::MAX);
            while left > 0 {
                let rows = left.min(BATCH_ROWS);
                left -= rows;
                let arrays = self.partitions.arrays(file, &partition, rows)?;
                send.send(Read::Batch(arrays))
                    .map_err(|_| StatsError::Panicked)?;
            }
            return Ok(());
        }
        // Each wanted column's root in this file, by name, of the same type as in the first.
        let mut roots = Vec::with_capacity(in_file.len());
        for i in in_file {
            let field = self.schema.field(*i);
            let root = file_schema
                .index_of(field.name())
                .map_err(|_| StatsError::Changed)?;
            if !file_schema
                .field(root)
                .data_type()
                .equals_datatype(field.data_type())
            {
                return Err(StatsError::Changed);
            }
            roots.push(root);
        }
        let mut sorted = roots.clone();
        sorted.sort_unstable();
        // Where each wanted column comes in a batch, which holds them in this file's order.
        let at: Vec<usize> = roots
            .iter()
            .map(|r| sorted.partition_point(|s| s < r))
            .collect();
        footer.read(path, &sorted, batch_bytes, |arrays| {
            let ordered = at.iter().map(|a| arrays.get(*a).cloned());
            let mut ordered = ordered
                .collect::<Option<Vec<_>>>()
                .ok_or(StatsError::Changed)?;
            let rows = ordered.first().map_or(0, |a| a.len());
            ordered.extend(self.partitions.arrays(file, &partition, rows)?);
            // The reader stopped listening: an error or a panic there says why.
            send.send(Read::Batch(ordered))
                .map_err(|_| StatsError::Panicked)
        })
    }
}
