//! The datasets and keys tables' layout: item keys, shared by the functions (which read) and
//! `catalog-writer` (which writes). docs/data-model.md states the invariants these items keep.
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
//! | facet counter | `CATALOG#<facet>#<value>` | `COUNTER` | `total`: how many datasets the facet list holds; `rebuild_until`: a rewrite's mark |
//!
//! Keys table (`key_hash`, string):
//!
//! | item | key_hash | holds |
//! |---|---|---|
//! | API key | SHA-256 of the key, 64 hex digits | `id`, `prefix`, `label`, `scopes`, `created_at`, `expires_at`, `revoked_at`, `last_used_at`; `owner` (a Cognito `sub`) for an account's key |
//! | account | `ACCOUNT#<sub>` | `owner`; `active_keys`: one `<expiry, unix seconds>/<key id>` per active key, at most [`crate::accounts::MAX_ACTIVE_KEYS`] |
//!
//! Indexes: [`KEYS_BY_ID_INDEX`] (`id`, keys only) for operators' revocation by id;
//! [`KEYS_BY_OWNER_INDEX`] (`owner`, `id`, all attributes) for an account's list. Account
//! items have no `id`, so neither index holds them.

use std::collections::HashMap;

use uuid::Uuid;

pub use super::attr::Item;
use super::attr::{get_s, s};
use crate::error::StoreError;
use crate::query::Facet;

pub const DATASET_SK: &str = "DATASET";
pub const LIST_PK: &str = "LIST";
pub const COUNTER_PK: &str = "CATALOG";
pub const COUNTER_SK: &str = "COUNTER";
/// On the catalog counter: the facet lists were built (first listing, or `reindex`).
pub const FACETS_INDEXED: &str = "facets_indexed";
/// The keys table's partition key.
pub const KEY_ATTR: &str = "key_hash";
/// The keys table's index by public key id (`id`), keys only: revocation by id reads it.
pub const KEYS_BY_ID_INDEX: &str = "by-id";
/// The keys table's index by owner (`owner`, then `id`), all attributes: an account's keys in
/// one Query.
pub const KEYS_BY_OWNER_INDEX: &str = "by-owner";
/// On an account item: the string set of its active keys' slots ([`key_slot`]).
pub const ACTIVE_KEYS: &str = "active_keys";

pub fn dataset_pk(slug: &str) -> String {
    format!("DS#{slug}")
}

pub fn alias_pk(id: &Uuid) -> String {
    format!("ID#{id}")
}

pub fn version_sk(version: u64) -> String {
    format!("V#{version:010}")
}

pub fn list_sk(seq: u64) -> String {
    format!("SEQ#{seq:012}")
}

pub fn facet_list_pk(facet: &Facet) -> String {
    format!("{LIST_PK}#{}", facet.key())
}

pub fn facet_counter_pk(facet: &Facet) -> String {
    format!("{COUNTER_PK}#{}", facet.key())
}

/// The primary key `{pk, sk}` of a datasets-table item.
pub fn key_of(pk: impl Into<String>, sk: &str) -> Item {
    HashMap::from([("pk".to_owned(), s(pk)), ("sk".to_owned(), s(sk))])
}

/// The key of a counter item (`CATALOG` or a facet's).
pub fn counter_key(pk: impl Into<String>) -> Item {
    key_of(pk, COUNTER_SK)
}

/// The key of a keys-table item.
pub fn api_key_key(hash: &str) -> Item {
    HashMap::from([(KEY_ATTR.to_owned(), s(hash))])
}

/// The key of an account's item in the keys table (never a hash: it is not 64 hex digits).
pub fn account_key(owner: &str) -> Item {
    api_key_key(&format!("ACCOUNT#{owner}"))
}

/// A key's element of its account's [`ACTIVE_KEYS`] set: its expiry (unix seconds) and id, so
/// that expired keys can be told from the set alone.
pub fn key_slot(id: &str, expires_at: Option<&chrono::DateTime<chrono::Utc>>) -> String {
    format!("{}/{id}", expires_at.map_or(i64::MAX, |t| t.timestamp()))
}

/// The expiry (unix seconds) of a [`key_slot`].
pub fn slot_expiry(slot: &str) -> Option<i64> {
    slot.split_once('/')?.0.parse().ok()
}

/// The position in `sk` (`SEQ#000000000042` is 42).
pub fn position_of(item: &Item) -> Result<u64, StoreError> {
    get_s(item, "sk")?
        .strip_prefix("SEQ#")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| super::attr::corrupt("sk"))
}
