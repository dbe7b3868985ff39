//! The query route's answer: a one-file version's one file, or a version of many files' files
//! ([`crate::sharing::files`]), with the end of the stream when the client pages.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue};
use lambda_http::{Body, Response};
use serde_json::json;

use super::{gzipped, metadata_line, ndjson, stored_columns, Opened};
use crate::error::ApiError;
use crate::routes::download_name;
use crate::sharing::files::{list_files, FilesQuery};
use crate::sharing::hints::{Hints, PageToken};
use crate::sharing::predicate::{Columns, Predicate};
use crate::sharing::{millis, File};
use catalog::audit::What;
use catalog::files::Summary;
use catalog::ports::{ManifestReader, UrlSigner};

/// A query of a one-file version: its one file, whatever the hints (as before many-file
/// versions), and the end of the stream when the client pages.
pub(super) async fn query_one(
    opened: &Opened,
    hints: &Hints,
    pinned: bool,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let version = &opened.version;
    let signed = signer
        .sign(
            &version.s3_key,
            &download_name(&opened.admitted.slug, version.version),
            now,
        )
        .await?;
    let file = File {
        url: &signed.url,
        id: &version.sha256,
        partition_values: serde_json::Map::new(),
        size: version.size,
        stats: json!({ "numRecords": version.row_count }).to_string(),
        version: pinned.then_some(version.version),
        timestamp: pinned.then(|| millis(version.published_at)),
        expiration_timestamp: millis(signed.expires_at),
    };
    opened
        .admitted
        .event(What::SharingUrl {
            pinned,
            expires_at: signed.expires_at,
            files: 1,
            paths: Vec::new(),
        })
        .log();
    catalog::metrics::record(catalog::metrics::Metric::UrlIssued(
        catalog::metrics::UrlRoute::Sharing,
    ));
    let mut lines = vec![metadata_line(opened)?, json!({ "file": file }).to_string()];
    if hints.paging().is_some() {
        lines.push(end_stream(None, Some(signed.expires_at)));
    }
    ndjson(opened, &lines)
}

/// A query of a version of many files ([`crate::sharing::files`]): the files the hints leave,
/// a page of them when the client pages.
/// What a query of a version of many files asks, besides the table.
pub(super) struct Files<'a> {
    pub summary: &'a Summary,
    pub hints: &'a Hints,
    /// Time travel was asked for.
    pub pinned: bool,
    /// The client accepts a gzip-compressed answer ([`crate::sharing::files::Budget`]).
    pub gzip: bool,
}

pub(super) async fn query_files(
    opened: &Opened,
    files: Files<'_>,
    manifests: &impl ManifestReader,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let Files {
        summary,
        hints,
        pinned,
        gzip,
    } = files;
    let dtypes: HashMap<String, String> = stored_columns(opened)?
        .into_iter()
        .map(|c| (c.name, c.dtype))
        .collect();
    let columns = Columns::of(summary, |name| dtypes.get(name).cloned());
    let predicate = Predicate::new(hints.predicates.clone(), &columns);
    let paging = hints.paging();
    let query = FilesQuery {
        slug: &opened.admitted.slug,
        version: &opened.version,
        summary,
        predicate: &predicate,
        limit: hints.limit,
        paging,
        pinned,
        gzip,
        now,
    };
    let listed = list_files(&query, manifests, signer).await?;
    let expires_at = listed.expires_at.unwrap_or(now);
    opened
        .admitted
        .event(What::SharingUrl {
            pinned,
            expires_at,
            files: listed.lines.len() as u64,
            paths: listed.first_paths.clone(),
        })
        .log();
    tracing::debug!(
        chunks_read = listed.chunks_read,
        manifest_reads = listed.reads,
        "Delta Sharing query: manifest read"
    );
    if !listed.lines.is_empty() {
        catalog::metrics::record(catalog::metrics::Metric::UrlIssued(
            catalog::metrics::UrlRoute::Sharing,
        ));
    }
    let mut lines = Vec::with_capacity(listed.lines.len() + 2);
    lines.push(metadata_line(opened)?);
    lines.extend(listed.lines);
    if paging.is_some() {
        let token = listed
            .next
            .map(|next| PageToken::encode(opened.version.version, next, hints.digest));
        lines.push(end_stream(token, listed.expires_at));
    }
    let mut response = ndjson(opened, &lines)?;
    response
        .headers_mut()
        .insert(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    Ok(if gzip { gzipped(response) } else { response })
}

/// The protocol's last line of a paged query: the next page's token (none on the last page) and
/// the earliest expiry of the URLs handed out.
fn end_stream(next_page_token: Option<String>, expires_at: Option<DateTime<Utc>>) -> String {
    let mut end = serde_json::Map::new();
    if let Some(token) = next_page_token {
        end.insert("nextPageToken".into(), token.into());
    }
    if let Some(t) = expires_at {
        end.insert("minUrlExpirationTimestamp".into(), millis(t).into());
    }
    json!({ "endStreamAction": end }).to_string()
}
