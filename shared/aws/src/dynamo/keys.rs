//! The keys table, read ([`KeysTable`]): keys, grants and the record of a key's use, for the
//! functions that verify keys.

use aws_sdk_dynamodb::types::KeysAndAttributes;
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::attr;
use super::layout::name::{KEY_HASH, LAST_USED_AT};
use super::layout::{api_key_key, grant_key, member_key, name::ROLE};
use super::requests::{self, classify};
use crate::dynamo::codec::prelude::*;
use catalog::error::StoreError;
use catalog::keys::{KeyHash, Owner};
use catalog::orgs::{OrgName, Role};
use catalog::policy::Grant;
use catalog::ports::{GrantReader, KeyUsage, Standing};

/// Reads the keys table (and records a key's use).
#[derive(Clone, Debug)]
pub struct KeysTable {
    client: Client,
    table: String,
}

impl KeysTable {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    pub fn name(&self) -> &str {
        &self.table
    }

    pub(super) fn client(&self) -> &Client {
        &self.client
    }
}

impl GrantReader for KeysTable {
    /// One strongly consistent GetItem: a revocation shows on the next request.
    async fn grant(&self, owner: &Owner, dataset: &Uuid) -> Result<Option<Grant>, StoreError> {
        let key = grant_key(owner.as_str(), dataset);
        requests::get_consistent(&self.client, &self.table, key)
            .await?
            .as_ref()
            .map(Grant::from_item)
            .transpose()
    }

    /// One strongly consistent BatchGetItem of the grant and the membership: a revocation or a
    /// removal from the organisation shows on the next request.
    async fn standing(
        &self,
        owner: &Owner,
        dataset: &Uuid,
        org: &OrgName,
    ) -> Result<Standing, StoreError> {
        let grant = grant_key(owner.as_str(), dataset);
        let member = member_key(org.as_str(), owner.as_str());
        let wanted = KeysAndAttributes::builder()
            .keys(grant.clone())
            .keys(member.clone())
            .consistent_read(true)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let found = requests::batch_get_all(
            &self.client,
            std::collections::HashMap::from([(self.table.clone(), wanted)]),
        )
        .await?;
        let mut standing = Standing::default();
        for item in found.get(&self.table).into_iter().flatten() {
            if item.get(KEY_HASH) == grant.get(KEY_HASH) {
                standing.grant = Some(Grant::from_item(item)?);
            } else if item.get(KEY_HASH) == member.get(KEY_HASH) {
                let raw = attr::get_s(item, ROLE)?;
                standing.role = Some(Role::parse(&raw).ok_or_else(|| attr::corrupt(ROLE))?);
            }
        }
        Ok(standing)
    }
}

impl KeyUsage for KeysTable {
    /// One conditional UpdateItem of `last_used_at` alone (the data function's IAM policy allows
    /// no other attribute), written only if the stored value is older than the granularity: a
    /// concurrent instance that wrote it first makes this a no-op.
    async fn record_use(&self, key: &KeyHash, now: DateTime<Utc>) -> Result<(), StoreError> {
        let cutoff = now - catalog::keys::LAST_USED_GRANULARITY;
        let result = self
            .client
            .update_item()
            .table_name(&self.table)
            .set_key(Some(api_key_key(key.as_str())))
            .update_expression(format!("SET {LAST_USED_AT} = :now"))
            .condition_expression(format!(
                "attribute_exists({KEY_HASH}) AND \
                 (attribute_not_exists({LAST_USED_AT}) OR {LAST_USED_AT} <= :cutoff)"
            ))
            .expression_attribute_values(":now", attr::time(&now))
            .expression_attribute_values(":cutoff", attr::time(&cutoff))
            .send()
            .await;
        match result {
            Ok(_) => Ok(()),
            Err(e)
                if e.as_service_error()
                    .is_some_and(|e| e.is_conditional_check_failed_exception()) =>
            {
                Ok(())
            }
            Err(e) => Err(classify(e)),
        }
    }
}
