//! The Delta Sharing server ([`crate::sharing`] has the mapping and the protocol's shapes): the
//! routes below `/api/v1/delta-sharing`, for a bearer token that is one of this catalog's read
//! keys.
//!
//! What a key sees and reads is decided as on every route: a table request goes through
//! [`super::gate::judge`] (the key verified, [`catalog::access::authorize`]); a list holds exactly
//! the tables `authorize` lets the key read, judged on the same facts. Round trips:
//! - shares and schemas: 1 (the key);
//! - tables: the key, then the catalog's page (2: its counter, then one range query over at most
//!   `maxResults` entries; `maxResults=0`, the counter alone) and, only for an account's key when the page holds an `approval`
//!   dataset outside its keyless window, one Query of the account's grants: 3 or 4. A key
//!   limited to some datasets: the key, then one BatchGetItem of its datasets (at most 20): 2;
//! - a table's version, metadata or query: 1 BatchGetItem (the dataset with its schema, the key
//!   and, with `version`, that version's item), + 1 strongly consistent read of the grant for an
//!   account's key on an `approval` dataset, as the data endpoint. A query of a version of many
//!   files adds the manifest chunks it reads, in BatchGetItems of at most 100 items
//!   ([`crate::sharing::files`]).
//!
//! Recording a key's use adds one write at most once an hour per key, as everywhere.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Deserialize;
use serde_json::json;
use uuid::Uuid;

mod query;

use super::gate::{authenticate, judge, Admitted};
use super::http::{json_response, shell, Audience};
use super::request::{accepts_gzip, presented_key, request_path, single_param};
use crate::error::{ApiError, Named, Refusal, SharingError, StoreError};
use crate::sharing::hints::Hints;
use crate::sharing::{
    encode_token, types::delta_schema, Format, ListWindow, Metadata, Page, QueryRequest, Schema,
    Share, SharingRoute, Table, SCHEMA, SHARE,
};
use catalog::access::{authorize, Denied, Guarded};
use catalog::input::echo;
use catalog::keys::{KeyHash, KeyRecord, Owner};
use catalog::orgs::{OrgName, Role};
use catalog::policy::Grant;
use catalog::ports::{
    CatalogPager, GrantLister, GrantReader, KeyReader, KeyUsage, ManifestReader, Standing,
    TableReader, TargetsReader, UrlSigner,
};
use catalog::query::{ListQuery, Sort, SortField};
use catalog::records::{ActiveVersion, DatasetRecord};
use catalog::sharing::Unsupported;
use catalog::slug::Slug;
use query::{query_files, query_one, Files};

/// Everything the Delta Sharing routes read.
pub trait SharingStore:
    CatalogPager
    + KeyReader
    + TableReader
    + TargetsReader
    + GrantLister
    + GrantReader
    + KeyUsage
    + ManifestReader
{
}

impl<T> SharingStore for T where
    T: CatalogPager
        + KeyReader
        + TableReader
        + TargetsReader
        + GrantLister
        + GrantReader
        + KeyUsage
        + ManifestReader
{
}

/// `ANY /api/v1/delta-sharing/{proxy+}`: every answer, errors included, in the protocol's
/// shapes, never cached.
pub async fn sharing(
    req: &Request,
    store: &impl SharingStore,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Response<Body> {
    shell(req, Audience::Sharing, answer(req, store, signer, now)).await
}

async fn answer(
    req: &Request,
    store: &impl SharingStore,
    signer: &impl UrlSigner,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    let route = SharingRoute::parse(request_path(req), req.method().as_str())?;
    // Every route needs a key: a recipient is known by its bearer token.
    let hash = presented_key(req.headers())?
        .ok_or(ApiError::Refused(Refusal::MissingKey))?
        .hash();
    match route {
        SharingRoute::ListShares | SharingRoute::ListSchemas | SharingRoute::GetShare => {
            let window = list_window(req)?;
            signed_in(store, &hash, now).await?;
            Ok(match route {
                SharingRoute::GetShare => json_ok(&json!({ "share": Share { name: SHARE } })),
                SharingRoute::ListShares => json_ok(&single(Share { name: SHARE }, window)),
                _ => json_ok(&single(
                    Schema {
                        name: SCHEMA,
                        share: SHARE,
                    },
                    window,
                )),
            })
        }
        SharingRoute::ListTables => {
            let window = list_window(req)?;
            let key = signed_in(store, &hash, now).await?;
            Ok(json_ok(&tables(store, &key, window, now).await?))
        }
        SharingRoute::TableVersion(name) => {
            if single_param(req, "startingTimestamp")?.is_some() {
                signed_in(store, &hash, now).await?;
                return Err(unsupported_timestamp());
            }
            let opened = open(store, &name, None, &hash, now).await?;
            let mut response = Response::new(Body::Empty);
            set_version(&mut response, opened.version.version);
            Ok(response)
        }
        SharingRoute::TableMetadata(name) => {
            let opened = open(store, &name, None, &hash, now).await?;
            ndjson(&opened, &[metadata_line(&opened)?])
        }
        SharingRoute::Query(name) => {
            let request = QueryRequest::parse(req.body().as_ref())
                .and_then(|r| Ok((r, Hints::parse(req.body().as_ref())?)));
            // A bad body is judged after the key: an unknown key learns nothing of the route.
            let (request, hints) = match request {
                Ok(request) => request,
                Err(e) => {
                    signed_in(store, &hash, now).await?;
                    return Err(e);
                }
            };
            // A later page reads the version its first page read.
            let version = request.version.or(hints.token.map(|t| t.version));
            let opened = open(store, &name, version, &hash, now).await?;
            let pinned = request.version.is_some();
            match opened.version.files.clone() {
                Some(summary) => {
                    hints.check_token(opened.version.version)?;
                    let gzip = accepts_gzip(req.headers());
                    let files = Files {
                        summary: &summary,
                        hints: &hints,
                        pinned,
                        gzip,
                    };
                    query_files(&opened, files, store, signer, now).await
                }
                None => query_one(&opened, &hints, pinned, signer, now).await,
            }
        }
        SharingRoute::Changes(_) => {
            signed_in(store, &hash, now).await?;
            Err(SharingError::Unsupported(Unsupported::ChangeDataFeed).into())
        }
    }
}

fn unsupported_timestamp() -> ApiError {
    SharingError::Unsupported(Unsupported::StartingTimestamp).into()
}

fn list_window(req: &Request) -> Result<ListWindow, ApiError> {
    ListWindow::parse(
        single_param(req, "maxResults")?,
        single_param(req, "pageToken")?,
    )
}

/// The presented key, verified, for the routes that name no table.
async fn signed_in(
    store: &(impl KeyReader + KeyUsage),
    hash: &KeyHash,
    now: DateTime<Utc>,
) -> Result<KeyRecord, ApiError> {
    let record = store.read_key(hash).await?;
    authenticate(hash, record, store, now).await
}

/// A list of one item (the share, the schema), windowed as any list.
fn single<T>(item: T, window: ListWindow) -> Page<T> {
    let items = if window.offset == 0 && window.limit > 0 {
        vec![item]
    } else {
        Vec::new()
    };
    let next_page_token = (window.offset == 0 && window.limit == 0).then(|| encode_token(0));
    Page {
        items,
        next_page_token,
    }
}

/// The tables `key` may read, in publication order (a table never moves, so paging never skips
/// or repeats one), from the window's position.
async fn tables(
    store: &impl SharingStore,
    key: &KeyRecord,
    window: ListWindow,
    now: DateTime<Utc>,
) -> Result<Page<Table>, ApiError> {
    let grants = GrantSnapshot::new(store);
    if let Some(limited) = &key.datasets {
        // A limited key names at most 20 datasets: read those, not the catalog.
        let mut targets = store.read_targets(limited).await?;
        targets.sort_by(|a, b| a.slug.as_str().cmp(b.slug.as_str()));
        let mut visible = Vec::new();
        for target in &targets {
            // Listed datasets only: an unpublished one is no table (its routes answer 404).
            let listed = target.active.is_some() && !target.unpublished;
            if listed && readable(Guarded::from(target), key, &grants, now).await? {
                visible.push(Table::of(target.slug.as_str(), &target.id));
            }
        }
        let start = usize::try_from(window.offset)
            .unwrap_or(usize::MAX)
            .min(visible.len());
        let end = start
            .saturating_add(usize::try_from(window.limit).unwrap_or(usize::MAX))
            .min(visible.len());
        let next_page_token = (end < visible.len()).then(|| encode_token(end as u64));
        let items = visible.drain(start..end).collect();
        return Ok(Page {
            items,
            next_page_token,
        });
    }
    let oldest_first = ListQuery {
        sort: Sort {
            field: SortField::Created,
            descending: false,
        },
        ..ListQuery::default()
    };
    let page = store
        .page(&oldest_first, Some(window.offset), window.limit)
        .await?;
    let mut items = Vec::new();
    for summary in &page.items {
        let guarded = Guarded::from(summary);
        if readable(guarded, key, &grants, now).await? {
            items.push(Table::of(summary.slug.as_str(), &summary.id));
        }
    }
    // The page covered the positions from the window's up to `limit` more (its withdrawn
    // entries, left out, included); `maxResults=0` reads no entry, and points at the same one.
    let end = window
        .offset
        .saturating_add(window.limit)
        .min(page.total.max(window.offset));
    let next_page_token = (end < page.total).then(|| encode_token(end));
    Ok(Page {
        items,
        next_page_token,
    })
}

/// Whether [`authorize`] lets `key` read the dataset: its refusals of the dataset hide the
/// table; a refusal of the key itself, or a failure to read, is the request's.
async fn readable(
    guarded: Guarded<'_>,
    key: &KeyRecord,
    grants: &impl GrantReader,
    now: DateTime<Utc>,
) -> Result<bool, ApiError> {
    match authorize(&guarded, Some(key), grants, now).await {
        Ok(_) => Ok(true),
        Err(Denied::Refused(refusal)) if !refusal.of_the_key() => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// An account's grants read once per list request, on the first `approval` dataset that needs
/// one: [`authorize`] asks it as it asks the strongly consistent read on a table's routes.
struct GrantSnapshot<'a, L> {
    lister: &'a L,
    grants: tokio::sync::OnceCell<HashMap<Uuid, Grant>>,
    roles: tokio::sync::OnceCell<HashMap<OrgName, Role>>,
}

impl<'a, L: GrantLister> GrantSnapshot<'a, L> {
    fn new(lister: &'a L) -> Self {
        Self {
            lister,
            grants: tokio::sync::OnceCell::new(),
            roles: tokio::sync::OnceCell::new(),
        }
    }
}

impl<L: GrantLister> GrantReader for GrantSnapshot<'_, L> {
    async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
        let grants = self
            .grants
            .get_or_try_init(|| async {
                Ok::<_, StoreError>(self.lister.grants_of(owner).await?.into_iter().collect())
            })
            .await?;
        Ok(grants.get(dataset).cloned())
    }

    /// The account's grants and its organisations, each read once per list request.
    async fn standing(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        org: &OrgName,
    ) -> Result<Standing, StoreError> {
        let grant = self.grant(owner, dataset).await?;
        let roles = self
            .roles
            .get_or_try_init(|| async {
                Ok::<_, StoreError>(self.lister.roles_of(owner).await?.into_iter().collect())
            })
            .await?;
        Ok(Standing {
            grant,
            role: roles.get(org).copied(),
        })
    }
}

/// A table let through to one of its versions.
struct Opened {
    admitted: Admitted,
    dataset: DatasetRecord,
    /// The version read: the active one, or the one a query asked for.
    version: ActiveVersion,
    /// That version's Column objects, as stored.
    schema: Box<serde_json::value::RawValue>,
}

/// Reads a table (and the version asked for) with the key in one round trip, and judges it as
/// the data endpoint does. A version other than the active one is readable if it is older and
/// was activated and not withdrawn since ([`TableReader::read_table`] finds no other); every
/// other number gets the same answer, as one that does not exist.
async fn open(
    store: &impl SharingStore,
    name: &str,
    version: Option<u64>,
    hash: &KeyHash,
    now: DateTime<Utc>,
) -> Result<Opened, ApiError> {
    let named = || Named::Table(echo(name));
    let Ok(slug) = Slug::parse(name) else {
        // Not a slug: no such table, once the key is known to be good.
        signed_in(store, hash, now).await?;
        return Err(ApiError::DatasetNotFound(named()));
    };
    let read = store.read_table(&slug, version, hash).await?;
    let target = read.dataset.as_ref().map(DatasetRecord::target);
    // The protocol has no 410: an unpublished table is one that does not exist, saying why.
    let admitted = judge(named(), target, Some((hash, read.key)), store, now)
        .await
        .map_err(|e| match e {
            ApiError::Unpublished(slug) => SharingError::Unpublished(slug).into(),
            e => e,
        })?;
    let Some(dataset) = read.dataset else {
        return Err(ApiError::DatasetNotFound(named()));
    };
    let active = admitted.active.clone();
    let (version, schema) = match version {
        None => (active, dataset.schema.clone()),
        Some(v) if v == active.version => (active, dataset.schema.clone()),
        Some(v) => match read.version {
            Some(stored) if v < active.version && stored.version.version == v => {
                (stored.version, stored.schema)
            }
            _ => {
                return Err(SharingError::VersionUnavailable {
                    slug,
                    requested: v,
                    active: active.version,
                }
                .into())
            }
        },
    };
    Ok(Opened {
        admitted,
        dataset,
        version,
        schema,
    })
}

/// A column as its stored statistics name it: what the Delta schema needs.
#[derive(Deserialize)]
struct Column {
    name: String,
    #[serde(default)]
    dtype: String,
}

fn stored_columns(opened: &Opened) -> Result<Vec<Column>, ApiError> {
    serde_json::from_str(opened.schema.get()).map_err(|e| {
        ApiError::Internal(Box::new(StoreError::Corrupt(format!(
            "the schema of '{}' v{}: {e}",
            opened.admitted.slug, opened.version.version
        ))))
    })
}

fn metadata_line(opened: &Opened) -> Result<String, ApiError> {
    let columns = stored_columns(opened)?;
    let schema = delta_schema(columns.iter().map(|c| (c.name.as_str(), c.dtype.as_str())));
    let card = &opened.dataset.meta.card;
    let files = opened.version.files.as_deref();
    let metadata = Metadata {
        id: opened.dataset.id.to_string(),
        name: &card.name,
        description: card.description.as_deref(),
        format: Format::PARQUET,
        schema_string: schema.to_string(),
        partition_columns: files.map_or_else(Vec::new, |f| {
            f.partitions.iter().map(|p| p.name.as_str()).collect()
        }),
        configuration: serde_json::Map::new(),
        version: opened.version.version,
        size: files.map_or(opened.version.size, |f| f.bytes),
        num_files: files.map_or(1, |f| f.files),
    };
    Ok(json!({ "metaData": metadata }).to_string())
}

/// The protocol line, then `lines`, one JSON object per line, with the version's header.
fn ndjson(opened: &Opened, lines: &[String]) -> Result<Response<Body>, ApiError> {
    let mut body = String::from(r#"{"protocol":{"minReaderVersion":1}}"#);
    for line in lines {
        body.push('\n');
        body.push_str(line);
    }
    body.push('\n');
    let mut response = Response::new(Body::Text(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/x-ndjson; charset=utf-8"),
    );
    // Whatever the client asked for, the answer is in the parquet format.
    headers.insert(
        "delta-sharing-capabilities",
        HeaderValue::from_static("responseformat=parquet"),
    );
    set_version(&mut response, opened.version.version);
    Ok(response)
}

/// `response` gzip-compressed (`Content-Encoding: gzip`), for a client that accepts it.
fn gzipped(mut response: Response<Body>) -> Response<Body> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writes into a Vec cannot fail.
    let _ = encoder.write_all(response.body().as_ref());
    let Ok(compressed) = encoder.finish() else {
        return response;
    };
    *response.body_mut() = Body::Binary(compressed);
    response
        .headers_mut()
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    response
}

fn set_version(response: &mut Response<Body>, version: u64) {
    response
        .headers_mut()
        .insert("delta-table-version", HeaderValue::from(version));
}

fn json_ok<T: serde::Serialize>(body: &T) -> Response<Body> {
    let mut response = json_response(StatusCode::OK, body);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    response
}
