//! Publishing a file uploaded from the site (issue 40 §3), as the publishing function
//! (`catalog-publish`) runs it: [`publish_upload`] takes the upload an object under
//! `uploads/` belongs to, and runs what `catalog-admin publish FILE` runs on it.
//!
//! 1. The upload's record must be `publishing` (the complete route put it there); any other
//!    state is left alone; and the upload is claimed first (`UploadStore::claim_upload`), so an
//!    event delivered twice, even at once, publishes once.
//! 2. The object is read once, streamed to a file in the work directory (`/tmp` in Lambda)
//!    while its SHA-256 is computed, in 1 MiB pieces (bounded memory); the size and the
//!    SHA-256 must be the declared ones.
//! 3. What it is, by content, not by name: Parquet (`PAR1` at both ends; one that starts with
//!    it but does not end with it is truncated), else CSV (UTF-8 text without NUL bytes in its
//!    first 64 KiB, converted by `ingest` exactly as `publish x.csv` converts it, which
//!    refuses a malformed one); anything else is refused.
//! 4. [`Publisher::publish`] (or, for a CSV that converts into several files,
//!    `publish_files_ingested`): the writer's one publish operation; a new dataset is created
//!    with its name as display name and defaults the editor edits later ([`defaults`]).
//!
//! Whatever the outcome, the uploaded object is deleted; a refusal or failure marks the upload
//! `failed` with the reason, and no version is recorded (the previous one keeps serving).

use std::io::Read;
use std::path::Path;

use chrono::{DateTime, Utc};
use sha2::{Digest, Sha256};
use tokio::io::AsyncWriteExt;

use catalog::policy::{AccessLevel, AccessSettings};
use catalog::uploads::{parse_key, Upload, UploadState, UploadStore};

use crate::ingest::{self, Settings, WorkDir};
use crate::publish::discover::{discover, Inputs};
use crate::publish::many::FilesOptions;
use crate::publish::{MetaInput, PublishError, Publisher};

/// What became of one object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Published as this version.
    Published { slug: String, version: u64 },
    /// Refused or failed, with the reason (the upload marked `failed`).
    Failed { reason: String },
    /// Not an upload's, or not one waiting to be published: left alone.
    Skipped { why: String },
}

/// What a file is, by its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Parquet,
    Csv,
}

/// The descriptive fields of a dataset made from the site: the name as display name, a
/// license and source that say they are yet to be given, the category `uncategorized`, and
/// access `private` (only the organisation's members see it until an editor opens it).
pub fn defaults(upload: &Upload) -> MetaInput {
    MetaInput {
        name: Some(upload.dataset.clone()),
        license: Some("unspecified".into()),
        source: Some(format!("uploaded from the site to {}", upload.org)),
        category: Some("uncategorized".into()),
        access: Some(AccessSettings::new(
            AccessLevel::Private,
            Default::default(),
        )),
        ..MetaInput::default()
    }
}

/// Reads what `path` is: Parquet, CSV, or a refusal naming why.
pub fn sniff(path: &Path) -> Result<Kind, String> {
    let mut file = std::fs::File::open(path).map_err(|e| format!("cannot read the file: {e}"))?;
    let size = file.metadata().map_err(|e| e.to_string())?.len();
    const HEAD: usize = 64 * 1024;
    let mut head = vec![0u8; HEAD];
    let mut filled = 0;
    while filled < head.len() {
        let n = file.read(&mut head[filled..]).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    head.truncate(filled);
    if head.starts_with(b"PAR1") {
        use std::io::{Seek, SeekFrom};
        let mut tail = [0u8; 4];
        let whole = size >= 12
            && file.seek(SeekFrom::End(-4)).is_ok()
            && file.read_exact(&mut tail).is_ok()
            && &tail == b"PAR1";
        return if whole {
            Ok(Kind::Parquet)
        } else {
            Err(
                "the file starts as Parquet but does not end as one: it is truncated or damaged"
                    .into(),
            )
        };
    }
    // Text: UTF-8 (a character cut at the 64 KiB boundary aside), no NUL byte.
    let valid = match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none() && filled == HEAD,
    };
    if valid && !head.contains(&0) && !head.is_empty() {
        Ok(Kind::Csv)
    } else {
        Err(
            "the file is neither Parquet nor CSV (UTF-8 text): the site publishes those two; \
             convert it, or publish it with `catalog-admin publish`"
                .into(),
        )
    }
}

/// Where a refusal or failure comes from, for the reason recorded.
fn reason(e: &PublishError) -> String {
    e.to_string()
}

/// Publishes the upload the object `key` belongs to (see the module's steps).
pub async fn publish_upload(
    publisher: &Publisher,
    store: &impl UploadStore,
    key: &str,
    work_base: Option<&Path>,
    now: DateTime<Utc>,
) -> Result<Outcome, PublishError> {
    let Some((org, id, filename)) = parse_key(key) else {
        return Ok(Outcome::Skipped {
            why: format!("{key} is not an upload's object"),
        });
    };
    let Some(mut upload) = store.upload(&org, &id).await.map_err(store_error)? else {
        remove(publisher, key).await;
        return Ok(Outcome::Skipped {
            why: format!("no upload {id} in {org}: its object removed"),
        });
    };
    if upload.state != UploadState::Publishing || upload.filename != filename {
        return Ok(Outcome::Skipped {
            why: format!("upload {id} is {}, not publishing", upload.state.as_str()),
        });
    }
    // S3's events come at least once: one invocation publishes, any other leaves it.
    if !store.claim_upload(&upload).await.map_err(store_error)? {
        return Ok(Outcome::Skipped {
            why: format!("upload {id} is being published by another invocation"),
        });
    }
    let result = run(publisher, &upload, key, work_base, now).await;
    remove(publisher, key).await;
    let outcome = match result {
        Ok((slug, version)) => {
            upload.state = UploadState::Published;
            upload.version = Some(version);
            Outcome::Published { slug, version }
        }
        Err(why) => {
            upload.state = UploadState::Failed;
            upload.reason = Some(why.clone());
            Outcome::Failed { reason: why }
        }
    };
    upload.updated_at = now;
    store
        .move_upload(&upload, UploadState::Publishing)
        .await
        .map_err(store_error)?;
    Ok(outcome)
}

fn store_error(e: catalog::error::StoreError) -> PublishError {
    PublishError::Upload(format!("the upload's record: {e}"))
}

async fn remove(publisher: &Publisher, key: &str) {
    if let Err(e) = publisher
        .s3
        .delete_object()
        .bucket(&publisher.bucket)
        .key(key)
        .send()
        .await
    {
        // The lifecycle rule of `uploads/` removes it later.
        tracing::warn!(key, error = %e, "could not delete an uploaded object");
    }
}

async fn run(
    publisher: &Publisher,
    upload: &Upload,
    key: &str,
    work_base: Option<&Path>,
    now: DateTime<Utc>,
) -> Result<(String, u64), String> {
    let work = WorkDir::new(work_base).map_err(|e| e.to_string())?;
    let stem = upload
        .filename
        .split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("upload");
    let raw = work.path.join(format!("{stem}.upload"));
    let (size, sha256) = fetch(publisher, key, &raw).await?;
    if size != upload.size {
        return Err(format!(
            "the object is {size} bytes, not the {} declared",
            upload.size
        ));
    }
    if sha256 != upload.sha256 {
        return Err(format!(
            "the file's SHA-256 is {sha256}, not the {} declared: it changed on the way, upload it again",
            upload.sha256
        ));
    }
    let kind = sniff(&raw)?;
    let slug = upload.slug();
    let stored = publisher
        .writer
        .dataset_meta(&slug)
        .await
        .map_err(|e| e.to_string())?;
    let meta = if stored.is_some() {
        MetaInput::default()
    } else {
        defaults(upload)
    };
    let version = match kind {
        Kind::Parquet => {
            let file = work.path.join(format!("{stem}.parquet"));
            std::fs::rename(&raw, &file).map_err(|e| e.to_string())?;
            publisher
                .publish(&file, &slug, meta, false, now)
                .await
                .map_err(|e| reason(&e))?
                .version
        }
        Kind::Csv => {
            let file = work.path.join(format!("{stem}.csv"));
            std::fs::rename(&raw, &file).map_err(|e| e.to_string())?;
            let out = work.path.join("parquet");
            std::fs::create_dir_all(&out).map_err(|e| e.to_string())?;
            let found = ingest::text_inputs(std::slice::from_ref(&file), None)
                .map_err(|e| e.to_string())?
                .ok_or("the CSV was not taken as text")?;
            let settings = Settings::default();
            let dir = out.clone();
            let converted =
                tokio::task::spawn_blocking(move || ingest::convert_all(&found, &settings, &dir))
                    .await
                    .map_err(|e| format!("the conversion failed: {e}"))?
                    .map_err(|e| e.to_string())?;
            let record = std::sync::Arc::new(converted.record(false).map_err(|e| e.to_string())?);
            match converted.single_file() {
                Some(parquet) => {
                    publisher
                        .publish_ingested(parquet, &slug, meta, false, now, Some(record))
                        .await
                        .map_err(|e| reason(&e))?
                        .version
                }
                None => {
                    let inputs = Inputs {
                        args: vec![out.clone()],
                        ..Inputs::default()
                    };
                    let found = discover(&inputs).map_err(|e| reason(&e))?;
                    publisher
                        .publish_files_ingested(
                            &found,
                            &slug,
                            meta,
                            false,
                            &FilesOptions::default(),
                            now,
                            Some(record),
                        )
                        .await
                        .map_err(|e| reason(&e))?
                        .version
                }
            }
        }
    };
    Ok((slug.to_string(), version))
}

/// Streams the object to `to`, hashing it on the way: its size and SHA-256 (hex).
async fn fetch(publisher: &Publisher, key: &str, to: &Path) -> Result<(u64, String), String> {
    let object = publisher
        .s3
        .get_object()
        .bucket(&publisher.bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| format!("cannot read the uploaded object: {e}"))?;
    let mut body = object.body;
    let mut file = tokio::fs::File::create(to)
        .await
        .map_err(|e| e.to_string())?;
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    while let Some(chunk) = body
        .try_next()
        .await
        .map_err(|e| format!("reading the uploaded object failed: {e}"))?
    {
        hasher.update(&chunk);
        size += chunk.len() as u64;
        file.write_all(&chunk).await.map_err(|e| e.to_string())?;
    }
    file.flush().await.map_err(|e| e.to_string())?;
    Ok((size, hex::encode(hasher.finalize())))
}
