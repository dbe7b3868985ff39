//! `GET /api/v1/datasets/{slug}`: one dataset's metadata, statistics, active version and access.

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};
use serde::Serialize;
use serde_json::value::RawValue;
use uuid::Uuid;

use super::http::{cacheable, freshness, no_store, shell, Audience};
use super::request::{accept, presented_key, single_param, Endpoint};
use crate::error::{ApiError, Named};
use catalog::access::{authorize, verify_key, Denied, Guarded};
use catalog::input::echo;
use catalog::input::{DatasetRef, Slug};
use catalog::policy::{is_keyless, values_public, without_row_values, Access, AccessLevel};
use catalog::ports::{DatasetReader, MetadataReader, SplitStatsReader};
use catalog::records::{ActiveVersion, DatasetRecord, Discussion};

/// The Dataset object ([docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)),
/// plus `id`, the active version (`version`, `sha256`, `published_at`) and `access`.
#[derive(Debug, Serialize)]
struct DatasetResponse<'a> {
    slug: &'a Slug,
    id: Uuid,
    name: &'a str,
    description: Option<&'a str>,
    license: &'a str,
    source: &'a str,
    category: &'a str,
    tags: &'a [String],
    size: u64,
    row_count: u64,
    column_count: u64,
    schema: &'a RawValue,
    keyless: bool,
    #[serde(serialize_with = "catalog::time::rfc3339_opt")]
    keyless_until: Option<DateTime<Utc>>,
    insights: &'a str,
    discussions: &'a [Discussion],
    /// The dataset's card: its Markdown README as stored (the page renders it, sanitised), or
    /// null when it has none.
    readme: Option<&'a str>,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    created_at: DateTime<Utc>,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    updated_at: DateTime<Utc>,
    /// Downloads over the last 30 days (counted once a day).
    downloads: u64,
    /// The active version's number: pass it as `?version=` to the data endpoint to pin it.
    version: u64,
    sha256: &'a str,
    #[serde(serialize_with = "catalog::time::rfc3339")]
    published_at: DateTime<Utc>,
    access: Access,
    /// True when `schema` leaves out every value drawn from the rows: an `approval` dataset,
    /// outside a keyless window, for a request [`authorize`] does not admit.
    values_withheld: bool,
    /// A version of many files: how many, their partition columns and their splits. Absent for
    /// a version of one file.
    #[serde(skip_serializing_if = "Option::is_none")]
    files: Option<FilesShown<'a>>,
    /// With `?split=`: the split whose statistics, rows and bytes `schema`, `row_count` and
    /// `size` are.
    #[serde(skip_serializing_if = "Option::is_none")]
    split: Option<&'a str>,
    /// A version converted from CSV, TSV or JSON Lines: the inputs' formats and compressions,
    /// the rows skipped and the first of them, the originals kept. Absent for Parquet.
    #[serde(skip_serializing_if = "Option::is_none")]
    ingested: Option<IngestedShown<'a>>,
}

/// The `ingested` object ([docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)):
/// the record as stored, each original without its object key.
#[derive(Debug, Serialize)]
struct IngestedShown<'a> {
    formats: &'a [String],
    compressions: &'a [String],
    inputs: u64,
    rows_skipped: u64,
    skipped: &'a [catalog::ingested::SkippedLine],
    #[serde(skip_serializing_if = "Vec::is_empty")]
    originals: Vec<OriginalShown<'a>>,
}

#[derive(Debug, Serialize)]
struct OriginalShown<'a> {
    name: &'a str,
    size: u64,
    sha256: &'a str,
    media_type: &'a str,
}

impl<'a> IngestedShown<'a> {
    fn of(ingested: &'a catalog::ingested::Ingested) -> Self {
        Self {
            formats: &ingested.formats,
            compressions: &ingested.compressions,
            inputs: ingested.inputs,
            rows_skipped: ingested.rows_skipped,
            skipped: &ingested.skipped,
            originals: ingested
                .originals
                .iter()
                .map(|o| OriginalShown {
                    name: &o.name,
                    size: o.size,
                    sha256: &o.sha256,
                    media_type: &o.media_type,
                })
                .collect(),
        }
    }
}

/// The `files` object of a many-file version ([docs/api.md, Metadata](../../../docs/api.md#metadata-get-datasetsslug)).
#[derive(Debug, Serialize)]
struct FilesShown<'a> {
    count: u64,
    partition_columns: &'a [catalog::files::PartitionColumn],
    splits: Vec<SplitShown<'a>>,
}

#[derive(Debug, Serialize)]
struct SplitShown<'a> {
    name: &'a str,
    files: u64,
    row_count: u64,
    size: u64,
}

impl<'a> FilesShown<'a> {
    fn of(summary: &'a catalog::files::Summary) -> Self {
        Self {
            count: summary.files,
            partition_columns: &summary.partitions,
            splits: summary
                .splits
                .iter()
                .map(|s| SplitShown {
                    name: s.name.as_str(),
                    files: s.files,
                    row_count: s.rows,
                    size: s.bytes,
                })
                .collect(),
        }
    }
}

/// The dataset `raw` names (slug or UUID), in one read, and its active version taken out of
/// it: 404 when there is no such dataset or it has no active version, 410 once unpublished. The metadata and its
/// Croissant document both answer from it.
pub(super) async fn read_published(
    reader: &impl DatasetReader,
    raw: &str,
) -> Result<(DatasetRecord, ActiveVersion), ApiError> {
    let dataset = DatasetRef::parse(raw)?;
    published(reader.get_dataset(&dataset).await?, &dataset, false)
}

/// One split of a version of many files, in place of the whole version: its statistics (one
/// GetItem more, of the item beside the manifest; withheld as the version's are), and its bytes
/// and rows. 404 when the active version has no such split, or holds no statistics for it.
async fn split_shown(
    reader: &impl SplitStatsReader,
    shown: &mut Shown,
    name: &str,
) -> Result<(u64, u64), ApiError> {
    let slug = shown.record.slug.clone();
    let not_found = || ApiError::SplitNotFound {
        slug: slug.clone(),
        split: echo(name),
    };
    let files = shown.active.files.as_deref().ok_or_else(not_found)?;
    let (index, split) = files
        .splits
        .iter()
        .enumerate()
        .find(|(_, s)| s.name.as_str() == name)
        .ok_or_else(not_found)?;
    let (size, rows) = (split.bytes, split.rows);
    let schema = reader
        .split_schema(&slug, shown.active.version, index)
        .await?
        .ok_or_else(not_found)?;
    shown.record.schema = if shown.withheld {
        without_row_values(&schema).map_err(|e| {
            ApiError::from(crate::error::StoreError::Corrupt(format!(
                "the statistics of split {name} of '{slug}': {e}"
            )))
        })?
    } else {
        schema
    };
    Ok((size, rows))
}

/// The dataset read for `dataset`, with its active version taken out: 404, 410 as
/// [`read_published`] says. A `private` dataset is no dataset unless `revealed` (the request's
/// key is one [`authorize`] lets see it): the same 404, before anything else is said of it.
fn published(
    record: Option<DatasetRecord>,
    dataset: &DatasetRef,
    revealed: bool,
) -> Result<(DatasetRecord, ActiveVersion), ApiError> {
    let mut record = record
        .filter(|r| revealed || r.meta.card.access_level != AccessLevel::Private)
        .ok_or_else(|| ApiError::DatasetNotFound(Named::Dataset(dataset.clone())))?;
    if record.unpublished_at.is_some() {
        return Err(ApiError::Unpublished(record.slug.clone()));
    }
    let active = record
        .active
        .take()
        .ok_or_else(|| ApiError::NoActiveVersion(record.slug.clone()))?;
    Ok((record, active))
}

/// A published dataset as the metadata and Croissant answers show it to one request.
pub(super) struct Shown {
    pub record: DatasetRecord,
    pub active: ActiveVersion,
    /// `record.schema` holds no value drawn from the rows.
    pub withheld: bool,
    /// The answer depends on the key sent (an `approval` dataset outside a keyless window, and
    /// a key): no one may cache it.
    pub keyed: bool,
}

impl Shown {
    /// The answer as it goes out: cacheable unless it depends on the key; an `approval`
    /// dataset's answer varies with the key headers.
    pub(super) fn finish(&self, mut response: Response<Body>) -> Response<Body> {
        if self.record.meta.card.access_level == AccessLevel::Approval {
            response.headers_mut().insert(
                lambda_http::http::header::VARY,
                lambda_http::http::HeaderValue::from_static("authorization, x-api-key"),
            );
        }
        if self.keyed {
            no_store(response)
        } else {
            response
        }
    }
}

/// The published dataset `raw` names, for one request: its values drawn from the rows (sample
/// values, top values, minimum, maximum, median, mean, standard deviation, histogram) are left
/// out of its statistics for an `approval` dataset outside its keyless window, unless the
/// request sends a key [`authorize`] admits. The endpoint never refuses a request for its key:
/// a missing, malformed, unknown, revoked or ungranted key gets the answer without those values
/// (200, never 401 or 403), and only storage failures fail it.
///
/// A `private` dataset is answered only to a key [`authorize`] lets see it (an operator's, or
/// its organisation's members'), whole and never cached; to any other request, exactly as a
/// slug that names no dataset (404).
///
/// Round trips: no key, one GetItem (as ever); a key, one BatchGetItem of the dataset and the
/// key instead; an account's key on an `approval` dataset outside its window, or on a
/// `private` one, one more read, its grant and membership. The key's use is not recorded (the
/// metadata path writes nothing).
pub(super) async fn read_shown(
    req: &Request,
    reader: &impl MetadataReader,
    raw: &str,
    now: DateTime<Utc>,
) -> Result<Shown, ApiError> {
    // A key header that cannot be read is no key here: the answer without the values.
    let key = presented_key(req.headers()).ok().flatten();
    let (record, active, key_record) = match &key {
        None => {
            let (record, active) = read_published(reader, raw).await?;
            (record, active, None)
        }
        Some(key) => {
            let dataset = DatasetRef::parse(raw)?;
            let (record, key_record) = reader.get_dataset_and_key(&dataset, &key.hash()).await?;
            let key_record = key_record.and_then(|k| verify_key(Some(k), now).ok());
            let revealed = match (&record, &key_record) {
                (Some(r), Some(k)) if r.meta.card.access_level == AccessLevel::Private => {
                    match authorize(&Guarded::from(r), Some(k), reader, now).await {
                        Ok(_) => true,
                        Err(Denied::Refused(_)) => false,
                        Err(Denied::Store(e)) => return Err(e.into()),
                    }
                }
                _ => false,
            };
            let (record, active) = published(record, &dataset, revealed)?;
            if revealed {
                return Ok(Shown {
                    record,
                    active,
                    withheld: false,
                    keyed: true,
                });
            }
            (record, active, Some(key_record))
        }
    };
    let level = record.meta.card.access_level;
    if values_public(level, record.keyless_until, now) {
        return Ok(Shown {
            record,
            active,
            withheld: false,
            keyed: false,
        });
    }
    let admitted = match key_record.flatten() {
        None => false,
        Some(key) => {
            let guarded = Guarded::from(&record);
            match authorize(&guarded, Some(&key), reader, now).await {
                Ok(_) => true,
                // Any refusal of the one access rule withholds the values.
                Err(Denied::Refused(_)) => false,
                Err(Denied::Store(e)) => return Err(e.into()),
            }
        }
    };
    let mut record = record;
    if !admitted {
        record.schema = without_row_values(&record.schema).map_err(|e| {
            ApiError::from(crate::error::StoreError::Corrupt(format!(
                "the statistics of '{}': {e}",
                record.slug
            )))
        })?;
    }
    Ok(Shown {
        record,
        active,
        withheld: !admitted,
        keyed: key.is_some(),
    })
}

/// `GET /api/v1/datasets/{slug}` (slug or UUID); `?split=NAME` for one split of a version of
/// many files.
pub async fn metadata(
    req: &Request,
    reader: &(impl MetadataReader + SplitStatsReader),
    now: DateTime<Utc>,
) -> Response<Body> {
    shell(req, Audience::Public, metadata_inner(req, reader, now)).await
}

async fn metadata_inner(
    req: &Request,
    reader: &(impl MetadataReader + SplitStatsReader),
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let raw = accept(req, Endpoint::Metadata)?.unwrap_or_default();
    let split = single_param(req, "split")?;
    let mut shown = read_shown(req, reader, &raw, now).await?;
    let (size, row_count) = match split {
        None => (shown.active.size, shown.active.row_count),
        Some(name) => split_shown(reader, &mut shown, name).await?,
    };
    let (record, active) = (&shown.record, &shown.active);
    tracing::info!(
        slug = %record.slug,
        version = active.version,
        split = split.unwrap_or_default(),
        values_withheld = shown.withheld,
        "read dataset metadata"
    );
    let (last_modified, max_age) = freshness([record.freshness()], now);
    Ok(shown.finish(cacheable(
        req,
        &DatasetResponse {
            slug: &record.slug,
            id: record.id,
            name: &record.meta.card.name,
            description: record.meta.card.description.as_deref(),
            license: &record.meta.card.license,
            source: &record.meta.source,
            category: &record.meta.card.category,
            tags: &record.meta.card.tags,
            size,
            row_count,
            column_count: active.columns.len() as u64,
            schema: &record.schema,
            keyless: is_keyless(record.keyless_until, now),
            keyless_until: record.keyless_until,
            insights: &record.meta.insights,
            discussions: &record.meta.discussions,
            readme: record.meta.readme.as_deref(),
            created_at: record.created_at,
            updated_at: record.updated_at,
            downloads: record.downloads,
            version: active.version,
            sha256: &active.sha256,
            published_at: active.published_at,
            access: Access::at(
                record.keyless_until,
                record.meta.card.access_level,
                &record.meta.access,
                now,
            ),
            values_withheld: shown.withheld,
            files: active.files.as_deref().map(FilesShown::of),
            split,
            ingested: active.ingested.as_deref().map(IngestedShown::of),
        },
        last_modified,
        max_age,
    )))
}
