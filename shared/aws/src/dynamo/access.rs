//! Access requests and grants in the keys table ([`DynamoAccess`]): the accounts function's
//! routes and the operators' CLI share it.
//!
//! One item per account and dataset (`GRANT#<dataset uuid>#<sub>`), which the data path reads
//! strongly consistent. Every write is conditional on the state it applies to, and bumps `rev`:
//! - asking: one TransactWriteItems (the account is not disabled; no request pending and no grant
//!   in force), so an account holds at most one open request per dataset;
//! - deciding: one strongly consistent read, then one TransactWriteItems conditional on the
//!   record as read (approve and reject apply to `pending`, revoke to `granted`; and, given a
//!   revision, only at that revision), so two racing decisions never both apply to one state;
//! - each request and decision writes its notice ([`notices`]) in the same transaction: the
//!   mailer function sends it later;
//! - lists: an account's records from the owner index, operators' from the status index.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, TransactWriteItem, Update};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::attr::{corrupt, get_s, s, time};
use super::codec::dataset_access;
use super::layout::name::{
    DATASET, DECIDED_AT, DECIDED_BY, DISABLED_AT, EXPIRES_AT, ID, KEY_HASH, OWNER, REV, ROLE,
    STATUS,
};
use super::layout::{
    account_key, dataset_pk, grant_key, key_of, member_key, ACCESS_BY_STATUS_INDEX,
    ACCESS_ID_PREFIX, DATASET_SK, KEYS_BY_OWNER_INDEX,
};
use super::requests::{classify, get_consistent, query_all};
use super::tx::{build, transact_retrying};
use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::grants::{AccessRecord, AccessStatus, Decision};
use catalog::keys::Owner;
use catalog::notices::Notice;
use catalog::orgs::{OrgName, Role};
use catalog::ports::{AccessStore, Asked, DatasetAccess, Decided};
use catalog::slug::Slug;

mod decide;
pub mod notices;
mod operators;

/// An account's access records, from the owner index (one Query; eventually consistent).
pub(crate) fn owner_records_query(
    client: &Client,
    keys_table: &str,
    owner: &Owner,
) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
    owner_items_query(client, keys_table, owner, ACCESS_ID_PREFIX)
}

/// An account's items in the owner index whose `id` begins with `prefix` (its access records,
/// `access#`, or its memberships, `org#`).
pub(crate) fn owner_items_query(
    client: &Client,
    keys_table: &str,
    owner: &Owner,
    prefix: &str,
) -> aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder {
    client
        .query()
        .table_name(keys_table)
        .index_name(KEYS_BY_OWNER_INDEX)
        .key_condition_expression("#owner = :owner AND begins_with(#id, :access)")
        .expression_attribute_names("#owner", OWNER)
        .expression_attribute_names("#id", ID)
        .expression_attribute_values(":owner", s(owner.as_str()))
        .expression_attribute_values(":access", s(prefix))
}

/// Access records, in the keys table; datasets' policies, read from the datasets table.
#[derive(Clone, Debug)]
pub struct DynamoAccess {
    client: Client,
    keys_table: String,
    datasets_table: String,
}

/// An update expression's parts: `SET` clauses, names and values.
#[derive(Default)]
struct Expression {
    set: Vec<String>,
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
}

impl Expression {
    /// `SET` every attribute given, and `rev = rev + 1` (from 0).
    fn setting(attributes: Vec<(&'static str, AttributeValue)>) -> Self {
        let mut e = Self::default();
        for (i, (name, value)) in attributes.into_iter().enumerate() {
            e.set.push(format!("#a{i} = :a{i}"));
            e.names.insert(format!("#a{i}"), name.to_owned());
            e.values.insert(format!(":a{i}"), value);
        }
        e.set
            .push("#rev = if_not_exists(#rev, :zero) + :one".to_owned());
        e.name("#rev", REV);
        e.value(":zero", AttributeValue::N("0".into()));
        e.value(":one", AttributeValue::N("1".into()));
        e
    }

    fn name(&mut self, placeholder: &str, name: &str) {
        self.names.insert(placeholder.to_owned(), name.to_owned());
    }

    fn value(&mut self, placeholder: &str, value: AttributeValue) {
        self.values.insert(placeholder.to_owned(), value);
    }

    fn update(&self) -> String {
        format!("SET {}", self.set.join(", "))
    }
}

/// Newest first: by the latest of the request and the decision.
fn newest_first(records: &mut [AccessRecord]) {
    records.sort_by(|a, b| {
        let at = |r: &AccessRecord| r.decided_at.max(r.requested_at);
        at(b)
            .cmp(&at(a))
            .then(a.slug.cmp(&b.slug))
            .then(a.grantee.cmp(&b.grantee))
    });
}

impl DynamoAccess {
    /// Its DynamoDB client and keys table, for the adapters that share the table with it
    /// (organisations: [`super::orgs`], which builds its own from these).
    pub(crate) fn keys_table(&self) -> (&Client, &str) {
        (&self.client, &self.keys_table)
    }

    pub fn new(
        client: Client,
        keys_table: impl Into<String>,
        datasets_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            keys_table: keys_table.into(),
            datasets_table: datasets_table.into(),
        }
    }

    /// The record, read strongly consistent.
    pub async fn record(
        &self,
        grantee: &Owner,
        dataset: &Uuid,
    ) -> Result<Option<AccessRecord>, StoreError> {
        get_consistent(
            &self.client,
            &self.keys_table,
            grant_key(grantee.as_str(), dataset),
        )
        .await?
        .as_ref()
        .map(AccessRecord::from_item)
        .transpose()
    }
    async fn query_status(
        &self,
        status: AccessStatus,
        dataset: Option<&Uuid>,
    ) -> Result<Vec<AccessRecord>, StoreError> {
        let query = self
            .client
            .query()
            .table_name(&self.keys_table)
            .index_name(ACCESS_BY_STATUS_INDEX)
            .expression_attribute_names("#status", STATUS)
            .expression_attribute_values(":status", s(status.as_str()));
        let query = match dataset {
            Some(dataset) => query
                .key_condition_expression("#status = :status AND #dataset = :dataset")
                .expression_attribute_names("#dataset", DATASET)
                .expression_attribute_values(":dataset", s(dataset.to_string())),
            None => query.key_condition_expression("#status = :status"),
        };
        query_all(query)
            .await?
            .iter()
            .map(AccessRecord::from_item)
            .collect()
    }
}

impl AccessStore for DynamoAccess {
    /// One GetItem of the account's item (strongly consistent; its `disabled_at` alone).
    async fn account_disabled(&self, owner: &Owner) -> Result<bool, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())))
            .projection_expression("#d")
            .expression_attribute_names("#d", DISABLED_AT)
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        Ok(out.item().is_some_and(|i| i.contains_key(DISABLED_AT)))
    }

    /// One GetItem of the membership (strongly consistent; its `role` alone).
    async fn role(&self, org: &OrgName, owner: &Owner) -> Result<Option<Role>, StoreError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.keys_table)
            .set_key(Some(member_key(org.as_str(), owner.as_str())))
            .projection_expression("#r")
            .expression_attribute_names("#r", ROLE)
            .consistent_read(true)
            .send()
            .await
            .map_err(classify)?;
        out.item()
            .map(|item| {
                let raw = get_s(item, ROLE)?;
                Role::parse(&raw).ok_or_else(|| corrupt(ROLE))
            })
            .transpose()
    }

    /// One GetItem of the dataset's item, strongly consistent (a level just set applies).
    async fn dataset_access(&self, slug: &Slug) -> Result<Option<DatasetAccess>, StoreError> {
        let item = get_consistent(
            &self.client,
            &self.datasets_table,
            key_of(dataset_pk(slug.as_str()), DATASET_SK),
        )
        .await?;
        item.as_ref().map(|i| dataset_access(i, slug)).transpose()
    }

    /// One TransactWriteItems: the account's item has no `disabled_at`, and the record is absent
    /// or may be asked again; on a refused condition, one GetItem says why.
    async fn ask(&self, record: &AccessRecord, now: DateTime<Utc>) -> Result<Asked, StoreError> {
        let grantee = Owner::parse(&record.grantee)
            .ok_or_else(|| StoreError::Corrupt("the grantee is not an account id".into()))?;
        let enabled = ConditionCheck::builder()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(grantee.as_str())))
            .condition_expression(format!("attribute_not_exists({DISABLED_AT})"));
        // An automatic approval grants at once: after an operator's revocation, asking again
        // must not undo it.
        let automatic = record.status == AccessStatus::Granted;
        let mut e = Expression::setting(record.attributes());
        e.name("#st", STATUS);
        e.name("#exp", EXPIRES_AT);
        e.value(":pending", s(AccessStatus::Pending.as_str()));
        e.value(":granted", s(AccessStatus::Granted.as_str()));
        e.value(":now", time(&now));
        let mut closed = "#st <> :pending AND #st <> :granted".to_owned();
        if automatic {
            e.value(":revoked", s(AccessStatus::Revoked.as_str()));
            closed.push_str(" AND #st <> :revoked");
        }
        let put = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(record.key()?))
            .update_expression(e.update())
            // Absent, or neither pending nor a grant in force. Stored times are whole seconds
            // and compare as text: a grant is over once its stored expiry is at or before now,
            // as the data path judges it (`Grant::is_active_at`). A NULL expiry compares as
            // nothing: a grant until revoked stays in force.
            .condition_expression(format!(
                "attribute_not_exists({KEY_HASH}) OR ({closed}) OR \
                 (#st = :granted AND #exp <= :now)"
            ))
            .set_expression_attribute_names(Some(e.names))
            .set_expression_attribute_values(Some(e.values));
        let mut items = vec![
            TransactWriteItem::builder()
                .condition_check(build(enabled.build())?)
                .build(),
            TransactWriteItem::builder()
                .update(build(put.build())?)
                .build(),
        ];
        // The notice that tells the deciders (or, granted at once, the person), in the same
        // write: recorded first, sent later by the mailer.
        if let Some(notice) = Notice::for_record(record, now) {
            items.push(notices::notice_put(&self.keys_table, &notice)?);
        }
        // Twice at most: a record that changed between the refusal and its reading (withdrawn,
        // say) may simply be asked for again.
        for _ in 0..2 {
            match transact_retrying(&self.client, items.clone()).await? {
                Ok(()) => return Ok(Asked::Recorded),
                Err(0) => return Ok(Asked::AccountDisabled),
                Err(_) => {
                    let current = self.record(&grantee, &record.dataset).await?;
                    match current {
                        Some(r) if r.status == AccessStatus::Pending => {
                            return Ok(Asked::AlreadyPending)
                        }
                        Some(r) if r.status == AccessStatus::Revoked && automatic => {
                            return Ok(Asked::Revoked)
                        }
                        Some(r) if !r.may_ask_again(now) => return Ok(Asked::AlreadyGranted),
                        _ => continue,
                    }
                }
            }
        }
        Err(StoreError::Unavailable(
            "the access record kept changing while it was asked for".into(),
        ))
    }

    /// One Query of the owner index (eventually consistent: a record written a moment ago may
    /// show a moment later).
    async fn access_of(&self, owner: &Owner) -> Result<Vec<AccessRecord>, StoreError> {
        let items = query_all(owner_records_query(&self.client, &self.keys_table, owner)).await?;
        let mut records = items
            .iter()
            .map(AccessRecord::from_item)
            .collect::<Result<Vec<_>, _>>()?;
        newest_first(&mut records);
        Ok(records)
    }

    /// One conditional UpdateItem.
    async fn withdraw(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        now: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let result = self
            .client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(grant_key(owner.as_str(), dataset)))
            .update_expression(
                "SET #st = :withdrawn, #by = :by, #at = :at, \
                 #rev = if_not_exists(#rev, :zero) + :one",
            )
            .condition_expression("#st = :pending")
            .expression_attribute_names("#st", STATUS)
            .expression_attribute_names("#by", DECIDED_BY)
            .expression_attribute_names("#at", DECIDED_AT)
            .expression_attribute_names("#rev", REV)
            .expression_attribute_values(":withdrawn", s(AccessStatus::Withdrawn.as_str()))
            .expression_attribute_values(":pending", s(AccessStatus::Pending.as_str()))
            .expression_attribute_values(":by", s(owner.as_str()))
            .expression_attribute_values(":at", time(&now))
            .expression_attribute_values(":zero", AttributeValue::N("0".into()))
            .expression_attribute_values(":one", AttributeValue::N("1".into()))
            .send()
            .await;
        match result {
            Ok(_) => Ok(true),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }

    /// One Query of the status index (more pages for more records).
    async fn access_by_status(
        &self,
        status: AccessStatus,
        dataset: Option<&Uuid>,
    ) -> Result<Vec<AccessRecord>, StoreError> {
        let mut records = self.query_status(status, dataset).await?;
        newest_first(&mut records);
        Ok(records)
    }

    /// One strongly consistent GetItem, then one TransactWriteItems: the record's update, on
    /// the condition that it is still as read, and its notice ([`notices`]).
    async fn decide(
        &self,
        dataset: &Uuid,
        grantee: &Owner,
        decision: &Decision,
        rev: Option<u64>,
        by: &str,
        now: DateTime<Utc>,
    ) -> Result<Decided, StoreError> {
        self.decide_noticed(dataset, grantee, decision, rev, by, now)
            .await
    }
}
