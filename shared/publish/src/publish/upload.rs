//! Uploads to the data bucket: one file ([`put_file`]: a PUT, or a multipart upload above
//! [`PART_SIZE`], with its SHA-256 for S3 to verify), and the files of a version in parallel
//! ([`upload_all`]: at most a given number at a time, skipping those a cut-off run already put).

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use aws_sdk_s3::primitives::ByteStream;
use aws_sdk_s3::types::{ChecksumAlgorithm, ChecksumMode, CompletedMultipartUpload, CompletedPart};
use sha2::{Digest as _, Sha256};

use super::PublishError;

/// Files up to this size go up in one PUT; larger ones in parts of this size.
pub const PART_SIZE: usize = 16 * 1024 * 1024;

/// How many files go up at once by default (`--parallel`).
pub const DEFAULT_PARALLEL: usize = 8;

fn s3_error<E>(e: aws_sdk_s3::error::SdkError<E>) -> String
where
    E: std::error::Error + std::fmt::Debug + 'static,
{
    aws_sdk_s3::error::DisplayErrorContext(e).to_string()
}

/// A progress bar over `total` bytes, as the single-file upload has always shown it.
pub fn bytes_bar(total: u64, what: &str) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(&format!(
            "{what} {{bar:40}} {{bytes}}/{{total_bytes}} {{bytes_per_sec}} eta {{eta}}"
        ))
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// One PUT for a file up to [`PART_SIZE`], with the whole file's SHA-256 (S3 refuses a body
/// that does not hash to it); a multipart upload for a larger one, each part with its own
/// SHA-256 (the upload aborted on failure). `bar`, if given, advances with each part.
pub async fn put_file(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    path: &Path,
    key: &str,
    size: u64,
    sha256: &str,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<(), PublishError> {
    put_file_with(s3, bucket, path, key, size, sha256, &Metadata::new(), bar).await
}

/// User metadata of an object (`x-amz-meta-<name>`), by name.
pub type Metadata = std::collections::HashMap<String, String>;

/// [`put_file`], with user metadata on the object.
#[allow(clippy::too_many_arguments)]
pub async fn put_file_with(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    path: &Path,
    key: &str,
    size: u64,
    sha256: &str,
    metadata: &Metadata,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<(), PublishError> {
    let metadata = (!metadata.is_empty()).then(|| metadata.clone());
    if size <= PART_SIZE as u64 {
        let body = ByteStream::from_path(path)
            .await
            .map_err(|e| PublishError::Upload(e.to_string()))?;
        s3.put_object()
            .bucket(bucket)
            .key(key)
            .content_type("application/vnd.apache.parquet")
            .set_checksum_sha256(catalog_aws::s3::checksum_sha256(sha256))
            .set_metadata(metadata)
            .body(body)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PublishError::Upload(s3_error(e)))
    } else {
        multipart(s3, bucket, path, key, metadata, bar).await
    }
}

async fn multipart(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    path: &Path,
    key: &str,
    metadata: Option<Metadata>,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<(), PublishError> {
    use tokio::io::AsyncReadExt;
    let err = |e: &dyn std::fmt::Display| PublishError::Upload(e.to_string());
    let created = s3
        .create_multipart_upload()
        .bucket(bucket)
        .key(key)
        .content_type("application/vnd.apache.parquet")
        .set_metadata(metadata)
        // Each part carries its SHA-256, which S3 checks on receipt (and the completion
        // lists them, which S3 checks against what it received).
        .checksum_algorithm(ChecksumAlgorithm::Sha256)
        .send()
        .await
        .map_err(|e| PublishError::Upload(s3_error(e)))?;
    let upload_id = created
        .upload_id()
        .ok_or_else(|| PublishError::Upload("no upload id".into()))?
        .to_owned();
    let parts = async {
        let mut file = tokio::fs::File::open(path).await.map_err(|e| err(&e))?;
        let mut parts = Vec::new();
        let mut number = 1;
        loop {
            let mut buf = Vec::with_capacity(PART_SIZE);
            let read = (&mut file)
                .take(PART_SIZE as u64)
                .read_to_end(&mut buf)
                .await
                .map_err(|e| err(&e))?;
            if read == 0 {
                break;
            }
            let checksum = part_checksum(&buf);
            let part = s3
                .upload_part()
                .bucket(bucket)
                .key(key)
                .upload_id(&upload_id)
                .part_number(number)
                .checksum_sha256(&checksum)
                .body(ByteStream::from(buf))
                .send()
                .await
                .map_err(|e| PublishError::Upload(s3_error(e)))?;
            parts.push(
                CompletedPart::builder()
                    .part_number(number)
                    .set_e_tag(part.e_tag().map(str::to_owned))
                    .checksum_sha256(checksum)
                    .build(),
            );
            if let Some(bar) = bar {
                bar.inc(read as u64);
            }
            number += 1;
        }
        Ok::<_, PublishError>(parts)
    }
    .await;
    let completed = match parts {
        Ok(parts) => s3
            .complete_multipart_upload()
            .bucket(bucket)
            .key(key)
            .upload_id(&upload_id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await
            .map(|_| ())
            .map_err(|e| PublishError::Upload(s3_error(e))),
        Err(e) => Err(e),
    };
    if completed.is_err() {
        // Best effort: S3's lifecycle rule also aborts stale uploads after 7 days.
        let _ = s3
            .abort_multipart_upload()
            .bucket(bucket)
            .key(key)
            .upload_id(&upload_id)
            .send()
            .await;
    }
    completed
}

/// A part's `x-amz-checksum-sha256`: the base64 of its SHA-256.
pub(crate) fn part_checksum(bytes: &[u8]) -> String {
    aws_smithy_types::base64::encode(Sha256::digest(bytes))
}

/// A file's size and SHA-256, and the SHA-256 of each of its [`PART_SIZE`] parts when it is
/// uploaded in parts: what S3 reports for the object once uploaded ([`Digest::s3_checksum`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub size: u64,
    /// The whole file's SHA-256, 64 lowercase hex digits.
    pub sha256: String,
    /// Each part's SHA-256, for a file over [`PART_SIZE`] (empty otherwise).
    pub parts: Vec<[u8; 32]>,
}

impl Digest {
    /// Reads the file once.
    pub fn of_file(path: &Path) -> std::io::Result<Digest> {
        let mut file = std::fs::File::open(path)?;
        let mut whole = Sha256::new();
        let mut part = Sha256::new();
        let mut in_part = 0usize;
        let mut parts = Vec::new();
        let mut buf = vec![0u8; 1 << 20];
        let mut size = 0u64;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            size += n as u64;
            whole.update(&buf[..n]);
            // Parts are PART_SIZE bytes, a multiple of the buffer's size.
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                let take = rest.len().min(PART_SIZE - in_part);
                part.update(&rest[..take]);
                in_part += take;
                rest = &rest[take..];
                if in_part == PART_SIZE {
                    parts.push(part.finalize_reset().into());
                    in_part = 0;
                }
            }
        }
        if in_part > 0 {
            parts.push(part.finalize().into());
        }
        if size <= PART_SIZE as u64 {
            parts.clear();
        }
        Ok(Digest {
            size,
            sha256: hex::encode(whole.finalize()),
            parts,
        })
    }

    /// The `x-amz-checksum-sha256` S3 reports (HeadObject with checksum mode) for the object
    /// [`put_file`] made of this file: the whole file's for one PUT; for a multipart upload the
    /// composite one, the SHA-256 of the parts' SHA-256s followed by `-<number of parts>`.
    pub fn s3_checksum(&self) -> String {
        if self.parts.is_empty() {
            return catalog_aws::s3::checksum_sha256(&self.sha256).unwrap_or_default();
        }
        let mut composite = Sha256::new();
        for part in &self.parts {
            composite.update(part);
        }
        format!(
            "{}-{}",
            aws_smithy_types::base64::encode(composite.finalize()),
            self.parts.len()
        )
    }
}

/// A file of a version, to upload to its key.
#[derive(Debug, Clone)]
pub struct FileUpload {
    pub path: PathBuf,
    pub key: String,
    pub digest: Digest,
}

/// What [`upload_all`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Uploaded {
    /// Files put (PUT or multipart upload).
    pub put: usize,
    /// Files already there with the same size and checksum, left as they were.
    pub skipped: usize,
    pub bytes_put: u64,
}

/// What an object already at a file's key holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Present {
    /// The same size and checksum: nothing to upload.
    Same,
    /// The same size, but the server reports no SHA-256 to compare (s3s-fs after a multipart
    /// upload): uploaded again, with the same bytes.
    Unverified,
    /// Something else: refused, never overwritten.
    Different(String),
}

/// The objects under `prefix` and their sizes: ListObjectsV2, 1,000 keys a request.
pub async fn list_present(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    prefix: &str,
) -> Result<BTreeMap<String, u64>, PublishError> {
    let mut present = BTreeMap::new();
    let mut pages = s3
        .list_objects_v2()
        .bucket(bucket)
        .prefix(prefix)
        .into_paginator()
        .send();
    while let Some(page) = pages.next().await {
        let page = page.map_err(|e| PublishError::Upload(s3_error(e)))?;
        for object in page.contents() {
            if let Some(key) = object.key() {
                present.insert(key.to_owned(), object.size().unwrap_or(0).max(0) as u64);
            }
        }
    }
    Ok(present)
}

/// Compares the object at `file.key` (known to exist, of `size` bytes) with the file: its size,
/// then its SHA-256 as S3 reports it (HeadObject with checksum mode).
pub async fn compare(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    file: &FileUpload,
    size: u64,
) -> Result<Present, PublishError> {
    if size != file.digest.size {
        return Ok(Present::Different(format!(
            "{size} bytes, not {}",
            file.digest.size
        )));
    }
    let head = s3
        .head_object()
        .bucket(bucket)
        .key(&file.key)
        .checksum_mode(ChecksumMode::Enabled)
        .send()
        .await
        .map_err(|e| PublishError::Upload(s3_error(e)))?;
    Ok(match head.checksum_sha256() {
        None => Present::Unverified,
        Some(c) if c == file.digest.s3_checksum() => Present::Same,
        Some(c) => Present::Different(format!(
            "SHA-256 checksum {c}, not {}",
            file.digest.s3_checksum()
        )),
    })
}

enum Outcome {
    Put(u64),
    Skipped,
}

async fn upload_one(
    s3: aws_sdk_s3::Client,
    bucket: String,
    file: FileUpload,
    present: Option<u64>,
    metadata: Metadata,
    bar: Option<indicatif::ProgressBar>,
) -> Result<Outcome, PublishError> {
    if let Some(size) = present {
        match compare(&s3, &bucket, &file, size).await? {
            Present::Same => {
                if let Some(bar) = &bar {
                    bar.inc(file.digest.size);
                }
                return Ok(Outcome::Skipped);
            }
            Present::Unverified => {}
            Present::Different(what) => {
                return Err(PublishError::BadInput(format!(
                    "s3://{bucket}/{} already holds another object ({what}): it is not \
                     overwritten",
                    file.key
                )))
            }
        }
    }
    let size = file.digest.size;
    put_file_with(
        &s3,
        &bucket,
        &file.path,
        &file.key,
        size,
        &file.digest.sha256,
        &metadata,
        bar.as_ref(),
    )
    .await
    .map_err(|e| match e {
        PublishError::Upload(why) => {
            PublishError::Upload(format!("{}: {why}", file.path.display()))
        }
        other => other,
    })?;
    if size <= PART_SIZE as u64 {
        if let Some(bar) = &bar {
            bar.inc(size);
        }
    }
    Ok(Outcome::Put(size))
}

/// Uploads `files`, at most `parallel` at a time. A file whose key is in `present` (a cut-off
/// run's objects, [`list_present`]) is compared first ([`compare`]) and skipped when it is the
/// same. On the first failure no more uploads start, those running finish, and the error says
/// how many files are up: running the same publish again uploads only the rest.
pub async fn upload_all(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    files: &[FileUpload],
    present: &BTreeMap<String, u64>,
    parallel: usize,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<Uploaded, PublishError> {
    upload_all_with(
        s3,
        bucket,
        files,
        present,
        parallel,
        |_| Metadata::new(),
        bar,
    )
    .await
}

/// [`upload_all`], each object put with the user metadata `metadata` gives for its file.
pub async fn upload_all_with(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    files: &[FileUpload],
    present: &BTreeMap<String, u64>,
    parallel: usize,
    metadata: impl Fn(&FileUpload) -> Metadata,
    bar: Option<&indicatif::ProgressBar>,
) -> Result<Uploaded, PublishError> {
    let mut running = tokio::task::JoinSet::new();
    let mut next = files.iter();
    let mut done = Uploaded::default();
    let mut failed: Option<PublishError> = None;
    loop {
        while failed.is_none() && running.len() < parallel.max(1) {
            let Some(file) = next.next() else { break };
            running.spawn(upload_one(
                s3.clone(),
                bucket.to_owned(),
                file.clone(),
                present.get(&file.key).copied(),
                metadata(file),
                bar.cloned(),
            ));
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        match joined {
            Ok(Ok(Outcome::Put(bytes))) => {
                done.put += 1;
                done.bytes_put += bytes;
            }
            Ok(Ok(Outcome::Skipped)) => done.skipped += 1,
            Ok(Err(e)) => {
                failed.get_or_insert(e);
            }
            Err(e) => {
                failed.get_or_insert(PublishError::Upload(format!("an upload task failed: {e}")));
            }
        }
    }
    match failed {
        None => Ok(done),
        Some(PublishError::Upload(why)) => Err(PublishError::Upload(format!(
            "{why}; {} of {} files are uploaded: running the same publish again uploads only the \
             rest",
            done.put + done.skipped,
            files.len()
        ))),
        Some(other) => Err(other),
    }
}

#[cfg(test)]
mod tests;
