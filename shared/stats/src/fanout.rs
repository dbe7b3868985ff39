//! One staged file's partial statistics, as the per-file function (`catalog-file-stats`, under
//! Step Functions' Distributed Map: docs/scaling.md) computes them: the task one map item
//! carries ([`FileTask`]), checked before anything is read, then [`run`]: the edges object, the
//! file's [`partial::file_partial`] over ranged GETs ([`RemoteObject`], each conditioned on the
//! item's ETag), and the partial written beside the others (`results` + the file's path under
//! `prefix` + `.json`), so that `catalog-admin stats merge s3://BUCKET/RESULTS` reads them back
//! in the version's file order.
//!
//! Where things may be, in the catalog's bucket (the function's role allows no other): the
//! files under `staging/` (where operators stage data to publish in place), the edges and the
//! partials under `stats/`. An object of the prefix that is not one of a version's files (not
//! `*.parquet`, or under a name starting with `.` or `_`: `catalog::files::is_version_parquet`,
//! the rule `stage publish` applies) is skipped, not read.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::partial::{self, Edges, FilePartial, PartialError};
use crate::remote::{ReadCounts, RemoteObject};

/// Where staged files are: the only files the function reads.
pub const STAGING: &str = "staging/";
/// Where the edges and the partials are: the only prefix the function writes.
pub const RESULTS: &str = "stats/";
/// The largest edges object read (a version's edges are a few hundred bytes a column).
pub const EDGES_MAX_BYTES: u64 = 16 << 20;

/// One map item: which file, and where its edges and partial are (keys in the catalog's bucket).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileTask {
    /// The staged prefix the map lists (`staging/…/`): the partial is named by the file's path
    /// under it.
    pub prefix: String,
    /// The file (`staging/…/….parquet`).
    pub key: String,
    /// The object's size and ETag, as the map's listing gave them (S3's `Size` and `Etag`);
    /// asked with a HeadObject when absent. Every read is conditioned on the ETag.
    #[serde(default)]
    pub size: Option<u64>,
    #[serde(default)]
    pub etag: Option<String>,
    /// The edges `catalog-admin stats edges` wrote over every file of the prefix (`stats/…`).
    pub edges: String,
    /// Where the partials go (`stats/…/`).
    pub results: String,
}

/// What one item did: where its partial is, and what it read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTaskDone {
    pub partial: String,
    pub row_count: u64,
    pub read_requests: u64,
    pub read_bytes: u64,
}

/// The error names Step Functions sees ([`FanOutError::kind`]): the state machine retries
/// `FileStats.S3` and nothing else.
#[derive(Debug, thiserror::Error)]
pub enum FanOutError {
    /// The item itself is wrong: nothing was read.
    #[error("{0}")]
    Task(String),
    #[error("{0}")]
    S3(String),
    #[error(transparent)]
    Partial(#[from] PartialError),
}

impl FanOutError {
    /// The error's name for Step Functions (`FileStats.Task`, `FileStats.S3`,
    /// `FileStats.Partial`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Task(_) => "FileStats.Task",
            Self::S3(_) => "FileStats.S3",
            Self::Partial(_) => "FileStats.Partial",
        }
    }
}

impl FileTask {
    /// The item, checked: a staged Parquet file under its prefix, edges and results under
    /// `stats/`, no `..` anywhere.
    pub fn parse(value: serde_json::Value) -> Result<Self, FanOutError> {
        let mut task: Self = serde_json::from_value(value)
            .map_err(|e| FanOutError::Task(format!("not a file-stats task: {e}")))?;
        task.check()?;
        // S3 sends an ETag quoted; `If-Match` and the partial keep it so.
        if let Some(etag) = task.etag.as_mut().filter(|e| !e.starts_with('"')) {
            *etag = format!("\"{etag}\"");
        }
        Ok(task)
    }

    fn check(&self) -> Result<(), FanOutError> {
        let bad = |what: &str, why: &str| Err(FanOutError::Task(format!("{what}: {why}")));
        for (name, key) in [
            ("prefix", &self.prefix),
            ("key", &self.key),
            ("edges", &self.edges),
            ("results", &self.results),
        ] {
            if key.split('/').any(|part| part == ".." || part == ".") || key.contains("//") {
                return bad(name, &format!("'{key}' has an empty, '.' or '..' segment"));
            }
        }
        if !self.prefix.starts_with(STAGING) || !self.prefix.ends_with('/') {
            return bad("prefix", &format!("'{}' is not staging/…/", self.prefix));
        }
        if !self.key.starts_with(&self.prefix) || self.key.len() == self.prefix.len() {
            return bad(
                "key",
                &format!("'{}' is not under {}", self.key, self.prefix),
            );
        }
        if !self.edges.starts_with(RESULTS) || self.edges.ends_with('/') {
            return bad(
                "edges",
                &format!("'{}' is not an object under stats/", self.edges),
            );
        }
        if !self.results.starts_with(RESULTS) || !self.results.ends_with('/') {
            return bad("results", &format!("'{}' is not stats/…/", self.results));
        }
        Ok(())
    }

    /// Whether the object is one of the version's files (else it is skipped, not read).
    pub fn is_version_file(&self) -> bool {
        self.key
            .strip_prefix(&self.prefix)
            .is_some_and(catalog::files::is_version_parquet)
    }

    /// Where this file's partial goes: `results` + its path under `prefix` + `.json` (sorted as
    /// the version's files are).
    pub fn partial_key(&self) -> String {
        let relative = self.key.strip_prefix(&self.prefix).unwrap_or(&self.key);
        format!("{}{relative}.json", self.results)
    }
}

/// Runs one item: reads the edges, the file's partial (ranged GETs on blocking threads), and
/// writes the partial; `None` for an object that is not one of the version's files, skipped
/// unread. `bucket` is the catalog's bucket, from the function's configuration.
pub async fn run(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    task: &FileTask,
) -> Result<Option<FileTaskDone>, FanOutError> {
    if !task.is_version_file() {
        return Ok(None);
    }
    let edges: Edges = serde_json::from_slice(&get_small(s3, bucket, &task.edges).await?)
        .map_err(|e| FanOutError::Task(format!("{}: not edges: {e}", task.edges)))?;
    let (size, etag) = match (task.size, &task.etag) {
        (Some(size), Some(etag)) => (size, etag.clone()),
        _ => head(s3, bucket, &task.key).await?,
    };
    let counts = Arc::new(ReadCounts::default());
    let object = RemoteObject {
        s3: s3.clone(),
        bucket: bucket.to_owned(),
        key: task.key.clone(),
        size,
        etag: Some(etag.clone()),
        handle: tokio::runtime::Handle::current(),
        counts: counts.clone(),
    };
    // The reads block their thread on the runtime: off its workers.
    let mut partial: FilePartial =
        tokio::task::spawn_blocking(move || partial::file_partial(&object, &edges))
            .await
            .map_err(|e| {
                FanOutError::Task(format!("{}: the statistics' thread failed: {e}", task.key))
            })??;
    partial.etag = Some(etag);
    let body = serde_json::to_vec(&partial)
        .map_err(|e| FanOutError::S3(format!("cannot write the partial: {e}")))?;
    let key = task.partial_key();
    s3.put_object()
        .bucket(bucket)
        .key(&key)
        .content_type("application/json")
        .body(body.into())
        .send()
        .await
        .map_err(|e| s3_error(&key, e))?;
    Ok(Some(FileTaskDone {
        partial: key,
        row_count: partial.row_count,
        read_requests: counts.requests(),
        read_bytes: counts.bytes(),
    }))
}

async fn head(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
) -> Result<(u64, String), FanOutError> {
    let head = s3
        .head_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| s3_error(key, e))?;
    let size = head.content_length().and_then(|n| u64::try_from(n).ok());
    match (size, head.e_tag()) {
        (Some(size), Some(etag)) => Ok((size, etag.to_owned())),
        _ => Err(FanOutError::S3(format!("{key}: no size or ETag"))),
    }
}

async fn get_small(
    s3: &aws_sdk_s3::Client,
    bucket: &str,
    key: &str,
) -> Result<Vec<u8>, FanOutError> {
    let out = s3
        .get_object()
        .bucket(bucket)
        .key(key)
        .send()
        .await
        .map_err(|e| s3_error(key, e))?;
    let too_large = || {
        FanOutError::Task(format!(
            "{key}: larger than {EDGES_MAX_BYTES} bytes: not edges"
        ))
    };
    if out
        .content_length()
        .is_some_and(|n| u64::try_from(n).map_or(true, |n| n > EDGES_MAX_BYTES))
    {
        return Err(too_large());
    }
    let bytes = out
        .body
        .collect()
        .await
        .map_err(|e| FanOutError::S3(format!("{key}: {e}")))?
        .into_bytes();
    if bytes.len() as u64 > EDGES_MAX_BYTES {
        return Err(too_large());
    }
    Ok(bytes.to_vec())
}

fn s3_error<E, R>(key: &str, e: aws_sdk_s3::error::SdkError<E, R>) -> FanOutError
where
    E: std::error::Error + 'static,
    R: std::fmt::Debug,
{
    FanOutError::S3(format!(
        "{key}: {}",
        aws_sdk_s3::error::DisplayErrorContext(e)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn task() -> serde_json::Value {
        json!({
            "prefix": "staging/sales/",
            "key": "staging/sales/year=2024/part-0.parquet",
            "size": 10, "etag": "\"abc\"",
            "edges": "stats/sales/edges.json",
            "results": "stats/sales/partials/",
        })
    }

    #[test]
    fn a_partial_is_named_by_the_files_path_under_the_prefix() {
        let task = FileTask::parse(task()).unwrap();
        assert_eq!(
            task.partial_key(),
            "stats/sales/partials/year=2024/part-0.parquet.json"
        );
    }

    #[test]
    fn objects_that_are_not_a_versions_files_are_skipped() {
        for (key, taken) in [
            ("staging/sales/year=2024/part-0.parquet", true),
            ("staging/sales/PART-1.PARQUET", true),
            ("staging/sales/notes.csv", false),
            ("staging/sales/_SUCCESS", false),
            ("staging/sales/_temporary/0/part-0.parquet", false),
            ("staging/sales/.part-0.parquet.crc", false),
        ] {
            let mut item = task();
            item["key"] = json!(key);
            let task = FileTask::parse(item).unwrap();
            assert_eq!(task.is_version_file(), taken, "{key}");
        }
    }

    #[test]
    fn an_unquoted_etag_is_quoted_as_s3_sends_it() {
        let mut item = task();
        item["etag"] = json!("9b2cf535f27731c974343645a3985328");
        let task = FileTask::parse(item).unwrap();
        assert_eq!(
            task.etag.as_deref(),
            Some("\"9b2cf535f27731c974343645a3985328\"")
        );
    }

    #[test]
    fn size_and_etag_may_be_left_to_a_head_request() {
        let mut value = task();
        value.as_object_mut().unwrap().remove("size");
        value.as_object_mut().unwrap().remove("etag");
        let task = FileTask::parse(value).unwrap();
        assert_eq!((task.size, task.etag), (None, None));
    }

    #[test]
    fn items_outside_their_prefixes_are_refused_before_any_read() {
        for (field, value, why) in [
            (
                "key",
                "datasets/x/part-0.parquet",
                "is not under staging/sales/",
            ),
            ("key", "staging/sales/", "is not under staging/sales/"),
            ("key", "staging/sales/../other/a.parquet", "'..' segment"),
            ("prefix", "datasets/", "is not staging/…/"),
            ("prefix", "staging/sales", "is not staging/…/"),
            (
                "edges",
                "datasets/x/edges.json",
                "is not an object under stats/",
            ),
            ("results", "stats/sales", "is not stats/…/"),
            ("results", "staging/sales/out/", "is not stats/…/"),
        ] {
            let mut item = task();
            item[field] = json!(value);
            let err = FileTask::parse(item).unwrap_err().to_string();
            assert!(
                err.starts_with(field) && err.contains(why),
                "{field}={value}: {err}"
            );
        }
        let mut unknown = task();
        unknown["bucket"] = json!("someone-elses");
        let err = FileTask::parse(unknown).unwrap_err().to_string();
        assert!(err.contains("unknown field `bucket`"), "{err}");
    }
}
