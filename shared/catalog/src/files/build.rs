//! [`Manifest::build`]: a version's files validated, sorted, chunked and summed up.

use std::collections::{HashMap, HashSet};

use sha2::{Digest, Sha256};

use super::manifest::{ChunkSummary, SplitSummary, Summary, ValueRange};
use super::partition::{self, check_not_columns, infer_type};
use super::{
    ColumnRange, FileEntry, FileInput, FilesError, Manifest, ManifestInput, PartitionColumn,
    PartitionType, PartitionValue, SplitName, CHUNK_FILES, MAX_FILES,
};
use crate::input::echo;

impl Manifest {
    /// Validates everything the module's docs and [`FilesError`] list, and builds the manifest.
    pub fn build(input: ManifestInput) -> Result<Self, FilesError> {
        let ManifestInput {
            files,
            columns,
            splits: declared_splits,
            partition_types,
        } = input;
        let mut seen = HashSet::new();
        for c in &columns {
            if !seen.insert(c.as_str()) {
                return Err(FilesError::DuplicateColumn(echo(c)));
            }
        }
        if files.is_empty() {
            return Err(FilesError::NoFiles);
        }
        if files.len() > MAX_FILES {
            return Err(FilesError::TooManyFiles(files.len()));
        }
        check_files(&files, &declared_splits)?;
        let (partitions, values) = partitions_of(&files, &partition_types)?;
        check_not_columns(&partitions, &columns)?;
        let column_index: HashMap<&str, usize> = columns
            .iter()
            .enumerate()
            .map(|(i, c)| (c.as_str(), i))
            .collect();
        let mut entries = Vec::with_capacity(files.len());
        for (file, partition_values) in files.into_iter().zip(values) {
            let stats = stats_of(&file, &column_index)?;
            entries.push(FileEntry {
                path: file.path,
                split: file.split,
                partitions: partition_values,
                rows: file.rows,
                size: file.size,
                sha256: file.sha256,
                stats,
            });
        }
        entries.sort_by(|a, b| (&a.split, &a.path).cmp(&(&b.split, &b.path)));
        let summary = summarize(&entries, columns, partitions);
        Ok(Self { entries, summary })
    }
}

/// Hashes, duplicate paths, and splits (all or none, each declared one used).
fn check_files(files: &[FileInput], declared: &[SplitName]) -> Result<(), FilesError> {
    let mut paths = HashSet::with_capacity(files.len());
    for f in files {
        let hex = f.sha256.len() == 64
            && f.sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        if !hex {
            return Err(FilesError::Sha256 {
                path: echo(f.path.as_str()),
                value: echo(&f.sha256),
            });
        }
        if !paths.insert(f.path.as_str()) {
            return Err(FilesError::DuplicatePath(echo(f.path.as_str())));
        }
    }
    let with = files.iter().find(|f| f.split.is_some());
    let without = files.iter().find(|f| f.split.is_none());
    if let (Some(with), Some(without)) = (with, without) {
        return Err(FilesError::MixedSplits {
            with: echo(with.path.as_str()),
            split: with
                .split
                .as_ref()
                .map(|s| s.to_string())
                .unwrap_or_default(),
            without: echo(without.path.as_str()),
        });
    }
    let used: HashSet<&SplitName> = files.iter().filter_map(|f| f.split.as_ref()).collect();
    match declared.iter().find(|s| !used.contains(s)) {
        Some(empty) => Err(FilesError::EmptySplit(empty.to_string())),
        None => Ok(()),
    }
}

/// The partition columns (same keys, same order in every file; typed) and each file's values.
#[allow(clippy::type_complexity)]
fn partitions_of(
    files: &[FileInput],
    declared: &[(String, PartitionType)],
) -> Result<(Vec<PartitionColumn>, Vec<Vec<PartitionValue>>), FilesError> {
    let raw: Vec<Vec<(String, Option<String>)>> = files
        .iter()
        .map(|f| partition::segments(&f.path))
        .collect::<Result<_, _>>()?;
    let keys = |segments: &[(String, Option<String>)]| -> Vec<String> {
        segments.iter().map(|(k, _)| k.clone()).collect()
    };
    let first_keys = keys(&raw[0]);
    for (f, segments) in files.iter().zip(&raw).skip(1) {
        let these = keys(segments);
        if these != first_keys {
            return Err(FilesError::PartitionKeys {
                first: echo(files[0].path.as_str()),
                first_keys,
                other: echo(f.path.as_str()),
                other_keys: these,
            });
        }
    }
    if let Some((key, _)) = declared.iter().find(|(k, _)| !first_keys.contains(k)) {
        return Err(FilesError::UnknownPartitionKey(echo(key)));
    }
    let columns: Vec<PartitionColumn> = first_keys
        .iter()
        .enumerate()
        .map(|(i, key)| {
            let kind = declared
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, t)| *t)
                .unwrap_or_else(|| infer_type(raw.iter().map(|s| s[i].1.as_deref())));
            PartitionColumn {
                name: key.clone(),
                kind,
            }
        })
        .collect();
    let mut values = Vec::with_capacity(files.len());
    for (f, segments) in files.iter().zip(&raw) {
        let mut typed = Vec::with_capacity(columns.len());
        for (column, (_, text)) in columns.iter().zip(segments) {
            let value = PartitionValue::parse(text.as_deref(), column.kind).ok_or_else(|| {
                FilesError::PartitionValue {
                    path: echo(f.path.as_str()),
                    key: column.name.clone(),
                    value: echo(text.as_deref().unwrap_or_default()),
                    kind: column.kind,
                }
            })?;
            typed.push(value);
        }
        values.push(typed);
    }
    Ok((columns, values))
}

/// A file's statistics in the columns' order, normalized and checked (min at most max); a
/// range that knows nothing is `None`.
fn stats_of(
    file: &FileInput,
    columns: &HashMap<&str, usize>,
) -> Result<Vec<Option<ColumnRange>>, FilesError> {
    let mut out = vec![None; columns.len()];
    for (name, range) in &file.stats {
        let Some(&i) = columns.get(name.as_str()) else {
            return Err(FilesError::UnknownColumn {
                path: echo(file.path.as_str()),
                column: echo(name),
            });
        };
        let range = range.clone().normalized();
        if let (Some(min), Some(max)) = (&range.min, &range.max) {
            if !min.compare(max).is_some_and(|o| o.is_le()) {
                return Err(FilesError::StatsOrder {
                    path: echo(file.path.as_str()),
                    column: echo(name),
                    min: min.to_string(),
                    max: max.to_string(),
                });
            }
        }
        let known = range.min.is_some() || range.max.is_some() || range.null_count.is_some();
        out[i] = known.then_some(range);
    }
    Ok(out)
}

/// The summary of sorted entries: totals, splits, chunks (cut at [`CHUNK_FILES`] and at each
/// split's start), and the manifest hash.
fn summarize(
    entries: &[FileEntry],
    columns: Vec<String>,
    partitions: Vec<PartitionColumn>,
) -> Summary {
    let mut chunks: Vec<ChunkSummary> = Vec::new();
    let mut splits: Vec<SplitSummary> = Vec::new();
    let mut hash = Sha256::new();
    let (mut rows, mut bytes) = (0u64, 0u64);
    for (i, e) in entries.iter().enumerate() {
        let new_split = i == 0 || entries[i - 1].split != e.split;
        if new_split {
            if let Some(name) = &e.split {
                splits.push(SplitSummary {
                    name: name.clone(),
                    files: 0,
                    rows: 0,
                    bytes: 0,
                    first_file: i as u64,
                    first_row: rows,
                    first_chunk: chunks.len() as u32,
                    chunks: 0,
                });
            }
        }
        let full = chunks
            .last()
            .is_none_or(|c| c.files as usize >= CHUNK_FILES);
        if new_split || full {
            chunks.push(ChunkSummary {
                first_file: i as u64,
                files: 0,
                first_row: rows,
                rows: 0,
                partitions: vec![ValueRange::default(); partitions.len()],
                file_parts: 0,
                stat_parts: 0,
            });
            if let Some(s) = splits.last_mut().filter(|_| e.split.is_some()) {
                s.chunks += 1;
            }
        }
        let chunk = chunks.last_mut().expect("a chunk was just pushed if none");
        chunk.files += 1;
        chunk.rows += e.rows;
        for ((range, value), column) in chunk
            .partitions
            .iter_mut()
            .zip(&e.partitions)
            .zip(&partitions)
        {
            widen(range, value, column.kind);
        }
        if let Some(s) = splits.last_mut().filter(|_| e.split.is_some()) {
            s.files += 1;
            s.rows += e.rows;
            s.bytes += e.size;
        }
        rows += e.rows;
        bytes += e.size;
        let split = e.split.as_ref().map_or("", SplitName::as_str);
        hash.update(format!(
            "{split}\t{}\t{}\t{}\t{}\n",
            e.path, e.size, e.rows, e.sha256
        ));
    }
    Summary {
        files: entries.len() as u64,
        rows,
        bytes,
        sha256: hex::encode(hash.finalize()),
        columns,
        partitions,
        splits,
        chunks,
    }
}

/// `range` widened to hold `value`.
fn widen(range: &mut ValueRange, value: &PartitionValue, kind: PartitionType) {
    let Some(text) = value.to_text() else {
        range.nulls = true;
        return;
    };
    let below = |bound: &Option<String>, want_less: bool| match bound {
        None => true,
        Some(b) => PartitionValue::parse(Some(b), kind)
            .and_then(|b| value.compare(&b))
            .is_some_and(|o| if want_less { o.is_lt() } else { o.is_gt() }),
    };
    if below(&range.min, true) {
        range.min = Some(text.clone());
    }
    if below(&range.max, false) {
        range.max = Some(text);
    }
}
