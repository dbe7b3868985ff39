//! The data endpoint's listing of a version's files (docs/api.md, Data, "A version of many
//! files"): its parameters, its page token, and which manifest chunks a page reads.
//!
//! **What a page reads.** The version's summary (on the dataset item, already read by the gate)
//! says which chunks may hold files passing the filters ([`Summary::chunks_matching`]) and, by
//! each chunk's partition ranges, which of those hold *only* such files (a range whose minimum
//! and maximum are the value asked for). The first page reads, in one [`ManifestReader`] call
//! (one BatchGetItem up to 100 items): every candidate chunk the summaries cannot settle (its
//! files are counted, so that `file_count` is exact) and the candidate chunks from the page's
//! start until those known to match fill the page. The page token carries the count, so a later
//! page reads only the chunks from its start until the page fills. Without a partition filter
//! every chunk of the split settles itself: a page of 1,000 files reads one or two chunks.

use catalog::files::{
    FileChunk, FileEntry, PartitionFilter, PartitionValue, ResolvedFilter, Summary, ValueRange,
    CHUNK_FILES,
};
use catalog::input::Slug;
use catalog::ports::ManifestReader;
use lambda_http::Request;

use super::request::{all_params, single_param};
use crate::error::{ApiError, StoreError};

/// Most files one listing page holds (and its default).
pub const MAX_PAGE_SIZE: usize = CHUNK_FILES;

/// The listing parameters a data request carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct FileQuery {
    pub split: Option<String>,
    pub filter: PartitionFilter,
    pub page_size: usize,
    pub token: Option<PageToken>,
}

impl FileQuery {
    /// The first page, every file: a many-file version's answer without listing parameters.
    pub fn first_page() -> Self {
        Self {
            split: None,
            filter: PartitionFilter::default(),
            page_size: MAX_PAGE_SIZE,
            token: None,
        }
    }

    /// The listing parameters of `req`; `None` when it has none of them (the one-file answer).
    /// Malformed (a `partition` without `=`, a `page_size` outside 1 to 1,000, a token that
    /// does not parse): 400.
    pub fn parse(req: &Request) -> Result<Option<Self>, ApiError> {
        let split = single_param(req, "split")?.map(str::to_owned);
        let partitions = all_params(req, "partition");
        let page_size = single_param(req, "page_size")?;
        let token = single_param(req, "page_token")?;
        if split.is_none() && partitions.is_empty() && page_size.is_none() && token.is_none() {
            return Ok(None);
        }
        let filter = PartitionFilter::parse(partitions.iter().map(String::as_str))
            .map_err(|e| ApiError::BadRequest(e.to_string()))?;
        let page_size = match page_size {
            None => MAX_PAGE_SIZE,
            Some(raw) => raw
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_PAGE_SIZE).contains(n))
                .ok_or_else(|| {
                    ApiError::BadRequest(format!(
                        "page_size '{}' is not a whole number from 1 to {MAX_PAGE_SIZE}",
                        catalog::input::echo(raw)
                    ))
                })?,
        };
        let token = token.map(PageToken::parse).transpose()?;
        Ok(Some(Self {
            split,
            filter,
            page_size,
            token,
        }))
    }
}

/// Where the next page starts: the version listed, the manifest position of the next file to
/// look at, how many matching files the pages before handed out, and how many match in all.
/// Sent as hex of `1.<version>.<next>.<done>.<count>`: opaque to clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PageToken {
    pub version: u64,
    pub next: u64,
    pub done: u64,
    pub count: u64,
}

impl PageToken {
    pub fn encode(&self) -> String {
        let text = format!(
            "1.{}.{}.{}.{}",
            self.version, self.next, self.done, self.count
        );
        hex::encode(text)
    }

    pub fn parse(raw: &str) -> Result<Self, ApiError> {
        let bad = || {
            ApiError::BadRequest(format!(
                "page_token '{}' is not one this endpoint gave: pass next_page_token as it came",
                catalog::input::echo(raw)
            ))
        };
        let text = hex::decode(raw)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(bad)?;
        let mut parts = text.split('.');
        if parts.next() != Some("1") {
            return Err(bad());
        }
        let mut number = || -> Result<u64, ApiError> {
            let part = parts.next().ok_or_else(bad)?;
            if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            part.parse().map_err(|_| bad())
        };
        let token = Self {
            version: number()?,
            next: number()?,
            done: number()?,
            count: number()?,
        };
        if parts.next().is_some() || token.done > token.count {
            return Err(bad());
        }
        Ok(token)
    }
}

/// One page of the listing.
#[derive(Debug, Default)]
pub(super) struct FilePage {
    /// The page's files, in manifest order.
    pub files: Vec<FileEntry>,
    /// Files matching the filters over every page.
    pub file_count: u64,
    pub next: Option<PageToken>,
    /// The chunks read (for logs and tests).
    pub chunks_read: usize,
}

/// Whether every file of a chunk whose range is `range` holds `value`.
fn only_holds(
    range: &ValueRange,
    value: &PartitionValue,
    kind: catalog::files::PartitionType,
) -> bool {
    let bound = |b: &Option<String>| {
        b.as_deref()
            .and_then(|t| PartitionValue::parse(Some(t), kind))
    };
    if value.is_null() {
        return range.nulls && range.min.is_none() && range.max.is_none();
    }
    !range.nulls
        && bound(&range.min).as_ref() == Some(value)
        && bound(&range.max).as_ref() == Some(value)
}

/// The page of `summary`'s files that `query` asks for, of version `version` of `slug`: the
/// chunks it needs read in one [`ManifestReader::read_chunks`] call (module docs). A split or a
/// filter naming nothing: an empty page, `file_count` 0. A token that does not fit the
/// listing: 400.
pub(super) async fn page(
    reader: &impl ManifestReader,
    slug: &Slug,
    version: u64,
    summary: &Summary,
    query: &FileQuery,
) -> Result<FilePage, ApiError> {
    // A value that is not of its key's type is malformed; a key the version does not have
    // names nothing (below).
    for (key, value) in query.filter.terms() {
        let column = summary.partitions.iter().find(|p| &p.name == key);
        if let (Some(column), Some(value)) = (column, value) {
            if PartitionValue::parse(Some(value), column.kind).is_none() {
                return Err(ApiError::BadRequest(format!(
                    "partition value '{}' of '{}' is not {}",
                    catalog::input::echo(value),
                    catalog::input::echo(key),
                    column.kind
                )));
            }
        }
    }
    let split = query.split.as_deref();
    let (Some(span), Some(filter)) = (summary.span(split), summary.resolve(&query.filter)) else {
        return Ok(FilePage::default());
    };
    let end = span.first_file + span.files;
    let (start, done, known_count) = match query.token {
        None => (span.first_file, 0, None),
        Some(t) if t.next >= span.first_file && t.next <= end && t.count <= span.files => {
            (t.next, t.done, Some(t.count))
        }
        Some(_) => {
            return Err(ApiError::BadRequest(
                "page_token does not belong to this listing (another split?): start again \
                 without it"
                    .to_owned(),
            ))
        }
    };
    let candidates = summary.chunks_matching(split, &filter);
    let settled = |c: usize| {
        filter.0.iter().all(|(i, value)| {
            summary.chunks[c]
                .partitions
                .get(*i)
                .is_some_and(|r| only_holds(r, value, summary.partitions[*i].kind))
        })
    };
    let mut read: Vec<usize> = Vec::new();
    if known_count.is_none() {
        read.extend(candidates.iter().copied().filter(|&c| !settled(c)));
    }
    let wanted = match known_count {
        Some(count) => (count - done).min(query.page_size as u64),
        None => query.page_size as u64,
    };
    let mut known = 0u64;
    for &c in &candidates {
        if known >= wanted {
            break;
        }
        let chunk = &summary.chunks[c];
        let chunk_end = chunk.first_file + u64::from(chunk.files);
        if chunk_end <= start {
            continue;
        }
        if !read.contains(&c) {
            read.push(c);
        }
        if settled(c) {
            known += chunk_end - start.max(chunk.first_file);
        }
    }
    read.sort_unstable();
    let chunks = if read.is_empty() {
        Vec::new()
    } else {
        reader
            .read_chunks(slug, version, summary, &read, false)
            .await?
            .ok_or_else(|| {
                ApiError::from(StoreError::Corrupt(format!(
                    "the manifest of '{slug}' version {version} is missing chunks"
                )))
            })?
    };
    let count = match known_count {
        Some(count) => count,
        None => candidates
            .iter()
            .map(|&c| match settled(c) {
                true => u64::from(summary.chunks[c].files),
                false => chunks
                    .iter()
                    .find(|k| k.index == c)
                    .map_or(0, |k| matching(k, &filter).count() as u64),
            })
            .sum(),
    };
    let mut files = Vec::new();
    let mut last = None;
    'chunks: for chunk in &chunks {
        for (position, entry) in matching(chunk, &filter) {
            if position < start {
                continue;
            }
            if files.len() == query.page_size {
                break 'chunks;
            }
            files.push(entry.clone());
            last = Some(position);
        }
    }
    let handed = done + files.len() as u64;
    let next = match last {
        Some(last) if handed < count => Some(PageToken {
            version,
            next: last + 1,
            done: handed,
            count,
        }),
        _ => None,
    };
    Ok(FilePage {
        files,
        file_count: count,
        next,
        chunks_read: chunks.len(),
    })
}

/// A chunk's files passing `filter`, with their positions in the manifest.
fn matching<'a>(
    chunk: &'a FileChunk,
    filter: &'a ResolvedFilter,
) -> impl Iterator<Item = (u64, &'a FileEntry)> + 'a {
    chunk
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (chunk.first_file + i as u64, f))
        .filter(|(_, f)| filter.matches(&f.partitions))
}

#[cfg(test)]
#[path = "file_list_tests.rs"]
mod tests;
