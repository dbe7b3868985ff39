//! A dataset's card (its Markdown README, `catalog::readme`), set or removed without a new
//! version: checked (32 KiB), measured on the dataset item as stored (the item and its UUID
//! alias each carry it, under DynamoDB's 400 KB), then written by the metadata change path
//! ([`crate::change::Change::Readme`], conditioned on the dataset as read).

use catalog::input::Slug;
use catalog::readme::Readme;
use catalog_aws::dynamo::attr::{opt_s, s};
use catalog_aws::dynamo::codec::{item_size, ITEM_LIMIT_BYTES};
use catalog_aws::dynamo::layout::name::{ID, PK, README};
use catalog_aws::dynamo::layout::{alias_pk, dataset_pk, key_of, Item, DATASET_SK};
use chrono::{DateTime, Utc};

use crate::change::Change;
use crate::error::WriteError;
use crate::writer::DynamoWriter;

/// Checks that the stored dataset item, and its UUID alias, still fit DynamoDB's item limit
/// with `readme` as their card (the attribute replaced, or removed). Returns the larger of the
/// two sizes, in bytes; the error names the card's size, the record's and what else it holds.
pub fn check_card_fits(item: &Item, readme: Option<&str>) -> Result<usize, WriteError> {
    let mut with = item.clone();
    with.insert(README.to_owned(), opt_s(readme));
    let mut alias = with.clone();
    if let Some(id) = item.get(ID).and_then(|v| v.as_s().ok()) {
        let pk = match uuid::Uuid::try_parse(id) {
            Ok(id) => alias_pk(&id),
            // A stored id that is not a UUID: counted at a UUID's length.
            Err(_) => format!("ID#{}", "0".repeat(36)),
        };
        alias.insert(PK.to_owned(), s(pk));
    }
    let size = item_size(&with).max(item_size(&alias));
    if size > ITEM_LIMIT_BYTES {
        let card = readme.map_or(0, str::len);
        return Err(WriteError::Invalid(format!(
            "the card ({} KB) does not fit: with it the dataset's record would be {} KB, over \
             DynamoDB's {} KB item limit (its schema, statistics and other metadata take {} \
             KB); shorten the card",
            card.div_ceil(1024),
            size.div_ceil(1024),
            ITEM_LIMIT_BYTES / 1024,
            (size - card).div_ceil(1024),
        )));
    }
    Ok(size)
}

impl DynamoWriter {
    /// Sets the dataset's card (Markdown, at most 32 KiB), or removes it (`None`): refused,
    /// naming what is wrong, when it is too long, blank, or would not fit in the dataset's
    /// item. The metadata endpoint answers it on the next request.
    pub async fn set_readme(
        &self,
        slug: &Slug,
        readme: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        if let Some(text) = readme {
            Readme::parse(text).map_err(|e| WriteError::Invalid(e.to_string()))?;
        }
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?
            .ok_or_else(|| WriteError::NoSuchDataset(slug.to_string()))?;
        check_card_fits(&item, readme)?;
        self.change(slug, &Change::Readme(readme.map(str::to_owned)), now)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog_aws::dynamo::attr::s;

    fn item(filler: usize) -> Item {
        let mut item = key_of(dataset_pk("river-levels"), DATASET_SK);
        item.insert(ID.to_owned(), s(uuid::Uuid::nil().to_string()));
        item.insert("schema".to_owned(), s("x".repeat(filler)));
        item
    }

    #[test]
    fn a_card_that_fits_is_measured_with_the_item_and_its_alias() {
        let stored = item(1000);
        let card = "# Levels\n".repeat(100);
        let size = check_card_fits(&stored, Some(&card)).unwrap();
        // The alias's key (`ID#` and a UUID) is longer than this slug's: it is the larger.
        let mut alias = stored.clone();
        alias.insert(PK.to_owned(), s(alias_pk(&uuid::Uuid::nil())));
        alias.insert(README.to_owned(), s(&card));
        assert_eq!(size, item_size(&alias));
        // Removing a card measures the item without it.
        assert!(check_card_fits(&stored, None).unwrap() < size);
    }

    #[test]
    fn a_card_that_would_push_the_item_past_400_kb_is_refused_by_size() {
        let card = "a".repeat(Readme::MAX_BYTES);
        // The record with the card, its schema empty; then a schema that takes it 100 bytes
        // past the limit.
        let bare = check_card_fits(&item(0), Some(&card)).unwrap();
        let stored = item(ITEM_LIMIT_BYTES + 100 - bare);
        assert!(check_card_fits(&item(ITEM_LIMIT_BYTES - bare), Some(&card)).is_ok());
        let err = check_card_fits(&stored, Some(&card)).unwrap_err();
        let WriteError::Invalid(message) = &err else {
            panic!("{err:?}")
        };
        assert!(
            message.starts_with("the card (32 KB) does not fit: with it the dataset's record would be 401 KB, over DynamoDB's 400 KB item limit"),
            "{message}"
        );
        assert!(message.ends_with("shorten the card"), "{message}");
        // The same item without the card still fits: removing it is never refused.
        assert!(check_card_fits(&stored, None).is_ok());
    }
}
