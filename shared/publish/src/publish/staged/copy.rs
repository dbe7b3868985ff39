//! Server-side copies of staged objects into a version's keys: CopyObject for an object up to
//! the threshold ([`COPY_MAX`], S3's limit for one copy, by default), and above it a multipart
//! upload whose parts are UploadPartCopy of byte ranges of the source (`x-amz-copy-source-range`),
//! [`PARTS_AT_ONCE`] at a time. Every copy is conditioned on the source's ETag as listed
//! (`x-amz-copy-source-if-match`), so an object replaced since its statistics were read is not
//! published. A failed multipart copy is aborted (the bucket's lifecycle rule aborts what a
//! killed run leaves).

use std::collections::HashMap;

use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart, MetadataDirective};
use catalog::input::Slug;

use super::super::keys::files_prefix;
use super::super::prepare::{bad, PreparedFile};
use super::super::PublishError;
use catalog_stats::remote::RemoteObject;

/// S3's largest object one CopyObject copies.
pub const COPY_MAX: u64 = 5 << 30;
/// S3's smallest part but the last.
pub const COPY_PART_MIN: u64 = 5 << 20;
/// S3's most parts of one upload.
const MAX_PARTS: u64 = 10_000;
/// Parts of one object copied at once.
pub const PARTS_AT_ONCE: usize = 4;

/// When a copy goes in parts, and how large they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyOptions {
    /// Objects larger than this are copied in parts (at most [`COPY_MAX`]).
    pub threshold: u64,
    /// The parts' size (at least [`COPY_PART_MIN`]; larger when an object would need more
    /// than 10,000 parts).
    pub part_size: u64,
}

impl Default for CopyOptions {
    fn default() -> Self {
        Self {
            threshold: COPY_MAX,
            part_size: 512 << 20,
        }
    }
}

impl CopyOptions {
    /// Checks the bounds S3 sets.
    pub fn new(threshold: u64, part_size: u64) -> Result<Self, PublishError> {
        if threshold > COPY_MAX {
            return Err(bad(format!(
                "the copy threshold is at most {COPY_MAX} bytes (S3's limit of one CopyObject)"
            )));
        }
        if !(COPY_PART_MIN..=COPY_MAX).contains(&part_size) {
            return Err(bad(format!(
                "the copy part size is {COPY_PART_MIN} to {COPY_MAX} bytes (S3's part limits)"
            )));
        }
        Ok(Self {
            threshold,
            part_size,
        })
    }
}

/// One copy: the staged object and its key in the version.
#[derive(Debug, Clone)]
pub struct Copy {
    pub source: RemoteObject,
    pub dest: String,
}

/// The copies of `files` (whose paths are the staged keys) into version `version` of `slug`.
pub fn plan(
    files: &[PreparedFile],
    objects: &[RemoteObject],
    slug: &Slug,
    version: u64,
) -> Result<Vec<Copy>, PublishError> {
    let by_key: HashMap<&str, &RemoteObject> =
        objects.iter().map(|o| (o.key.as_str(), o)).collect();
    let prefix = files_prefix(slug, version);
    files
        .iter()
        .map(|f| {
            let key = f.path.to_string_lossy();
            let source = by_key
                .get(key.as_ref())
                .ok_or_else(|| bad(format!("{key}: not among the staged objects")))?;
            Ok(Copy {
                source: (*source).clone(),
                dest: format!("{prefix}{}", f.rel),
            })
        })
        .collect()
}

/// `x-amz-copy-source`: the bucket and the key, the key percent-encoded but for `/`.
pub fn copy_source(bucket: &str, key: &str) -> String {
    let mut out = format!("{bucket}/");
    for byte in key.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~/".contains(&byte) {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn s3_error<E>(what: &str, e: aws_sdk_s3::error::SdkError<E>) -> PublishError
where
    E: std::error::Error + std::fmt::Debug + 'static,
{
    PublishError::Upload(format!(
        "{what}: {}",
        aws_sdk_s3::error::DisplayErrorContext(e)
    ))
}

/// Copies one object (module docs) into `bucket`.
async fn copy_one(
    s3: aws_sdk_s3::Client,
    bucket: String,
    copy: Copy,
    options: CopyOptions,
) -> Result<u64, PublishError> {
    let source = copy_source(&copy.source.bucket, &copy.source.key);
    let what = format!("copying {} to {}", copy.source.url(), copy.dest);
    if copy.source.size <= options.threshold {
        s3.copy_object()
            .bucket(&bucket)
            .key(&copy.dest)
            .copy_source(&source)
            .set_copy_source_if_match(copy.source.etag.clone())
            .metadata_directive(MetadataDirective::Replace)
            .content_type("application/vnd.apache.parquet")
            .send()
            .await
            .map_err(|e| s3_error(&what, e))?;
        return Ok(copy.source.size);
    }
    let size = copy.source.size;
    let part_size = options.part_size.max(size.div_ceil(MAX_PARTS));
    let created = s3
        .create_multipart_upload()
        .bucket(&bucket)
        .key(&copy.dest)
        .content_type("application/vnd.apache.parquet")
        .send()
        .await
        .map_err(|e| s3_error(&what, e))?;
    let upload_id = created
        .upload_id()
        .ok_or_else(|| PublishError::Upload(format!("{what}: no upload id")))?
        .to_owned();
    let parts = async {
        let mut running = tokio::task::JoinSet::new();
        let mut parts = Vec::new();
        let mut starts = (0..size).step_by(part_size as usize).enumerate();
        loop {
            while running.len() < PARTS_AT_ONCE {
                let Some((i, start)) = starts.next() else {
                    break;
                };
                let end = (start + part_size).min(size) - 1;
                let request = s3
                    .upload_part_copy()
                    .bucket(&bucket)
                    .key(&copy.dest)
                    .upload_id(&upload_id)
                    .part_number(i as i32 + 1)
                    .copy_source(&source)
                    .copy_source_range(format!("bytes={start}-{end}"))
                    .set_copy_source_if_match(copy.source.etag.clone());
                running.spawn(async move { (i as i32 + 1, request.send().await) });
            }
            let Some(joined) = running.join_next().await else {
                break;
            };
            let (number, sent) = joined
                .map_err(|e| PublishError::Upload(format!("{what}: a part's task failed: {e}")))?;
            let out = sent.map_err(|e| s3_error(&what, e))?;
            let result = out.copy_part_result();
            parts.push(
                CompletedPart::builder()
                    .part_number(number)
                    .set_e_tag(result.and_then(|r| r.e_tag()).map(str::to_owned))
                    .build(),
            );
        }
        parts.sort_by_key(|p| p.part_number());
        Ok::<_, PublishError>(parts)
    }
    .await;
    let completed = match parts {
        Ok(parts) => s3
            .complete_multipart_upload()
            .bucket(&bucket)
            .key(&copy.dest)
            .upload_id(&upload_id)
            .multipart_upload(
                CompletedMultipartUpload::builder()
                    .set_parts(Some(parts))
                    .build(),
            )
            .send()
            .await
            .map(|_| size)
            .map_err(|e| s3_error(&what, e)),
        Err(e) => Err(e),
    };
    if completed.is_err() {
        let _ = s3
            .abort_multipart_upload()
            .bucket(&bucket)
            .key(&copy.dest)
            .upload_id(&upload_id)
            .send()
            .await;
    }
    completed
}

/// Copies every object, `parallel` at a time; on the first failure no more start, those
/// running finish, and the error says how many were copied. Returns the objects and bytes
/// copied.
pub async fn copy_all(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    copies: Vec<Copy>,
    parallel: usize,
    options: &CopyOptions,
) -> Result<(usize, u64), PublishError> {
    let total = copies.len();
    let mut next = copies.into_iter();
    let mut running = tokio::task::JoinSet::new();
    let (mut done, mut bytes) = (0usize, 0u64);
    let mut failed: Option<PublishError> = None;
    loop {
        while failed.is_none() && running.len() < parallel.max(1) {
            let Some(copy) = next.next() else { break };
            running.spawn(copy_one(s3.clone(), bucket.to_owned(), copy, *options));
        }
        let Some(joined) = running.join_next().await else {
            break;
        };
        match joined {
            Ok(Ok(size)) => {
                done += 1;
                bytes += size;
            }
            Ok(Err(e)) => {
                failed.get_or_insert(e);
            }
            Err(e) => {
                failed.get_or_insert(PublishError::Upload(format!("a copy task failed: {e}")));
            }
        }
    }
    match failed {
        None => Ok((done, bytes)),
        Some(PublishError::Upload(why)) => Err(PublishError::Upload(format!(
            "{why}; {done} of {total} files were copied, and nothing is published: running the \
             same command again copies them again"
        ))),
        Some(other) => Err(other),
    }
}
