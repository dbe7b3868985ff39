//! Deleting a dataset's or a version's files from the bucket, after their records (so that no
//! record ever points at a missing file).

use std::collections::BTreeSet;

use aws_sdk_s3::error::DisplayErrorContext;
use aws_sdk_s3::types::{Delete, ObjectIdentifier};

/// The records are deleted, but not every file: the message names the keys left and the
/// command that removes them. (The CLI reports it as `CliError::Objects`.)
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FilesLeft(pub String);

/// Keys one DeleteObjects request takes.
const DELETE_BATCH: usize = 1000;

/// Deletes `keys`, then, with `prefix`, every object under it (a many-file version's files, its
/// `publish.json`, what an earlier, interrupted delete or a cut-off publish left). A key ending
/// in `/` is a prefix, not an object (a many-file version's `s3_key`): only the listing covers
/// it. Lists first (ListObjectsV2, 1,000 keys a page), then deletes 1,000 keys a request
/// (DeleteObjects). Returns how many objects it deleted. A failure names the keys left and the
/// command that removes them; the records are already gone.
pub async fn objects(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    keys: &[String],
    prefix: Option<&str>,
) -> Result<usize, FilesLeft> {
    let left = |key: &str, e: String| {
        FilesLeft(format!(
            "the records are deleted, but not the file s3://{bucket}/{key} ({e}); delete it with \
             `aws s3 rm s3://{bucket}/{}`{}",
            prefix.unwrap_or(key),
            if prefix.is_some() { " --recursive" } else { "" }
        ))
    };
    let mut all: BTreeSet<String> = keys.iter().filter(|k| !k.ends_with('/')).cloned().collect();
    if let Some(prefix) = prefix {
        let mut pages = s3
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| left(prefix, DisplayErrorContext(e).to_string()))?;
            all.extend(
                page.contents()
                    .iter()
                    .filter_map(|o| o.key().map(str::to_owned)),
            );
        }
    }
    let all: Vec<String> = all.into_iter().collect();
    for batch in all.chunks(DELETE_BATCH) {
        let objects = batch
            .iter()
            .map(|key| ObjectIdentifier::builder().key(key).build())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| left(&batch[0], e.to_string()))?;
        let delete = Delete::builder()
            .set_objects(Some(objects))
            .quiet(true)
            .build()
            .map_err(|e| left(&batch[0], e.to_string()))?;
        let out = s3
            .delete_objects()
            .bucket(bucket)
            .delete(delete)
            .send()
            .await
            .map_err(|e| left(&batch[0], DisplayErrorContext(e).to_string()))?;
        if let Some(failed) = out.errors().first() {
            let key = failed.key().unwrap_or(&batch[0]);
            let why = format!(
                "{} of {} keys refused, this one: {} {}",
                out.errors().len(),
                batch.len(),
                failed.code().unwrap_or("?"),
                failed.message().unwrap_or("")
            );
            return Err(left(key, why));
        }
    }
    Ok(all.len())
}
