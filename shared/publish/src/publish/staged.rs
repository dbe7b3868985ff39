//! Publishing in place: a version of many files made of Parquet objects already staged in the
//! catalog's bucket, under [`STAGING_PREFIX`], without their bytes travelling through the
//! operator's machine.
//!
//! 1. **Listing.** The objects under the prefix given (ListObjectsV2), their names relative to
//!    it taken as the paths as published, by the rules of a directory given to `publish`
//!    ([`discover_names`]): names with a segment starting with `.` or `_` skipped, names not
//!    ending in `.parquet` left out, the same splits (`--split`, the layouts) and Hive
//!    partitions. A staged CSV, TSV or JSON Lines object is refused: publishing in place takes
//!    Parquet only, and `publish` from disk converts the others.
//! 2. **Reading.** Each object's footer by ranged GETs (schema agreement, with the same
//!    message as a local publish; row counts; the per-file minimum, maximum and null counts,
//!    computed from the data only for columns whose footer lacks them), then the version's and
//!    each split's statistics by streaming the column chunks by ranged GETs, in parallel across
//!    files, in bounded memory ([`catalog_stats::remote`]: each chunk's bytes once a pass,
//!    several GETs in flight; a numeric column past `LIST_LIMIT` values read in one pass, not
//!    two): the same code as a local publish, so the same statistics. Every GET is conditioned on the ETag the listing gave.
//! 3. **SHA-256.** Each object's SHA-256, as the manifest records it: the full-object
//!    `x-amz-checksum-sha256` S3 reports for an object put in one request with it (as
//!    `catalog-admin stage upload` puts files up to 16 MiB); else the `catalog-sha256` metadata
//!    `stage upload` writes on the larger files it uploads in parts; else the object is read
//!    once in full to hash it (as objects staged without a checksum are).
//! 4. **Copying.** Each object is copied server-side into the version's keys
//!    (`datasets/<slug>/v<n>/files/<path>`), CopyObject up to [`COPY_MAX`] and
//!    UploadPartCopy of ranges above ([`copy`]), each conditioned on the listed ETag, several
//!    files at once; then the manifest and the version are recorded and the version activated,
//!    as for a publish from disk ([`Publisher::publish_prepared`]): nothing is active until
//!    every file is copied and recorded, and a failure leaves the previous version serving. A
//!    cut-off run taken again copies every file again (server-side).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use aws_sdk_s3::types::ChecksumMode;
use catalog::input::Slug;
use chrono::{DateTime, Utc};
use sha2::{Digest as _, Sha256};

use super::discover::{discover_names, Inputs};
use super::many::{FilesOptions, PublishedFiles};
use super::prepare::{bad, prepare_inputs};
use super::upload::{Digest, Uploaded};
use super::{MetaInput, PublishError, Publisher};
use catalog_stats::remote::{ReadCounts, RemoteObject};

pub mod copy;
pub mod upload;

pub use copy::{CopyOptions, COPY_MAX, COPY_PART_MIN};

/// The prefix of the catalog's bucket that operators stage data under (template.yaml's
/// lifecycle rule expires it; only the principals it names may write it).
pub const STAGING_PREFIX: &str = "staging/";

/// The metadata key `stage upload` writes a file's SHA-256 under (as `x-amz-meta-…`).
pub const SHA256_METADATA: &str = "catalog-sha256";

/// A staged prefix: `s3://<bucket>/staging/<…>/` or `staging/<…>/` in the catalog's bucket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StagedPrefix {
    pub bucket: String,
    /// Starts with [`STAGING_PREFIX`], ends with `/`.
    pub prefix: String,
}

impl StagedPrefix {
    /// Parses `raw` against the catalog's bucket: another bucket, or a prefix outside
    /// [`STAGING_PREFIX`], is refused.
    pub fn parse(raw: &str, bucket: &str) -> Result<Self, PublishError> {
        let (given_bucket, path) = match raw.strip_prefix("s3://") {
            Some(rest) => rest.split_once('/').unwrap_or((rest, "")),
            None => (bucket, raw),
        };
        if given_bucket != bucket {
            return Err(bad(format!(
                "{raw}: staged data is published from the catalog's bucket, {bucket}, not \
                 {given_bucket}"
            )));
        }
        let mut prefix = path.trim_start_matches('/').to_owned();
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        if !prefix.starts_with(STAGING_PREFIX)
            || prefix.len() == STAGING_PREFIX.len()
            || prefix.split('/').any(|s| s == ".." || s == ".")
        {
            return Err(bad(format!(
                "{raw}: give a prefix under s3://{bucket}/{STAGING_PREFIX} (as \
                 s3://{bucket}/{STAGING_PREFIX}sales/), where operators stage data"
            )));
        }
        Ok(Self {
            bucket: bucket.to_owned(),
            prefix,
        })
    }

    pub fn url(&self) -> String {
        format!("s3://{}/{}", self.bucket, self.prefix)
    }
}

/// One object listed under a staged prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub key: String,
    pub size: u64,
    pub etag: Option<String>,
}

/// Every object under `prefix` (ListObjectsV2, 1,000 keys a request).
pub async fn list_staged(
    s3: &aws_sdk_s3::Client,
    staged: &StagedPrefix,
) -> Result<Vec<Listed>, PublishError> {
    let mut listed = Vec::new();
    let mut pages = s3
        .list_objects_v2()
        .bucket(&staged.bucket)
        .prefix(&staged.prefix)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| {
            PublishError::Upload(format!(
                "listing {}: {}",
                staged.url(),
                aws_sdk_s3::error::DisplayErrorContext(e)
            ))
        })?;
        for object in page.contents() {
            if let Some(key) = object.key() {
                listed.push(Listed {
                    key: key.to_owned(),
                    size: object.size().unwrap_or(0).max(0) as u64,
                    etag: object.e_tag().map(str::to_owned),
                });
            }
        }
    }
    Ok(listed)
}

/// Whether a name is of a file `publish` converts from disk (CSV, TSV, JSON Lines, plain or
/// compressed) rather than Parquet.
fn convertible(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    let plain = [".gz", ".zst", ".zstd"]
        .iter()
        .find_map(|c| lower.strip_suffix(c))
        .unwrap_or(&lower);
    [".csv", ".tsv", ".jsonl", ".ndjson", ".json"]
        .iter()
        .any(|e| plain.ends_with(e))
}

/// What a publish in place did, beyond a publish of many files.
#[derive(Debug, Clone)]
pub struct PublishedInPlace {
    pub published: PublishedFiles,
    pub source: String,
    /// Objects listed under the prefix but left out (not `*.parquet`).
    pub ignored: Vec<String>,
    /// Objects whose SHA-256 was computed by reading them in full (no full-object checksum or
    /// `catalog-sha256` metadata).
    pub hashed: usize,
    /// Objects copied with UploadPartCopy (over the copy threshold).
    pub multipart: usize,
    /// Ranged GETs made and bytes they read (footers, column chunks and hashing).
    pub get_requests: u64,
    pub get_bytes: u64,
}

/// An object's SHA-256 from what S3 reports (module docs, 3), or `None` when it must be read.
fn reported_sha256(head: &aws_sdk_s3::operation::head_object::HeadObjectOutput) -> Option<String> {
    if let Some(full) = head.checksum_sha256().filter(|c| !c.contains('-')) {
        if let Ok(raw) = aws_smithy_types::base64::decode(full) {
            if raw.len() == 32 {
                return Some(hex::encode(raw));
            }
        }
    }
    head.metadata()
        .and_then(|m| m.get(SHA256_METADATA))
        .map(|s| s.to_ascii_lowercase())
        .filter(|s| s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// One object's size and SHA-256 (module docs, 3); whether it was read in full.
async fn digest_object(object: &RemoteObject) -> Result<(Digest, bool), String> {
    let head = object
        .s3
        .head_object()
        .bucket(&object.bucket)
        .key(&object.key)
        .checksum_mode(ChecksumMode::Enabled)
        .send()
        .await
        .map_err(|e| aws_sdk_s3::error::DisplayErrorContext(e).to_string())?;
    let digest = |sha256| Digest {
        size: object.size,
        sha256,
        parts: Vec::new(),
    };
    if let Some(sha256) = reported_sha256(&head) {
        return Ok((digest(sha256), false));
    }
    let mut got = object
        .s3
        .get_object()
        .bucket(&object.bucket)
        .key(&object.key)
        .set_if_match(object.etag.clone())
        .send()
        .await
        .map_err(|e| aws_sdk_s3::error::DisplayErrorContext(e).to_string())?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    while let Some(chunk) = got.body.try_next().await.map_err(|e| e.to_string())? {
        size += chunk.len() as u64;
        hasher.update(&chunk);
    }
    object
        .counts
        .requests
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    object
        .counts
        .bytes
        .fetch_add(size, std::sync::atomic::Ordering::Relaxed);
    if size != object.size {
        return Err(format!("{size} bytes read, {} listed", object.size));
    }
    Ok((digest(hex::encode(hasher.finalize())), true))
}

/// Every object's digest, `parallel` at a time, in order; and how many were read in full.
async fn digest_all(
    objects: &[RemoteObject],
    parallel: usize,
) -> Result<(Vec<Digest>, usize), PublishError> {
    let semaphore = Arc::new(tokio::sync::Semaphore::new(parallel.max(1)));
    let mut running = tokio::task::JoinSet::new();
    for (i, object) in objects.iter().cloned().enumerate() {
        let semaphore = semaphore.clone();
        running.spawn(async move {
            let _permit = semaphore.acquire_owned().await;
            let digest = digest_object(&object).await;
            (i, digest.map_err(|why| format!("{}: {why}", object.url())))
        });
    }
    let mut digests: Vec<Option<Digest>> = vec![None; objects.len()];
    let mut hashed = 0;
    while let Some(joined) = running.join_next().await {
        let (i, digest) =
            joined.map_err(|e| PublishError::Upload(format!("a checksum task failed: {e}")))?;
        let (digest, read) = digest.map_err(PublishError::Upload)?;
        hashed += usize::from(read);
        digests[i] = Some(digest);
    }
    let digests = digests.into_iter().collect::<Option<Vec<_>>>();
    Ok((digests.unwrap_or_default(), hashed))
}

impl Publisher {
    /// Publishes the Parquet objects under `staged` as the next version of `slug`, in place
    /// (module docs). `inputs` gives `--split` and `--no-splits` (its paths are unused).
    #[allow(clippy::too_many_arguments)]
    pub async fn publish_staged(
        &self,
        staged: &StagedPrefix,
        inputs: &Inputs,
        slug: &Slug,
        input: MetaInput,
        new_only: bool,
        options: &FilesOptions,
        copy_options: &CopyOptions,
        now: DateTime<Utc>,
    ) -> Result<PublishedInPlace, PublishError> {
        let provisional = input
            .clone()
            .resolve(self.writer.dataset_meta(slug).await?)?;
        let listed = list_staged(&self.s3, staged).await?;
        if listed.is_empty() {
            return Err(bad(format!(
                "no objects under {}: stage the files there first (catalog-admin stage upload \
                 DIR {})",
                staged.url(),
                staged.url()
            )));
        }
        if let Some(csv) = listed.iter().find(|o| convertible(&o.key)) {
            return Err(bad(format!(
                "s3://{}/{} is CSV, TSV or JSON Lines: publishing in place takes Parquet \
                 only; publish it from disk (catalog-admin publish FILE --slug {slug}), which \
                 converts it",
                staged.bucket, csv.key
            )));
        }
        let by_key: BTreeMap<&str, &Listed> = listed.iter().map(|o| (o.key.as_str(), o)).collect();
        let names = listed
            .iter()
            .map(|o| {
                (
                    PathBuf::from(&o.key),
                    o.key[staged.prefix.len()..].to_owned(),
                )
            })
            .collect();
        let found = discover_names(PathBuf::from(staged.url()), names, inputs)?;
        let handle = tokio::runtime::Handle::current();
        let counts = Arc::new(ReadCounts::default());
        let objects: Vec<RemoteObject> = found
            .files
            .iter()
            .map(|f| {
                let key = f.path.to_string_lossy().into_owned();
                let listed = by_key.get(key.as_str());
                RemoteObject {
                    s3: self.s3.clone(),
                    bucket: staged.bucket.clone(),
                    size: listed.map_or(0, |o| o.size),
                    etag: listed.and_then(|o| o.etag.clone()),
                    key,
                    handle: handle.clone(),
                    counts: counts.clone(),
                }
            })
            .collect();
        let parallel = options.parallel;
        let hashed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let hashed_in = hashed.clone();
        let digest_handle = handle.clone();
        let partials = match options.partials.as_deref() {
            Some(p) => Some(super::partials::arrange(p, &objects).await?),
            None => None,
        };
        let prepared = prepare_inputs(
            &found,
            &options.partition_types,
            objects.clone(),
            partials,
            move |objects: &[RemoteObject]| {
                let (digests, read) = digest_handle.block_on(digest_all(objects, parallel))?;
                hashed_in.store(read, std::sync::atomic::Ordering::Relaxed);
                Ok(digests)
            },
        )
        .await?;
        let multipart = objects
            .iter()
            .filter(|o| o.size > copy_options.threshold)
            .count();
        let published = self
            .publish_prepared(
                prepared,
                slug,
                input,
                provisional,
                new_only,
                now,
                |files, version, _present| async move {
                    let copies = copy::plan(&files, &objects, slug, version)?;
                    let copied =
                        copy::copy_all(&self.s3, &self.bucket, copies, parallel, copy_options)
                            .await?;
                    Ok(Uploaded {
                        put: copied.0,
                        skipped: 0,
                        bytes_put: copied.1,
                    })
                },
            )
            .await?;
        Ok(PublishedInPlace {
            published,
            source: staged.url(),
            ignored: found.ignored,
            hashed: hashed.load(std::sync::atomic::Ordering::Relaxed),
            multipart,
            get_requests: counts.requests(),
            get_bytes: counts.bytes(),
        })
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_reads;
