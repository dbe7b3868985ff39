//! The data endpoint's listing form (docs/api.md, Data): a page of the admitted version's files,
//! each with its own presigned URL, all signed at one instant so they share one expiry. A
//! one-file version answers it too, with its one file, so that clients can use one form for
//! every dataset.

use chrono::{DateTime, Utc};
use lambda_http::http::StatusCode;
use lambda_http::{Body, Response};
use serde::Serialize;
use serde_json::{Map, Value};

use super::file_list::{page, FilePage, FileQuery, PageToken};
use super::gate::Admitted;
use super::http::json_response;
use crate::error::ApiError;
use crate::routes::download_name;
use catalog::audit::What;
use catalog::files::{FileEntry, PartitionValue, Summary};
use catalog::input::Slug;
use catalog::metrics::{self, Metric, UrlRoute};
use catalog::ports::{ManifestReader, UrlSigner};

/// The listing ([docs/api.md, Data](../../../docs/api.md#data-get-datasetsslugdata)).
#[derive(Debug, Serialize)]
struct FileListing<'a> {
    slug: &'a Slug,
    format: &'static str,
    version: u64,
    /// The manifest hash (a one-file version: the file's).
    sha256: &'a str,
    size_bytes: u64,
    row_count: u64,
    columns: &'a [String],
    #[serde(serialize_with = "catalog::time::rfc3339")]
    published_at: DateTime<Utc>,
    /// When the page's URLs expire (all at once); `null` for a page without files.
    #[serde(serialize_with = "catalog::time::rfc3339_opt")]
    expires_at: Option<DateTime<Utc>>,
    file_count: u64,
    page_size: usize,
    next_page_token: Option<String>,
    files: Vec<ListedFile<'a>>,
}

#[derive(Debug, Serialize)]
struct ListedFile<'a> {
    path: &'a str,
    split: Option<&'a str>,
    partition_values: Map<String, Value>,
    row_count: u64,
    size_bytes: u64,
    sha256: &'a str,
    url: String,
}

/// A partition value as JSON: int64 a number, a date `YYYY-MM-DD`, a string a string, Hive's
/// null `null`.
fn typed(value: &PartitionValue) -> Value {
    match value {
        PartitionValue::Null => Value::Null,
        PartitionValue::Int(i) => Value::from(*i),
        other => other.to_text().map_or(Value::Null, Value::from),
    }
}

/// A one-file version's listing: its one file (path: the name a browser saves it as), unless
/// a split or a partition filter is asked for (it has neither: an empty page). Its only page
/// token would start past its one file, which this route never hands out.
fn one_file(admitted: &Admitted, query: &FileQuery) -> Result<(Vec<FileEntry>, u64), ApiError> {
    if let Some(token) = query.token {
        if token.next != 0 || token.done != 0 || token.count > 1 {
            return Err(ApiError::BadRequest(
                "page_token does not belong to this listing: start again without it".to_owned(),
            ));
        }
    }
    if query.split.is_some() || !query.filter.is_empty() {
        return Ok((Vec::new(), 0));
    }
    let active = &admitted.active;
    let path = catalog::files::RelPath::parse(&download_name(&admitted.slug, active.version))
        .map_err(|e| ApiError::Internal(Box::new(e)))?;
    let file = FileEntry {
        path,
        split: None,
        partitions: Vec::new(),
        rows: active.row_count,
        size: active.size,
        sha256: active.sha256.clone(),
        stats: Vec::new(),
    };
    Ok((vec![file], 1))
}

/// The page `query` asks for of the admitted version, signed, and its audit event (the number
/// of files handed out).
pub(super) async fn listing(
    admitted: &Admitted,
    query: &FileQuery,
    format: &'static str,
    client: Option<&str>,
    reader: &impl ManifestReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let active = &admitted.active;
    let summary: Option<&Summary> = active.files.as_deref();
    let (files, file_count, next): (Vec<FileEntry>, u64, Option<PageToken>) = match summary {
        Some(summary) => {
            let FilePage {
                files,
                file_count,
                next,
                chunks_read,
            } = page(reader, &admitted.slug, active.version, summary, query).await?;
            tracing::info!(
                slug = %admitted.slug,
                version = active.version,
                chunks_read,
                files = files.len(),
                file_count,
                "listed files"
            );
            (files, file_count, next)
        }
        None => {
            let (files, count) = one_file(admitted, query)?;
            (files, count, None)
        }
    };
    let names: Vec<String> = summary
        .map(|s| s.partitions.iter().map(|p| p.name.clone()).collect())
        .unwrap_or_default();
    let mut listed = Vec::with_capacity(files.len());
    let mut expires_at = None;
    for file in &files {
        // A one-file version's object is its s3_key itself.
        let key = match summary {
            Some(_) => format!("{}{}", active.s3_key, file.path),
            None => active.s3_key.clone(),
        };
        let signed = signer.sign(&key, file.path.as_str(), now).await?;
        expires_at = Some(signed.expires_at);
        listed.push(ListedFile {
            path: file.path.as_str(),
            split: file.split.as_ref().map(|s| s.as_str()),
            partition_values: names
                .iter()
                .cloned()
                .zip(file.partitions.iter().map(typed))
                .collect(),
            row_count: file.rows,
            size_bytes: file.size,
            sha256: &file.sha256,
            url: signed.url,
        });
    }
    if let Some(expires_at) = expires_at {
        admitted
            .event(What::FileUrls {
                client: catalog::audit::client_label(client, admitted.key_id.is_none()),
                expires_at,
                files: listed.len() as u64,
            })
            .log();
        metrics::record(Metric::UrlIssued(UrlRoute::Data));
    }
    Ok(json_response(
        StatusCode::OK,
        &FileListing {
            slug: &admitted.slug,
            format,
            version: active.version,
            sha256: &active.sha256,
            size_bytes: active.size,
            row_count: active.row_count,
            columns: &active.columns,
            published_at: active.published_at,
            expires_at,
            file_count,
            page_size: query.page_size,
            next_page_token: next.map(|t| t.encode()),
            files: listed,
        },
    ))
}
