//! Reading the files of a version of many files before anything is written ([`prepare`]):
//! their paths, splits and partitions as the manifest takes them, one schema, their per-file
//! statistics, the statistics of all their rows (the partition columns counted), and their
//! SHA-256s.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use catalog::files::partition::check_not_columns;
use catalog::files::{
    FileInput, Manifest, ManifestInput, PartitionType, PartitionValue, RelPath, SplitName,
};
use catalog::input::Slug;

use super::discover::Discovered;
use super::keys::{files_prefix, Plan, KEY_MAX_BYTES};
use super::upload::{Digest, FileUpload};
use super::PublishError;
use catalog_stats::{
    partial::FilePartial, scan_files, summarize_partitioned, FileStats, Partitions, StatsError,
    StatsInput,
};

/// One file, ready to go.
#[derive(Debug, Clone)]
pub struct PreparedFile {
    /// Where the file is: its local path, or a staged object's key.
    pub path: PathBuf,
    pub rel: RelPath,
    pub digest: Digest,
}

/// Every file of a version checked and read: their manifest (paths, splits, partitions, rows,
/// sizes, SHA-256s, per-file statistics), the statistics of all their rows, and each file's
/// digest, in the order of [`Discovered::files`].
#[derive(Debug, Clone)]
pub struct Prepared {
    pub files: Vec<PreparedFile>,
    pub manifest: Manifest,
    pub stats: FileStats,
    /// Each split's statistics, in the order of the manifest summary's splits (empty when the
    /// files have no split): the split's files read again, with the same conventions.
    pub split_stats: Vec<FileStats>,
    /// What the version records of the text inputs these files were converted from
    /// ([`crate::ingest`]); `None` for files published as they are.
    pub ingested: Option<std::sync::Arc<crate::ingest::record::Record>>,
}

impl Prepared {
    pub fn rows(&self) -> u64 {
        self.stats.row_count
    }

    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|f| f.digest.size).sum()
    }

    pub fn plan(&self) -> Plan {
        Plan {
            manifest_sha256: self.manifest.sha256().to_owned(),
            files: self.files.len(),
            bytes: self.bytes(),
        }
    }
}

/// What to upload of `files` for version `version` of `slug`.
pub fn uploads(files: &[PreparedFile], slug: &Slug, version: u64) -> Vec<FileUpload> {
    let prefix = files_prefix(slug, version);
    files
        .iter()
        .map(|f| FileUpload {
            path: f.path.clone(),
            key: format!("{prefix}{}", f.rel),
            digest: f.digest.clone(),
        })
        .collect()
}

pub(crate) fn bad(e: impl std::fmt::Display) -> PublishError {
    PublishError::BadInput(e.to_string())
}

/// The files' digests, read `workers` at a time.
pub(crate) fn digest_all(paths: &[PathBuf], workers: usize) -> Result<Vec<Digest>, PublishError> {
    let next = AtomicUsize::new(0);
    let digests: Mutex<Vec<Option<Digest>>> = Mutex::new(vec![None; paths.len()]);
    let failed: Mutex<Option<PublishError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..workers.clamp(1, paths.len().max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= paths.len() || failed.lock().map_or(true, |f| f.is_some()) {
                    return;
                }
                match Digest::of_file(&paths[i]) {
                    Ok(digest) => {
                        if let Ok(mut all) = digests.lock() {
                            all[i] = Some(digest);
                        }
                    }
                    Err(e) => {
                        if let Ok(mut f) = failed.lock() {
                            f.get_or_insert(bad(format!(
                                "cannot read {}: {e}",
                                paths[i].display()
                            )));
                        }
                        return;
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().ok().flatten() {
        return Err(e);
    }
    digests
        .into_inner()
        .map_err(|_| PublishError::BadFile(StatsError::Panicked))?
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or(PublishError::BadFile(StatsError::Panicked))
}

/// Checks and reads every file found, writing nothing: their paths and splits as the manifest
/// takes them, their partitions (read from the paths, before a file is opened), that they
/// share one schema, their per-file statistics, the statistics of all their rows, and their
/// SHA-256s; then their manifest (a partition key that is also a column is refused here).
/// Every refusal is [`PublishError::BadInput`] or [`PublishError::BadFile`], naming the files.
pub async fn prepare(
    found: &Discovered,
    partition_types: &[(String, PartitionType)],
) -> Result<Prepared, PublishError> {
    let paths: Vec<PathBuf> = found.files.iter().map(|f| f.path.clone()).collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    prepare_inputs(
        found,
        partition_types,
        paths,
        None,
        move |paths: &[PathBuf]| digest_all(paths, workers),
    )
    .await
}

/// [`prepare`] over any inputs the statistics read ([`StatsInput`]: local files, or staged
/// objects in S3), one per file found and in the same order, with `digests` giving each one's
/// size and SHA-256 (run beside the statistics, on its own thread).
pub async fn prepare_inputs<I, D>(
    found: &Discovered,
    partition_types: &[(String, PartitionType)],
    paths: Vec<I>,
    partials: Option<Vec<FilePartial>>,
    digests: D,
) -> Result<Prepared, PublishError>
where
    I: StatsInput + Clone + Send + 'static,
    D: FnOnce(&[I]) -> Result<Vec<Digest>, PublishError> + Send + 'static,
{
    if paths.len() != found.files.len() {
        return Err(bad("one input per file found is needed"));
    }
    let splits = found
        .splits
        .iter()
        .map(|s| SplitName::parse(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(bad)?;
    let mut inputs = Vec::with_capacity(found.files.len());
    for file in &found.files {
        inputs.push(FileInput {
            path: RelPath::parse(&file.rel).map_err(bad)?,
            split: file
                .split
                .as_deref()
                .map(SplitName::parse)
                .transpose()
                .map_err(bad)?,
            rows: 0,
            size: 0,
            sha256: "0".repeat(64),
            stats: Vec::new(),
        });
    }
    // Paths, splits and partitions, before any file is read.
    let dry = Manifest::build(ManifestInput {
        files: inputs.clone(),
        columns: Vec::new(),
        splits: splits.clone(),
        partition_types: partition_types.to_vec(),
    })
    .map_err(bad)?;
    // Each file's partition values, in the order of the files found.
    let by_path: HashMap<&RelPath, &Vec<PartitionValue>> = dry
        .entries
        .iter()
        .map(|e| (&e.path, &e.partitions))
        .collect();
    let values: Vec<Vec<PartitionValue>> = inputs
        .iter()
        .map(|i| by_path.get(&i.path).map_or_else(Vec::new, |v| (*v).clone()))
        .collect();
    let columns = dry.summary.partitions.clone();
    // Each split's files (indexes into `paths`), in the summary's order of splits.
    let split_files: Vec<Vec<usize>> = dry
        .summary
        .splits
        .iter()
        .map(|split| {
            inputs
                .iter()
                .enumerate()
                .filter(|(_, i)| i.split.as_ref() == Some(&split.name))
                .map(|(n, _)| n)
                .collect()
        })
        .collect();
    let (scanned, stats, split_stats, digests) = tokio::task::spawn_blocking(move || {
        // The footers first: files that disagree are refused before a long read.
        let scanned = scan_files(&paths)?;
        let names: Vec<String> = scanned
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        check_not_columns(&columns, &names).map_err(bad)?;
        if let Some(partials) = partials {
            // Statistics from the fan-out's partials (super::partials), in the files' order.
            if !columns.is_empty() {
                return Err(bad(
                    "--partials: the partial statistics do not hold Hive partition columns; \
                     publish this version without --partials",
                ));
            }
            if !split_files.is_empty() {
                // A split's histograms have the bins of its own bounds: the version's
                // partials, counted into the version's, cannot give them exactly.
                return Err(bad(
                    "--partials: a version with splits needs each split's histograms over its \
                     own bounds, which partials counted into the version's bins do not give; \
                     publish it without --partials",
                ));
            }
            if partials.len() != scanned.files.len() {
                return Err(bad("--partials: one partial per file is needed"));
            }
            for (p, file) in partials.iter().zip(&scanned.files) {
                if p.row_count != file.row_count {
                    return Err(bad(format!(
                        "{}: its partial statistics count {} rows, its footer {}",
                        p.file, p.row_count, file.row_count
                    )));
                }
            }
            let digests = digests(&paths)?;
            let stats = super::partials::merged(&partials)?;
            return Ok::<_, PublishError>((scanned, stats, Vec::new(), digests));
        }
        let partitions = Partitions {
            columns: &columns,
            values: &values,
        };
        let (stats, digests) = std::thread::scope(|scope| {
            let digests = scope.spawn(|| digests(&paths));
            let stats = summarize_partitioned(&paths, partitions);
            (stats, digests.join())
        });
        let digests = digests.map_err(|_| PublishError::BadFile(StatsError::Panicked))??;
        let stats = stats?;
        // A split's statistics: its files read again through the same counters (exact, as
        // the version's; a version of several splits is read once more in all).
        let mut split_stats = Vec::with_capacity(split_files.len());
        for files in &split_files {
            let paths: Vec<I> = files.iter().map(|&n| paths[n].clone()).collect();
            let values: Vec<Vec<PartitionValue>> =
                files.iter().map(|&n| values[n].clone()).collect();
            let partitions = Partitions {
                columns: &columns,
                values: &values,
            };
            split_stats.push(summarize_partitioned(&paths, partitions)?);
        }
        Ok::<_, PublishError>((scanned, stats, split_stats, digests))
    })
    .await
    .map_err(|e| bad(format!("statistics task failed: {e}")))??;
    if stats.row_count == 0 {
        return Err(bad("the files have no rows: nothing to publish"));
    }
    for ((input, ranges), digest) in inputs.iter_mut().zip(&scanned.files).zip(&digests) {
        input.rows = ranges.row_count;
        input.size = digest.size;
        input.sha256.clone_from(&digest.sha256);
        input.stats = ranges.catalog_stats();
    }
    let columns = scanned
        .schema
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    let manifest = Manifest::build(ManifestInput {
        files: inputs.clone(),
        columns,
        splits,
        partition_types: partition_types.to_vec(),
    })
    .map_err(bad)?;
    let files = found
        .files
        .iter()
        .zip(inputs)
        .zip(digests)
        .map(|((file, input), digest)| PreparedFile {
            path: file.path.clone(),
            rel: input.path,
            digest,
        })
        .collect();
    Ok(Prepared {
        files,
        manifest,
        stats,
        split_stats,
        ingested: None,
    })
}

/// Refuses a file whose key would be over S3's 1,024 bytes (at the widest version number).
pub fn check_keys(slug: &Slug, prepared: &Prepared) -> Result<(), PublishError> {
    let prefix = files_prefix(slug, 9_999_999_999).len();
    match prepared
        .files
        .iter()
        .find(|f| prefix + f.rel.as_str().len() > KEY_MAX_BYTES)
    {
        Some(f) => Err(bad(format!(
            "file '{}': its S3 key would be {} bytes, over S3's {KEY_MAX_BYTES}: shorten its path",
            f.rel,
            prefix + f.rel.as_str().len()
        ))),
        None => Ok(()),
    }
}
