//! API keys: stored as their SHA-256 only, created, listed and revoked by operators.

use catalog::domain::{KeyHash, Scope};
use catalog::dynamo::attr::{
    get_s, get_strings, get_time, get_time_opt, opt_time, s, strings, time,
};
use catalog::dynamo::layout::{api_key_key, KEYS_BY_ID_INDEX, KEY_ATTR};
use catalog::dynamo::requests::{classify, query_all, scan_all};
use catalog::dynamo::retry::{Attempt, Backoff};
use catalog::error::StoreError;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::{DynamoWriter, WriteError};

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
        "{}{}{}",
        catalog::domain::KEY_PREFIX,
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

impl DynamoWriter {
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
            .item("created_at", time(&key.created_at))
            .item("expires_at", opt_time(key.expires_at.as_ref()))
            .condition_expression("attribute_not_exists(key_hash)")
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }

    /// All keys (operators only; the keys table is small), oldest first.
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
            .map(|item| {
                Ok(KeyInfo {
                    id: get_s(item, "id")?,
                    prefix: get_s(item, "prefix")?,
                    label: get_s(item, "label")?,
                    scopes: get_strings(item, "scopes")?,
                    created_at: get_time(item, "created_at")?,
                    expires_at: get_time_opt(item, "expires_at")?,
                    revoked_at: get_time_opt(item, "revoked_at")?,
                })
            })
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
                            .expression_attribute_names("#id", "id")
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
        let hash = get_s(&found, KEY_ATTR)?;
        let hash = KeyHash::from_hex(&hash).map_err(|e| StoreError::Corrupt(e.to_string()))?;
        self.revoke_key(&hash, at).await
    }

    /// Marks a key revoked as of `at`; the next request with it is refused.
    pub async fn revoke_key(&self, hash: &KeyHash, at: DateTime<Utc>) -> Result<(), WriteError> {
        self.client
            .update_item()
            .table_name(&self.keys_table)
            .set_key(Some(api_key_key(hash.as_str())))
            // The first revocation's time stays: revoking twice changes nothing.
            .update_expression("SET revoked_at = if_not_exists(revoked_at, :at)")
            .condition_expression("attribute_exists(key_hash)")
            .expression_attribute_values(":at", time(&at))
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }
}
