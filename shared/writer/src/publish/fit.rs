//! What a publish checks before it writes anything ([`check_fits`]): every item it will store
//! under DynamoDB's 400 KB, and its metadata answer under Lambda's 6 MB.

use catalog::input::Slug;
use catalog::records::DatasetMeta;
use catalog_aws::dynamo::codec::prelude::*;
use catalog_aws::dynamo::codec::{
    item_size, schema_attributes, version_item, DatasetItem, ITEM_LIMIT_BYTES,
};
use catalog_aws::dynamo::layout::Item;
use uuid::Uuid;

use super::NewVersion;
use crate::error::WriteError;

/// What a publish will store, measured before anything is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The dataset item (and its UUID alias) once the version is active, in bytes.
    pub dataset_item: usize,
    /// The version item, in bytes.
    pub version_item: usize,
    /// The metadata answer's body, in bytes.
    pub answer: usize,
}

/// The largest metadata answer body: Lambda's 6 MB response limit, less room for the response
/// envelope, its headers and the escaping of the body inside it.
pub const ANSWER_LIMIT_BYTES: usize = 6 * 1024 * 1024 - 16 * 1024;

/// Checks that a dataset with this metadata, version and schema can be stored (every item under
/// DynamoDB's 400 KB) and served (its metadata answer under Lambda's 6 MB), before anything is
/// written. The error names the limit and what is too big.
pub fn check_fits(
    slug: &Slug,
    meta: &DatasetMeta,
    version: &NewVersion,
) -> Result<Fit, WriteError> {
    let schema = &version.schema_json;
    // The metadata answer carries the schema and the metadata as JSON; inside Lambda's response
    // document the body is a JSON string, so every quote and backslash doubles.
    let meta_json = serde_json::to_string(meta).unwrap_or_default();
    let body = schema.len() + meta_json.len() + 2 * 1024;
    let escapes = schema
        .bytes()
        .chain(meta_json.bytes())
        .filter(|b| *b == b'"' || *b == b'\\')
        .count();
    let answer = body + escapes;
    if answer > ANSWER_LIMIT_BYTES {
        return Err(WriteError::TooLarge(format!(
            "its metadata answer would be {:.1} MB ({} columns of statistics), over the {:.1} MB \
             a Lambda response can carry; publish fewer columns",
            answer as f64 / 1e6,
            version.active.columns.len(),
            ANSWER_LIMIT_BYTES as f64 / 1e6
        )));
    }
    // A version of many files carries its summary in its `active` map, on the version item
    // and, once active, on the dataset item and its alias: measured in both, with room for the
    // chunks' part counts that the manifest's write adds to it.
    let summary_room = match &version.active.files {
        Some(_) => super::files::PART_COUNTS_ROOM,
        None => 0,
    };
    let version_size =
        item_size(&version_item(slug, &version.active, &version.schema_json)) + summary_room;
    // The dataset item once active, every field at its widest.
    let widest = u64::from(u32::MAX);
    let at = version.active.published_at;
    let dataset = DatasetItem {
        slug,
        id: Uuid::nil(),
        meta,
        created_at: at,
        updated_at: at,
        keyless_until: Some(at),
        latest_version: widest,
        seq: Some(widest),
        active: Some((&version.active, schema)),
    }
    .to_item();
    let dataset_size = item_size(&dataset) + summary_room;
    let limit = ITEM_LIMIT_BYTES;
    if dataset_size > limit || version_size > limit {
        let schema_stored = schema_attributes(schema)
            .iter()
            .map(|(name, value)| {
                name.len() + item_size(&Item::from([(String::new(), value.clone())]))
            })
            .sum::<usize>();
        let meta_size = item_size(
            &meta
                .to_attributes()
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        );
        let summary = match &version.active.files {
            Some(files) => format!(
                ", its files' summary ({} files in {} chunks) {} KB",
                files.files,
                files.chunks.len(),
                item_size(&Item::from([(
                    String::new(),
                    catalog_aws::dynamo::manifest::summary_value(files)
                )]))
                .div_ceil(1024)
            ),
            None => String::new(),
        };
        return Err(WriteError::TooLarge(format!(
            "the dataset's record would be {} KB, over DynamoDB's {} KB item limit: its schema \
             ({} columns) takes {} KB stored (compressed), its column names {} KB, its \
             description, insights, discussions and card {} KB{summary}; publish fewer or \
             narrower columns{}, or shorten the insights, discussions and card",
            dataset_size.max(version_size) / 1024,
            limit / 1024,
            version.active.columns.len(),
            schema_stored / 1024,
            version
                .active
                .columns
                .iter()
                .map(|c| c.len() + 1)
                .sum::<usize>()
                / 1024,
            meta_size / 1024,
            if summary.is_empty() {
                ""
            } else {
                ", fewer files or shorter partition values"
            },
        )));
    }
    Ok(Fit {
        dataset_item: dataset_size,
        version_item: version_size,
        answer,
    })
}

#[cfg(test)]
mod tests;
