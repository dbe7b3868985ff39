//! The rows of a version, of one file or of many ([`read_version_rows`]).
//!
//! A version of many files ([`crate::files`]) shows its rows in manifest order (split, then
//! path), `offset` counted over the split asked for (or the whole version). A page is found
//! without reading anything but what it shows:
//!
//! 1. the summary (on the dataset item the gate already read) gives the chunk holding `offset`
//!    ([`Summary::chunk_of_row`]) and, from the chunks' cumulative row counts, every further
//!    chunk the page reaches: all of them are read in one [`ManifestReader::read_chunks`]
//!    (without statistics), so a page crossing a chunk's end costs the same one round trip;
//! 2. the chunk's files' row counts give the file holding `offset` ([`FileChunk::locate_row`])
//!    and the files the page runs on into;
//! 3. each of those files is read as a version of one file is ([`RowsReader::read_rows`]: its
//!    footer, cached per object key, then the pages holding the rows), [`FILES_AT_ONCE`] at a
//!    time.
//!
//! The columns are the files' (in [`Summary::columns`]' order, typed from the first file read),
//! then the Hive partition columns, each row holding its file's value. A page past the end reads
//! the span's last chunk and its last file's footer, for the columns. A split the version does
//! not have (or any split, for a version of one file) names nothing: no rows, no columns, a
//! total of 0, nothing read.

use std::future::Future;
use std::ops::Range;
use std::pin::Pin;
use std::task::Poll;

use serde_json::value::RawValue;

use super::{Row, RowColumn, RowWindow, RowsError, RowsPage, RowsReader, ANSWER_BYTES};
use crate::files::{FileEntry, PartitionType, PartitionValue, Span, Summary};
use crate::input::Slug;
use crate::ports::ManifestReader;
use crate::records::ActiveVersion;
use crate::store::StoreError;

/// Files of one page read at once (each with its own ranged GETs).
pub const FILES_AT_ONCE: usize = 8;

/// A page of a version's rows, and how many rows the split (or the version) holds.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VersionRows {
    pub page: RowsPage,
    /// The split's rows (or the version's); 0 for a split that names nothing.
    pub total: u64,
}

/// The rows of `window` of `active` (a version of `slug`), over `split` when given: for a
/// version of one file, its rows as [`RowsReader::read_rows`] reads them (a `split` then names
/// nothing); for a version of many, as the module's docs say.
pub async fn read_version_rows(
    manifests: &impl ManifestReader,
    reader: &impl RowsReader,
    slug: &Slug,
    active: &ActiveVersion,
    split: Option<&str>,
    window: RowWindow,
) -> Result<VersionRows, RowsError> {
    let Some(summary) = active.files.as_deref() else {
        if split.is_some() {
            return Ok(VersionRows::default());
        }
        let page = reader.read_rows(active, window).await?;
        return Ok(VersionRows {
            page,
            total: active.row_count,
        });
    };
    let Some(span) = summary.span(split) else {
        return Ok(VersionRows::default());
    };
    let Some(plan) = PagePlan::new(summary, split, &span, window) else {
        return Ok(VersionRows::default());
    };
    let chunks = manifests
        .read_chunks(slug, active.version, summary, &plan.chunks, false)
        .await?
        .ok_or_else(|| {
            StoreError::Corrupt(format!(
                "the manifest of {slug} version {} is missing",
                active.version
            ))
        })?;
    // The files the page shows rows of, each with the rows asked of it (positions in the
    // file) and the version position of its first row.
    let mut reads: Vec<FileRead> = Vec::new();
    let mut last: Option<(&FileEntry, u64)> = None;
    for chunk in &chunks {
        let mut start = chunk.first_row;
        for file in &chunk.files {
            let end = start + file.rows;
            let from = plan.rows.start.max(start);
            let to = plan.rows.end.min(end);
            if from < to {
                reads.push(FileRead {
                    file,
                    start,
                    rows: from - start..to - start,
                });
            }
            last = Some((file, start));
            start = end;
        }
    }
    if plan.rows.is_empty() {
        // Past the end (or a span of no rows): the last file's footer, for the columns.
        let (file, start) = last.ok_or_else(|| {
            StoreError::Corrupt(format!(
                "{slug} version {}: a chunk of no files",
                active.version
            ))
        })?;
        reads.push(FileRead {
            file,
            start,
            rows: file.rows..file.rows,
        });
    }
    let mut merged = Merged::new(summary);
    for group in reads.chunks(FILES_AT_ONCE) {
        if merged.full() {
            break;
        }
        let pages = join_all(
            group
                .iter()
                .map(|read| read_file(reader, active, summary, read))
                .collect(),
        )
        .await;
        for (read, page) in group.iter().zip(pages) {
            if !merged.push(read, page?, span.first_row)? {
                break;
            }
        }
    }
    Ok(VersionRows {
        page: merged.finish(),
        total: span.rows,
    })
}

/// Which chunks a page reads, and the version's rows it shows (positions in the version; empty
/// past the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PagePlan {
    pub chunks: Vec<usize>,
    pub rows: Range<u64>,
}

impl PagePlan {
    /// `None` when the span has no chunk (a summary of no files, which publish never writes).
    pub fn new(
        summary: &Summary,
        split: Option<&str>,
        span: &Span,
        window: RowWindow,
    ) -> Option<Self> {
        let last_chunk = (span.first_chunk + span.chunks).checked_sub(1)?;
        if span.chunks == 0 || last_chunk >= summary.chunks.len() {
            return None;
        }
        let start = span.first_row + window.offset().min(span.rows);
        let end = span.first_row
            + window
                .offset()
                .saturating_add(window.length())
                .min(span.rows);
        let first = match summary.chunk_of_row(split, window.offset()) {
            Some((chunk, _)) if start < end => chunk,
            _ => {
                return Some(Self {
                    chunks: vec![last_chunk],
                    rows: end..end,
                })
            }
        };
        let chunks = (first..=last_chunk)
            .take_while(|&c| c == first || summary.chunks[c].first_row < end)
            .collect();
        Some(Self {
            chunks,
            rows: start..end,
        })
    }
}

/// One file's part of a page.
struct FileRead<'a> {
    file: &'a FileEntry,
    /// The version position of the file's first row.
    start: u64,
    /// The rows asked of it, positions in the file.
    rows: Range<u64>,
}

/// A file of a version of many, read as a version of one file: its object key is the
/// version's prefix and its path.
async fn read_file(
    reader: &impl RowsReader,
    active: &ActiveVersion,
    summary: &Summary,
    read: &FileRead<'_>,
) -> Result<RowsPage, RowsError> {
    let file = ActiveVersion {
        version: active.version,
        s3_key: format!("{}{}", active.s3_key, read.file.path.as_str()),
        size: read.file.size,
        row_count: read.file.rows,
        columns: summary.columns.clone(),
        sha256: read.file.sha256.clone(),
        published_at: active.published_at,
        files: None,
        ingested: None,
    };
    let window = RowWindow::new(read.rows.start, read.rows.end - read.rows.start);
    reader.read_rows(&file, window).await
}

/// The page being put together from its files' pages.
struct Merged<'a> {
    summary: &'a Summary,
    columns: Option<Vec<RowColumn>>,
    rows: Vec<Row>,
    weight: usize,
    /// A file gave fewer rows than asked (its answer was full): nothing after it is shown.
    cut: bool,
}

impl<'a> Merged<'a> {
    fn new(summary: &'a Summary) -> Self {
        Self {
            summary,
            columns: None,
            rows: Vec::new(),
            weight: 0,
            cut: false,
        }
    }

    fn full(&self) -> bool {
        self.cut || (self.weight >= ANSWER_BYTES && !self.rows.is_empty())
    }

    /// Adds a file's page; `false` once the answer is full.
    fn push(
        &mut self,
        read: &FileRead<'_>,
        page: RowsPage,
        first_row: u64,
    ) -> Result<bool, RowsError> {
        if self.full() {
            return Ok(false);
        }
        let path = read.file.path.as_str();
        // Where each of the version's file columns is in this file's page.
        let at: Vec<usize> = self
            .summary
            .columns
            .iter()
            .map(|name| {
                page.columns
                    .iter()
                    .position(|c| &c.name == name)
                    .ok_or_else(|| {
                        StoreError::Corrupt(format!("file '{path}' has no column '{name}'"))
                    })
            })
            .collect::<Result<_, _>>()?;
        if self.columns.is_none() {
            let mut columns: Vec<RowColumn> = at.iter().map(|&i| page.columns[i].clone()).collect();
            columns.extend(self.summary.partitions.iter().map(|p| RowColumn {
                name: p.name.clone(),
                dtype: partition_dtype(p.kind).into(),
            }));
            self.columns = Some(columns);
        }
        let partition_cells: Vec<Box<RawValue>> = read
            .file
            .partitions
            .iter()
            .map(partition_cell)
            .collect::<Result<_, _>>()?;
        let asked = read.rows.end - read.rows.start;
        let given = page.rows.len() as u64;
        for row in page.rows {
            let weight: usize = row.cells.iter().map(|c| c.get().len()).sum::<usize>()
                + partition_cells.iter().map(|c| c.get().len()).sum::<usize>();
            if self.weight + weight > ANSWER_BYTES && !self.rows.is_empty() {
                self.cut = true;
                return Ok(false);
            }
            self.weight += weight;
            let row_idx = read.start + row.row_idx - first_row;
            let mut cells_of: Vec<Option<Box<RawValue>>> =
                row.cells.into_iter().map(Some).collect();
            let mut cells: Vec<Box<RawValue>> =
                Vec::with_capacity(at.len() + partition_cells.len());
            for &i in &at {
                let cell = cells_of.get_mut(i).and_then(Option::take).ok_or_else(|| {
                    StoreError::Corrupt(format!("file '{path}': row {} is short", row.row_idx))
                })?;
                cells.push(cell);
            }
            cells.extend(partition_cells.iter().cloned());
            let truncated = row
                .truncated
                .iter()
                .filter_map(|t| at.iter().position(|i| i == t))
                .collect();
            self.rows.push(Row {
                row_idx,
                cells,
                truncated,
            });
        }
        if given < asked {
            self.cut = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn finish(self) -> RowsPage {
        RowsPage {
            columns: self.columns.unwrap_or_default(),
            rows: self.rows,
        }
    }
}

/// A partition column's type as the metadata's `dtype` names it (pyarrow's names).
pub fn partition_dtype(kind: PartitionType) -> &'static str {
    match kind {
        PartitionType::Int64 => "int64",
        PartitionType::Date => "date32[day]",
        PartitionType::String => "string",
    }
}

/// A file's partition value as a cell: a number, a `YYYY-MM-DD` date, a string, or null.
fn partition_cell(value: &PartitionValue) -> Result<Box<RawValue>, StoreError> {
    let json = match value {
        PartitionValue::Null => serde_json::Value::Null,
        PartitionValue::Int(i) => serde_json::Value::from(*i),
        other => serde_json::Value::from(other.to_text()),
    };
    serde_json::value::to_raw_value(&json).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Every future run to its end, concurrently; the outputs in the order given.
async fn join_all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        let mut pending = false;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => pending = true,
                }
            }
        }
        if pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::{ChunkSummary, SplitName, SplitSummary};

    fn chunk(first_file: u64, first_row: u64, rows: u64) -> ChunkSummary {
        ChunkSummary {
            first_file,
            files: 1000,
            first_row,
            rows,
            partitions: Vec::new(),
            file_parts: 1,
            stat_parts: 0,
        }
    }

    /// Split `a`: chunks 0 (rows 0..1000) and 1 (no rows); split `b`: chunks 2 (1000..2500)
    /// and 3 (2500..2600).
    fn summary() -> Summary {
        let split = |name: &str, first_row, rows, first_chunk| SplitSummary {
            name: SplitName::parse(name).unwrap(),
            files: 2000,
            rows,
            bytes: 1,
            first_file: u64::from(first_chunk) * 1000,
            first_row,
            first_chunk,
            chunks: 2,
        };
        Summary {
            files: 4000,
            rows: 2600,
            bytes: 4,
            sha256: "00".repeat(32),
            columns: vec!["x".into()],
            partitions: Vec::new(),
            splits: vec![split("a", 0, 1000, 0), split("b", 1000, 1600, 2)],
            chunks: vec![
                chunk(0, 0, 1000),
                chunk(1000, 1000, 0),
                chunk(2000, 1000, 1500),
                chunk(3000, 2500, 100),
            ],
        }
    }

    fn plan(split: Option<&str>, offset: u64, length: u64) -> PagePlan {
        let s = summary();
        let span = s.span(split).unwrap();
        PagePlan::new(&s, split, &span, RowWindow::new(offset, length)).unwrap()
    }

    fn expect(chunks: &[usize], rows: Range<u64>) -> PagePlan {
        PagePlan {
            chunks: chunks.to_vec(),
            rows,
        }
    }

    #[test]
    fn a_page_reads_the_chunk_holding_its_offset_and_those_it_runs_into() {
        assert_eq!(plan(None, 0, 100), expect(&[0], 0..100));
        assert_eq!(plan(None, 899, 100), expect(&[0], 899..999));
        // Across the end of chunk 0: the empty chunk 1 and chunk 2, known from the summary
        assert_eq!(plan(None, 950, 100), expect(&[0, 1, 2], 950..1050));
        assert_eq!(plan(None, 2450, 100), expect(&[2, 3], 2450..2550));
        assert_eq!(plan(None, 2550, 100), expect(&[3], 2550..2600));
        // Over a split: offsets from the split's first row, never past its end
        assert_eq!(plan(Some("b"), 0, 100), expect(&[2], 1000..1100));
        assert_eq!(plan(Some("b"), 1550, 100), expect(&[3], 2550..2600));
        assert_eq!(plan(Some("a"), 950, 100), expect(&[0], 950..1000));
    }

    #[test]
    fn a_page_past_the_end_reads_the_spans_last_chunk_for_its_columns() {
        assert_eq!(plan(None, 2600, 100), expect(&[3], 2600..2600));
        assert_eq!(plan(None, u64::MAX, 100), expect(&[3], 2600..2600));
        assert_eq!(plan(Some("a"), 1000, 100), expect(&[1], 1000..1000));
        assert_eq!(plan(Some("b"), 1600, 1), expect(&[3], 2600..2600));
    }

    #[test]
    fn partition_values_are_typed_cells() {
        let cells: Vec<String> = [
            PartitionValue::Int(-4),
            PartitionValue::Date(chrono::NaiveDate::from_ymd_opt(2024, 2, 29).unwrap()),
            PartitionValue::Text("a \"b\"".into()),
            PartitionValue::Null,
        ]
        .iter()
        .map(|v| partition_cell(v).unwrap().get().to_owned())
        .collect();
        assert_eq!(cells, ["-4", "\"2024-02-29\"", r#""a \"b\"""#, "null"]);
    }
}
