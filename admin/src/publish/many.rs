//! `publish` of a version of many files ([`discover`](super::discover) found them): every file
//! checked and read before anything is written ([`prepare`]), then the version reserved (or a
//! cut-off run's taken again), the files uploaded in parallel, the manifest and the version
//! recorded, and the version activated.
//!
//! **Object keys.** Each file goes to `datasets/<slug>/v<n>/files/<path as published>`
//! ([`files_prefix`]): the version's prefix and the file's path, as it stands, so that a reader
//! of the URLs' paths (DuckDB's Hive partitioning) finds the partitions in them. The version
//! record's `s3_key` is that prefix (ending in `/`); a file's key is the prefix followed by its
//! path. A single-file version keeps `datasets/<slug>/v<n>/<sha256>.parquet`.
//!
//! **Resuming.** Right after reserving version `n`, and before any upload, the publish writes
//! its plan, `datasets/<slug>/v<n>/publish.json` ([`plan_key`]): the manifest hash of the files
//! it is about to upload (paths, splits, sizes, rows and SHA-256s). A run cut off before the
//! version was recorded leaves `n` reserved and unrecorded; running the same publish again
//! (the same files) reserves nothing new: `n` is taken again when it is still the dataset's
//! latest reservation, no version item records it, and its plan holds the same manifest hash
//! ([`catalog_writer::publish::Resumed`]). The re-run lists the prefix once (ListObjectsV2,
//! 1,000 keys a request) and, for each file already there, compares size and SHA-256
//! (HeadObject with checksum mode, the composite checksum for a multipart upload): the same
//! file is skipped; one whose checksum the server does not report is uploaded again (same
//! bytes, same key, a version nobody reads yet); another object is refused, never overwritten.
//! A re-run with other files, or after another publish reserved a version, takes a new number
//! and uploads everything: the cut-off run's objects stay under their unrecorded version's
//! prefix until `datasets delete` (which deletes the dataset's whole prefix).

use std::collections::{BTreeMap, HashMap};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use catalog::files::partition::check_not_columns;
use catalog::files::{
    FileInput, Manifest, ManifestInput, PartitionType, PartitionValue, RelPath, SplitName,
};
use catalog::input::Slug;
use catalog::records::ActiveVersion;
use catalog_writer::{NewVersion, Publication, WriteError};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::discover::Discovered;
use super::upload::{bytes_bar, list_present, upload_all, Digest, FileUpload, Uploaded};
use super::{fit, MetaInput, PublishError, Publisher, WIDEST};
use crate::stats::{scan_files, summarize_partitioned, FileStats, Partitions, StatsError};

/// The prefix of version `version`'s files: `datasets/<slug>/v<n>/files/`.
pub fn files_prefix(slug: &Slug, version: u64) -> String {
    format!("datasets/{slug}/v{version}/files/")
}

/// Where a publish of many files writes its plan: `datasets/<slug>/v<n>/publish.json`.
pub fn plan_key(slug: &Slug, version: u64) -> String {
    format!("datasets/{slug}/v{version}/publish.json")
}

/// S3's longest object key, in bytes.
const KEY_MAX_BYTES: usize = 1024;

/// What a publish of many files writes before its first upload, to find its version again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The manifest hash of the files to upload.
    pub manifest_sha256: String,
    pub files: usize,
    pub bytes: u64,
}

/// One file, ready to go.
#[derive(Debug, Clone)]
pub struct PreparedFile {
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

    /// What to upload for version `version` of `slug`.
    pub fn uploads(&self, slug: &Slug, version: u64) -> Vec<FileUpload> {
        let prefix = files_prefix(slug, version);
        self.files
            .iter()
            .map(|f| FileUpload {
                path: f.path.clone(),
                key: format!("{prefix}{}", f.rel),
                digest: f.digest.clone(),
            })
            .collect()
    }
}

fn bad(e: impl std::fmt::Display) -> PublishError {
    PublishError::BadInput(e.to_string())
}

/// The files' digests, read `workers` at a time.
fn digest_all(paths: &[PathBuf], workers: usize) -> Result<Vec<Digest>, PublishError> {
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
    let paths: Vec<PathBuf> = found.files.iter().map(|f| f.path.clone()).collect();
    let (scanned, stats, digests) = tokio::task::spawn_blocking(move || {
        // The footers first: files that disagree are refused before a long read.
        let scanned = scan_files(&paths)?;
        let names: Vec<String> = scanned
            .schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        check_not_columns(&columns, &names).map_err(bad)?;
        let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
        let partitions = Partitions {
            columns: &columns,
            values: &values,
        };
        let (stats, digests) = std::thread::scope(|scope| {
            let digests = scope.spawn(|| digest_all(&paths, workers));
            let stats = summarize_partitioned(&paths, partitions);
            (stats, digests.join())
        });
        let digests = digests.map_err(|_| PublishError::BadFile(StatsError::Panicked))??;
        Ok::<_, PublishError>((scanned, stats?, digests))
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

/// How a publish of many files goes.
#[derive(Debug, Clone)]
pub struct FilesOptions {
    /// How many files go up at once.
    pub parallel: usize,
    /// Partition columns' types given by the publisher (`--partition-type KEY=TYPE`); the others
    /// are inferred from the values.
    pub partition_types: Vec<(String, PartitionType)>,
}

impl Default for FilesOptions {
    fn default() -> Self {
        Self {
            parallel: super::upload::DEFAULT_PARALLEL,
            partition_types: Vec::new(),
        }
    }
}

/// What a publish of many files did.
#[derive(Debug, Clone)]
pub struct PublishedFiles {
    pub slug: Slug,
    pub id: uuid::Uuid,
    pub version: u64,
    /// The version's `s3_key`: its files' prefix.
    pub prefix: String,
    /// The manifest hash, the version's `sha256`.
    pub sha256: String,
    pub files: usize,
    /// Each split's name and number of files, in the manifest's order.
    pub splits: Vec<(String, u64)>,
    pub rows: u64,
    pub bytes: u64,
    pub uploaded: Uploaded,
    /// Whether the version was a cut-off run's, taken again.
    pub resumed: bool,
    pub stats: FileStats,
    pub histograms_left_out: bool,
}

impl Publisher {
    /// Publishes the files found as the next version of `slug` (module docs): checked and read
    /// first ([`prepare`]), nothing written on bad input; uploaded `parallel` at a time.
    pub async fn publish_files(
        &self,
        found: &Discovered,
        slug: &Slug,
        input: MetaInput,
        new_only: bool,
        options: &FilesOptions,
        now: DateTime<Utc>,
    ) -> Result<PublishedFiles, PublishError> {
        let provisional = input
            .clone()
            .resolve(self.writer.dataset_meta(slug).await?)?;
        let mut prepared = prepare(found, &options.partition_types).await?;
        check_keys(slug, &prepared)?;
        let plan = prepared.plan();
        let (rows, bytes) = (prepared.rows(), prepared.bytes());
        let columns: Vec<String> = prepared
            .stats
            .columns
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let version_of = |number: u64, schema_json: String| NewVersion {
            active: ActiveVersion {
                version: number,
                s3_key: files_prefix(slug, number),
                size: bytes,
                row_count: rows,
                columns: columns.clone(),
                sha256: plan.manifest_sha256.clone(),
                published_at: now,
            },
            schema_json,
        };
        let (_schema_json, histograms_left_out) =
            fit(slug, &provisional, &mut prepared.stats, |schema| {
                version_of(WIDEST, schema)
            })?;

        let publication = Publication {
            slug,
            meta: &provisional,
            id: None,
            new_only,
            now,
        };
        let resumed = self
            .writer
            .reserve_or_resume(publication, |version| self.holds_plan(slug, version, &plan))
            .await
            .map_err(|e| match e {
                PublishError::Write(WriteError::SlugTaken(_)) => taken(slug),
                other => other,
            })?;
        let version = resumed.reserved.version;
        let present = if resumed.resumed {
            list_present(&self.s3, &self.bucket, &files_prefix(slug, version)).await?
        } else {
            self.put_plan(slug, version, &plan).await?;
            BTreeMap::new()
        };
        let uploads = prepared.uploads(slug, version);
        let bar = std::io::stdout()
            .is_terminal()
            .then(|| bytes_bar(bytes, "uploading"));
        let uploaded = upload_all(
            &self.s3,
            &self.bucket,
            &uploads,
            &present,
            options.parallel,
            bar.as_ref(),
        )
        .await;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        let uploaded = uploaded?;
        let splits = prepared
            .manifest
            .summary
            .splits
            .iter()
            .map(|s| (s.name.to_string(), s.files))
            .collect();
        let published = PublishedFiles {
            slug: slug.clone(),
            id: resumed.reserved.id,
            version,
            prefix: files_prefix(slug, version),
            sha256: plan.manifest_sha256.clone(),
            files: plan.files,
            splits,
            rows,
            bytes,
            uploaded,
            resumed: resumed.resumed,
            stats: prepared.stats,
            histograms_left_out,
        };
        // Recording the manifest and the version, then activating it, needs the manifest's
        // writer (catalog_writer's manifest storage), which this publish does not have yet.
        Err(PublishError::NotRecorded(Box::new(published)))
    }

    /// Whether version `version`'s plan is `plan` (none: not this publish's).
    async fn holds_plan(
        &self,
        slug: &Slug,
        version: u64,
        plan: &Plan,
    ) -> Result<bool, PublishError> {
        let key = plan_key(slug, version);
        let got = self
            .s3
            .get_object()
            .bucket(&self.bucket)
            .key(&key)
            .send()
            .await;
        let body = match got {
            Ok(out) => out.body.collect().await.map_err(|e| {
                PublishError::Upload(format!("reading s3://{}/{key}: {e}", self.bucket))
            })?,
            Err(e) if e.as_service_error().is_some_and(|e| e.is_no_such_key()) => return Ok(false),
            Err(e) => {
                return Err(PublishError::Upload(
                    aws_sdk_s3::error::DisplayErrorContext(e).to_string(),
                ))
            }
        };
        Ok(serde_json::from_slice::<Plan>(&body.into_bytes()).is_ok_and(|p| &p == plan))
    }

    async fn put_plan(&self, slug: &Slug, version: u64, plan: &Plan) -> Result<(), PublishError> {
        let body = serde_json::to_vec(plan).map_err(bad)?;
        self.s3
            .put_object()
            .bucket(&self.bucket)
            .key(plan_key(slug, version))
            .content_type("application/json")
            .body(body.into())
            .send()
            .await
            .map(|_| ())
            .map_err(|e| {
                PublishError::Upload(aws_sdk_s3::error::DisplayErrorContext(e).to_string())
            })
    }
}

/// `--partition-type KEY=TYPE`: a partition column's type, `int64`, `date` or `string`.
pub fn parse_partition_type(raw: &str) -> Result<(String, PartitionType), PublishError> {
    let (key, kind) = raw
        .split_once('=')
        .ok_or_else(|| bad(format!("--partition-type {raw}: expected KEY=TYPE")))?;
    let kind = PartitionType::parse(kind).ok_or_else(|| {
        bad(format!(
            "--partition-type {raw}: the type is int64, date or string"
        ))
    })?;
    Ok((key.to_owned(), kind))
}

/// The refusal of `--new` on a slug that serves a version.
pub(crate) fn taken(slug: &Slug) -> PublishError {
    PublishError::BadInput(format!(
        "slug '{slug}' is already taken by a published dataset (drop --new to publish a new version of it)"
    ))
}
