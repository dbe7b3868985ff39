//! The write side: publishing versions, activating them, keyless windows and API keys. Used by
//! the operators' CLI and the local stack, never by the Lambda functions.
//!
//! Publishing is three steps, each safe to fail: reserve a version number (creating the dataset,
//! unlisted and without an active version, if it is new); write the version record once its
//! object is in S3; activate it with a transaction conditioned on the version that was active
//! before. Until activation succeeds, the previous version keeps serving.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, DeleteRequest, KeySchemaElement, KeyType,
    Put, PutRequest, ReturnValue, ScalarAttributeType, TransactWriteItem, Update, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{
    active_from, alias_pk, classify, dataset_pk, facet_counter_pk, facet_list_pk, get_json, get_s,
    get_s_opt, get_strings, get_time, get_time_opt, get_u64, get_uuid, list_sk, n, position_of,
    query_all, query_partition, s, version_sk, Item, COUNTER_PK, COUNTER_SK, DATASET_SK, KEY_ATTR,
    LIST_PK,
};
use crate::domain::{KeyHash, Scope, Slug};
use crate::error::StoreError;
use crate::model::{format_time, ActiveVersion};
use crate::query::Facet;

/// Descriptive fields of a dataset, as an operator supplies them.
#[derive(Debug, Clone, PartialEq)]
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

impl NewKey {
    /// The record of a new key: its hash, a random public id (unrelated to the secret, safe to
    /// log) and the secret's first 9 characters as a recognisable prefix.
    pub fn for_secret(
        secret: &str,
        scopes: Vec<Scope>,
        label: &str,
        created_at: DateTime<Utc>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            hash: KeyHash::of(secret),
            id: format!("key_{}", &Uuid::new_v4().simple().to_string()[..16]),
            prefix: secret.chars().take(9).collect(),
            label: label.to_owned(),
            scopes,
            created_at,
            expires_at,
        }
    }
}

/// A new random API key: `dcat_` and 64 hex digits (244 random bits from two v4 UUIDs), a
/// prefix secret scanners can match.
pub fn generate_key() -> String {
    let a = Uuid::new_v4();
    let b = Uuid::new_v4();
    format!(
        "dcat_{}{}",
        hex::encode(a.as_bytes()),
        hex::encode(b.as_bytes())
    )
}

/// An API key as operators see it: never the secret, never the hash.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyInfo {
    pub id: String,
    pub prefix: String,
    pub label: String,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

/// A stored version of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionInfo {
    pub version: ActiveVersion,
    pub active: bool,
}

/// The version number reserved for a publish.
#[derive(Debug, Clone, PartialEq)]
pub struct Reserved {
    pub id: Uuid,
    pub version: u64,
    /// The version active when the reservation was made: activation succeeds only if it still is.
    pub previous: Option<u64>,
    /// The descriptive metadata stored at that moment (for a new dataset, what was given).
    pub stored: DatasetMeta,
}

/// Which version must be active for an activation to go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// None may be active yet (a new dataset's first version).
    Nothing,
    /// This version must still be active.
    Version(u64),
}

impl From<Option<u64>> for Expected {
    fn from(v: Option<u64>) -> Self {
        v.map_or(Self::Nothing, Self::Version)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("dataset '{0}' does not exist")]
    NoSuchDataset(String),
    #[error("dataset '{0}' has no version {1}")]
    NoSuchVersion(String, u64),
    #[error("another write changed dataset '{0}' first; nothing was changed")]
    Conflict(String),
    #[error("no API key with id '{0}'")]
    NoSuchKey(String),
    #[error("slug '{0}' is already taken by a published dataset")]
    SlugTaken(String),
    /// Another writer has held a filter list for over a minute (or died holding it).
    #[error(
        "the filter list {0} is being rebuilt by another writer (a mark that expires after 10 minutes)"
    )]
    Busy(String),
    /// The change is committed and served, but some filter lists could not follow it.
    #[error(
        "the change is published, but these filter lists could not be updated: {0}; run `catalog-admin datasets reindex`"
    )]
    FacetLists(String),
    #[error(transparent)]
    Store(#[from] StoreError),
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

fn other(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Other(Box::new(e))
}

/// A DynamoDB transaction or conditional write that lost to a concurrent writer.
fn is_condition_failure(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("TransactionCanceledException" | "ConditionalCheckFailedException")
    )
}

fn meta_attributes(meta: &DatasetMeta) -> Vec<(&'static str, AttributeValue)> {
    vec![
        ("name", s(&meta.name)),
        ("description", opt_s(meta.description.as_deref())),
        ("license", s(&meta.license)),
        ("source", s(&meta.source)),
        ("category", s(&meta.category)),
        ("tags", strings(&meta.tags)),
        ("insights", s(&meta.insights)),
        ("discussions", s(&meta.discussions_json)),
    ]
}

/// The summary attributes of a list entry that come from the dataset's metadata.
const SUMMARY_META: [&str; 5] = ["name", "description", "category", "tags", "license"];

/// A transaction item `SET #a = :a, ...` over the given attributes, with names and values filled in.
fn tx_set(
    table: &str,
    key: Item,
    attributes: &[(&'static str, AttributeValue)],
    condition: &str,
    extra_values: &[(&str, AttributeValue)],
) -> Result<TransactWriteItem, StoreError> {
    let mut builder = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(condition);
    let mut parts = Vec::with_capacity(attributes.len());
    for (i, (name, value)) in attributes.iter().enumerate() {
        parts.push(format!("#a{i} = :v{i}"));
        builder = builder
            .expression_attribute_names(format!("#a{i}"), *name)
            .expression_attribute_values(format!(":v{i}"), value.clone());
    }
    for (name, value) in extra_values {
        builder = builder.expression_attribute_values(*name, value.clone());
    }
    if condition.contains("#active") {
        builder = builder.expression_attribute_names("#active", "active");
    }
    if condition.contains("#version") {
        builder = builder.expression_attribute_names("#version", "version");
    }
    if condition.contains("#slug") {
        builder = builder.expression_attribute_names("#slug", "slug");
    }
    let update = builder
        .update_expression(format!("SET {}", parts.join(", ")))
        .build()
        .map_err(other)?;
    Ok(TransactWriteItem::builder().update(update).build())
}

/// The outcome of a conditional write: a failed condition means a concurrent writer won.
fn settle<T, E, R>(
    result: Result<T, aws_sdk_dynamodb::error::SdkError<E, R>>,
    slug: &Slug,
) -> Result<(), WriteError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
    R: std::fmt::Debug + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) if is_condition_failure(e.code()) => Err(WriteError::Conflict(slug.to_string())),
        Err(e) => Err(classify(e).into()),
    }
}

fn key_of(pk: String, sk: &str) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
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

    async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        Ok(self
            .client
            .get_item()
            .table_name(&self.datasets_table)
            .set_key(Some(key))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?
            .item)
    }

    async fn dataset_item(&self, slug: &Slug) -> Result<Item, WriteError> {
        self.get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?
            .ok_or_else(|| WriteError::NoSuchDataset(slug.to_string()))
    }

    /// The descriptive metadata stored for a dataset, if it exists.
    pub async fn dataset_meta(&self, slug: &Slug) -> Result<Option<DatasetMeta>, WriteError> {
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?;
        Ok(item.as_ref().map(meta_from).transpose()?)
    }

    /// Reserves the next version number of `meta.slug`, creating the dataset (unlisted, with no
    /// active version, under `id` if given) when it does not exist yet. With `new_only`, a slug
    /// that already has an active version is refused (`SlugTaken`) and nothing changes.
    pub async fn reserve_version(
        &self,
        meta: &DatasetMeta,
        id: Option<Uuid>,
        new_only: bool,
        now: DateTime<Utc>,
    ) -> Result<Reserved, WriteError> {
        let slug = meta.slug.as_str();
        for _ in 0..2 {
            let condition = if new_only {
                "attribute_exists(pk) AND attribute_not_exists(active)"
            } else {
                "attribute_exists(pk)"
            };
            let bumped = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key_of(dataset_pk(slug), DATASET_SK)))
                .update_expression("SET latest_version = latest_version + :one")
                .condition_expression(condition)
                .expression_attribute_values(":one", n(1))
                .return_values(ReturnValue::AllNew)
                .return_values_on_condition_check_failure(
                    aws_sdk_dynamodb::types::ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            match bumped {
                Ok(out) => {
                    let item = out.attributes.unwrap_or_default();
                    return Ok(Reserved {
                        id: get_uuid(&item, "id")?,
                        version: get_u64(&item, "latest_version")?,
                        previous: active_from(&item)?.map(|a| a.version),
                        stored: meta_from(&item)?,
                    });
                }
                Err(e) => match e.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                        // It exists but already serves a version: taken (only with new_only).
                        if failed.item().is_some_and(|i| i.contains_key("pk")) {
                            return Err(WriteError::SlugTaken(slug.to_owned()));
                        }
                    }
                    _ => return Err(classify(e).into()),
                },
            }
            // A new dataset: its item and alias, unlisted, version 1 reserved.
            let id = id.unwrap_or_else(Uuid::new_v4);
            let mut item: Item = HashMap::from([
                ("pk".to_owned(), s(dataset_pk(slug))),
                ("sk".to_owned(), s(DATASET_SK)),
                ("slug".to_owned(), s(slug)),
                ("id".to_owned(), s(id.to_string())),
                ("created_at".to_owned(), s(format_time(&now))),
                ("updated_at".to_owned(), s(format_time(&now))),
                ("keyless_until".to_owned(), AttributeValue::Null(true)),
                ("latest_version".to_owned(), n(1)),
                ("schema".to_owned(), s("[]")),
            ]);
            for (name, value) in meta_attributes(meta) {
                item.insert(name.to_owned(), value);
            }
            let mut alias = item.clone();
            alias.insert("pk".to_owned(), s(alias_pk(&id)));
            let created = self
                .client
                .transact_write_items()
                .transact_items(self.put_new(item)?)
                .transact_items(self.put_new(alias)?)
                .send()
                .await;
            match created {
                Ok(_) => {
                    return Ok(Reserved {
                        id,
                        version: 1,
                        previous: None,
                        stored: meta.clone(),
                    })
                }
                // Someone created it meanwhile: bump its counter instead.
                Err(e) if is_condition_failure(e.code()) => continue,
                Err(e) => return Err(classify(e).into()),
            }
        }
        Err(WriteError::Conflict(slug.to_owned()))
    }

    fn put_new(&self, item: Item) -> Result<TransactWriteItem, StoreError> {
        Ok(TransactWriteItem::builder()
            .put(
                Put::builder()
                    .table_name(&self.datasets_table)
                    .set_item(Some(item))
                    .condition_expression("attribute_not_exists(pk)")
                    .build()
                    .map_err(other)?,
            )
            .build())
    }

    /// Records a version whose object is already in S3. Versions are immutable.
    pub async fn put_version(&self, slug: &Slug, version: &NewVersion) -> Result<(), WriteError> {
        let a = &version.active;
        let result = self
            .client
            .put_item()
            .table_name(&self.datasets_table)
            .item("pk", s(dataset_pk(slug.as_str())))
            .item("sk", s(version_sk(a.version)))
            .item("active", active_value(a))
            .item("schema", s(&version.schema_json))
            .condition_expression("attribute_not_exists(pk)")
            .send()
            .await;
        settle(result, slug)
    }

    /// Makes `version` the active one, in one transaction over the dataset item, its alias, its
    /// list entry (created on first activation, with the catalog counter) and, if given, new
    /// descriptive metadata. Fails with `Conflict`, changing nothing, unless `expected` is still
    /// what is active. A first activation that lost only the race for the next list position
    /// (another dataset listed at the same moment) is retried.
    pub async fn activate(
        &self,
        slug: &Slug,
        version: u64,
        expected: Expected,
        meta: Option<&DatasetMeta>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut attempts = 0;
        loop {
            match self.activate_once(slug, version, expected, meta, now).await {
                Err(WriteError::Conflict(_)) if attempts < 5 => {
                    attempts += 1;
                    // Jittered backoff: racing publishers spread out, and a facet list being
                    // rebuilt (seconds at most) gets time to finish.
                    let jitter = u64::from(Uuid::new_v4().as_bytes()[0]);
                    tokio::time::sleep(std::time::Duration::from_millis((50 << attempts) + jitter))
                        .await;
                    let current = active_from(&self.dataset_item(slug).await?)?.map(|a| a.version);
                    if Expected::from(current) != expected {
                        return Err(WriteError::Conflict(slug.to_string()));
                    }
                }
                other => return other,
            }
        }
    }

    async fn activate_once(
        &self,
        slug: &Slug,
        version: u64,
        expected: Expected,
        meta: Option<&DatasetMeta>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let dataset = self.dataset_item(slug).await?;
        let id = get_uuid(&dataset, "id")?;
        let current = active_from(&dataset)?.map(|a| a.version);
        if Expected::from(current) != expected {
            return Err(WriteError::Conflict(slug.to_string()));
        }
        let stored = self
            .get(key_of(dataset_pk(slug.as_str()), &version_sk(version)))
            .await?
            .ok_or_else(|| WriteError::NoSuchVersion(slug.to_string(), version))?;
        let active = active_from(&stored)?
            .ok_or_else(|| StoreError::Corrupt("version item without its version".into()))?;
        let schema = get_json(&stored, "schema")?;
        // Facet lists: those of the listed dataset as stored, and those it will be in.
        let listed_facets = match dataset.get("seq") {
            Some(_) => facets_of_item(&dataset)?,
            None => Vec::new(),
        };
        let effective = match meta {
            Some(m) => m.clone(),
            None => meta_from(&dataset)?,
        };
        let new_facets = Facet::of(&effective.category, &effective.tags, &effective.license);

        let mut set: Vec<(&'static str, AttributeValue)> = vec![
            ("active", active_value(&active)),
            ("schema", s(schema.get())),
            ("updated_at", s(format_time(&now))),
        ];
        if let Some(meta) = meta {
            set.extend(meta_attributes(meta));
        }
        let (condition, values) = match expected {
            Expected::Nothing => ("attribute_not_exists(#active)", vec![]),
            Expected::Version(v) => ("#active.#version = :prev", vec![(":prev", n(v))]),
        };

        // The list entry shows the new version's figures and the (possibly new) metadata.
        let summary_value = |name: &str| -> Result<AttributeValue, StoreError> {
            if let Some(meta) = meta {
                if let Some((_, v)) = meta_attributes(meta).into_iter().find(|(k, _)| *k == name) {
                    return Ok(v);
                }
            }
            Ok(dataset
                .get(name)
                .cloned()
                .unwrap_or(AttributeValue::Null(true)))
        };
        let mut summary: Vec<(&'static str, AttributeValue)> = vec![
            ("size", n(active.size)),
            ("row_count", n(active.row_count)),
            ("column_count", n(active.columns.len() as u64)),
            ("updated_at", s(format_time(&now))),
        ];
        for name in SUMMARY_META {
            summary.push((name, summary_value(name)?));
        }

        let mut tx = self.client.transact_write_items();
        // Facet lists to change after the transaction, by rewriting positions.
        let mut rebuilds: Vec<(Facet, u64)> = Vec::new();
        match dataset.get("seq") {
            Some(_) => {
                let seq = get_u64(&dataset, "seq")?;
                tx = tx.transact_items(tx_set(
                    &self.datasets_table,
                    key_of(LIST_PK.to_owned(), &list_sk(seq)),
                    &summary,
                    "attribute_exists(pk)",
                    &[],
                )?);
                // Entries in facet lists it stays in change with it; joining or leaving a facet
                // list shifts positions, done afterwards.
                for facet in &new_facets {
                    let position = match listed_facets.contains(facet) {
                        true => self.facet_position(facet, slug.as_str()).await?,
                        false => None,
                    };
                    match position {
                        Some(pos) => {
                            tx = tx
                                .transact_items(tx_set(
                                    &self.datasets_table,
                                    key_of(facet_list_pk(facet), &list_sk(pos)),
                                    &summary,
                                    "#slug = :slug",
                                    &[(":slug", s(slug.as_str()))],
                                )?)
                                .transact_items(self.not_rebuilding(facet, now)?)
                        }
                        None => rebuilds.push((facet.clone(), seq)),
                    }
                }
                for facet in listed_facets.iter().filter(|f| !new_facets.contains(f)) {
                    rebuilds.push((facet.clone(), seq));
                }
            }
            None => {
                // First activation: list it at the next position.
                let total = match self.get(key_of(COUNTER_PK.to_owned(), COUNTER_SK)).await? {
                    Some(item) => get_u64(&item, "total")?,
                    None => 0,
                };
                let seq = total + 1;
                set.push(("seq", n(seq)));
                let mut entry: Item = HashMap::from([
                    ("pk".to_owned(), s(LIST_PK)),
                    ("sk".to_owned(), s(list_sk(seq))),
                    ("slug".to_owned(), s(slug.as_str())),
                    ("id".to_owned(), s(id.to_string())),
                    (
                        "keyless_until".to_owned(),
                        dataset
                            .get("keyless_until")
                            .cloned()
                            .unwrap_or(AttributeValue::Null(true)),
                    ),
                ]);
                for (name, value) in summary.iter() {
                    entry.insert((*name).to_owned(), value.clone());
                }
                // The newest dataset goes at the end of each of its facet lists.
                for facet in &new_facets {
                    let counter_pk = facet_counter_pk(facet);
                    let facet_total = match self.get(key_of(counter_pk.clone(), COUNTER_SK)).await?
                    {
                        Some(item) => get_u64(&item, "total")?,
                        None => 0,
                    };
                    let mut facet_entry = entry.clone();
                    facet_entry.insert("pk".to_owned(), s(facet_list_pk(facet)));
                    facet_entry.insert("sk".to_owned(), s(list_sk(facet_total + 1)));
                    facet_entry.insert("seq".to_owned(), n(seq));
                    tx = tx
                        .transact_items(self.put_new(facet_entry)?)
                        .transact_items(
                            TransactWriteItem::builder()
                                .update(counter_update(
                                    &self.datasets_table,
                                    counter_pk,
                                    facet_total,
                                    now,
                                )?)
                                .build(),
                        );
                }
                let counter = Update::builder()
                    .table_name(&self.datasets_table)
                    .set_key(Some(key_of(COUNTER_PK.to_owned(), COUNTER_SK)))
                    .update_expression(
                        "SET #total = :new, #rev = if_not_exists(#rev, :zero) + :one",
                    )
                    .condition_expression(if total == 0 {
                        "attribute_not_exists(#total) OR #total = :old"
                    } else {
                        "#total = :old"
                    })
                    .expression_attribute_names("#total", "total")
                    .expression_attribute_names("#rev", "rev")
                    .expression_attribute_values(":new", n(seq))
                    .expression_attribute_values(":old", n(total))
                    .expression_attribute_values(":zero", n(0))
                    .expression_attribute_values(":one", n(1))
                    .build()
                    .map_err(other)?;
                tx = tx
                    .transact_items(self.put_new(entry)?)
                    .transact_items(TransactWriteItem::builder().update(counter).build());
            }
        }
        tx = tx
            .transact_items(tx_set(
                &self.datasets_table,
                key_of(dataset_pk(slug.as_str()), DATASET_SK),
                &set,
                condition,
                &values,
            )?)
            .transact_items(tx_set(
                &self.datasets_table,
                key_of(alias_pk(&id), DATASET_SK),
                &set,
                "attribute_exists(pk)",
                &[],
            )?);
        settle(tx.send().await, slug)?;
        self.apply(rebuilds, now).await
    }

    /// After a transaction that changed list entries: the facet list changes that shift
    /// positions, then the catalog's `rev` (for the functions' cached lists), bumped whether or
    /// not the rebuilds succeed, since a failed one may have written part of its change. `rev`
    /// is bumped here, outside the transaction, so that writes to different datasets do not
    /// conflict on the counter; a reader in between caches data newer than its `rev`, which
    /// the bump then retires.
    async fn apply(
        &self,
        rebuilds: Vec<(Facet, u64)>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        // Every list is attempted; the change itself is already committed, so a failure here
        // must not read as "nothing changed" (a blind retry would skip the lists it missed).
        let mut failed = Vec::new();
        for (facet, seq) in rebuilds {
            if let Err(e) = self.rebuild_facet(&facet, seq, now).await {
                failed.push(format!("{} ({e})", facet.key()));
            }
        }
        if let Err(e) = self.bump_rev().await {
            failed.push(format!(
                "the catalog revision, so cached listings may lag ({e})"
            ));
        }
        if !failed.is_empty() {
            return Err(WriteError::FacetLists(failed.join(", ")));
        }
        Ok(())
    }

    /// A transaction check that no rebuild of `facet` is under way (positions are stable).
    fn not_rebuilding(
        &self,
        facet: &Facet,
        now: DateTime<Utc>,
    ) -> Result<TransactWriteItem, StoreError> {
        let check = aws_sdk_dynamodb::types::ConditionCheck::builder()
            .table_name(&self.datasets_table)
            .set_key(Some(key_of(facet_counter_pk(facet), COUNTER_SK)))
            .condition_expression(UNLOCKED)
            .expression_attribute_names("#lock", "rebuild_until")
            .expression_attribute_values(":now", s(format_time(&now)))
            .build()
            .map_err(other)?;
        Ok(TransactWriteItem::builder().condition_check(check).build())
    }

    /// Opens a keyless window until `until`, or closes it (`None`): the dataset item, its alias,
    /// its list entry and its facet list entries change together. Retried, with backoff, when
    /// a concurrent write moved an entry or a facet list is being rebuilt.
    pub async fn set_keyless(
        &self,
        slug: &Slug,
        until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut attempts = 0u32;
        loop {
            match self.set_keyless_once(slug, until, now).await {
                Err(WriteError::Conflict(_)) if attempts < 5 => {
                    attempts += 1;
                    let jitter = u64::from(Uuid::new_v4().as_bytes()[0]);
                    tokio::time::sleep(std::time::Duration::from_millis((50 << attempts) + jitter))
                        .await;
                }
                other => return other,
            }
        }
    }

    async fn set_keyless_once(
        &self,
        slug: &Slug,
        until: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let dataset = self.dataset_item(slug).await?;
        let id = get_uuid(&dataset, "id")?;
        // The dataset's answers change (keyless, access): it counts as an update.
        let set = [
            ("keyless_until", opt_time(until.as_ref())),
            ("updated_at", s(format_time(&now))),
        ];
        let mut tx = self.client.transact_write_items();
        for key in [
            key_of(dataset_pk(slug.as_str()), DATASET_SK),
            key_of(alias_pk(&id), DATASET_SK),
        ] {
            tx = tx.transact_items(tx_set(
                &self.datasets_table,
                key,
                &set,
                "attribute_exists(pk)",
                &[],
            )?);
        }
        let mut rebuilds = Vec::new();
        if dataset.contains_key("seq") {
            let seq = get_u64(&dataset, "seq")?;
            tx = tx.transact_items(tx_set(
                &self.datasets_table,
                key_of(LIST_PK.to_owned(), &list_sk(seq)),
                &set,
                "attribute_exists(pk)",
                &[],
            )?);
            for facet in facets_of_item(&dataset)? {
                match self.facet_position(&facet, slug.as_str()).await? {
                    Some(pos) => {
                        tx = tx
                            .transact_items(tx_set(
                                &self.datasets_table,
                                key_of(facet_list_pk(&facet), &list_sk(pos)),
                                &set,
                                "#slug = :slug",
                                &[(":slug", s(slug.as_str()))],
                            )?)
                            .transact_items(self.not_rebuilding(&facet, now)?)
                    }
                    // Missing from a list it belongs in: put it back (with the new window).
                    None => rebuilds.push((facet, seq)),
                }
            }
        }
        settle(tx.send().await, slug)?;
        self.apply(rebuilds, now).await
    }

    /// Where a dataset sits in a facet list (a filtered read of that list; operators only).
    async fn facet_position(&self, facet: &Facet, slug: &str) -> Result<Option<u64>, StoreError> {
        let found = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression("pk = :pk")
                .filter_expression("#slug = :slug")
                .projection_expression("pk, sk")
                .expression_attribute_names("#slug", "slug")
                .expression_attribute_values(":pk", s(facet_list_pk(facet)))
                .expression_attribute_values(":slug", s(slug))
                .consistent_read(true),
        )
        .await?;
        found.first().map(position_of).transpose()
    }

    /// Every item of one partition, in key order.
    async fn partition(&self, pk: &str) -> Result<Vec<Item>, StoreError> {
        query_partition(&self.client, &self.datasets_table, pk).await
    }

    /// Brings one dataset's place in a facet list in line with its catalog list entry, as it
    /// is when the rebuild runs (not as it was when the rebuild was queued, so rebuilds queued
    /// by successive changes may run in any order): in the list, with its current summary, if
    /// the entry has the facet; out of it otherwise. Positions stay gap-free and in publication
    /// order: the entries after it move by one. Not atomic: a reader paging the list meanwhile
    /// may see one dataset twice or miss one; `reindex` repairs an interrupted rebuild.
    async fn rebuild_facet(
        &self,
        facet: &Facet,
        seq: u64,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        self.lock_facet(facet, now).await?;
        let entry = self
            .get(key_of(LIST_PK.to_owned(), &list_sk(seq)))
            .await?
            .ok_or_else(|| StoreError::Corrupt(format!("no list entry at {seq}")))?;
        let existing = self.partition(&facet_list_pk(facet)).await?;
        let mut members = existing.clone();
        members.retain(
            |m| !matches!(m.get("seq"), Some(AttributeValue::N(v)) if v.parse() == Ok(seq)),
        );
        let refresh = entry.get("slug").cloned();
        if facets_of_item(&entry)?.contains(facet) {
            members.push(with_seq(entry, seq));
        }
        self.write_facet(facet, &existing, members, Rewrite::Moved(refresh))
            .await?;
        Ok(())
    }

    /// Marks a facet list as being rebuilt, for at most `REBUILD_LOCK_SECONDS`: appends and
    /// in-place updates of its entries are refused (and retried by `activate`) until
    /// `write_facet` clears the mark. A second rebuild of the same list waits for it.
    async fn lock_facet(&self, facet: &Facet, now: DateTime<Utc>) -> Result<(), WriteError> {
        // Up to about a minute: a rebuild holds a list for seconds at most.
        for attempt in 0..40u32 {
            let at = Utc::now().max(now);
            let locked = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key_of(facet_counter_pk(facet), COUNTER_SK)))
                .update_expression("SET #lock = :until")
                .condition_expression(UNLOCKED)
                .expression_attribute_names("#lock", "rebuild_until")
                .expression_attribute_values(":now", s(format_time(&at)))
                .expression_attribute_values(
                    ":until",
                    s(format_time(
                        &(at + chrono::Duration::seconds(REBUILD_LOCK_SECONDS)),
                    )),
                )
                .send()
                .await;
            match locked {
                Ok(_) => return Ok(()),
                Err(e) if is_condition_failure(e.code()) => {
                    tokio::time::sleep(std::time::Duration::from_millis(100 << attempt.min(4)))
                        .await
                }
                Err(e) => return Err(classify(e).into()),
            }
        }
        Err(WriteError::Busy(facet.key()))
    }

    /// Rewrites a facet list so that it holds exactly `members` at positions 1..=n in
    /// publication order: only positions whose dataset changes are written, positions past the
    /// end are deleted, then the counter is set.
    async fn write_facet(
        &self,
        facet: &Facet,
        existing: &[Item],
        mut members: Vec<Item>,
        rewrite: Rewrite,
    ) -> Result<usize, StoreError> {
        let seq_of = |item: &Item| get_u64(item, "seq").unwrap_or(u64::MAX);
        members.sort_by_key(seq_of);
        // One entry per dataset, whatever a failed rewrite left behind.
        members.dedup_by_key(|m| seq_of(m));
        let list_pk = facet_list_pk(facet);
        // What sits at each position now (a list may have gaps or strays after a failure).
        let mut at: BTreeMap<u64, Option<AttributeValue>> = BTreeMap::new();
        for item in existing {
            if let Ok(pos) = position_of(item) {
                at.insert(pos, item.get("slug").cloned());
            }
        }
        let mut requests = Vec::new();
        for (i, member) in members.iter().enumerate() {
            let current = at.get(&(i as u64 + 1)).cloned().flatten();
            let slug = member.get("slug").cloned();
            let write = match &rewrite {
                Rewrite::All => true,
                // Its summary may be newer than the copy in place.
                Rewrite::Moved(refresh) => current != slug || (slug.is_some() && *refresh == slug),
            };
            if write {
                let mut item = member.clone();
                item.insert("pk".to_owned(), s(&list_pk));
                item.insert("sk".to_owned(), s(list_sk(i as u64 + 1)));
                requests.push(
                    WriteRequest::builder()
                        .put_request(
                            PutRequest::builder()
                                .set_item(Some(item))
                                .build()
                                .map_err(other)?,
                        )
                        .build(),
                );
            }
        }
        for pos in at.keys().filter(|p| **p > members.len() as u64) {
            requests.push(
                WriteRequest::builder()
                    .delete_request(
                        DeleteRequest::builder()
                            .set_key(Some(key_of(list_pk.clone(), &list_sk(*pos))))
                            .build()
                            .map_err(other)?,
                    )
                    .build(),
            );
        }
        let written = requests.len();
        self.batch_write(requests).await?;
        // The new total, and the rebuild mark cleared, in one write.
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(key_of(facet_counter_pk(facet), COUNTER_SK)))
            .update_expression("SET #total = :total REMOVE #lock")
            .expression_attribute_names("#total", "total")
            .expression_attribute_names("#lock", "rebuild_until")
            .expression_attribute_values(":total", n(members.len() as u64))
            .send()
            .await
            .map_err(classify)?;
        Ok(written)
    }

    async fn batch_write(&self, requests: Vec<WriteRequest>) -> Result<(), StoreError> {
        for chunk in requests.chunks(25) {
            let mut pending = HashMap::from([(self.datasets_table.clone(), chunk.to_vec())]);
            for attempt in 0..8u32 {
                if attempt > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(25 << attempt.min(5)))
                        .await;
                }
                let out = self
                    .client
                    .batch_write_item()
                    .set_request_items(Some(pending))
                    .send()
                    .await
                    .map_err(classify)?;
                match out.unprocessed_items {
                    Some(rest) if !rest.is_empty() => pending = rest,
                    _ => {
                        pending = HashMap::new();
                        break;
                    }
                }
            }
            if !pending.is_empty() {
                return Err(StoreError::Unavailable(
                    "BatchWriteItem left items unprocessed after retries".into(),
                ));
            }
        }
        Ok(())
    }

    /// Marks the catalog changed, for the functions' cached lists.
    async fn bump_rev(&self) -> Result<(), StoreError> {
        self.client
            .update_item()
            .table_name(&self.datasets_table)
            .set_key(Some(key_of(COUNTER_PK.to_owned(), COUNTER_SK)))
            .update_expression("SET #rev = if_not_exists(#rev, :zero) + :one")
            .expression_attribute_names("#rev", "rev")
            .expression_attribute_values(":zero", n(0))
            .expression_attribute_values(":one", n(1))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// Rebuilds every facet list from the catalog list: after an upgrade from a version
    /// without facet lists, or to repair an interrupted rebuild. Returns how many facet lists
    /// there are and how many entries were written or deleted.
    pub async fn reindex(&self) -> Result<(usize, usize), WriteError> {
        let mut wanted: BTreeMap<Facet, Vec<Item>> = BTreeMap::new();
        let mut last_seen = 0;
        for entry in self.partition(LIST_PK).await? {
            let seq = position_of(&entry)?;
            last_seen = last_seen.max(seq);
            for facet in facets_of_item(&entry)? {
                wanted
                    .entry(facet)
                    .or_default()
                    .push(with_seq(entry.clone(), seq));
            }
        }
        // Facets no dataset has any more keep their counter, at 0.
        let mut start = None;
        loop {
            let out = self
                .client
                .scan()
                .table_name(&self.datasets_table)
                .filter_expression("begins_with(pk, :p) AND sk = :c")
                .expression_attribute_values(":p", s(format!("{COUNTER_PK}#")))
                .expression_attribute_values(":c", s(COUNTER_SK))
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(classify)?;
            for item in out.items.unwrap_or_default() {
                let pk = get_s(&item, "pk")?;
                if let Some(facet) = pk
                    .strip_prefix(COUNTER_PK)
                    .and_then(|k| k.strip_prefix('#'))
                    .and_then(Facet::from_key)
                {
                    wanted.entry(facet).or_default();
                }
            }
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        let mut written = 0;
        let facets = wanted.len();
        for (facet, mut members) in wanted {
            // Under the facet's mark, like any rebuild: appends wait, and a running rebuild
            // finishes first.
            self.lock_facet(&facet, Utc::now()).await?;
            let existing = self.partition(&facet_list_pk(&facet)).await?;
            // Datasets first listed after the catalog list was read are kept as their
            // activation wrote them.
            for item in &existing {
                if get_u64(item, "seq").is_ok_and(|seq| seq > last_seen) {
                    members.push(item.clone());
                }
            }
            // Every entry is rewritten: its summary may be stale, not only its position.
            written += self
                .write_facet(&facet, &existing, members, Rewrite::All)
                .await?;
        }
        self.bump_rev().await?;
        Ok((facets, written))
    }

    /// Every stored version of a dataset, oldest first.
    pub async fn list_versions(&self, slug: &Slug) -> Result<Vec<VersionInfo>, WriteError> {
        let dataset = self.dataset_item(slug).await?;
        let current = active_from(&dataset)?.map(|a| a.version);
        let items = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression("pk = :pk AND begins_with(sk, :v)")
                .expression_attribute_values(":pk", s(dataset_pk(slug.as_str())))
                .expression_attribute_values(":v", s("V#"))
                .consistent_read(true),
        )
        .await?;
        let mut versions = Vec::new();
        for item in &items {
            if let Some(version) = active_from(item)? {
                let active = current == Some(version.version);
                versions.push(VersionInfo { version, active });
            }
        }
        Ok(versions)
    }

    /// Stores a new key's record (hash, never the secret).
    pub async fn put_key(&self, key: &NewKey) -> Result<(), WriteError> {
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

    /// All keys (operators only; the keys table is small), oldest first.
    pub async fn list_keys(&self) -> Result<Vec<KeyInfo>, WriteError> {
        let mut keys = Vec::new();
        let mut start = None;
        loop {
            let out = self
                .client
                .scan()
                .table_name(&self.keys_table)
                .consistent_read(true)
                .set_exclusive_start_key(start)
                .send()
                .await
                .map_err(classify)?;
            for item in out.items.unwrap_or_default() {
                keys.push(KeyInfo {
                    id: get_s(&item, "id")?,
                    prefix: get_s(&item, "prefix")?,
                    label: get_s(&item, "label")?,
                    scopes: get_strings(&item, "scopes")?,
                    created_at: get_time(&item, "created_at")?,
                    expires_at: get_time_opt(&item, "expires_at")?,
                    revoked_at: get_time_opt(&item, "revoked_at")?,
                });
            }
            match out.last_evaluated_key {
                Some(k) if !k.is_empty() => start = Some(k),
                _ => break,
            }
        }
        keys.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(keys)
    }

    /// Revokes the key with this public id as of `at`; its next request is refused.
    pub async fn revoke_key_by_id(&self, id: &str, at: DateTime<Utc>) -> Result<(), WriteError> {
        let out = self
            .client
            .scan()
            .table_name(&self.keys_table)
            .filter_expression("id = :id")
            .expression_attribute_values(":id", s(id))
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        let hash = out
            .items
            .unwrap_or_default()
            .first()
            .map(|item| get_s(item, KEY_ATTR))
            .transpose()?
            .ok_or_else(|| WriteError::NoSuchKey(id.to_owned()))?;
        let hash = KeyHash::from_hex(&hash).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.revoke_key(&hash, at).await
    }

    /// Marks a key revoked as of `at`; the next request with it is refused.
    pub async fn revoke_key(&self, hash: &KeyHash, at: DateTime<Utc>) -> Result<(), WriteError> {
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

/// Which entries `write_facet` writes.
#[derive(Debug, Clone, PartialEq)]
enum Rewrite {
    /// Positions whose dataset changes, and the dataset with this slug wherever it lands (the
    /// others are up to date).
    Moved(Option<AttributeValue>),
    /// All of them.
    All,
}

/// The facets of a dataset item or list entry, as stored.
fn facets_of_item(item: &Item) -> Result<Vec<Facet>, StoreError> {
    Ok(Facet::of(
        &get_s(item, "category")?,
        &get_strings(item, "tags")?,
        &get_s(item, "license")?,
    ))
}

/// A `LIST` entry as a facet entry: the same summary, plus its `LIST` position.
fn with_seq(mut entry: Item, seq: u64) -> Item {
    entry.insert("seq".to_owned(), n(seq));
    entry
}

/// How long a facet list rebuild may hold its list before another writer may take over.
const REBUILD_LOCK_SECONDS: i64 = 600;

/// No rebuild holds the facet list (never marked, or the mark expired). Times are RFC 3339
/// UTC with whole seconds, so they compare as strings.
const UNLOCKED: &str = "attribute_not_exists(#lock) OR #lock < :now";

/// `SET total = :new` on a facet counter, conditioned on it still being `old` (or absent at
/// 0) and on no rebuild holding the list.
fn counter_update(
    table: &str,
    pk: String,
    old: u64,
    now: DateTime<Utc>,
) -> Result<Update, StoreError> {
    let total = if old == 0 {
        "(attribute_not_exists(#total) OR #total = :old)"
    } else {
        "#total = :old"
    };
    Update::builder()
        .table_name(table)
        .set_key(Some(key_of(pk, COUNTER_SK)))
        .update_expression("SET #total = :new")
        .condition_expression(format!("{total} AND ({UNLOCKED})"))
        .expression_attribute_names("#total", "total")
        .expression_attribute_names("#lock", "rebuild_until")
        .expression_attribute_values(":new", n(old + 1))
        .expression_attribute_values(":old", n(old))
        .expression_attribute_values(":now", s(format_time(&now)))
        .build()
        .map_err(other)
}

/// The metadata currently stored for a dataset (for `datasets show` and re-publishing).
pub fn meta_from(item: &Item) -> Result<DatasetMeta, StoreError> {
    Ok(DatasetMeta {
        slug: Slug::parse(&get_s(item, "slug")?).map_err(|_| StoreError::Corrupt("slug".into()))?,
        name: get_s(item, "name")?,
        description: get_s_opt(item, "description")?,
        license: get_s(item, "license")?,
        source: get_s(item, "source")?,
        category: get_s(item, "category")?,
        tags: get_strings(item, "tags")?,
        insights: get_s(item, "insights")?,
        discussions_json: get_s(item, "discussions")?,
    })
}

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
