//! Accounts' keys in the keys table ([`DynamoAccounts`]): the keys function's storage, and the
//! revocation that operators' tools share with it.
//!
//! The limit of active keys is kept on the account's item, in a string set of one slot per
//! active key (`<expiry>/<id>`): a creation adds its slot in the same transaction that puts the
//! key, on the condition that the set holds fewer than the limit, so concurrent creations can
//! never take an account past it. A revocation removes the slot in the same transaction that
//! marks the key. Slots of expired keys are dropped when a creation finds the set full.

use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, Utc};

use super::attr::{get_s, get_time_opt, s, time};
use super::codec::purge_at;
use super::layout::name::{
    ACTIVE_KEYS, DISABLED_AT, EXPIRES_AT, ID, KEY_HASH, OWNER, PURGE_AT, REVOKED_AT,
};
use super::layout::{
    account_key, api_key_key, idempotency_key, key_slot, Item, KEYS_BY_OWNER_INDEX,
};
use super::requests::{classify, get_consistent, query_all};
use super::retry::Backoff;
use super::tx::{build, other, transact_retrying};
use crate::dynamo::codec::prelude::*;
use catalog::accounts::Replay;
use catalog::error::StoreError;
use catalog::keys::{KeyInfo, NewKey, Owner, KEY_ID_PREFIX};
use catalog::ports::{AccountKeyStore, Created};

mod create;

use create::{owner_of, Creation};
/// Accounts' keys, in the keys table.
#[derive(Clone, Debug)]
pub struct DynamoAccounts {
    client: Client,
    keys_table: String,
}

impl DynamoAccounts {
    pub fn new(client: Client, keys_table: impl Into<String>) -> Self {
        Self {
            client,
            keys_table: keys_table.into(),
        }
    }

    /// An item of the keys table by its key, read strongly.
    pub async fn read_item(&self, key: Item) -> Result<Option<Item>, StoreError> {
        get_consistent(&self.client, &self.keys_table, key).await
    }

    /// The account's item (empty when the account has never held a key).
    async fn account_item(&self, owner: &Owner) -> Result<Item, StoreError> {
        Ok(self
            .read_item(account_key(owner.as_str()))
            .await?
            .unwrap_or_default())
    }
    /// Marks a stored key revoked as of `at` (its first revocation's time stays) and, for an
    /// account's key, frees its slot, in one transaction. `item` is the key's item as read;
    /// `false` when it is gone since (a retried creation re-issued the key under a new hash).
    pub async fn revoke_item(&self, item: &Item, at: DateTime<Utc>) -> Result<bool, StoreError> {
        let hash = get_s(item, KEY_HASH)?;
        let mark = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(api_key_key(&hash)))
            .update_expression(format!(
                "SET {REVOKED_AT} = if_not_exists({REVOKED_AT}, :at), {PURGE_AT} = :purge"
            ))
            .condition_expression(format!("attribute_exists({KEY_HASH})"))
            .expression_attribute_values(":at", time(&at))
            .expression_attribute_values(":purge", purge_at(&at));
        let mut items = vec![TransactWriteItem::builder()
            .update(build(mark.build())?)
            .build()];
        if let Some(AttributeValue::S(owner)) = item.get(OWNER) {
            let slot = key_slot(&get_s(item, ID)?, get_time_opt(item, EXPIRES_AT)?.as_ref());
            let free = Update::builder()
                .table_name(&self.keys_table)
                .set_key(Some(account_key(owner)))
                .update_expression("DELETE #active :slot")
                .expression_attribute_names("#active", ACTIVE_KEYS)
                .expression_attribute_values(":slot", AttributeValue::Ss(vec![slot]));
            items.push(
                TransactWriteItem::builder()
                    .update(build(free.build())?)
                    .build(),
            );
        }
        Ok(transact_retrying(&self.client, items).await?.is_ok())
    }

    /// Marks the account disabled as of `at` (its new keys are refused), or enabled (`None`).
    pub async fn set_disabled(
        &self,
        owner: &Owner,
        at: Option<DateTime<Utc>>,
    ) -> Result<(), StoreError> {
        let update = self
            .client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())));
        let update = match at {
            Some(at) => update
                .update_expression(format!("SET {DISABLED_AT} = :at, #owner = :owner"))
                .expression_attribute_names("#owner", OWNER)
                .expression_attribute_values(":at", time(&at))
                .expression_attribute_values(":owner", s(owner.as_str())),
            None => update.update_expression(format!("REMOVE {DISABLED_AT}")),
        };
        update.send().await.map_err(classify)?;
        Ok(())
    }

    /// Revokes every key of the owner not yet revoked; how many. The owner index is eventually
    /// consistent, so the account's slots (read strongly) name every active key: one the index
    /// does not show yet is looked for again until it does. One it never shows is an error that
    /// names it: nothing reports success while a key may still work.
    pub async fn revoke_all(&self, owner: &Owner, at: DateTime<Utc>) -> Result<usize, StoreError> {
        let account = self.account_item(owner).await?;
        let mut active: Vec<String> = match account.get(ACTIVE_KEYS) {
            Some(AttributeValue::Ss(slots)) => slots
                .iter()
                .filter_map(|slot| slot.split_once('/').map(|(_, id)| id.to_owned()))
                .collect(),
            _ => Vec::new(),
        };
        let mut revoked = 0;
        for item in self.key_items(owner).await? {
            let id = get_s(&item, ID)?;
            if get_time_opt(&item, REVOKED_AT)?.is_some() {
                active.retain(|a| *a != id);
            } else if self.revoke_item(&item, at).await? {
                active.retain(|a| *a != id);
                revoked += 1;
            }
            // Gone since it was listed (re-issued): its id stays to be looked for again below.
        }
        let mut unresolved = Vec::new();
        for id in active {
            if self.revoke_key(owner, &id, at).await? {
                revoked += 1;
            } else {
                unresolved.push(id);
            }
        }
        if !unresolved.is_empty() {
            // Never a success while an active key may still work.
            return Err(StoreError::Unavailable(
                format!(
                    "{revoked} key(s) revoked, but the account's active key(s) {} could not be \
                     found to revoke (the owner index may be behind): run the command again",
                    unresolved.join(", ")
                )
                .into(),
            ));
        }
        Ok(revoked)
    }

    /// The owner's key items with this id (at most one), read from the owner index.
    async fn find(&self, owner: &Owner, id: &str) -> Result<Option<Item>, StoreError> {
        let items = query_all(
            self.client
                .query()
                .table_name(&self.keys_table)
                .index_name(KEYS_BY_OWNER_INDEX)
                .key_condition_expression("#owner = :owner AND #id = :id")
                .expression_attribute_names("#owner", OWNER)
                .expression_attribute_names("#id", ID)
                .expression_attribute_values(":owner", s(owner.as_str()))
                .expression_attribute_values(":id", s(id)),
        )
        .await?;
        Ok(items.into_iter().next())
    }

    /// The owner's key items, as stored (operators' tools revoke them all).
    pub async fn key_items(&self, owner: &Owner) -> Result<Vec<Item>, StoreError> {
        query_all(
            self.client
                .query()
                .table_name(&self.keys_table)
                .index_name(KEYS_BY_OWNER_INDEX)
                // The owner index holds the account's access records too (`id` `access#…`).
                .key_condition_expression("#owner = :owner AND begins_with(#id, :key)")
                .expression_attribute_names("#owner", OWNER)
                .expression_attribute_names("#id", ID)
                .expression_attribute_values(":owner", s(owner.as_str()))
                .expression_attribute_values(":key", s(KEY_ID_PREFIX)),
        )
        .await
    }
}

impl AccountKeyStore for DynamoAccounts {
    /// One TransactWriteItems: the account's slot, the key and the day's count. Only when the
    /// account's set is full does it read the set, drop expired keys' slots and try once more.
    async fn create_key(&self, key: &NewKey, now: DateTime<Utc>) -> Result<Created, StoreError> {
        match self.create(key, None, now).await? {
            Creation::Ended(created) => Ok(created),
            Creation::Raced => Err(other(
                "a creation without an Idempotency-Key cannot race one",
            )),
        }
    }

    /// One GetItem of the idempotency item, then either the creation's transaction (with the
    /// item, on the condition that no request made it first) or, for a retry, one transaction
    /// that re-issues the key: delete the first secret's item, put the new one, point the
    /// idempotency item at it.
    async fn create_key_once(
        &self,
        key: &NewKey,
        replay: &Replay,
        now: DateTime<Utc>,
    ) -> Result<Created, StoreError> {
        let owner = owner_of(key)?;
        let record = idempotency_key(owner.as_str(), &replay.key_hash);
        if let Some(item) = self.read_item(record.clone()).await? {
            return self.reissue(key, &item, replay, now).await;
        }
        match self.create(key, Some(replay), now).await? {
            // Another request with the same Idempotency-Key created first: this one is its retry.
            Creation::Raced => match self.read_item(record).await? {
                Some(item) => self.reissue(key, &item, replay, now).await,
                None => Err(other("the idempotency item vanished")),
            },
            Creation::Ended(created) => Ok(created),
        }
    }

    /// One Query of the owner index.
    async fn list_keys(&self, owner: &Owner) -> Result<Vec<KeyInfo>, StoreError> {
        let items = self.key_items(owner).await?;
        let mut keys = items
            .iter()
            .map(KeyInfo::from_item)
            .collect::<Result<Vec<_>, _>>()?;
        keys.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(keys)
    }

    /// A Query of the owner index for the id, then one transaction. The index is eventually
    /// consistent: a key created a moment ago is looked for again, for about a second.
    async fn revoke_key(
        &self,
        owner: &Owner,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let b = Backoff::INDEX_CATCH_UP;
        for retry in 0..=b.retries {
            if retry > 0 {
                tokio::time::sleep(b.delay(retry)).await;
            }
            // The index may still show the item a re-issue replaced: look again.
            if let Some(item) = self.find(owner, id).await? {
                if self.revoke_item(&item, at).await? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }
}
