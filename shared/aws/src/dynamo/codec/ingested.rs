//! What a converted version recorded of its inputs ([`catalog::ingested::Ingested`]), as the
//! `ingested` attribute of its `active` map: deflated JSON, as the files' summary beside it.

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::error::StoreError;
use catalog::ingested::Ingested;

use super::files::{deflate, inflate};
use crate::dynamo::attr::corrupt;
use crate::dynamo::layout::Item;

/// The attribute's name in the `active` map.
pub const INGESTED: &str = "ingested";

/// The record as the `ingested` attribute.
pub fn ingested_value(ingested: &Ingested) -> AttributeValue {
    AttributeValue::B(deflate(ingested).into())
}

/// The record an `active` map holds; `None` for a version published as Parquet.
pub fn ingested_from(item: &Item) -> Result<Option<Ingested>, StoreError> {
    match item.get(INGESTED) {
        None | Some(AttributeValue::Null(_)) => Ok(None),
        Some(AttributeValue::B(b)) => inflate(b.as_ref(), INGESTED).map(Some),
        Some(_) => Err(corrupt(INGESTED)),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use catalog::ingested::{Ingested, SkippedLine};
    use catalog::records::ActiveVersion;

    use super::super::ActiveVersionItem;
    use crate::dynamo::layout::name::ACTIVE;

    #[test]
    fn the_active_map_carries_what_a_conversion_recorded() {
        let ingested = Ingested {
            formats: vec!["csv".into()],
            compressions: vec!["gzip".into()],
            inputs: 1,
            rows_skipped: 2,
            skipped: vec![SkippedLine {
                file: "trips.csv.gz".into(),
                line: 7,
                column: Some("fare".into()),
                reason: "not a valid float64".into(),
            }],
            originals: Vec::new(),
        };
        let mut version = ActiveVersion {
            version: 3,
            s3_key: "datasets/trips/v3/ab.parquet".into(),
            size: 10,
            row_count: 5,
            columns: vec!["fare".into()],
            sha256: "ab".repeat(32),
            published_at: chrono::DateTime::UNIX_EPOCH,
            files: None,
            ingested: Some(Arc::new(ingested)),
        };
        let item = [(ACTIVE.to_owned(), version.to_value())].into();
        assert_eq!(
            ActiveVersion::from_item(&item).unwrap(),
            Some(version.clone())
        );
        // A version published as Parquet has no attribute, and reads back without.
        version.ingested = None;
        let value = version.to_value();
        assert!(!value.as_m().unwrap().contains_key(super::INGESTED));
        let item = [(ACTIVE.to_owned(), value)].into();
        assert_eq!(ActiveVersion::from_item(&item).unwrap(), Some(version));
    }
}
