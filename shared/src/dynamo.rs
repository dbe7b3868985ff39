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
//! | counter | `CATALOG` | `COUNTER` | `total`: how many datasets are listed |
//!
//! The dataset item and its alias are always written together, in one transaction.
//!
//! Listed datasets are numbered 1..=total in publication order with no gaps, so the dataset at
//! position `i` of the newest-first order has `seq = total - i`: any page is one consistent
//! read of the counter plus one range query over `page_size` list entries, whatever the page.
//!
//! Keys table (`key_hash`, string): one item per API key, keyed by the SHA-256 of the key.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, KeysAndAttributes,
    Put, ScalarAttributeType, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

use crate::domain::{DatasetRef, KeyHash, Scope, Slug};
use crate::error::{BoxError, StoreError};
use crate::model::{
    format_time, ActiveVersion, CatalogPage, DatasetRecord, DatasetSummary, DownloadTarget,
    KeyRecord,
};
use crate::ports::{CatalogPager, DatasetReader, DownloadReader};

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

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn n(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// Sorts an SDK error into "retry later" (throttling, timeouts, connection failures, server
/// errors) and everything else.
pub fn classify<E, R>(err: SdkError<E, R>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    let transient = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            true
        }
        SdkError::ServiceError(e) => matches!(
            e.err().code(),
            Some(
                "ProvisionedThroughputExceededException"
                    | "ThrottlingException"
                    | "RequestLimitExceeded"
                    | "InternalServerError"
                    | "ServiceUnavailable"
                    | "LimitExceededException"
            )
        ),
        _ => false,
    };
    let boxed: BoxError = Box::new(err);
    if transient {
        StoreError::Unavailable(boxed)
    } else {
        StoreError::Other(boxed)
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

/// Reads the datasets table (and, for downloads, the keys table).
#[derive(Clone, Debug)]
pub struct DynamoCatalog {
    client: Client,
    datasets_table: String,
    keys_table: Option<String>,
}

impl DynamoCatalog {
    /// For the list and metadata functions, which never read keys.
    pub fn new(client: Client, datasets_table: impl Into<String>) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: None,
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
        let mut get = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(Self::dataset_key(dataset)));
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
        let mut request: HashMap<String, KeysAndAttributes> = HashMap::from([
            (
                self.datasets_table.clone(),
                KeysAndAttributes::builder()
                    .keys(Self::dataset_key(dataset))
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
        let mut dataset = None;
        let mut key = None;
        for attempt in 0..=BATCH_RETRIES {
            if attempt > 0 {
                tokio::time::sleep(Duration::from_millis(25 << attempt)).await;
            }
            let out = self
                .client
                .batch_get_item()
                .set_request_items(Some(request))
                .send()
                .await
                .map_err(classify)?;
            if let Some(mut responses) = out.responses {
                if let Some(mut items) = responses.remove(&self.datasets_table) {
                    dataset = dataset.or(items.pop());
                }
                if let Some(mut items) = responses.remove(&keys_table) {
                    key = key.or(items.pop());
                }
            }
            match out.unprocessed_keys {
                Some(rest) if !rest.is_empty() => request = rest,
                _ => return Ok((dataset, key)),
            }
        }
        Err(StoreError::Unavailable(
            "BatchGetItem left keys unprocessed after retries".into(),
        ))
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

impl CatalogPager for DynamoCatalog {
    async fn page(&self, offset: Option<u64>, limit: u64) -> Result<CatalogPage, StoreError> {
        let counter = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .key("pk", s(COUNTER_PK))
            .key("sk", s(COUNTER_SK))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        let total = match counter.item {
            Some(item) => get_u64(&item, "total")?,
            None => 0,
        };
        let Some(offset) = offset.filter(|o| *o < total) else {
            return Ok(CatalogPage {
                total,
                items: Vec::new(),
            });
        };
        // Newest first: position `offset` is seq `total - offset`.
        let high = total - offset;
        let low = high.saturating_sub(limit.saturating_sub(1)).max(1);
        let mut items = Vec::with_capacity((high - low + 1) as usize);
        let mut start = None;
        loop {
            let out = self
                .client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression("pk = :pk AND sk BETWEEN :low AND :high")
                .expression_attribute_values(":pk", s(LIST_PK))
                .expression_attribute_values(":low", s(list_sk(low)))
                .expression_attribute_values(":high", s(list_sk(high)))
                .scan_index_forward(false)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(classify)?;
            for item in out.items.unwrap_or_default() {
                items.push(summary_from(&item)?);
            }
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        Ok(CatalogPage { total, items })
    }
}

// ---------------------------------------------------------------------------------------------
// Writing (used by the local stack's seeding and the tests; the operators' CLI builds on it)

/// Descriptive fields of a dataset, as an operator supplies them.
#[derive(Debug, Clone)]
pub struct DatasetMeta {
    pub slug: Slug,
    pub name: String,
    pub description: Option<String>,
    pub license: String,
    pub source: String,
    pub category: String,
    pub tags: Vec<String>,
    pub insights: String,
    /// JSON array of Discussion objects.
    pub discussions_json: String,
    pub keyless_until: Option<DateTime<Utc>>,
}

/// A version whose Parquet object is already in S3.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub active: ActiveVersion,
    /// JSON array of Column objects.
    pub schema_json: String,
}

/// A new API key's record (the secret itself never reaches this layer).
#[derive(Debug, Clone)]
pub struct NewKey {
    pub hash: KeyHash,
    pub id: String,
    pub prefix: String,
    pub label: String,
    pub scopes: Vec<Scope>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
}

fn active_value(a: &ActiveVersion) -> AttributeValue {
    AttributeValue::M(HashMap::from([
        ("version".to_owned(), n(a.version)),
        ("s3_key".to_owned(), s(&a.s3_key)),
        ("size".to_owned(), n(a.size)),
        ("row_count".to_owned(), n(a.row_count)),
        ("column_count".to_owned(), n(a.columns.len() as u64)),
        (
            "columns".to_owned(),
            AttributeValue::L(a.columns.iter().map(s).collect()),
        ),
        ("sha256".to_owned(), s(&a.sha256)),
        ("published_at".to_owned(), s(format_time(&a.published_at))),
    ]))
}

fn opt_s(v: Option<&str>) -> AttributeValue {
    v.map_or(AttributeValue::Null(true), s)
}

fn opt_time(v: Option<&DateTime<Utc>>) -> AttributeValue {
    v.map_or(AttributeValue::Null(true), |t| s(format_time(t)))
}

fn strings(v: &[String]) -> AttributeValue {
    AttributeValue::L(v.iter().map(s).collect())
}

/// Writes datasets, versions and keys.
#[derive(Clone, Debug)]
pub struct DynamoWriter {
    client: Client,
    datasets_table: String,
    keys_table: String,
}

impl DynamoWriter {
    pub fn new(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: keys_table.into(),
        }
    }

    /// Creates a new dataset whose first version is active, and lists it, in one transaction
    /// that also advances the catalog counter (so positions stay gap-free). Fails if the slug
    /// exists or a concurrent writer took the same position.
    pub async fn create_dataset(
        &self,
        meta: &DatasetMeta,
        version: &NewVersion,
        now: DateTime<Utc>,
        id: Uuid,
    ) -> Result<Uuid, StoreError> {
        let counter = self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .key("pk", s(COUNTER_PK))
            .key("sk", s(COUNTER_SK))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        let total = match counter.item {
            Some(item) => get_u64(&item, "total")?,
            None => 0,
        };
        let seq = total + 1;
        let slug = meta.slug.as_str();
        let a = &version.active;
        let created = s(format_time(&now));

        let dataset_item = HashMap::from([
            ("pk".to_owned(), s(dataset_pk(slug))),
            ("sk".to_owned(), s(DATASET_SK)),
            ("slug".to_owned(), s(slug)),
            ("id".to_owned(), s(id.to_string())),
            ("name".to_owned(), s(&meta.name)),
            ("description".to_owned(), opt_s(meta.description.as_deref())),
            ("license".to_owned(), s(&meta.license)),
            ("source".to_owned(), s(&meta.source)),
            ("category".to_owned(), s(&meta.category)),
            ("tags".to_owned(), strings(&meta.tags)),
            ("insights".to_owned(), s(&meta.insights)),
            ("discussions".to_owned(), s(&meta.discussions_json)),
            (
                "keyless_until".to_owned(),
                opt_time(meta.keyless_until.as_ref()),
            ),
            ("created_at".to_owned(), created.clone()),
            ("updated_at".to_owned(), created.clone()),
            ("seq".to_owned(), n(seq)),
            ("latest_version".to_owned(), n(a.version)),
            ("active".to_owned(), active_value(a)),
            ("schema".to_owned(), s(&version.schema_json)),
        ]);
        let mut alias_item = dataset_item.clone();
        alias_item.insert("pk".to_owned(), s(alias_pk(&id)));
        let version_item = HashMap::from([
            ("pk".to_owned(), s(dataset_pk(slug))),
            ("sk".to_owned(), s(version_sk(a.version))),
            ("version".to_owned(), active_value(a)),
            ("schema".to_owned(), s(&version.schema_json)),
        ]);
        let list_item = HashMap::from([
            ("pk".to_owned(), s(LIST_PK)),
            ("sk".to_owned(), s(list_sk(seq))),
            ("slug".to_owned(), s(slug)),
            ("id".to_owned(), s(id.to_string())),
            ("name".to_owned(), s(&meta.name)),
            ("description".to_owned(), opt_s(meta.description.as_deref())),
            ("category".to_owned(), s(&meta.category)),
            ("tags".to_owned(), strings(&meta.tags)),
            ("license".to_owned(), s(&meta.license)),
            ("size".to_owned(), n(a.size)),
            ("row_count".to_owned(), n(a.row_count)),
            ("column_count".to_owned(), n(a.columns.len() as u64)),
            (
                "keyless_until".to_owned(),
                opt_time(meta.keyless_until.as_ref()),
            ),
            ("updated_at".to_owned(), created),
        ]);
        let put = |item: Item| -> Result<TransactWriteItem, StoreError> {
            Ok(TransactWriteItem::builder()
                .put(
                    Put::builder()
                        .table_name(&self.datasets_table)
                        .set_item(Some(item))
                        .condition_expression("attribute_not_exists(pk)")
                        .build()
                        .map_err(|e| StoreError::Other(Box::new(e)))?,
                )
                .build())
        };
        let counter_update = Update::builder()
            .table_name(&self.datasets_table)
            .key("pk", s(COUNTER_PK))
            .key("sk", s(COUNTER_SK))
            .update_expression("SET #total = :new")
            .condition_expression(if total == 0 {
                "attribute_not_exists(#total) OR #total = :old"
            } else {
                "#total = :old"
            })
            .expression_attribute_names("#total", "total")
            .expression_attribute_values(":new", n(seq))
            .expression_attribute_values(":old", n(total))
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        self.client
            .transact_write_items()
            .transact_items(put(dataset_item)?)
            .transact_items(put(alias_item)?)
            .transact_items(put(version_item)?)
            .transact_items(put(list_item)?)
            .transact_items(TransactWriteItem::builder().update(counter_update).build())
            .send()
            .await
            .map_err(classify)?;
        Ok(id)
    }

    /// Stores a new key's record (hash, never the secret).
    pub async fn put_key(&self, key: &NewKey) -> Result<(), StoreError> {
        let scopes: Vec<String> = key.scopes.iter().map(|s| s.as_str().to_owned()).collect();
        self.client
            .put_item()
            .table_name(&self.keys_table)
            .item(KEY_ATTR, s(key.hash.as_str()))
            .item("id", s(&key.id))
            .item("prefix", s(&key.prefix))
            .item("label", s(&key.label))
            .item("scopes", strings(&scopes))
            .item("created_at", s(format_time(&key.created_at)))
            .item("expires_at", opt_time(key.expires_at.as_ref()))
            .condition_expression("attribute_not_exists(key_hash)")
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// Marks a key revoked as of `at`; the next request with it is refused.
    pub async fn revoke_key(&self, hash: &KeyHash, at: DateTime<Utc>) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .key(KEY_ATTR, s(hash.as_str()))
            .update_expression("SET revoked_at = :at")
            .condition_expression("attribute_exists(key_hash)")
            .expression_attribute_values(":at", s(format_time(&at)))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }
}

/// Creates both tables as template.yaml declares them (for local stacks and tests).
pub async fn create_tables(
    client: &Client,
    datasets_table: &str,
    keys_table: &str,
) -> Result<(), StoreError> {
    let attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))
    };
    let key = |name: &str, kind: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))
    };
    client
        .create_table()
        .table_name(datasets_table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr("pk")?)
        .attribute_definitions(attr("sk")?)
        .key_schema(key("pk", KeyType::Hash)?)
        .key_schema(key("sk", KeyType::Range)?)
        .send()
        .await
        .map_err(classify)?;
    client
        .create_table()
        .table_name(keys_table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(KEY_ATTR)?)
        .key_schema(key(KEY_ATTR, KeyType::Hash)?)
        .send()
        .await
        .map_err(classify)?;
    Ok(())
}
