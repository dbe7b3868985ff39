//! DynamoDB adapters and the table layout.
//!
//! Datasets table (`pk`, `sk`, both strings):
//!
//! | item | pk | sk | holds |
//! |---|---|---|---|
//! | dataset | `DS#<slug>` | `DATASET` | metadata, `keyless_until`, the active version (`active` map) and its `schema`, `id` (UUID), `seq` |
//! | dataset alias | `ID#<uuid>` | `DATASET` | the same attributes, so a UUID resolves in one strongly consistent read |
//! | version | `DS#<slug>` | `V#<version, 10 digits>` | one immutable published version |
//! | list entry | `LIST` | `SEQ#<seq, 12 digits>` | the summary shown by the list endpoint |
//! | counter | `CATALOG` | `COUNTER` | `total`: how many datasets are listed; `rev`: bumped by every write to a list |
//! | facet list entry | `LIST#<facet>#<value>` | `SEQ#<position, 12 digits>` | the summary, and `seq`, its position in `LIST` |
//! | facet counter | `CATALOG#<facet>#<value>` | `COUNTER` | `total`: how many datasets the facet list holds |
//!
//! The dataset item and its alias are always written together, in one transaction.
//!
//! Listed datasets are numbered 1..=total in publication order with no gaps, so the dataset at
//! position `i` of the newest-first order has `seq = total - i`: any page is one consistent
//! read of the counter plus one range query over `page_size` list entries, whatever the page.
//!
//! Each facet value (`category#biology`, `tag#birds`, `license#cc0-1.0`; lowercase) has its own
//! list, numbered 1..=total the same way in the same publication order, so a single-facet
//! listing costs what the plain listing costs. Combined filters, words and other sort orders
//! read a whole list (the smallest facet list involved, else `LIST`) and filter it in memory;
//! each function instance keeps the last few such lists, keyed by `rev`, so until the catalog
//! changes they cost one read of the counters.
//!
//! Keys table (`key_hash`, string): one item per API key, keyed by the SHA-256 of the key.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use crate::lock;
use std::time::Duration;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::domain::{DatasetRef, KeyHash, Scope};
use crate::error::{BoxError, StoreError};
use crate::model::{
    ActiveVersion, CatalogPage, DatasetRecord, DatasetSummary, DownloadTarget, KeyRecord,
};
use crate::ports::{CatalogPager, DatasetReader, DownloadReader};
use crate::query::{Facet, Indexed, ListQuery, Plan};

const DATASET_SK: &str = "DATASET";
const LIST_PK: &str = "LIST";
const COUNTER_PK: &str = "CATALOG";
const COUNTER_SK: &str = "COUNTER";
const KEY_ATTR: &str = "key_hash";
/// How often BatchGetItem's unprocessed keys are retried before the request answers 503.
const BATCH_RETRIES: u32 = 3;

type Item = HashMap<String, AttributeValue>;

fn dataset_pk(slug: &str) -> String {
    format!("DS#{slug}")
}

fn alias_pk(id: &Uuid) -> String {
    format!("ID#{id}")
}

fn version_sk(version: u64) -> String {
    format!("V#{version:010}")
}

fn list_sk(seq: u64) -> String {
    format!("SEQ#{seq:012}")
}

fn facet_list_pk(facet: &Facet) -> String {
    format!("{LIST_PK}#{}", facet.key())
}

fn facet_counter_pk(facet: &Facet) -> String {
    format!("{COUNTER_PK}#{}", facet.key())
}

/// The position in `sk` (`SEQ#000000000042` is 42).
fn position_of(item: &Item) -> Result<u64, StoreError> {
    get_s(item, "sk")?
        .strip_prefix("SEQ#")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| corrupt("sk"))
}

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// Sorts an SDK error into "the backend throttled us" (a rate limit), "retry later" (timeouts,
/// connection failures, server errors) and everything else.
pub fn classify<E, R>(err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    enum Kind {
        Throttled,
        Transient,
        Other,
    }
    let kind = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            Kind::Transient
        }
        SdkError::ServiceError(e) => match e.err().code() {
            Some(
                "ProvisionedThroughputExceededException"
                | "ThrottlingException"
                | "RequestLimitExceeded"
                | "LimitExceededException",
            ) => Kind::Throttled,
            Some("InternalServerError" | "ServiceUnavailable") => Kind::Transient,
            _ => Kind::Other,
        },
        _ => Kind::Other,
    };
    let boxed: BoxError = Box::new(err);
    match kind {
        Kind::Throttled => StoreError::Throttled(boxed),
        Kind::Transient => StoreError::Unavailable(boxed),
        Kind::Other => StoreError::Other(boxed),
    }
}

// ---------------------------------------------------------------------------------------------
// Reading attributes

fn corrupt(name: &str) -> StoreError {
    StoreError::Corrupt(format!("attribute '{name}' missing or of the wrong type"))
}

fn get_s(item: &Item, name: &str) -> Result<String, StoreError> {
    match item.get(name) {
        Some(AttributeValue::S(v)) => Ok(v.clone()),
        _ => Err(corrupt(name)),
    }
}

fn get_s_opt(item: &Item, name: &str) -> Result<Option<String>, StoreError> {
    match item.get(name) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::S(v)) => Ok(Some(v.clone())),
        _ => Err(corrupt(name)),
    }
}

fn get_u64(item: &Item, name: &str) -> Result<u64, StoreError> {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v.parse().map_err(|_| corrupt(name)),
        _ => Err(corrupt(name)),
    }
}

fn get_strings(item: &Item, name: &str) -> Result<Vec<String>, StoreError> {
    match item.get(name) {
        None => Ok(Vec::new()),
        Some(AttributeValue::L(values)) => values
            .iter()
            .map(|v| match v {
                AttributeValue::S(s) => Ok(s.clone()),
                _ => Err(corrupt(name)),
            })
            .collect(),
        Some(AttributeValue::Ss(values)) => Ok(values.clone()),
        _ => Err(corrupt(name)),
    }
}

fn parse_time(name: &str, raw: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| corrupt(name))
}

fn get_time(item: &Item, name: &str) -> Result<DateTime<Utc>, StoreError> {
    parse_time(name, &get_s(item, name)?)
}

fn get_time_opt(item: &Item, name: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    get_s_opt(item, name)?
        .map(|raw| parse_time(name, &raw))
        .transpose()
}

fn get_json(item: &Item, name: &str) -> Result<Box<RawValue>, StoreError> {
    let text = get_s(item, name)?;
    RawValue::from_string(text).map_err(|_| corrupt(name))
}

fn get_uuid(item: &Item, name: &str) -> Result<Uuid, StoreError> {
    Uuid::try_parse(&get_s(item, name)?).map_err(|_| corrupt(name))
}

fn active_from(item: &Item) -> Result<Option<ActiveVersion>, StoreError> {
    let m = match item.get("active") {
        None | Some(AttributeValue::Null(_)) => return Ok(None),
        Some(AttributeValue::M(m)) => m,
        _ => return Err(corrupt("active")),
    };
    Ok(Some(ActiveVersion {
        version: get_u64(m, "version")?,
        s3_key: get_s(m, "s3_key")?,
        size: get_u64(m, "size")?,
        row_count: get_u64(m, "row_count")?,
        columns: get_strings(m, "columns")?,
        sha256: get_s(m, "sha256")?,
        published_at: get_time(m, "published_at")?,
    }))
}

fn dataset_from(item: &Item) -> Result<DatasetRecord, StoreError> {
    Ok(DatasetRecord {
        id: get_uuid(item, "id")?,
        slug: get_s(item, "slug")?,
        name: get_s(item, "name")?,
        description: get_s_opt(item, "description")?,
        license: get_s(item, "license")?,
        source: get_s(item, "source")?,
        category: get_s(item, "category")?,
        tags: get_strings(item, "tags")?,
        insights: get_s(item, "insights")?,
        discussions: get_json(item, "discussions")?,
        schema: match item.get("schema") {
            None => RawValue::from_string("[]".to_owned()).map_err(|_| corrupt("schema"))?,
            Some(_) => get_json(item, "schema")?,
        },
        keyless_until: get_time_opt(item, "keyless_until")?,
        created_at: get_time(item, "created_at")?,
        updated_at: get_time(item, "updated_at")?,
        active: active_from(item)?,
    })
}

fn target_from(item: &Item) -> Result<DownloadTarget, StoreError> {
    Ok(DownloadTarget {
        slug: get_s(item, "slug")?,
        keyless_until: get_time_opt(item, "keyless_until")?,
        active: active_from(item)?,
    })
}

fn summary_from(item: &Item) -> Result<DatasetSummary, StoreError> {
    Ok(DatasetSummary {
        slug: get_s(item, "slug")?,
        id: get_uuid(item, "id")?,
        name: get_s(item, "name")?,
        description: get_s_opt(item, "description")?,
        category: get_s(item, "category")?,
        tags: get_strings(item, "tags")?,
        license: get_s(item, "license")?,
        size: get_u64(item, "size")?,
        row_count: get_u64(item, "row_count")?,
        column_count: get_u64(item, "column_count")?,
        keyless_until: get_time_opt(item, "keyless_until")?,
        updated_at: get_time(item, "updated_at")?,
        keyless: false,
        // Facet entries carry their `LIST` position; a `LIST` entry's is its own.
        seq: match item.get("seq") {
            Some(_) => get_u64(item, "seq")?,
            None => position_of(item)?,
        },
    })
}

fn key_from(item: &Item) -> Result<KeyRecord, StoreError> {
    Ok(KeyRecord {
        id: get_s(item, "id")?,
        scopes: get_strings(item, "scopes")?
            .iter()
            .map(|s| Scope::parse(s))
            .collect(),
        expires_at: get_time_opt(item, "expires_at")?,
        revoked_at: get_time_opt(item, "revoked_at")?,
    })
}

// ---------------------------------------------------------------------------------------------
// Readers

/// A whole list as read for a scan, valid while the catalog's `rev` is unchanged.
#[derive(Debug)]
struct Snapshot {
    list_pk: String,
    rev: u64,
    items: Arc<Vec<Indexed>>,
}

/// How many lists an instance keeps for scans.
const SNAPSHOTS: usize = 4;

/// Reads the datasets table (and, for downloads, the keys table).
#[derive(Clone, Debug)]
pub struct DynamoCatalog {
    client: Client,
    datasets_table: String,
    keys_table: Option<String>,
    snapshots: Arc<Mutex<VecDeque<Snapshot>>>,
}

impl DynamoCatalog {
    /// For the list and metadata functions, which never read keys.
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: None,
            snapshots: Arc::default(),
        }
    }

    /// For the data function.
    pub fn with_keys(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: Some(keys_table.into()),
            snapshots: Arc::default(),
        }
    }

    fn keys_table(&self) -> Result<&str, StoreError> {
        self.keys_table
            .as_deref()
            .ok_or_else(|| StoreError::Other("keys table not configured".into()))
    }

    /// The primary key of the item a request names: the dataset item for a slug, its alias
    /// for a UUID.
    fn dataset_key(dataset: &DatasetRef) -> Item {
        let pk = match dataset {
            DatasetRef::Slug(slug) => dataset_pk(slug.as_str()),
            DatasetRef::Id(id) => alias_pk(id),
        };
        HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(DATASET_SK))])
    }

    async fn get_dataset_item(
        &self,
        dataset: &DatasetRef,
        projection: Option<&str>,
    ) -> Result<Option<Item>, StoreError> {
        // Strongly consistent: an activation, rollback or keyless change shows on the next request.
        let mut get = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(Self::dataset_key(dataset)))
            .consistent_read(true);
        if let Some(p) = projection {
            get = get
                .projection_expression(p)
                .set_expression_attribute_names(Some(download_projection_names()));
        }
        Ok(get.send().await.map_err(classify)?.item)
    }

    /// Dataset item and key item in one BatchGetItem.
    async fn batch_get(
        &self,
        dataset: &DatasetRef,
        hash: &KeyHash,
    ) -> Result<(Option<Item>, Option<Item>), StoreError> {
        let keys_table = self.keys_table()?.to_owned();
        let request: HashMap<String, KeysAndAttributes> = HashMap::from([
            (
                self.datasets_table.clone(),
                KeysAndAttributes::builder()
                    .keys(Self::dataset_key(dataset))
                    .consistent_read(true)
                    .projection_expression(DOWNLOAD_PROJECTION)
                    .set_expression_attribute_names(Some(download_projection_names()))
                    .build()
                    .map_err(|e| StoreError::Other(Box::new(e)))?,
            ),
            (
                keys_table.clone(),
                KeysAndAttributes::builder()
                    .keys(HashMap::from([(KEY_ATTR.to_owned(), s(hash.as_str()))]))
                    .consistent_read(true)
                    .build()
                    .map_err(|e| StoreError::Other(Box::new(e)))?,
            ),
        ]);
        let mut found = batch_get_all(&self.client, request).await?;
        let mut first = |table: &str| found.remove(table).and_then(|mut items| items.pop());
        Ok((first(&self.datasets_table), first(&keys_table)))
    }
}

const DOWNLOAD_PROJECTION: &str = "#slug, #until, #active";

fn download_projection_names() -> HashMap<String, String> {
    HashMap::from([
        ("#slug".to_owned(), "slug".to_owned()),
        ("#until".to_owned(), "keyless_until".to_owned()),
        ("#active".to_owned(), "active".to_owned()),
    ])
}

impl DatasetReader for DynamoCatalog {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        let item = self.get_dataset_item(dataset, None).await?;
        item.as_ref().map(dataset_from).transpose()
    }
}

impl DownloadReader for DynamoCatalog {
    async fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError> {
        let (dataset_item, key_item) = match key {
            None => (
                self.get_dataset_item(dataset, Some(DOWNLOAD_PROJECTION))
                    .await?,
                None,
            ),
            Some(hash) => self.batch_get(dataset, hash).await?,
        };
        Ok((
            dataset_item.as_ref().map(target_from).transpose()?,
            key_item.as_ref().map(key_from).transpose()?,
        ))
    }
}

impl DynamoCatalog {
    async fn get_counter(&self, pk: String) -> Result<Option<Item>, StoreError> {
        Ok(self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .key("pk", s(pk))
            .key("sk", s(COUNTER_SK))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?
            .item)
    }

    /// One page of a positional list (`LIST` or a facet's): its counter, then one range query
    /// over at most `limit` positions.
    async fn positional(
        &self,
        list_pk: String,
        counter_pk: String,
        facet: Option<&Facet>,
        offset: Option<u64>,
        limit: u64,
        descending: bool,
    ) -> Result<CatalogPage, StoreError> {
        let total = match self.get_counter(counter_pk).await? {
            Some(item) => get_u64(&item, "total")?,
            None => match facet {
                Some(f) => return Err(unknown(f)),
                None => 0,
            },
        };
        let Some(offset) = offset.filter(|o| *o < total) else {
            return Ok(CatalogPage {
                total,
                items: Vec::new(),
            });
        };
        // Newest first: position `offset` is seq `total - offset`; oldest first, `offset + 1`.
        let (low, high) = if descending {
            let high = total - offset;
            (high.saturating_sub(limit.saturating_sub(1)).max(1), high)
        } else {
            (offset + 1, offset.saturating_add(limit).min(total))
        };
        let query = self
            .client
            .query()
            .table_name(&self.datasets_table)
            .key_condition_expression("pk = :pk AND sk BETWEEN :low AND :high")
            .expression_attribute_values(":pk", s(&list_pk))
            .expression_attribute_values(":low", s(list_sk(low)))
            .expression_attribute_values(":high", s(list_sk(high)))
            .scan_index_forward(!descending)
            .consistent_read(true);
        let items = query_all(query)
            .await?
            .iter()
            .map(summary_from)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(CatalogPage { total, items })
    }

    /// Combined filters, words or another order: the catalog's `rev` and the facets' counters
    /// in one read, then the smallest candidate list (from this instance's snapshots while
    /// `rev` is unchanged), filtered and sorted in memory.
    async fn scan(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        let mut keys = vec![key_of_counter(COUNTER_PK.to_owned())];
        keys.extend(
            query
                .facets
                .iter()
                .map(|f| key_of_counter(facet_counter_pk(f))),
        );
        let counters = self.batch_get_datasets(keys).await?;
        let by_pk = |pk: &str| {
            counters
                .iter()
                .find(|item| matches!(item.get("pk"), Some(AttributeValue::S(p)) if p == pk))
        };
        let rev = match by_pk(COUNTER_PK) {
            Some(item) if item.contains_key("rev") => get_u64(item, "rev")?,
            _ => 0,
        };
        let mut source = (LIST_PK.to_owned(), u64::MAX);
        for facet in &query.facets {
            let item = by_pk(&facet_counter_pk(facet)).ok_or_else(|| unknown(facet))?;
            let total = get_u64(item, "total")?;
            if total < source.1 {
                source = (facet_list_pk(facet), total);
            }
        }
        let candidates = self.snapshot(source.0, rev).await?;
        Ok(query.select(candidates.iter(), offset, limit))
    }

    /// A whole list, from this instance's snapshots when it was read at the same `rev`.
    async fn snapshot(&self, list_pk: String, rev: u64) -> Result<Arc<Vec<Indexed>>, StoreError> {
        if let Some(hit) = lock(&self.snapshots)
            .iter()
            .find(|snap| snap.list_pk == list_pk && snap.rev == rev)
        {
            return Ok(hit.items.clone());
        }
        let items = query_partition(&self.client, &self.datasets_table, &list_pk)
            .await?
            .iter()
            .map(|item| summary_from(item).map(Indexed::new))
            .collect::<Result<Vec<_>, _>>()?;
        let items = Arc::new(items);
        let mut snapshots = lock(&self.snapshots);
        snapshots.retain(|snap| snap.list_pk != list_pk);
        if snapshots.len() >= SNAPSHOTS {
            snapshots.pop_front();
        }
        snapshots.push_back(Snapshot {
            list_pk,
            rev,
            items: items.clone(),
        });
        Ok(items)
    }

    /// Items of the datasets table by key, in one BatchGetItem (retrying unprocessed keys).
    async fn batch_get_datasets(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let request = HashMap::from([(
            self.datasets_table.clone(),
            KeysAndAttributes::builder()
                .set_keys(Some(keys))
                .consistent_read(true)
                .build()
                .map_err(|e| StoreError::Other(Box::new(e)))?,
        )]);
        let mut found = batch_get_all(&self.client, request).await?;
        Ok(found.remove(&self.datasets_table).unwrap_or_default())
    }
}

/// One BatchGetItem, with its unprocessed keys retried (with backoff) up to `BATCH_RETRIES`
/// times: every item found, by table.
async fn batch_get_all(
    client: &Client,
    mut request: HashMap<String, KeysAndAttributes>,
) -> Result<HashMap<String, Vec<Item>>, StoreError> {
    let mut found: HashMap<String, Vec<Item>> = HashMap::new();
    for attempt in 0..=BATCH_RETRIES {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(25 << attempt)).await;
        }
        let out = client
            .batch_get_item()
            .set_request_items(Some(request))
            .send()
            .await
            .map_err(classify)?;
        for (table, items) in out.responses.unwrap_or_default() {
            found.entry(table).or_default().extend(items);
        }
        match out.unprocessed_keys {
            Some(rest) if !rest.is_empty() => request = rest,
            _ => return Ok(found),
        }
    }
    Err(StoreError::Unavailable(
        "BatchGetItem left keys unprocessed after retries".into(),
    ))
}

/// Every item a Query returns, over all its pages.
pub(crate) async fn query_all(query: QueryFluentBuilder) -> Result<Vec<Item>, StoreError> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = query
            .clone()
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(classify)?;
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => return Ok(items),
        }
    }
}

/// Every item of one partition, in key order (consistent reads, all pages).
async fn query_partition(client: &Client, table: &str, pk: &str) -> Result<Vec<Item>, StoreError> {
    query_all(
        client
            .query()
            .table_name(table)
            .key_condition_expression("pk = :pk")
            .expression_attribute_values(":pk", s(pk))
            .consistent_read(true),
    )
    .await
}

fn key_of_counter(pk: String) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(COUNTER_SK))])
}

fn unknown(facet: &Facet) -> StoreError {
    StoreError::UnknownFacet(format!("{} '{}'", facet.kind.name(), facet.value))
}

impl CatalogPager for DynamoCatalog {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        match query.plan() {
            Plan::Listing { descending } => {
                let (list, counter) = (LIST_PK.to_owned(), COUNTER_PK.to_owned());
                self.positional(list, counter, None, offset, limit, descending)
                    .await
            }
            Plan::Facet { facet, descending } => {
                let (list, counter) = (facet_list_pk(facet), facet_counter_pk(facet));
                self.positional(list, counter, Some(facet), offset, limit, descending)
                    .await
            }
            Plan::Scan => self.scan(query, offset, limit).await,
        }
    }
}

mod writer;
pub use writer::*;
