//! API keys, from the secret a client presents to the record the keys table holds: the key
//! itself ([`ApiKey`], never logged), its hash (the only form stored), its scopes, a new key's
//! record ([`NewKey`]), what the data endpoint reads of a stored key ([`KeyRecord`]) and what its
//! owner sees ([`KeyInfo`]). Accounts' rules for minting them are in [`crate::accounts`].

use std::fmt;

use chrono::{DateTime, Duration, Utc};
use serde::Serialize;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::slug::Slug;

/// How the keys this service issues begin ([`generate_key`]).
pub const KEY_PREFIX: &str = "dcat_";

/// How long a key's item stays in the keys table once the key stopped working (expired or
/// revoked): then DynamoDB's time to live deletes it (`purge_at`). A deleted key is unknown,
/// which the data endpoint answers as it answers a revoked one (401 `invalid_key`).
pub const RETENTION: Duration = Duration::days(90);

/// `last_used_at` is written at most this often per key, so that the data endpoint stays at one
/// DynamoDB round trip in the steady state.
pub const LAST_USED_GRANULARITY: Duration = Duration::hours(1);

/// An API key as presented by a client. Never logged, never displayed: `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub const MAX_LEN: usize = 256;

    /// A key is 1 to 256 visible ASCII characters. Anything else cannot be a key we issued.
    pub fn parse(raw: &str) -> Option<Self> {
        let ok = !raw.is_empty()
            && raw.len() <= Self::MAX_LEN
            && raw.bytes().all(|b| b.is_ascii_graphic());
        ok.then(|| Self(raw.to_owned()))
    }

    pub fn hash(&self) -> KeyHash {
        KeyHash::of(&self.0)
    }

    /// The secret itself, for the one place that shows it: key creation.
    pub fn expose_secret(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Lowercase hex SHA-256 of an API key: the only form in which a key is stored.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct KeyHash(String);

impl KeyHash {
    /// Characters in the hex form: two per byte of a SHA-256 digest.
    pub const HEX_LEN: usize = 64;

    pub fn of(secret: &str) -> Self {
        Self(hex::encode(Sha256::digest(secret.as_bytes())))
    }

    /// A hash as stored: exactly 64 lowercase hexadecimal characters.
    pub fn from_hex(hex: &str) -> Result<Self, KeyHashError> {
        let lower_hex = |b: u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
        if hex.len() != Self::HEX_LEN || !hex.bytes().all(lower_hex) {
            return Err(KeyHashError);
        }
        Ok(Self(hex.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for KeyHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("KeyHash(<redacted>)")
    }
}

/// A stored key hash that is not 64 lowercase hex characters. The value is not repeated: it may
/// be a key stored by mistake in place of its hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a key hash is 64 lowercase hexadecimal characters")]
pub struct KeyHashError;

/// Scopes a key can carry. Only `read` exists today; unknown scopes read from storage are kept
/// as `Other` so that a newer writer never breaks an older reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Read,
    Other(String),
}

impl Scope {
    pub fn parse(raw: &str) -> Self {
        match raw {
            "read" => Self::Read,
            other => Self::Other(other.to_owned()),
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Read => "read",
            Self::Other(s) => s,
        }
    }
}

/// A scope goes out in responses as its name.
impl serde::Serialize for Scope {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

/// An API key's stored record (the key itself is never stored, only its hash).
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRecord {
    pub id: String,
    pub scopes: Vec<Scope>,
    pub expires_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// When it last opened a download, to [`LAST_USED_GRANULARITY`].
    pub last_used_at: Option<DateTime<Utc>>,
    /// The account that minted it; `None` for an operator's key.
    pub owner: Option<Owner>,
    /// The only datasets it reads, when limited to some ([`MAX_DATASETS`] at most).
    pub datasets: Option<Vec<Slug>>,
}

impl KeyRecord {
    /// Whether a use at `now` should be written: never recorded, or last recorded at least
    /// [`LAST_USED_GRANULARITY`] ago.
    pub fn use_worth_recording(&self, now: DateTime<Utc>) -> bool {
        self.last_used_at
            .is_none_or(|t| now - t >= LAST_USED_GRANULARITY)
    }

    /// A key works until it expires, and not at all once revoked: `revoked_at` records when,
    /// by the revoker's clock, and is never compared with this one.
    pub fn is_usable_at(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|t| now < t)
    }

    pub fn has_scope(&self, scope: &Scope) -> bool {
        self.scopes.contains(scope)
    }

    /// Whether its dataset limit, if any, names this dataset.
    pub fn may_read(&self, slug: &Slug) -> bool {
        self.datasets.as_ref().is_none_or(|d| d.contains(slug))
    }
}

/// Most datasets a key can be limited to.
pub const MAX_DATASETS: usize = 20;

/// An account: the Cognito user's `sub`, stable for the user's life (an email can change).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Owner(String);

impl Owner {
    /// A `sub` as Cognito issues it (a UUID); anything else is refused.
    pub fn parse(sub: &str) -> Option<Self> {
        let ok = !sub.is_empty()
            && sub.len() <= 128
            && sub.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
        ok.then(|| Self(sub.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A new API key's record (the secret itself never reaches storage).
#[derive(Debug, Clone)]
pub struct NewKey {
    pub hash: KeyHash,
    pub id: String,
    pub prefix: String,
    pub label: String,
    pub scopes: Vec<Scope>,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The account that minted it; `None` for an operator's key.
    pub owner: Option<Owner>,
    /// The only datasets it reads, when limited to some.
    pub datasets: Option<Vec<Slug>>,
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
            id: format!(
                "{KEY_ID_PREFIX}{}",
                &Uuid::new_v4().simple().to_string()[..16]
            ),
            prefix: secret.chars().take(9).collect(),
            label: label.to_owned(),
            scopes,
            created_at,
            expires_at,
            owner: None,
            datasets: None,
        }
    }

    /// The new key as its owner sees it.
    pub fn info(&self) -> KeyInfo {
        KeyInfo {
            id: self.id.clone(),
            prefix: self.prefix.clone(),
            label: self.label.clone(),
            scopes: self.scopes.iter().map(|s| s.as_str().to_owned()).collect(),
            created_at: self.created_at,
            expires_at: self.expires_at,
            last_used_at: None,
            revoked_at: None,
            owner: self.owner.as_ref().map(|o| o.as_str().to_owned()),
            datasets: self.datasets.clone(),
        }
    }
}

/// What every key id begins with.
pub const KEY_ID_PREFIX: &str = "key_";

/// A public key id as [`NewKey`] makes them: `key_` and 16 lowercase hex digits.
pub fn is_key_id(id: &str) -> bool {
    id.strip_prefix(KEY_ID_PREFIX).is_some_and(|hex| {
        hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// A new random API key: `dcat_` and 64 hex digits (244 random bits from two v4 UUIDs), a
/// prefix secret scanners can match.
pub fn generate_key() -> String {
    let a = Uuid::new_v4();
    let b = Uuid::new_v4();
    format!(
        "{KEY_PREFIX}{}{}",
        hex::encode(a.as_bytes()),
        hex::encode(b.as_bytes())
    )
}

/// A stored key as its owner (or an operator) sees it: never the secret, never the hash.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyInfo {
    pub id: String,
    pub prefix: String,
    pub label: String,
    pub scopes: Vec<String>,
    #[serde(serialize_with = "crate::time::rfc3339")]
    pub created_at: DateTime<Utc>,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub expires_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub last_used_at: Option<DateTime<Utc>>,
    #[serde(serialize_with = "crate::time::rfc3339_opt")]
    pub revoked_at: Option<DateTime<Utc>>,
    #[serde(skip)]
    pub owner: Option<String>,
    /// The only datasets it reads; `null` when it is not limited.
    pub datasets: Option<Vec<Slug>>,
}

/// Whether a key opens downloads right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyStatus {
    Active,
    Expired,
    Revoked,
}

impl KeyInfo {
    pub fn status_at(&self, now: DateTime<Utc>) -> KeyStatus {
        if self.revoked_at.is_some() {
            KeyStatus::Revoked
        } else if self.expires_at.is_some_and(|t| t <= now) {
            KeyStatus::Expired
        } else {
            KeyStatus::Active
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::parse("dcat_secret").unwrap();
        assert!(!format!("{key:?}").contains("secret"));
        assert!(!format!("{:?}", key.hash()).contains(key.hash().as_str()));
    }

    #[test]
    fn api_key_rejects_empty_long_and_non_visible() {
        assert!(ApiKey::parse("").is_none());
        assert!(ApiKey::parse(&"k".repeat(257)).is_none());
        assert!(ApiKey::parse("has space").is_none());
        assert!(ApiKey::parse("dcat_ünï").is_none());
    }

    #[test]
    fn key_hash_is_sha256_hex() {
        assert_eq!(
            KeyHash::of("abc").as_str(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn key_hash_from_hex_takes_exactly_64_lowercase_hex_characters() {
        let hash = KeyHash::of("abc");
        assert_eq!(KeyHash::from_hex(hash.as_str()), Ok(hash.clone()));
        assert!(KeyHash::from_hex(&"0123456789abcdef".repeat(4)).is_ok());
        let upper = hash.as_str().to_uppercase();
        let short = &hash.as_str()[..63];
        let long = format!("{}0", hash.as_str());
        let non_hex = format!("{}g", &hash.as_str()[..63]);
        let non_ascii = format!("{}é", &hash.as_str()[..62]);
        for bad in [
            "",
            upper.as_str(),
            short,
            long.as_str(),
            non_hex.as_str(),
            non_ascii.as_str(),
            "dcat_secret",
        ] {
            assert_eq!(KeyHash::from_hex(bad), Err(KeyHashError), "{bad:?}");
        }
    }

    #[test]
    fn key_ids_have_one_shape() {
        assert!(is_key_id("key_0123456789abcdef"));
        for bad in [
            "key_0123456789ABCDEF",
            "key_0123",
            "kez_0123456789abcdef",
            "",
        ] {
            assert!(!is_key_id(bad), "{bad}");
        }
    }

    #[test]
    fn status_follows_revocation_then_expiry() {
        let now = Utc::now();
        let mut key = KeyInfo {
            datasets: None,
            id: "key_0123456789abcdef".into(),
            prefix: "dcat_0123".into(),
            label: "x".into(),
            scopes: vec!["read".into()],
            created_at: now,
            expires_at: Some(now + Duration::days(1)),
            last_used_at: None,
            revoked_at: None,
            owner: None,
        };
        assert_eq!(key.status_at(now), KeyStatus::Active);
        assert_eq!(key.status_at(now + Duration::days(1)), KeyStatus::Expired);
        key.revoked_at = Some(now);
        assert_eq!(key.status_at(now), KeyStatus::Revoked);
    }
}
