//! What a window of rows costs to read, decided from the footer alone: the row groups that hold
//! the rows, the selection inside them, and the bytes each column needs — only the pages that
//! cover the rows where the file has an offset index (plus each chunk's dictionary page), the
//! whole column chunk where it has none. The budget counts those bytes **uncompressed**, as
//! they are held once decoded: a column chunk's `total_uncompressed_size` for a whole chunk, or
//! its pages' compressed sizes scaled by the chunk's uncompressed-to-compressed ratio (never
//! less than the compressed bytes themselves), so a file that compresses well cannot pass a
//! small read that decodes to far more. Columns are read in groups of bounded size, so a
//! function never holds more than [`Budget::group_bytes`] of one file at once.

use std::ops::Range;

use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
use parquet::file::metadata::ParquetMetaData;

/// How much one request may read.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Columns are read in groups of at most this many bytes (one column alone may exceed it,
    /// up to `column_bytes`).
    pub group_bytes: u64,
    /// The most one column may need (its pages, or its whole chunks without an offset index).
    pub column_bytes: u64,
    /// The most one request may read in all.
    pub request_bytes: u64,
}

impl Default for Budget {
    /// Sized for a 256 MB function: a read's peak memory measured about twice the bytes it
    /// read (`catalog-bench rows`, docs/performance.md), so at most 96 MB a request keeps the
    /// peak near 220 MB with the runtime's 30 MB.
    fn default() -> Self {
        Self {
            group_bytes: 32 << 20,
            column_bytes: 64 << 20,
            request_bytes: 96 << 20,
        }
    }
}

/// The read of one window of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The row groups that hold the rows, in order.
    pub row_groups: Vec<usize>,
    /// The rows to decode within those row groups (concatenated).
    pub selection: Vec<RowSelector>,
    /// Groups of top-level column indexes, read one group at a time.
    pub column_groups: Vec<Vec<usize>>,
    /// Bytes the read fetches (compressed, as stored), per top-level column.
    pub column_bytes: Vec<u64>,
    /// The same bytes uncompressed (what the budget counts), per top-level column.
    pub column_memory: Vec<u64>,
}

impl Plan {
    pub fn selection(&self) -> RowSelection {
        RowSelection::from(self.selection.clone())
    }

    /// Bytes of the file the read needs (the footer aside).
    pub fn bytes(&self) -> u64 {
        self.column_bytes.iter().sum()
    }

    /// Those bytes uncompressed: what the budget counts.
    pub fn memory(&self) -> u64 {
        self.column_memory.iter().sum()
    }
}

/// Why a window cannot be read within the budget: the message a client reads.
#[derive(Debug, Clone, PartialEq)]
pub enum TooLarge {
    Column {
        name: String,
        bytes: u64,
        limit: u64,
    },
    Request {
        bytes: u64,
        limit: u64,
    },
}

impl std::error::Error for TooLarge {}

impl std::fmt::Display for TooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mb = |b: &u64| b.div_ceil(1 << 20);
        match self {
            Self::Column { name, bytes, limit } => write!(
                f,
                "showing these rows would decode {} MB of column '{name}' (at most {} MB, \
                 uncompressed): this version's row groups are too large for its page index, or it \
                 has none; download the file instead, or ask the publisher for smaller row groups \
                 or a page index",
                mb(bytes),
                mb(limit)
            ),
            Self::Request { bytes, limit } => write!(
                f,
                "showing these rows would decode {} MB of the file (at most {} MB, uncompressed): \
                 this version's row groups are too large for its page index, or it has none; \
                 download the file instead, or ask the publisher for smaller row groups or a page \
                 index",
                mb(bytes),
                mb(limit)
            ),
        }
    }
}

/// The plan for rows `rows` (within the file) of the file `meta` describes.
pub fn plan(meta: &ParquetMetaData, rows: Range<u64>, budget: &Budget) -> Result<Plan, TooLarge> {
    let schema = meta.file_metadata().schema_descr();
    let roots = schema.root_schema().get_fields().len();
    let mut row_groups = Vec::new();
    let mut selection = Vec::new();
    let mut column_bytes = vec![0u64; roots];
    let mut column_memory = vec![0u64; roots];
    let mut first_row = 0u64;
    for (rg_index, rg) in meta.row_groups().iter().enumerate() {
        let rg_rows = u64::try_from(rg.num_rows()).unwrap_or(0);
        let rg_range = first_row..first_row + rg_rows;
        first_row += rg_rows;
        let (start, end) = (rows.start.max(rg_range.start), rows.end.min(rg_range.end));
        if start >= end {
            continue;
        }
        // Within this row group: skip, select, skip.
        let (skip, take) = (start - rg_range.start, end - start);
        let after = rg_range.end - end;
        for (n, select) in [(skip, false), (take, true), (after, false)] {
            if n > 0 {
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                selection.push(if select {
                    RowSelector::select(n)
                } else {
                    RowSelector::skip(n)
                });
            }
        }
        row_groups.push(rg_index);
        let pages = meta.offset_index().and_then(|index| index.get(rg_index));
        for (leaf, chunk) in rg.columns().iter().enumerate() {
            let root = schema.get_column_root_idx(leaf);
            // Read from the metadata without trusting it: a negative size or offset is 0 (not
            // `byte_range`, which panics on one).
            let chunk_start = u64::try_from(
                chunk
                    .dictionary_page_offset()
                    .unwrap_or_else(|| chunk.data_page_offset()),
            )
            .unwrap_or(0);
            let chunk_len = u64::try_from(chunk.compressed_size()).unwrap_or(0);
            let chunk_unpacked = u64::try_from(chunk.uncompressed_size()).unwrap_or(0);
            let bytes = match pages.and_then(|p| p.get(leaf)) {
                Some(index) if !index.page_locations().is_empty() => {
                    let locations = index.page_locations();
                    // The dictionary page, if any, sits before the first data page.
                    let dictionary = u64::try_from(locations[0].offset)
                        .unwrap_or(chunk_start)
                        .saturating_sub(chunk_start);
                    let (from, to) = (start - rg_range.start, end - rg_range.start);
                    let data: u64 = locations
                        .iter()
                        .enumerate()
                        .filter(|(k, page)| {
                            let page_start = page.first_row_index as u64;
                            let page_end = locations
                                .get(k + 1)
                                .map_or(rg_rows, |next| next.first_row_index as u64);
                            page_start < to && from < page_end
                        })
                        .map(|(_, page)| u64::from(page.compressed_page_size.max(0) as u32))
                        .sum();
                    dictionary + data
                }
                _ => chunk_len,
            };
            column_bytes[root] = column_bytes[root].saturating_add(bytes);
            column_memory[root] =
                column_memory[root].saturating_add(unpacked(bytes, chunk_len, chunk_unpacked));
        }
    }
    for (root, &bytes) in column_memory.iter().enumerate() {
        if bytes > budget.column_bytes {
            return Err(TooLarge::Column {
                name: schema.root_schema().get_fields()[root].name().to_owned(),
                bytes,
                limit: budget.column_bytes,
            });
        }
    }
    let total = column_memory
        .iter()
        .fold(0u64, |sum, &b| sum.saturating_add(b));
    if total > budget.request_bytes {
        return Err(TooLarge::Request {
            bytes: total,
            limit: budget.request_bytes,
        });
    }
    let mut column_groups: Vec<Vec<usize>> = Vec::new();
    let mut group_bytes = 0u64;
    for (root, &bytes) in column_memory.iter().enumerate() {
        match column_groups.last_mut() {
            Some(group) if group_bytes.saturating_add(bytes) <= budget.group_bytes => {
                group.push(root);
                group_bytes += bytes;
            }
            _ => {
                column_groups.push(vec![root]);
                group_bytes = bytes;
            }
        }
    }
    Ok(Plan {
        row_groups,
        selection,
        column_groups,
        column_bytes,
        column_memory,
    })
}

/// `bytes` of a chunk of `chunk_len` bytes as stored and `chunk_unpacked` uncompressed, counted
/// uncompressed: in the chunk's proportion, never less than `bytes`.
fn unpacked(bytes: u64, chunk_len: u64, chunk_unpacked: u64) -> u64 {
    if chunk_len == 0 || chunk_unpacked <= chunk_len {
        return bytes;
    }
    let scaled = u128::from(bytes) * u128::from(chunk_unpacked) / u128::from(chunk_len);
    u64::try_from(scaled).unwrap_or(u64::MAX).max(bytes)
}

/// What previews of a file cost, for `catalog-admin publish`: the most a page of `rows` rows
/// would read, over pages starting at each row group's first row and in its middle, and
/// whether some page could not be shown at all.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviewCost {
    pub worst_bytes: u64,
    pub has_offset_index: bool,
    pub refused: Option<String>,
}

pub fn preview_cost(meta: &ParquetMetaData, rows: u64, budget: &Budget) -> PreviewCost {
    let mut worst_bytes = 0;
    let mut refused = None;
    let mut first_row = 0u64;
    for rg in meta.row_groups() {
        let rg_rows = u64::try_from(rg.num_rows()).unwrap_or(0);
        for start in [first_row, first_row + rg_rows / 2] {
            match plan(meta, start..start + rows, budget) {
                Ok(p) => worst_bytes = worst_bytes.max(p.bytes()),
                Err(e) => {
                    refused.get_or_insert_with(|| e.to_string());
                }
            }
        }
        first_row += rg_rows;
    }
    PreviewCost {
        worst_bytes,
        has_offset_index: meta.offset_index().is_some_and(|i| !i.is_empty()),
        refused,
    }
}

/// What `catalog-admin publish` says of a file whose previews would read far more than they
/// show (a page of 100 rows reading over 100 times its share of the file, and over 1 MB), or
/// that some pages could not be shown at all: `None` when previews are cheap.
pub fn preview_warning(meta: &ParquetMetaData, file_size: u64) -> Option<String> {
    const ROWS: u64 = 100;
    let cost = preview_cost(meta, ROWS, &Budget::default());
    let advice = if cost.has_offset_index {
        "write it with smaller row groups (pyarrow: row_group_size=...)"
    } else {
        "write it with a page index (pyarrow: write_page_index=True) or smaller row groups \
         (row_group_size=...)"
    };
    if let Some(why) = cost.refused {
        return Some(format!(
            "the rows API cannot show some pages of this file: {why}. To preview it, {advice}"
        ));
    }
    let rows = u64::try_from(meta.file_metadata().num_rows())
        .unwrap_or(0)
        .max(1);
    let share = (file_size.saturating_mul(ROWS) / rows).max(1);
    let mb = |b: u64| b as f64 / (1u64 << 20) as f64;
    (cost.worst_bytes > 100 * share && cost.worst_bytes > 1 << 20).then(|| {
        format!(
            "previews of this file read up to {:.1} MB for a page of {ROWS} rows (about {:.1} MB \
             of data): its row groups are large{}. To make previews cheap, {advice}",
            mb(cost.worst_bytes),
            mb(share),
            if cost.has_offset_index {
                ""
            } else {
                " and it has no page index"
            }
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, RecordBatch};
    use parquet::arrow::ArrowWriter;
    use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    use std::sync::Arc;

    /// `rows` rows of one int64 column that does not compress, in row groups of `group` rows,
    /// with an offset index (pages of about 64 KB) or none: the file's bytes and its metadata.
    fn file(rows: i64, group: usize, index: bool) -> (u64, ParquetMetaData) {
        let values: Vec<i64> = (0..rows)
            .map(|i| i.wrapping_mul(0x1E37_79B9_7F4A_7C15))
            .collect();
        let batch =
            RecordBatch::try_from_iter([("x", Arc::new(Int64Array::from(values)) as ArrayRef)])
                .unwrap();
        let properties = WriterProperties::builder()
            .set_max_row_group_size(group)
            .set_data_page_size_limit(64 * 1024)
            .set_dictionary_enabled(false)
            .set_statistics_enabled(EnabledStatistics::Chunk)
            .set_offset_index_disabled(!index)
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        let bytes = bytes::Bytes::from(bytes);
        let meta = ParquetMetaDataReader::new()
            .with_offset_index_policy(PageIndexPolicy::Optional)
            .parse_and_finish(&bytes)
            .unwrap();
        (bytes.len() as u64, meta)
    }

    #[test]
    fn a_window_selects_only_its_row_groups_and_rows() {
        let (_, meta) = file(1_000, 100, true);
        let p = plan(&meta, 250..330, &Budget::default()).unwrap();
        assert_eq!(p.row_groups, vec![2, 3]);
        assert_eq!(
            p.selection,
            vec![
                RowSelector::skip(50),
                RowSelector::select(50),
                RowSelector::select(30),
                RowSelector::skip(70)
            ]
        );
    }

    #[test]
    fn with_an_offset_index_a_page_far_in_reads_what_the_first_reads() {
        let (_, meta) = file(400_000, 400_000, true);
        let first = plan(&meta, 0..100, &Budget::default()).unwrap().bytes();
        let far = plan(&meta, 390_000..390_100, &Budget::default())
            .unwrap()
            .bytes();
        assert!(first < 200_000 && far < 200_000, "{first} {far}");
        let (_, whole) = file(400_000, 400_000, false);
        let chunk = plan(&whole, 390_000..390_100, &Budget::default())
            .unwrap()
            .bytes();
        assert!(
            chunk > 3_000_000,
            "without an index the whole chunk: {chunk}"
        );
    }

    #[test]
    fn a_column_over_the_budget_is_refused_and_groups_stay_within_it() {
        let (_, meta) = file(400_000, 400_000, false);
        let tight = Budget {
            group_bytes: 1 << 20,
            column_bytes: 2 << 20,
            request_bytes: 8 << 20,
        };
        assert!(matches!(
            plan(&meta, 0..100, &tight),
            Err(TooLarge::Column { .. })
        ));
    }

    /// A file whose one column compresses about twentyfold: 400,000 equal int64 values, plain
    /// (no dictionary), Snappy, in one row group without a page index.
    fn compressible() -> ParquetMetaData {
        let batch = RecordBatch::try_from_iter([(
            "x",
            Arc::new(Int64Array::from(vec![7i64; 400_000])) as ArrayRef,
        )])
        .unwrap();
        let properties = WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_compression(parquet::basic::Compression::SNAPPY)
            .set_offset_index_disabled(true)
            .build();
        let mut bytes = Vec::new();
        let mut writer =
            ArrowWriter::try_new(&mut bytes, batch.schema(), Some(properties)).unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        ParquetMetaDataReader::new()
            .parse_and_finish(&bytes::Bytes::from(bytes))
            .unwrap()
    }

    #[test]
    fn the_budget_counts_a_read_uncompressed() {
        let meta = compressible();
        let chunk = &meta.row_groups()[0].columns()[0];
        let (stored, unpacked) = (
            chunk.compressed_size() as u64,
            chunk.uncompressed_size() as u64,
        );
        assert!(unpacked > 10 * stored, "{stored} {unpacked}");
        // WHEN a budget holds the stored bytes but not the decoded ones
        let budget = Budget {
            group_bytes: 1 << 20,
            column_bytes: 2 * stored,
            request_bytes: 2 * stored,
        };
        // THEN the read is refused, naming the decoded size
        let refused = plan(&meta, 0..100, &budget).unwrap_err();
        assert_eq!(
            refused,
            TooLarge::Column {
                name: "x".into(),
                bytes: unpacked,
                limit: 2 * stored
            }
        );
        assert!(refused.to_string().contains("decode"), "{refused}");
        // AND within a budget of the decoded size, the plan fetches the stored bytes
        let roomy = Budget {
            group_bytes: unpacked,
            column_bytes: unpacked,
            request_bytes: unpacked,
        };
        let read = plan(&meta, 0..100, &roomy).unwrap();
        assert_eq!((read.bytes(), read.memory()), (stored, unpacked));
    }

    #[test]
    fn pages_count_in_their_chunks_proportion_and_never_below_their_stored_size() {
        assert_eq!(unpacked(100, 1_000, 20_000), 2_000);
        assert_eq!(
            unpacked(100, 1_000, 500),
            100,
            "a claim below the stored size"
        );
        assert_eq!(unpacked(100, 0, 500), 100);
        assert_eq!(unpacked(u64::MAX, 1, u64::MAX), u64::MAX);
    }

    #[test]
    fn publish_warns_of_large_row_groups_without_a_page_index_only() {
        let (size, unindexed) = file(400_000, 400_000, false);
        let warning = preview_warning(&unindexed, size).expect("a warning");
        assert!(warning.contains("no page index"), "{warning}");
        assert!(warning.contains("write_page_index=True"), "{warning}");
        let (size, indexed) = file(400_000, 400_000, true);
        assert_eq!(preview_warning(&indexed, size), None);
        let (size, small_groups) = file(400_000, 1_000, false);
        assert_eq!(preview_warning(&small_groups, size), None);
    }
}
