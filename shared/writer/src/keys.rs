//! API keys: stored as their SHA-256 only, created, listed and revoked by operators. Accounts
//! mint their own through the keys function (`catalog_aws::dynamo::accounts`), whose revocation
//! this shares so that a revoked account key always frees its slot.

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::error::StoreError;
use catalog::keys::KeyHash;
use catalog::keys::KEY_ID_PREFIX;
use catalog_aws::dynamo::accounts::DynamoAccounts;
use catalog_aws::dynamo::attr::{get_s, s};
use catalog_aws::dynamo::layout::name::{ID, KEY_HASH};
use catalog_aws::dynamo::layout::{api_key_key, KEYS_BY_ID_INDEX};
use catalog_aws::dynamo::requests::{classify, query_all, scan_all};
use catalog_aws::dynamo::retry::{Attempt, Backoff};
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::writer::DynamoWriter;

pub use catalog::keys::{generate_key, KeyInfo, NewKey};
use catalog_aws::dynamo::codec::prelude::*;

impl DynamoWriter {
    /// Stores a new key's record (hash, never the secret).
    pub async fn put_key(&self, key: &NewKey) -> Result<(), WriteError> {
        self.client
            .put_item()
            .table_name(&self.keys_table)
            .set_item(Some(key.to_item()))
            .condition_expression(format!("attribute_not_exists({KEY_HASH})"))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// All keys, operators' and accounts' (operators only; the keys table is small), oldest
    /// first.
    pub async fn list_keys(&self) -> Result<Vec<KeyInfo>, WriteError> {
        let items = scan_all(
            self.client
                .scan()
                .table_name(&self.keys_table)
                .consistent_read(true),
        )
        .await?;
        let mut keys = items
            .iter()
            // Accounts' items (their active keys' slots) have no id; access records' ids are
            // `access#…`: only keys' ids are `key_…`.
            .filter(|item| {
                matches!(item.get(ID), Some(AttributeValue::S(id)) if id.starts_with(KEY_ID_PREFIX))
            })
            .map(KeyInfo::from_item)
            .collect::<Result<Vec<_>, StoreError>>()?;
        keys.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
        Ok(keys)
    }

    /// Revokes the key with this public id as of `at`; its next request is refused. The id is
    /// found through the keys table's index on it, at any table size, without a scan. The
    /// index is eventually consistent: a key created a moment ago is looked for again, for
    /// about a second, before the id is reported unknown.
    pub async fn revoke_key_by_id(&self, id: &str, at: DateTime<Utc>) -> Result<(), WriteError> {
        let found = Backoff::INDEX_CATCH_UP
            .run(
                (),
                |()| async {
                    let found = query_all(
                        self.client
                            .query()
                            .table_name(&self.keys_table)
                            .index_name(KEYS_BY_ID_INDEX)
                            .key_condition_expression("#id = :id")
                            .expression_attribute_names("#id", ID)
                            .expression_attribute_values(":id", s(id)),
                    )
                    .await?;
                    Ok::<_, WriteError>(match found.into_iter().next() {
                        Some(item) => Attempt::Done(item),
                        None => Attempt::Retry(()),
                    })
                },
                |()| WriteError::NoSuchKey(id.to_owned()),
            )
            .await?;
        let hash = get_s(&found, KEY_HASH)?;
        let hash = KeyHash::from_hex(&hash).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.revoke_key(&hash, at).await
    }

    /// Marks a key revoked as of `at` (the first revocation's time stays: revoking twice
    /// changes nothing); the next request with it is refused. An account's key frees its slot.
    pub async fn revoke_key(&self, hash: &KeyHash, at: DateTime<Utc>) -> Result<(), WriteError> {
        let accounts = self.accounts();
        let item = accounts
            .read_item(api_key_key(hash.as_str()))
            .await?
            .ok_or_else(|| WriteError::NoSuchKey(format!("with hash {}", hash.as_str())))?;
        if !accounts.revoke_item(&item, at).await? {
            return Err(WriteError::NoSuchKey(format!(
                "with hash {}",
                hash.as_str()
            )));
        }
        Ok(())
    }

    /// The keys table as the keys function uses it.
    pub fn accounts(&self) -> DynamoAccounts {
        DynamoAccounts::new(self.client.clone(), &self.keys_table)
    }
}
