//! The keys table's records: API keys (what the data endpoint reads, what owners and operators
//! see, what a new key stores) and grants.

use super::super::attr::{
    corrupt, get_s, get_s_opt, get_strings, get_time, get_time_opt, get_u64, get_uuid, opt_s,
    opt_time, s, strings, time,
};
use std::collections::BTreeMap;

use super::super::layout::{access_id, api_key_key, grant_key, name, Item};
use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};

use super::{Attributes, FromItem};
use catalog::error::StoreError;
use catalog::grants::{AccessRecord, AccessStatus};
use catalog::keys::{KeyInfo, KeyRecord, NewKey, Owner, Scope, RETENTION};
use catalog::policy::Grant;
use catalog::slug::Slug;

impl FromItem for KeyInfo {
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_s(item, name::ID)?,
            prefix: get_s(item, name::PREFIX)?,
            label: get_s(item, name::LABEL)?,
            scopes: get_strings(item, name::SCOPES)?,
            created_at: get_time(item, name::CREATED_AT)?,
            expires_at: get_time_opt(item, name::EXPIRES_AT)?,
            last_used_at: get_time_opt(item, name::LAST_USED_AT)?,
            revoked_at: get_time_opt(item, name::REVOKED_AT)?,
            owner: get_s_opt(item, name::OWNER)?,
            datasets: get_slugs_opt(item)?,
        })
    }
}

impl FromItem for Grant {
    /// What the data path needs of a grant item.
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            granted: get_s(item, name::STATUS)? == AccessStatus::Granted.as_str(),
            expires_at: get_time_opt(item, name::EXPIRES_AT)?,
        })
    }
}

impl FromItem for AccessRecord {
    /// An access record as stored (a grant written before requests existed has no request
    /// fields and no `rev`: it reads as revision 0).
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        let answers = match item.get(name::ANSWERS) {
            None | Some(AttributeValue::Null(_)) => BTreeMap::new(),
            Some(AttributeValue::M(map)) => map
                .iter()
                .map(|(k, v)| match v {
                    AttributeValue::S(text) => Ok((k.clone(), text.clone())),
                    _ => Err(corrupt(name::ANSWERS)),
                })
                .collect::<Result<_, _>>()?,
            Some(_) => return Err(corrupt(name::ANSWERS)),
        };
        Ok(Self {
            slug: get_s(item, name::SLUG)?,
            dataset: get_uuid(item, name::DATASET)?,
            grantee: get_s(item, name::GRANTEE)?,
            email: get_s_opt(item, name::EMAIL)?,
            status: AccessStatus::parse(&get_s(item, name::STATUS)?)
                .ok_or_else(|| corrupt(name::STATUS))?,
            requested_at: get_time_opt(item, name::REQUESTED_AT)?,
            answers,
            terms_accepted: matches!(
                item.get(name::TERMS_ACCEPTED),
                Some(AttributeValue::Bool(true))
            ),
            expires_at: get_time_opt(item, name::EXPIRES_AT)?,
            decided_by: get_s_opt(item, name::DECIDED_BY)?,
            decided_at: get_time_opt(item, name::DECIDED_AT)?,
            reason: get_s_opt(item, name::REASON)?,
            rev: if item.contains_key(name::REV) {
                get_u64(item, name::REV)?
            } else {
                0
            },
        })
    }
}

/// How an `AccessRecord` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait AccessRecordItem {
    /// Every attribute of the record's item but its key and `rev` (absent values as NULL), so
    /// that one write replaces a record whole. `owner` and `id` put it in the owner index.
    fn attributes(&self) -> Attributes;
    /// The record's key in the keys table.
    fn key(&self) -> Result<Item, StoreError>;
}

impl AccessRecordItem for AccessRecord {
    fn attributes(&self) -> Attributes {
        let answers = self
            .answers
            .iter()
            .map(|(k, v)| (k.clone(), s(v)))
            .collect();
        vec![
            (name::SLUG, s(&self.slug)),
            (name::DATASET, s(self.dataset.to_string())),
            (name::GRANTEE, s(&self.grantee)),
            (name::OWNER, s(&self.grantee)),
            (name::ID, s(access_id(&self.dataset))),
            (name::EMAIL, opt_s(self.email.as_deref())),
            (name::STATUS, s(self.status.as_str())),
            (name::REQUESTED_AT, opt_time(self.requested_at.as_ref())),
            (name::ANSWERS, AttributeValue::M(answers)),
            (
                name::TERMS_ACCEPTED,
                AttributeValue::Bool(self.terms_accepted),
            ),
            (name::EXPIRES_AT, opt_time(self.expires_at.as_ref())),
            (name::DECIDED_BY, opt_s(self.decided_by.as_deref())),
            (name::DECIDED_AT, opt_time(self.decided_at.as_ref())),
            (name::REASON, opt_s(self.reason.as_deref())),
        ]
    }

    fn key(&self) -> Result<Item, StoreError> {
        let grantee = Owner::parse(&self.grantee).ok_or_else(|| corrupt(name::GRANTEE))?;
        Ok(grant_key(grantee.as_str(), &self.dataset))
    }
}

/// A key's dataset limit: `None` when it has none.
fn get_slugs_opt(item: &Item) -> Result<Option<Vec<Slug>>, StoreError> {
    if !item.contains_key(name::DATASETS) {
        return Ok(None);
    }
    get_strings(item, name::DATASETS)?
        .iter()
        .map(|raw| Slug::parse(raw).map_err(|_| corrupt(name::DATASETS)))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

impl FromItem for KeyRecord {
    fn from_item(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_s(item, name::ID)?,
            scopes: get_strings(item, name::SCOPES)?
                .iter()
                .map(|s| Scope::parse(s))
                .collect(),
            expires_at: get_time_opt(item, name::EXPIRES_AT)?,
            revoked_at: get_time_opt(item, name::REVOKED_AT)?,
            last_used_at: get_time_opt(item, name::LAST_USED_AT)?,
            owner: get_s_opt(item, name::OWNER)?
                .map(|o| Owner::parse(&o).ok_or_else(|| corrupt(name::OWNER)))
                .transpose()?,
            datasets: get_slugs_opt(item)?,
        })
    }
}

/// How a `NewKey` is stored (a trait: the type is `catalog`'s, its storage this crate's).
pub trait NewKeyItem {
    /// The keys-table item of a new key: its hash (never the secret) and its record, with its
    /// owner for an account's key only (the owner index holds account keys alone).
    fn to_item(&self) -> Item;
}

impl NewKeyItem for NewKey {
    fn to_item(&self) -> Item {
        let scopes: Vec<String> = self.scopes.iter().map(|s| s.as_str().to_owned()).collect();
        let mut item = api_key_key(self.hash.as_str());
        let attributes: Attributes = vec![
            (name::ID, s(&self.id)),
            (name::PREFIX, s(&self.prefix)),
            (name::LABEL, s(&self.label)),
            (name::SCOPES, strings(&scopes)),
            (name::CREATED_AT, time(&self.created_at)),
            (name::EXPIRES_AT, opt_time(self.expires_at.as_ref())),
        ];
        item.extend(attributes.into_iter().map(|(k, v)| (k.to_owned(), v)));
        if let Some(owner) = &self.owner {
            item.insert(name::OWNER.to_owned(), s(owner.as_str()));
        }
        if let Some(expires_at) = &self.expires_at {
            item.insert(name::PURGE_AT.to_owned(), purge_at(expires_at));
        }
        if let Some(datasets) = &self.datasets {
            let slugs: Vec<String> = datasets.iter().map(|d| d.as_str().to_owned()).collect();
            item.insert(name::DATASETS.to_owned(), strings(&slugs));
        }
        item
    }
}

/// When a key that stops working at `t` leaves the table: `t` + [`RETENTION`], in unix seconds
/// (DynamoDB's time to live reads a number).
pub fn purge_at(t: &DateTime<Utc>) -> AttributeValue {
    AttributeValue::N((*t + RETENTION).timestamp().to_string())
}
