//! Creating an account's key: one transaction that takes a slot in the account's set, puts the
//! key and counts the day's creations, and (with an Idempotency-Key) the re-issue of a retried
//! creation.

use aws_sdk_dynamodb::types::{AttributeValue, Delete, Put, TransactWriteItem, Update};
use chrono::{DateTime, Utc};

use crate::dynamo::attr::{get_s, s};
use crate::dynamo::codec::prelude::*;
use crate::dynamo::layout::name::{
    ACTIVE_KEYS, CREATIONS, DISABLED_AT, FINGERPRINT, ISSUED, KEY_HASH, OWNER, PURGE_AT, REVOKED_AT,
};
use crate::dynamo::layout::{
    account_key, api_key_key, creations_key, idempotency_key, key_slot, slot_expiry, Item,
};
use crate::dynamo::requests::classify;
use crate::dynamo::tx::{build, other, transact_retrying};
use catalog::accounts::{
    creation_day, IdempotencyConflict, Replay, IDEMPOTENCY_WINDOW, MAX_ACTIVE_KEYS,
    MAX_KEYS_PER_DAY,
};
use catalog::error::StoreError;
use catalog::keys::{KeyInfo, NewKey, Owner};
use catalog::ports::Created;

use super::DynamoAccounts;

impl DynamoAccounts {
    /// Puts an account's new key (its owner named in the item), unless its hash exists.
    fn put_key(&self, key: &NewKey) -> Result<TransactWriteItem, StoreError> {
        let put = Put::builder()
            .table_name(&self.keys_table)
            .set_item(Some(key.to_item()))
            .condition_expression(format!("attribute_not_exists({KEY_HASH})"));
        Ok(TransactWriteItem::builder()
            .put(build(put.build())?)
            .build())
    }

    /// Adds a key's slot to its account's set, if the set has room.
    fn take_slot(&self, key: &NewKey, owner: &Owner) -> Result<TransactWriteItem, StoreError> {
        let update = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())))
            .update_expression("ADD #active :slot SET #owner = :owner")
            .condition_expression(format!(
                "attribute_not_exists({DISABLED_AT}) AND \
                 (attribute_not_exists(#active) OR size(#active) < :max)"
            ))
            .expression_attribute_names("#active", ACTIVE_KEYS)
            .expression_attribute_names("#owner", OWNER)
            .expression_attribute_values(
                ":slot",
                AttributeValue::Ss(vec![key_slot(&key.id, key.expires_at.as_ref())]),
            )
            .expression_attribute_values(":owner", s(owner.as_str()))
            .expression_attribute_values(":max", AttributeValue::N(MAX_ACTIVE_KEYS.to_string()));
        Ok(TransactWriteItem::builder()
            .update(build(update.build())?)
            .build())
    }

    /// Counts a creation against the account's day, if the day has room (its item leaves the
    /// table two days later).
    fn count_creation(
        &self,
        owner: &Owner,
        now: DateTime<Utc>,
    ) -> Result<TransactWriteItem, StoreError> {
        let update = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(creations_key(owner.as_str(), &creation_day(now))))
            .update_expression("ADD #count :one SET #purge = :purge")
            .condition_expression("attribute_not_exists(#count) OR #count < :cap")
            .expression_attribute_names("#count", CREATIONS)
            .expression_attribute_names("#purge", PURGE_AT)
            .expression_attribute_values(":one", AttributeValue::N("1".into()))
            .expression_attribute_values(":cap", AttributeValue::N(MAX_KEYS_PER_DAY.to_string()))
            .expression_attribute_values(
                ":purge",
                AttributeValue::N((now + chrono::Duration::days(2)).timestamp().to_string()),
            );
        Ok(TransactWriteItem::builder()
            .update(build(update.build())?)
            .build())
    }

    /// Drops the slots of the account's expired keys: how many went, or `None` if the account
    /// is disabled.
    async fn drop_expired_slots(
        &self,
        owner: &Owner,
        now: DateTime<Utc>,
    ) -> Result<Option<usize>, StoreError> {
        let item = self.account_item(owner).await?;
        if item.contains_key(DISABLED_AT) {
            return Ok(None);
        }
        let expired: Vec<String> = match item.get(ACTIVE_KEYS) {
            Some(AttributeValue::Ss(slots)) => slots
                .iter()
                .filter(|slot| slot_expiry(slot).is_none_or(|t| t <= now.timestamp()))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        if expired.is_empty() {
            return Ok(Some(0));
        }
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(account_key(owner.as_str())))
            .update_expression("DELETE #active :expired")
            .expression_attribute_names("#active", ACTIVE_KEYS)
            .expression_attribute_values(":expired", AttributeValue::Ss(expired.clone()))
            .send()
            .await
            .map_err(classify)?;
        tracing::info!(owner = %owner, dropped = expired.len(), "dropped the slots of expired keys");
        Ok(Some(expired.len()))
    }
}

/// How the creation's transaction ended: as the store reports it, or (with an
/// Idempotency-Key) lost to another request with the same key, which created first.
pub(super) enum Creation {
    Ended(Created),
    Raced,
}

pub(super) fn owner_of(key: &NewKey) -> Result<&Owner, StoreError> {
    key.owner
        .as_ref()
        .ok_or_else(|| other("an account's key needs its owner"))
}

impl DynamoAccounts {
    /// The creation's transaction: the account's slot, the key, the day's count and, with a
    /// replay, the idempotency item.
    pub(super) async fn create(
        &self,
        key: &NewKey,
        replay: Option<&Replay>,
        now: DateTime<Utc>,
    ) -> Result<Creation, StoreError> {
        let owner = owner_of(key)?;
        let mut items = vec![
            self.take_slot(key, owner)?,
            self.put_key(key)?,
            self.count_creation(owner, now)?,
        ];
        if let Some(replay) = replay {
            items.push(self.remember(key, owner, replay, now)?);
        }
        let mut dropped_expired = false;
        loop {
            match transact_retrying(&self.client, items.clone()).await? {
                Ok(()) => return Ok(Creation::Ended(Created::Created)),
                Err(0) if !dropped_expired => {
                    dropped_expired = true;
                    match self.drop_expired_slots(owner, now).await? {
                        None => return Ok(Creation::Ended(Created::AccountDisabled)),
                        Some(0) => return Ok(Creation::Ended(Created::LimitReached)),
                        Some(_) => {}
                    }
                }
                // Full again (or disabled meanwhile): the account's item says which.
                Err(0) => {
                    return Ok(Creation::Ended(
                        match self.drop_expired_slots(owner, now).await? {
                            None => Created::AccountDisabled,
                            Some(_) => Created::LimitReached,
                        },
                    ))
                }
                Err(2) => return Ok(Creation::Ended(Created::DailyLimitReached)),
                Err(3) => return Ok(Creation::Raced),
                Err(_) => return Err(other("a key with this hash exists")),
            }
        }
    }

    /// The idempotency item of a creation, unless one exists (it leaves the table a day later).
    fn remember(
        &self,
        key: &NewKey,
        owner: &Owner,
        replay: &Replay,
        now: DateTime<Utc>,
    ) -> Result<TransactWriteItem, StoreError> {
        let mut item = idempotency_key(owner.as_str(), &replay.key_hash);
        item.insert(ISSUED.to_owned(), s(key.hash.as_str()));
        item.insert(FINGERPRINT.to_owned(), s(&replay.fingerprint));
        item.insert(
            PURGE_AT.to_owned(),
            AttributeValue::N((now + IDEMPOTENCY_WINDOW).timestamp().to_string()),
        );
        let put = Put::builder()
            .table_name(&self.keys_table)
            .set_item(Some(item))
            .condition_expression(format!("attribute_not_exists({KEY_HASH})"));
        Ok(TransactWriteItem::builder()
            .put(build(put.build())?)
            .build())
    }

    /// A retry: the key the first request created, re-issued for `key`'s secret, unless the
    /// request differs or the key was revoked since.
    pub(super) async fn reissue(
        &self,
        key: &NewKey,
        record: &Item,
        replay: &Replay,
        now: DateTime<Utc>,
    ) -> Result<Created, StoreError> {
        let owner = owner_of(key)?;
        if get_s(record, FINGERPRINT)? != replay.fingerprint {
            return Ok(Created::IdempotencyConflict(
                IdempotencyConflict::OtherRequest,
            ));
        }
        let issued = get_s(record, ISSUED)?;
        let Some(first) = self.read_item(api_key_key(&issued)).await? else {
            return Ok(Created::IdempotencyConflict(IdempotencyConflict::KeyGone));
        };
        let first = KeyInfo::from_item(&first)?;
        if first.revoked_at.is_some() || first.expires_at.is_some_and(|t| t <= now) {
            return Ok(Created::IdempotencyConflict(IdempotencyConflict::KeyEnded));
        }
        let reissued = NewKey {
            hash: key.hash.clone(),
            prefix: key.prefix.clone(),
            id: first.id.clone(),
            label: first.label.clone(),
            scopes: key.scopes.clone(),
            created_at: first.created_at,
            expires_at: first.expires_at,
            owner: Some(owner.clone()),
            datasets: first.datasets.clone(),
        };
        let delete = Delete::builder()
            .table_name(&self.keys_table)
            .set_key(Some(api_key_key(&issued)))
            .condition_expression(format!(
                "attribute_exists({KEY_HASH}) AND attribute_not_exists({REVOKED_AT})"
            ));
        let point = Update::builder()
            .table_name(&self.keys_table)
            .set_key(Some(idempotency_key(owner.as_str(), &replay.key_hash)))
            .update_expression(format!("SET {ISSUED} = :new"))
            .condition_expression(format!("{ISSUED} = :old"))
            .expression_attribute_values(":new", s(key.hash.as_str()))
            .expression_attribute_values(":old", s(&issued));
        let items = vec![
            TransactWriteItem::builder()
                .delete(build(delete.build())?)
                .build(),
            self.put_key(&reissued)?,
            TransactWriteItem::builder()
                .update(build(point.build())?)
                .build(),
        ];
        match transact_retrying(&self.client, items).await? {
            Ok(()) => Ok(Created::Replayed(Box::new(reissued.info()))),
            Err(_) => Ok(Created::IdempotencyConflict(
                IdempotencyConflict::ChangedMeanwhile,
            )),
        }
    }
}
