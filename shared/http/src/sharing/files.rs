//! A query over a version of many files: which files it hands out, in manifest order (split,
//! then path), and their `file` lines.
//!
//! 1. **Chunks.** The version's summary (read with the dataset, no round trip) says each
//!    manifest chunk's range of every partition column; a chunk whose ranges make the
//!    predicate certainly false is not read.
//! 2. **Files.** The other chunks are read with their statistics
//!    ([`ManifestReader::read_chunks`]: as many chunks at a time as one BatchGetItem holds, so
//!    memory stays bounded; a page or a limit, which may stop early, one page's worth first,
//!    then twice as many each time), and each file judged on its partition values and statistics
//!    ([`Predicate::judge`]): skipped only when no row of it can pass.
//! 3. **`limitHint`.** Once the files listed hold at least that many rows that certainly pass
//!    the predicate (every row of a file the predicate is certainly true for; without a
//!    predicate, every row), no more files are listed: the client's `LIMIT` is met by them.
//!    Files whose rows may or may not pass do not count toward it.
//! 4. **Bounds.** Lambda answers at most 6 MB, the JSON envelope included. An answer sent as
//!    it is holds at most [`MAX_BODY_BYTES`] of lines; one sent gzip-compressed (the client
//!    accepts gzip, as the Python connector's `requests` does) at most [`MAX_GZIP_BYTES`] of
//!    compressed lines (base64 in the envelope: 4/3 of that) and [`MAX_RAW_BYTES`] before
//!    compression ([`Budget`]). A paged query ([`Paging`]) stops there, or at `maxFiles`, and
//!    points at the next file; a query without paging that would pass it is refused, saying
//!    so, rather than cut.

use chrono::{DateTime, Utc};
use serde_json::{json, Map, Value};

use super::predicate::{Predicate, Verdict};
use super::{millis, File};
use crate::error::{ApiError, StoreError};
use catalog::files::{FileEntry, Summary, CHUNK_FILES};
use catalog::ports::{ManifestReader, UrlSigner};
use catalog::records::ActiveVersion;
use catalog::slug::Slug;

/// The most bytes of file lines one answer sent as it is holds.
pub const MAX_BODY_BYTES: usize = 4_000_000;

/// The most bytes of gzip-compressed file lines one compressed answer holds (base64-encoded in
/// Lambda's answer: 4,000,000 bytes).
pub const MAX_GZIP_BYTES: usize = 3_000_000;

/// The most bytes of file lines, before compression, one compressed answer holds: a bound on
/// the function's memory (the lines, then their compression).
pub const MAX_RAW_BYTES: usize = 64_000_000;

/// What one answer may still hold ([module docs](self), 4).
pub enum Budget {
    /// Sent as it is: the bytes of lines so far.
    Plain { bytes: usize },
    /// Sent gzip-compressed: the lines so far, compressed as the answer will be (at level 1),
    /// into a sink that only counts.
    Gzip {
        raw: usize,
        encoder: Box<flate2::write::GzEncoder<Counter>>,
    },
}

/// A writer that keeps only the count of what it was given.
#[derive(Default)]
pub struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Budget {
    pub fn new(gzip: bool) -> Self {
        if gzip {
            Budget::Gzip {
                raw: 0,
                encoder: Box::new(flate2::write::GzEncoder::new(
                    Counter::default(),
                    flate2::Compression::fast(),
                )),
            }
        } else {
            Budget::Plain { bytes: 0 }
        }
    }

    /// Takes `line` if the answer can still hold it. The compressed count lags by what the
    /// encoder holds back (at most its 32 KB window and buffer), which the bound leaves room
    /// for.
    pub fn take(&mut self, line: &str) -> bool {
        use std::io::Write;
        match self {
            Budget::Plain { bytes } => {
                if *bytes + line.len() > MAX_BODY_BYTES {
                    return false;
                }
                *bytes += line.len() + 1;
                true
            }
            Budget::Gzip { raw, encoder } => {
                if *raw + line.len() > MAX_RAW_BYTES || encoder.get_ref().0 > MAX_GZIP_BYTES {
                    return false;
                }
                *raw += line.len() + 1;
                // A write into a counter cannot fail.
                let _ = encoder.write_all(line.as_bytes());
                let _ = encoder.write_all(b"\n");
                true
            }
        }
    }

    /// The bound it keeps, as an error message names it.
    fn bound(&self) -> String {
        match self {
            Budget::Plain { .. } => format!(
                "over {MAX_BODY_BYTES} bytes; a client that accepts gzip (Accept-Encoding: \
                 gzip) gets about seven to nine times as many files in one answer"
            ),
            Budget::Gzip { .. } => {
                format!("over {MAX_GZIP_BYTES} bytes compressed or {MAX_RAW_BYTES} bytes")
            }
        }
    }
}

/// Most stored items one read of chunks asks for: one BatchGetItem.
const ITEMS_PER_READ: u32 = 100;

/// Paths an answer's audit event names (with the count of all).
pub const LOGGED_PATHS: usize = 5;

/// Where a paged query is: the next file of the manifest to consider, and the rows that
/// certainly pass in the files already handed out (for `limitHint`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub file: u64,
    pub rows: u64,
}

/// A paged query: at most `max_files` files from `from`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub max_files: u64,
    pub from: Position,
}

/// The query, against one version.
pub struct FilesQuery<'a> {
    pub slug: &'a Slug,
    pub version: &'a ActiveVersion,
    pub summary: &'a Summary,
    pub predicate: &'a Predicate,
    pub limit: Option<u64>,
    pub paging: Option<Paging>,
    /// Time travel was asked for: each line names the version and its time.
    pub pinned: bool,
    /// The answer will be sent gzip-compressed (its bound is then [`MAX_GZIP_BYTES`]).
    pub gzip: bool,
    pub now: DateTime<Utc>,
}

/// What a query handed out.
#[derive(Debug, Default)]
pub struct Listed {
    /// `{"file": …}` lines, in order.
    pub lines: Vec<String>,
    /// The first [`LOGGED_PATHS`] paths handed out.
    pub first_paths: Vec<String>,
    /// A paged query's next position; `None` when the answer is complete.
    pub next: Option<Position>,
    /// The earliest expiry of the URLs handed out.
    pub expires_at: Option<DateTime<Utc>>,
    /// Chunks read and reads made (the round trips of the manifest).
    pub chunks_read: usize,
    pub reads: usize,
}

/// The files of the query, their URLs signed.
pub async fn list_files(
    q: &FilesQuery<'_>,
    manifests: &impl ManifestReader,
    signer: &impl UrlSigner,
) -> Result<Listed, ApiError> {
    let from = q.paging.map(|p| p.from).unwrap_or_default();
    let chunks: Vec<usize> = q
        .summary
        .chunks
        .iter()
        .enumerate()
        .filter(|(_, c)| c.first_file + u64::from(c.files) > from.file)
        .filter(|(_, c)| q.predicate.may_match_chunk(q.summary, c))
        .map(|(i, _)| i)
        .collect();
    let candidates_end = chunks.last().map_or(0, |&c| {
        let c = &q.summary.chunks[c];
        c.first_file + u64::from(c.files)
    });
    let mut out = Listed::default();
    let mut rows = from.rows;
    let mut budget = Budget::new(q.gzip);
    let mut start = 0;
    // A query that may stop early (a page, a limit) reads one page's worth of chunks first,
    // then twice as many each time; one that lists every match reads as many as one
    // BatchGetItem holds.
    let bounded = q.paging.is_some() || q.limit.is_some();
    let mut want = q.paging.map_or(1, |p| {
        p.max_files.div_ceil(CHUNK_FILES as u64).max(1) as usize
    });
    while start < chunks.len() {
        let mut end = start;
        let mut items = 0;
        while end < chunks.len() && (!bounded || end - start < want) {
            let c = &q.summary.chunks[chunks[end]];
            let more = c.file_parts.max(1) + c.stat_parts;
            if end > start && items + more > ITEMS_PER_READ {
                break;
            }
            items += more;
            end += 1;
        }
        want = want.saturating_mul(2);
        let read = manifests
            .read_chunks(
                q.slug,
                q.version.version,
                q.summary,
                &chunks[start..end],
                true,
            )
            .await?
            .ok_or_else(|| {
                ApiError::Internal(Box::new(StoreError::Corrupt(format!(
                    "the manifest of '{}' v{} is missing chunks {:?}",
                    q.slug,
                    q.version.version,
                    &chunks[start..end]
                ))))
            })?;
        out.reads += 1;
        out.chunks_read += end - start;
        for chunk in &read {
            for (i, file) in chunk.files.iter().enumerate() {
                let index = chunk.first_file + i as u64;
                if index < from.file {
                    continue;
                }
                let verdict = q.predicate.judge(file);
                if verdict == Verdict::Skip {
                    continue;
                }
                if q.limit.is_some_and(|limit| rows >= limit) {
                    return Ok(out);
                }
                let here = Position { file: index, rows };
                if let Some(p) = q.paging {
                    if out.lines.len() as u64 >= p.max_files {
                        out.next = Some(here);
                        return Ok(out);
                    }
                }
                let line = file_line(q, file, signer, &mut out.expires_at).await?;
                if !budget.take(&line) && !out.lines.is_empty() {
                    if q.paging.is_some() {
                        out.next = Some(here);
                        return Ok(out);
                    }
                    return Err(too_large(q, out.lines.len(), &budget));
                }
                out.lines.push(line);
                if out.first_paths.len() < LOGGED_PATHS {
                    out.first_paths.push(file.path.as_str().to_owned());
                }
                if verdict == Verdict::AllRows {
                    rows += file.rows;
                }
                // A full page points past its last file when the chunks that may hold more
                // go on and the limit is not met (the next page may then be empty), without
                // reading further.
                if let Some(p) = q.paging {
                    if out.lines.len() as u64 >= p.max_files {
                        let limit_met = q.limit.is_some_and(|limit| rows >= limit);
                        out.next = (index + 1 < candidates_end && !limit_met).then_some(Position {
                            file: index + 1,
                            rows,
                        });
                        return Ok(out);
                    }
                }
            }
        }
        start = end;
    }
    Ok(out)
}

fn too_large(q: &FilesQuery<'_>, listed: usize, budget: &Budget) -> ApiError {
    ApiError::BadRequest(format!(
        "this query matches more files of '{}' v{} than one answer holds without paging (more \
         than {listed} of its {} files, {}): send maxFiles (the protocol's paging of query \
         results), a predicate that selects fewer files (jsonPredicateHints on the partition \
         columns {}), or a limitHint",
        q.slug,
        q.version.version,
        q.summary.files,
        budget.bound(),
        partition_names(q.summary),
    ))
}

fn partition_names(summary: &Summary) -> String {
    if summary.partitions.is_empty() {
        return "(none: the table is not partitioned)".into();
    }
    summary
        .partitions
        .iter()
        .map(|p| p.name.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// One file's line: its URL, id (its SHA-256), partition values as the protocol writes them
/// (text; null for Hive's null), size, and statistics.
async fn file_line(
    q: &FilesQuery<'_>,
    file: &FileEntry,
    signer: &impl UrlSigner,
    expires_at: &mut Option<DateTime<Utc>>,
) -> Result<String, ApiError> {
    let key = format!("{}{}", q.version.s3_key, file.path.as_str());
    let name = file
        .path
        .as_str()
        .rsplit('/')
        .next()
        .unwrap_or("file.parquet");
    let signed = signer.sign(&key, name, q.now).await?;
    *expires_at = Some(expires_at.map_or(signed.expires_at, |e| e.min(signed.expires_at)));
    let partition_values: Map<String, Value> = q
        .summary
        .partitions
        .iter()
        .zip(&file.partitions)
        .map(|(p, v)| {
            (
                p.name.clone(),
                v.to_text().map_or(Value::Null, Value::String),
            )
        })
        .collect();
    let line = File {
        url: &signed.url,
        id: &file.sha256,
        partition_values,
        size: file.size,
        stats: stats(q.summary, file),
        version: q.pinned.then_some(q.version.version),
        timestamp: q.pinned.then(|| millis(q.version.published_at)),
        expiration_timestamp: millis(signed.expires_at),
    };
    Ok(json!({ "file": line }).to_string())
}

/// Delta's per-file statistics, as text: `numRecords`, and each file column's known minimum,
/// maximum and null count.
pub fn stats(summary: &Summary, file: &FileEntry) -> String {
    let (mut min, mut max, mut nulls) = (Map::new(), Map::new(), Map::new());
    for (name, range) in summary.columns.iter().zip(&file.stats) {
        let Some(range) = range else { continue };
        if let Some(v) = &range.min {
            min.insert(name.clone(), v.to_json());
        }
        if let Some(v) = &range.max {
            max.insert(name.clone(), v.to_json());
        }
        if let Some(n) = range.null_count {
            nulls.insert(name.clone(), n.into());
        }
    }
    json!({
        "numRecords": file.rows,
        "minValues": min,
        "maxValues": max,
        "nullCount": nulls,
    })
    .to_string()
}
