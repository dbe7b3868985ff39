//! `publish` of a version of many files ([`discover`](super::discover) found them): every file
//! checked and read before anything is written ([`prepare`]), then the version reserved (or a
//! cut-off run's taken again), the files uploaded in parallel, the manifest and the version
//! recorded, and the version activated.
//!
//! **Object keys.** Each file goes to `datasets/<slug>/v<n>/files/<path as published>`
//! ([`files_prefix`](super::keys::files_prefix)): the version's prefix and the file's path, as it stands, so that a reader
//! of the URLs' paths (DuckDB's Hive partitioning) finds the partitions in them. The version
//! record's `s3_key` is that prefix (ending in `/`); a file's key is the prefix followed by its
//! path. A single-file version keeps `datasets/<slug>/v<n>/<sha256>.parquet`.
//!
//! **Resuming.** Right after reserving version `n`, and before any upload, the publish writes
//! its plan, `datasets/<slug>/v<n>/publish.json` ([`plan_key`](super::keys::plan_key)): the manifest hash of the files
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

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Arc;

use catalog::files::PartitionType;
use catalog::input::Slug;
use catalog::records::ActiveVersion;
use catalog_writer::publish::StagedFiles;
use catalog_writer::{NewVersion, Publication, WriteError};
use chrono::{DateTime, Utc};

use super::discover::Discovered;
use super::keys::{files_prefix, plan_key, Plan};
use super::prepare::{bad, check_keys, prepare, uploads, Prepared, PreparedFile};
use super::upload::{bytes_bar, list_present, upload_all, Uploaded};
use super::{fit, MetaInput, PublishError, Publisher, WIDEST};
use catalog_stats::FileStats;

/// How a publish of many files goes.
#[derive(Debug, Clone)]
pub struct FilesOptions {
    /// How many files go up at once.
    pub parallel: usize,
    /// Partition columns' types given by the publisher (`--partition-type KEY=TYPE`); the others
    /// are inferred from the values.
    pub partition_types: Vec<(String, PartitionType)>,
    /// `stage publish --partials`: the statistics merged from these per-file partials
    /// ([`super::partials`]) instead of read.
    pub partials: Option<Vec<catalog_stats::partial::FilePartial>>,
}

impl Default for FilesOptions {
    fn default() -> Self {
        Self {
            parallel: super::upload::DEFAULT_PARALLEL,
            partition_types: Vec::new(),
            partials: None,
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
        self.publish_files_ingested(found, slug, input, new_only, options, now, None)
            .await
    }

    /// [`Publisher::publish_files`] of files converted from text inputs, the version recording
    /// `ingested` (what the conversion read, skipped and kept).
    #[allow(clippy::too_many_arguments)]
    pub async fn publish_files_ingested(
        &self,
        found: &Discovered,
        slug: &Slug,
        input: MetaInput,
        new_only: bool,
        options: &FilesOptions,
        now: DateTime<Utc>,
        ingested: Option<Arc<crate::ingest::record::Record>>,
    ) -> Result<PublishedFiles, PublishError> {
        let provisional = input
            .clone()
            .resolve(self.writer.dataset_meta(slug).await?)?;
        let mut prepared = prepare(found, &options.partition_types).await?;
        prepared.ingested = ingested.clone();
        let parallel = options.parallel;
        self.publish_prepared(
            prepared,
            slug,
            input,
            provisional,
            new_only,
            now,
            |files, version, present| async move {
                let uploads = uploads(&files, slug, version);
                let bytes = files.iter().map(|f| f.digest.size).sum();
                let bar = std::io::stdout()
                    .is_terminal()
                    .then(|| bytes_bar(bytes, "uploading"));
                let result = upload_all(
                    &self.s3,
                    &self.bucket,
                    &uploads,
                    &present,
                    parallel,
                    bar.as_ref(),
                )
                .await;
                if let Some(bar) = bar {
                    bar.finish_and_clear();
                }
                let uploaded = result?;
                // The inputs kept as they came (--keep-original), beside the files.
                if let Some(record) = &ingested {
                    self.put_originals(record, slug, version).await?;
                }
                Ok(uploaded)
            },
        )
        .await
    }

    /// The part of a publish of many files after the files are read ([`prepare`], or the
    /// staged objects' [`prepare_inputs`](super::prepare::prepare_inputs)): the version's fit
    /// checked, the version reserved (or a cut-off run's taken again, by its plan), the files
    /// put in place by `transfer` (given the files, the version's number and, on a resumed
    /// run, the objects already under its prefix with their sizes), the manifest and the
    /// version recorded and activated. Nothing is active until `transfer` succeeds.
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn publish_prepared<T, F>(
        &self,
        mut prepared: Prepared,
        slug: &Slug,
        input: MetaInput,
        provisional: catalog::records::DatasetMeta,
        new_only: bool,
        now: DateTime<Utc>,
        transfer: T,
    ) -> Result<PublishedFiles, PublishError>
    where
        T: FnOnce(Vec<PreparedFile>, u64, BTreeMap<String, u64>) -> F,
        F: std::future::Future<Output = Result<Uploaded, PublishError>>,
    {
        check_keys(slug, &prepared)?;
        let plan = prepared.plan();
        let (rows, bytes) = (prepared.rows(), prepared.bytes());
        let columns: Vec<String> = prepared
            .stats
            .columns
            .iter()
            .map(|c| c.name.clone())
            .collect();
        let ingested = prepared.ingested.clone();
        let version_of = |number: u64, schema_json: String| NewVersion {
            active: ActiveVersion {
                version: number,
                s3_key: files_prefix(slug, number),
                size: bytes,
                row_count: rows,
                columns: columns.clone(),
                sha256: plan.manifest_sha256.clone(),
                published_at: now,
                files: None,
                ingested: ingested.as_ref().map(|r| r.at(slug, number)),
            },
            schema_json,
        };
        // Measured with the manifest's summary, which the version item and, once active, the
        // dataset item and its alias carry in their `active` map.
        let summary = Arc::new(prepared.manifest.summary.clone());
        let (schema_json, histograms_left_out) =
            fit(slug, &provisional, &mut prepared.stats, |schema| {
                let mut widest = version_of(WIDEST, schema);
                widest.active.files = Some(summary.clone());
                widest
            })?;
        let splits = prepared
            .manifest
            .summary
            .splits
            .iter()
            .map(|s| (s.name.to_string(), s.files))
            .collect();
        let split_schemas = split_schemas(slug, &mut prepared.split_stats, histograms_left_out)?;
        let Prepared {
            files,
            manifest,
            stats,
            ..
        } = prepared;

        let publication = Publication {
            slug,
            meta: &provisional,
            id: None,
            new_only,
            now,
        };
        let mut uploaded = None;
        let done = &mut uploaded;
        let resumed = self
            .writer
            .publish_files(
                publication,
                |version| self.holds_plan(slug, version, &plan),
                |resumed| {
                    let (plan, version_of) = (&plan, &version_of);
                    async move {
                        let version = resumed.reserved.version;
                        // Fields not given keep what is stored *now*, as for a single file.
                        let meta = input.resolve(Some(resumed.reserved.stored.clone()))?;
                        let present = if resumed.resumed {
                            list_present(&self.s3, &self.bucket, &files_prefix(slug, version))
                                .await?
                        } else {
                            self.put_plan(slug, version, plan).await?;
                            BTreeMap::new()
                        };
                        *done = Some(transfer(files, version, present).await?);
                        Ok(StagedFiles {
                            version: version_of(version, schema_json),
                            meta,
                            manifest,
                            split_schemas,
                        })
                    }
                },
            )
            .await
            .map_err(|e| match e {
                PublishError::Write(WriteError::SlugTaken(_)) => taken(slug),
                other => other,
            })?;
        let version = resumed.reserved.version;
        Ok(PublishedFiles {
            slug: slug.clone(),
            id: resumed.reserved.id,
            version,
            prefix: files_prefix(slug, version),
            sha256: plan.manifest_sha256.clone(),
            files: plan.files,
            splits,
            rows,
            bytes,
            uploaded: uploaded.unwrap_or_default(),
            resumed: resumed.resumed,
            stats,
            histograms_left_out,
        })
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

/// Each split's statistics as the item beside the manifest stores them: without histograms
/// when the version's had to leave them out, or when a split's item would not fit DynamoDB's
/// item limit with them; a split whose statistics do not fit even then is refused before
/// anything is written.
fn split_schemas(
    slug: &Slug,
    splits: &mut [FileStats],
    histograms_left_out: bool,
) -> Result<Vec<String>, PublishError> {
    use catalog_aws::dynamo::codec::{item_size, ITEM_LIMIT_BYTES};
    use catalog_aws::dynamo::manifest::splits::split_stats_item;
    let json = |stats: &FileStats| {
        serde_json::to_string(&stats.columns).map_err(|e| PublishError::BadInput(e.to_string()))
    };
    let fits = |i: usize, schema: &str| {
        item_size(&split_stats_item(slug, WIDEST, i, schema)) <= ITEM_LIMIT_BYTES
    };
    let mut out = Vec::with_capacity(splits.len());
    for (i, stats) in splits.iter_mut().enumerate() {
        let mut schema = json(stats)?;
        if histograms_left_out || !fits(i, &schema) {
            for column in &mut stats.columns {
                column.histogram = None;
            }
            schema = json(stats)?;
        }
        if !fits(i, &schema) {
            return Err(PublishError::BadInput(format!(
                "{slug} cannot be published: the statistics of split {} would not fit \
                 DynamoDB's item limit; publish fewer columns",
                i + 1
            )));
        }
        out.push(schema);
    }
    Ok(out)
}
