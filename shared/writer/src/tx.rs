//! Conditional writes as data ([`Write`], [`Condition`]) and their translation into DynamoDB
//! transaction items: the planning steps decide what to write; this module only spells it.

use std::collections::HashMap;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::types::{
    AttributeValue, ConditionCheck, Delete, DeleteRequest, Put, PutRequest, TransactWriteItem,
    Update, WriteRequest,
};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::query::Facet;
use catalog_aws::dynamo::attr::{n, s, time};
use catalog_aws::dynamo::codec::SummaryChange;
use catalog_aws::dynamo::layout::name::{
    ACTIVE, FACETS_INDEXED, ORDERS_INDEXED, PK, REBUILD_UNTIL, REV, SLUG, TEXT_INDEXED, TOTAL,
    UNPUBLISHED_AT, VERSION,
};
use catalog_aws::dynamo::layout::{
    counter_key, facet_counter_pk, facet_summary_key, key_of, Item, COUNTER_PK, LIST_MARK_SK,
};
use catalog_aws::dynamo::requests::classify;
use chrono::{DateTime, Utc};

use crate::error::WriteError;

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

/// One item of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Write {
    /// `SET` these attributes of an existing item, if `condition` holds.
    Set {
        key: Item,
        set: Vec<(&'static str, AttributeValue)>,
        condition: Condition,
    },
    /// Put an item that must not exist yet.
    Create(Item),
    /// Delete an item, if `condition` holds.
    Delete { key: Item, condition: Condition },
    /// The catalog counter's `total` goes from `old` to `old + 1` (absent counts as 0), and its
    /// `rev` is bumped.
    CountListed { old: u64 },
    /// A facet counter's `total` goes from `old` to `old + 1` (absent counts as 0), while no
    /// rewrite holds that facet's list.
    CountInFacet { facet: Facet, old: u64 },
    /// No rewrite holds this facet's list (its positions are stable).
    FacetUnmarked(Facet),
    /// No renumbering holds the catalog list (its positions are stable).
    ListUnmarked,
}

/// The writes of one transaction, the facet summary's changes sent in it (none: the summary
/// is not touched), and the facet lists to rewrite after it (each with the dataset's `LIST`
/// position).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Plan {
    pub writes: Vec<Write>,
    pub summary: Vec<SummaryChange>,
    pub rewrites: Vec<(Facet, u64)>,
    /// Whether the transaction lists the dataset or changes what the text index holds of it
    /// (its searched text or its facets): the index then follows ([`crate::text`]).
    pub terms_changed: bool,
}

/// What must hold for a [`Write::Set`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Condition {
    /// The item exists.
    Exists,
    /// The dataset item is as it was read ([`Guard`]).
    Dataset(Guard),
    /// The entry still holds this dataset (positions in a list move).
    Holds(Slug),
}

/// What a write to a dataset item checks of it: its revision as read (`rev`, bumped by every
/// write that changes what its list entries copy, so that no such write is lost to another
/// made in between), whether it is unpublished, and, for an activation, the expected active
/// version.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Guard {
    pub active: Option<Expected>,
    pub rev: u64,
    pub unpublished: bool,
}

/// The key of the catalog list's mark item.
pub(crate) fn list_mark_key() -> Item {
    key_of(COUNTER_PK, LIST_MARK_SK)
}

/// No rewrite holds the facet list (never marked, or the mark expired). Times are RFC 3339 UTC
/// with whole seconds, so they compare as strings.
pub(crate) const UNMARKED: &str = "attribute_not_exists(#mark) OR #mark < :now";

pub(crate) fn other(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Other(Box::new(e))
}

/// A DynamoDB transaction or conditional write that lost to a concurrent writer.
pub(crate) fn is_condition_failure(code: Option<&str>) -> bool {
    matches!(
        code,
        Some("TransactionCanceledException" | "ConditionalCheckFailedException")
    )
}

/// The outcome of a conditional write: a failed condition means a concurrent writer won.
pub(crate) fn settle<T, E>(
    result: Result<T, SdkError<E, HttpResponse>>,
    slug: &Slug,
) -> Result<(), WriteError>
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    match result {
        Ok(_) => Ok(()),
        Err(e) if is_condition_failure(e.code()) => Err(WriteError::Conflict(slug.to_string())),
        Err(e) => Err(classify(e).into()),
    }
}

/// Which kind of item a failed write was on: see [`crate::patience`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lost {
    /// The dataset's own item (or its alias): another write changed this dataset.
    Own,
    /// An item every writer shares, described for the operator.
    Shared(String),
}

impl Write {
    /// What losing this write's condition means.
    pub(crate) fn lost(&self) -> Lost {
        match self {
            Self::Set { condition, .. } | Self::Delete { condition, .. } => match condition {
                Condition::Exists | Condition::Dataset(_) => Lost::Own,
                Condition::Holds(_) => Lost::Shared("a list entry that a renumbering moved".into()),
            },
            Self::Create(_) => Lost::Shared("the next position of a list".into()),
            Self::CountListed { .. } => {
                Lost::Shared("the catalog's count of listed datasets".into())
            }
            Self::CountInFacet { facet, .. } => Lost::Shared(format!(
                "the filter list {} (its count, or a rewrite's mark)",
                facet.key()
            )),
            Self::FacetUnmarked(facet) => Lost::Shared(format!(
                "the filter list {} (a rewrite's mark)",
                facet.key()
            )),
            Self::ListUnmarked => Lost::Shared("the catalog list (a renumbering's mark)".into()),
        }
    }
}

/// The error of a transaction of `writes` (then, if any, the facet summary's update) that
/// DynamoDB cancelled for these `reasons` (one per item, in order): a `Conflict` when a
/// condition on the dataset's own item failed, `Contended` (naming the item) when only shared
/// items did; `None` when no reason names a lost condition or conflict.
pub(crate) fn cancelled(
    slug: &Slug,
    writes: &[Write],
    reasons: &[Option<&str>],
) -> Option<WriteError> {
    let mut shared = None;
    for (i, code) in reasons.iter().enumerate() {
        if matches!(
            code,
            Some("ThrottlingError" | "ProvisionedThroughputExceeded" | "RequestLimitExceeded")
        ) {
            shared = shared.or(Some(
                "DynamoDB's capacity (the request was throttled)".to_owned(),
            ));
            continue;
        }
        if !matches!(code, Some("ConditionalCheckFailed" | "TransactionConflict")) {
            continue;
        }
        match writes.get(i).map(Write::lost) {
            Some(Lost::Own) => return Some(WriteError::Conflict(slug.to_string())),
            Some(Lost::Shared(what)) => shared = shared.or(Some(what)),
            None => shared = shared.or(Some("the facet summary".to_owned())),
        }
    }
    shared.map(|what| WriteError::Contended { what, seconds: 0 })
}

/// A fresh ClientRequestToken for one transaction: the SDK's retries of it carry the same
/// token, so DynamoDB answers a retry of a committed transaction as it answered the first
/// (for 10 minutes) instead of refusing it as a conflict with itself.
pub(crate) fn token() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A batch write's put of `item`.
pub(crate) fn put_request(item: Item) -> Result<WriteRequest, StoreError> {
    let put = PutRequest::builder().set_item(Some(item)).build();
    Ok(WriteRequest::builder()
        .put_request(put.map_err(other)?)
        .build())
}

/// A batch write's delete of the item `key`.
pub(crate) fn delete_request(key: Item) -> Result<WriteRequest, StoreError> {
    let delete = DeleteRequest::builder().set_key(Some(key)).build();
    Ok(WriteRequest::builder()
        .delete_request(delete.map_err(other)?)
        .build())
}

/// A `Put` of an item that must not exist yet.
pub(crate) fn put_new(table: &str, item: Item) -> Result<Put, StoreError> {
    Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .condition_expression(format!("attribute_not_exists({PK})"))
        .build()
        .map_err(other)
}

impl Write {
    /// The transaction item that performs this write on `table` at `now`.
    pub(crate) fn to_transact_item(
        &self,
        table: &str,
        now: DateTime<Utc>,
    ) -> Result<TransactWriteItem, StoreError> {
        let item = TransactWriteItem::builder();
        Ok(match self {
            Self::Set {
                key,
                set,
                condition,
            } => item.update(set_update(table, key, set, condition)?).build(),
            Self::Create(new) => item.put(put_new(table, new.clone())?).build(),
            Self::Delete { key, condition } => {
                let spelled = Spelled::of(condition);
                item.delete(
                    Delete::builder()
                        .table_name(table)
                        .set_key(Some(key.clone()))
                        .condition_expression(spelled.text)
                        .set_expression_attribute_names(Some(spelled.names))
                        .set_expression_attribute_values(spelled.values)
                        .build()
                        .map_err(other)?,
                )
                .build()
            }
            Self::CountListed { old } => {
                // A catalog's first listing creates its facet lists with it, and its text index
                // and kept orders follow from it: all are indexed.
                let indexed = if *old == 0 {
                    ", #indexed = :true, #text = :true, #orders = :true"
                } else {
                    ""
                };
                let mut update = Update::builder()
                    .table_name(table)
                    .set_key(Some(counter_key(COUNTER_PK)))
                    .update_expression(format!(
                        "SET #total = :new, #rev = if_not_exists(#rev, :zero) + :one{indexed}"
                    ))
                    .condition_expression(total_is(*old))
                    .expression_attribute_names("#total", TOTAL)
                    .expression_attribute_names("#rev", REV)
                    .expression_attribute_values(":new", n(old + 1))
                    .expression_attribute_values(":old", n(*old))
                    .expression_attribute_values(":zero", n(0))
                    .expression_attribute_values(":one", n(1));
                if *old == 0 {
                    update = update
                        .expression_attribute_names("#indexed", FACETS_INDEXED)
                        .expression_attribute_names("#text", TEXT_INDEXED)
                        .expression_attribute_names("#orders", ORDERS_INDEXED)
                        .expression_attribute_values(":true", AttributeValue::Bool(true));
                }
                item.update(update.build().map_err(other)?).build()
            }
            Self::CountInFacet { facet, old } => item
                .update(
                    Update::builder()
                        .table_name(table)
                        .set_key(Some(counter_key(facet_counter_pk(facet))))
                        .update_expression("SET #total = :new")
                        .condition_expression(format!("({}) AND ({UNMARKED})", total_is(*old)))
                        .expression_attribute_names("#total", TOTAL)
                        .expression_attribute_names("#mark", REBUILD_UNTIL)
                        .expression_attribute_values(":new", n(old + 1))
                        .expression_attribute_values(":old", n(*old))
                        .expression_attribute_values(":now", time(&now))
                        .build()
                        .map_err(other)?,
                )
                .build(),
            Self::FacetUnmarked(facet) => item
                .condition_check(unmarked(table, counter_key(facet_counter_pk(facet)), now)?)
                .build(),
            Self::ListUnmarked => item
                .condition_check(unmarked(table, list_mark_key(), now)?)
                .build(),
        })
    }
}

/// A check that no rewrite holds the list whose mark `key` carries.
fn unmarked(table: &str, key: Item, now: DateTime<Utc>) -> Result<ConditionCheck, StoreError> {
    ConditionCheck::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(UNMARKED)
        .expression_attribute_names("#mark", REBUILD_UNTIL)
        .expression_attribute_values(":now", time(&now))
        .build()
        .map_err(other)
}

/// The update that applies `changes` to the facet summary (`SET` what has a value, `REMOVE`
/// the rest), every name and value explicit. Unconditional: what it sets was decided under
/// the facet counters' conditions in the same transaction.
pub(crate) fn summary_update(table: &str, changes: &[SummaryChange]) -> Result<Update, StoreError> {
    let expression = SummaryExpression::of(changes);
    Update::builder()
        .table_name(table)
        .set_key(Some(facet_summary_key()))
        .update_expression(expression.text)
        .set_expression_attribute_names(Some(expression.names))
        .set_expression_attribute_values(expression.values)
        .build()
        .map_err(other)
}

/// An update expression that applies changes to the facet summary, with its names and values.
pub(crate) struct SummaryExpression {
    pub text: String,
    pub names: HashMap<String, String>,
    /// `None` when it only removes (DynamoDB refuses an empty map).
    pub values: Option<HashMap<String, AttributeValue>>,
}

impl SummaryExpression {
    pub fn of(changes: &[SummaryChange]) -> Self {
        let (mut set, mut remove) = (Vec::new(), Vec::new());
        let mut names = HashMap::new();
        let mut values = HashMap::new();
        for (i, (name, value)) in changes.iter().enumerate() {
            names.insert(format!("#s{i}"), name.clone());
            match value {
                Some(value) => {
                    set.push(format!("#s{i} = :s{i}"));
                    values.insert(format!(":s{i}"), value.clone());
                }
                None => remove.push(format!("#s{i}")),
            }
        }
        let mut text = Vec::new();
        if !set.is_empty() {
            text.push(format!("SET {}", set.join(", ")));
        }
        if !remove.is_empty() {
            text.push(format!("REMOVE {}", remove.join(", ")));
        }
        Self {
            text: text.join(" "),
            names,
            values: (!values.is_empty()).then_some(values),
        }
    }
}

/// `total` is `old`, or absent when `old` is 0.
fn total_is(old: u64) -> &'static str {
    if old == 0 {
        "attribute_not_exists(#total) OR #total = :old"
    } else {
        "#total = :old"
    }
}

/// `SET #a0 = :v0, ...` over `set`, under `condition`, every name and value explicit; a NULL
/// value removes its attribute (an absent attribute and a NULL one read the same).
fn set_update(
    table: &str,
    key: &Item,
    set: &[(&'static str, AttributeValue)],
    condition: &Condition,
) -> Result<Update, StoreError> {
    let spelled = Spelled::of(condition);
    let mut builder = Update::builder()
        .table_name(table)
        .set_key(Some(key.clone()))
        .condition_expression(spelled.text)
        .set_expression_attribute_names(Some(spelled.names))
        .set_expression_attribute_values(spelled.values);
    let (mut sets, mut removes) = (Vec::with_capacity(set.len()), Vec::new());
    for (i, (name, value)) in set.iter().enumerate() {
        builder = builder.expression_attribute_names(format!("#a{i}"), *name);
        if let AttributeValue::Null(_) = value {
            removes.push(format!("#a{i}"));
        } else {
            sets.push(format!("#a{i} = :v{i}"));
            builder = builder.expression_attribute_values(format!(":v{i}"), value.clone());
        }
    }
    let mut expression = Vec::new();
    if !sets.is_empty() {
        expression.push(format!("SET {}", sets.join(", ")));
    }
    if !removes.is_empty() {
        expression.push(format!("REMOVE {}", removes.join(", ")));
    }
    builder
        .update_expression(expression.join(" "))
        .build()
        .map_err(other)
}

/// A [`Condition`] as a condition expression, its names and values.
struct Spelled {
    text: String,
    names: HashMap<String, String>,
    values: Option<HashMap<String, AttributeValue>>,
}

impl Spelled {
    fn of(condition: &Condition) -> Self {
        let mut names = HashMap::new();
        let mut values = HashMap::new();
        let text = match condition {
            Condition::Exists => format!("attribute_exists({PK})"),
            Condition::Dataset(guard) => {
                let mut parts = Vec::new();
                match guard.active {
                    None => parts.push(format!("attribute_exists({PK})")),
                    Some(Expected::Nothing) => parts.push("attribute_not_exists(#active)".into()),
                    Some(Expected::Version(v)) => {
                        parts.push("#active.#version = :prev".into());
                        names.insert("#version".into(), VERSION.into());
                        values.insert(":prev".into(), n(v));
                    }
                }
                if guard.active.is_some() {
                    names.insert("#active".into(), ACTIVE.into());
                }
                parts.push(match guard.rev {
                    0 => "(attribute_not_exists(#rev) OR #rev = :rev)".into(),
                    _ => "#rev = :rev".into(),
                });
                parts.push(match guard.unpublished {
                    true => "attribute_exists(#unpublished)".into(),
                    false => "attribute_not_exists(#unpublished)".into(),
                });
                names.insert("#rev".into(), REV.into());
                names.insert("#unpublished".into(), UNPUBLISHED_AT.into());
                values.insert(":rev".into(), n(guard.rev));
                parts.join(" AND ")
            }
            Condition::Holds(slug) => {
                names.insert("#slug".into(), SLUG.into());
                values.insert(":slug".into(), s(slug.as_str()));
                "#slug = :slug".into()
            }
        };
        Self {
            text,
            names,
            values: (!values.is_empty()).then_some(values),
        }
    }
}

#[cfg(test)]
mod tests;
