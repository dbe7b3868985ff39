//! `catalog-admin stage upload`: Parquet files from disk to a staged prefix, as `publish`
//! uploads a version's files ([`upload_all`]): several at once, each with its SHA-256 for S3
//! to verify (one PUT up to 16 MiB, parts above, each part with its own), and resumable: a file
//! whose object is already there with the same size and checksum is skipped, so a second run
//! of a finished upload puts nothing. A file uploaded in parts carries its SHA-256 in the
//! object's metadata ([`SHA256_METADATA`]), which publishing in place reads instead of the
//! object.

use std::io::IsTerminal;
use std::path::PathBuf;

use super::super::discover::{discover, Discovered, Inputs};
use super::super::prepare::{bad, digest_all};
use super::super::upload::{
    bytes_bar, list_present, upload_all_with, FileUpload, Metadata, Uploaded, PART_SIZE,
};
use super::super::PublishError;
use super::{StagedPrefix, SHA256_METADATA};

/// What `stage upload` did.
#[derive(Debug, Clone)]
pub struct StagedUpload {
    pub found: Discovered,
    pub uploaded: Uploaded,
    pub bytes: u64,
}

/// Uploads the Parquet files of `args` (a directory, files or globs, as `publish` takes them:
/// paths relative to the directory, or to the files' common directory) under `staged`.
pub async fn stage_upload(
    s3: &aws_sdk_s3::Client,
    staged: &StagedPrefix,
    args: Vec<PathBuf>,
    parallel: usize,
) -> Result<StagedUpload, PublishError> {
    let found = discover(&Inputs {
        args,
        splits: Vec::new(),
        no_splits: true,
    })?;
    let paths: Vec<PathBuf> = found.files.iter().map(|f| f.path.clone()).collect();
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let digests = tokio::task::spawn_blocking(move || digest_all(&paths, workers))
        .await
        .map_err(|e| bad(format!("checksum task failed: {e}")))??;
    let uploads: Vec<FileUpload> = found
        .files
        .iter()
        .zip(digests)
        .map(|(f, digest)| FileUpload {
            path: f.path.clone(),
            key: format!("{}{}", staged.prefix, f.rel),
            digest,
        })
        .collect();
    let bytes = uploads.iter().map(|u| u.digest.size).sum();
    let present = list_present(s3, &staged.bucket, &staged.prefix).await?;
    let bar = std::io::stdout()
        .is_terminal()
        .then(|| bytes_bar(bytes, "staging"));
    // A file uploaded in parts has no full-object checksum in S3: its SHA-256 rides in the
    // object's metadata, so that publishing it in place need not read it whole.
    let metadata = |file: &FileUpload| {
        let mut metadata = Metadata::new();
        if file.digest.size > PART_SIZE as u64 {
            metadata.insert(SHA256_METADATA.to_owned(), file.digest.sha256.clone());
        }
        metadata
    };
    let uploaded = upload_all_with(
        s3,
        &staged.bucket,
        &uploads,
        &present,
        parallel,
        metadata,
        bar.as_ref(),
    )
    .await;
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    Ok(StagedUpload {
        found,
        uploaded: uploaded?,
        bytes,
    })
}
