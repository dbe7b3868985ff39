//! Reading and writing single attributes of an item. A missing or mistyped attribute is
//! `StoreError::Corrupt`, naming it.

use aws_sdk_dynamodb::types::AttributeValue;
use chrono::{DateTime, Utc};
use serde_json::value::RawValue;
use uuid::Uuid;

use catalog::error::StoreError;
use catalog::time::format_time;

/// A DynamoDB item, as the SDK holds it.
pub type Item = std::collections::HashMap<String, AttributeValue>;

pub fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

pub fn n(v: u64) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// A string, or NULL.
pub fn opt_s(v: Option<&str>) -> AttributeValue {
    v.map_or(AttributeValue::Null(true), s)
}

/// A time as RFC 3339 UTC with whole seconds (so stored times compare as strings), or NULL.
pub fn opt_time(v: Option<&DateTime<Utc>>) -> AttributeValue {
    v.map_or(AttributeValue::Null(true), time)
}

pub fn time(t: &DateTime<Utc>) -> AttributeValue {
    s(format_time(t))
}

/// A list of strings.
pub fn strings(v: &[String]) -> AttributeValue {
    AttributeValue::L(v.iter().map(s).collect())
}

pub fn corrupt(name: &str) -> StoreError {
    StoreError::Corrupt(format!("attribute '{name}' missing or of the wrong type"))
}

pub fn get_s(item: &Item, name: &str) -> Result<String, StoreError> {
    match item.get(name) {
        Some(AttributeValue::S(v)) => Ok(v.clone()),
        _ => Err(corrupt(name)),
    }
}

pub fn get_s_opt(item: &Item, name: &str) -> Result<Option<String>, StoreError> {
    match item.get(name) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::S(v)) => Ok(Some(v.clone())),
        _ => Err(corrupt(name)),
    }
}

pub fn get_u64(item: &Item, name: &str) -> Result<u64, StoreError> {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v.parse().map_err(|_| corrupt(name)),
        _ => Err(corrupt(name)),
    }
}

pub fn get_strings(item: &Item, name: &str) -> Result<Vec<String>, StoreError> {
    match item.get(name) {
        None => Ok(Vec::new()),
        Some(AttributeValue::L(values)) => values
            .iter()
            .map(|v| match v {
                AttributeValue::S(s) => Ok(s.clone()),
                _ => Err(corrupt(name)),
            })
            .collect(),
        Some(AttributeValue::Ss(values)) => Ok(values.clone()),
        _ => Err(corrupt(name)),
    }
}

pub fn parse_time(name: &str, raw: &str) -> Result<DateTime<Utc>, StoreError> {
    DateTime::parse_from_rfc3339(raw)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| corrupt(name))
}

pub fn get_time(item: &Item, name: &str) -> Result<DateTime<Utc>, StoreError> {
    parse_time(name, &get_s(item, name)?)
}

pub fn get_time_opt(item: &Item, name: &str) -> Result<Option<DateTime<Utc>>, StoreError> {
    get_s_opt(item, name)?
        .map(|raw| parse_time(name, &raw))
        .transpose()
}

pub fn get_json(item: &Item, name: &str) -> Result<Box<RawValue>, StoreError> {
    let text = get_s(item, name)?;
    RawValue::from_string(text).map_err(|_| corrupt(name))
}

pub fn get_uuid(item: &Item, name: &str) -> Result<Uuid, StoreError> {
    Uuid::try_parse(&get_s(item, name)?).map_err(|_| corrupt(name))
}
