//! `GET /api/v1/datasets/{slug}/rows?offset=&length=&split=`: rows of the active version, typed
//! as a person reads them, behind the data endpoint's gate ([`super::gate::admit`]): the same
//! keys, keyless windows, access levels, grants and version pins. A version of many files is
//! read over `split` (or the whole version) in manifest order
//! ([`catalog::rows::read_version_rows`]).

use chrono::{DateTime, Utc};
use lambda_http::http::StatusCode;
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::gate::admit;
use super::http::{json_response, shell, Audience};
use super::request::{accept, presented_key, single_param, Endpoint};
use crate::error::ApiError;
use catalog::audit::What;
use catalog::input::{DatasetRef, Slug, VersionPin};
use catalog::ports::{DownloadReader, GrantReader, KeyUsage, ManifestReader};
use catalog::rows::{read_version_rows, RowColumn, RowWindow, RowsJson, RowsReader};

/// The answer ([docs/api.md, Rows](../../../docs/api.md#rows-get-datasetsslugrows)).
#[derive(Serialize)]
struct RowsAnswer<'a> {
    slug: &'a Slug,
    version: u64,
    columns: &'a [RowColumn],
    rows: RowsJson<'a>,
    offset: u64,
    /// How many rows this answer holds.
    length: u64,
    num_rows_total: u64,
    /// Where the next page starts; `null` once this one reaches the end.
    next_offset: Option<u64>,
}

/// `GET /api/v1/datasets/{slug}/rows`
pub async fn rows(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader + ManifestReader),
    rows: &impl RowsReader,
    now: DateTime<Utc>,
) -> Response<Body> {
    // An answer that depends on a key must never be cached by anyone.
    shell(req, Audience::Keyed, rows_inner(req, reader, rows, now)).await
}

async fn rows_inner(
    req: &Request,
    reader: &(impl DownloadReader + KeyUsage + GrantReader + ManifestReader),
    rows: &impl RowsReader,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Rows)?.unwrap_or_default();
    let dataset = DatasetRef::parse(&raw)?;
    let window = RowWindow::parse(single_param(req, "offset")?, single_param(req, "length")?)?;
    // Any text is a split's name: one the version does not have names nothing (an empty page).
    let split = single_param(req, "split")?;
    let pin = VersionPin::parse(single_param(req, "version")?)?;
    let key = presented_key(req.headers())?;
    let admitted = admit(&dataset, pin, key, reader, now).await?;
    let active = &admitted.active;

    let read = read_version_rows(reader, rows, &admitted.slug, active, split, window).await?;
    let (page, total) = (read.page, read.total);
    let length = page.rows.len() as u64;
    let end = window.offset().saturating_add(length);
    admitted
        .event(What::Rows {
            offset: window.offset(),
            length,
            split: split.map(str::to_owned),
        })
        .log();
    Ok(json_response(
        StatusCode::OK,
        &RowsAnswer {
            slug: &admitted.slug,
            version: active.version,
            columns: &page.columns,
            rows: page.rows_json(),
            offset: window.offset(),
            length,
            num_rows_total: total,
            next_offset: (length > 0 && end < total).then_some(end),
        },
    ))
}
