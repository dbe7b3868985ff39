//! Deleting a dataset's or a version's files from the bucket, after their records (so that no
//! record ever points at a missing file).

use aws_sdk_s3::error::DisplayErrorContext;

/// The records are deleted, but not every file: the message names the keys left and the
/// command that removes them. (The CLI reports it as `CliError::Objects`.)
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct FilesLeft(pub String);

/// Deletes `keys`, then, with `prefix`, every object left under it (what an earlier,
/// interrupted delete left). Returns how many objects it deleted. A failure names the keys
/// left and the command that removes them; the records are already gone.
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
    let mut all: Vec<String> = keys.to_vec();
    if let Some(prefix) = prefix {
        let mut pages = s3
            .list_objects_v2()
            .bucket(bucket)
            .prefix(prefix)
            .into_paginator()
            .send();
        while let Some(page) = pages.next().await {
            let page = page.map_err(|e| left(prefix, DisplayErrorContext(e).to_string()))?;
            for object in page.contents() {
                if let Some(key) = object.key() {
                    if !all.iter().any(|k| k == key) {
                        all.push(key.to_owned());
                    }
                }
            }
        }
    }
    for key in &all {
        s3.delete_object()
            .bucket(bucket)
            .key(key)
            .send()
            .await
            .map_err(|e| left(key, DisplayErrorContext(e).to_string()))?;
    }
    Ok(all.len())
}
