//! A many-file version's summary as its `active` map holds it (`files`, deflated JSON), and the
//! deflated JSON the manifest's parts are made of.

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::error::StoreError;
use catalog::files::Summary;
use serde::{Deserialize, Serialize};

use crate::dynamo::attr::corrupt;
use crate::dynamo::layout::name::FILES;
use crate::dynamo::layout::Item;

/// Most bytes a chunk's blob (or the summary) may inflate to when read.
pub const INFLATED_MAX_BYTES: usize = 64 * 1024 * 1024;

/// `value` as deflated JSON.
pub(crate) fn deflate<T: Serialize>(value: &T) -> Vec<u8> {
    // Plain data (strings, numbers, vectors of them) has no way to fail to serialize.
    let json = serde_json::to_vec(value).unwrap_or_default();
    miniz_oxide::deflate::compress_to_vec(&json, 6)
}

/// Deflated JSON read back: corrupt (naming `what`) when it does not inflate within
/// [`INFLATED_MAX_BYTES`] or is not the JSON of a `T`.
pub(crate) fn inflate<T: for<'de> Deserialize<'de>>(
    bytes: &[u8],
    what: &str,
) -> Result<T, StoreError> {
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(bytes, INFLATED_MAX_BYTES)
        .map_err(|_| corrupt(what))?;
    serde_json::from_slice(&json).map_err(|_| corrupt(what))
}

/// The summary as the `files` attribute of a version's `active` map (deflated JSON).
pub fn summary_value(summary: &Summary) -> AttributeValue {
    AttributeValue::B(deflate(summary).into())
}

/// The summary an `active` map (or an item) holds; `None` for a single-file version.
pub fn summary_from(item: &Item) -> Result<Option<Summary>, StoreError> {
    match item.get(FILES) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::B(b)) => inflate(b.as_ref(), FILES).map(Some),
        Some(_) => Err(corrupt(FILES)),
    }
}
