//! Deleting a version ([`DynamoWriter::delete_version`]), in the one order that never leaves a
//! record naming something missing: the version's record first (in a transaction that checks
//! it is not the active one), then its manifest items (which only the record named), and last,
//! by the caller, every object under the version's prefix `datasets/<slug>/v<n>/` (a single
//! file, or a many-file version's files and its `publish.json`).
//!
//! **The withdrawn mark.** The record is not deleted but replaced by a mark at the same key
//! (`V#<n>` with `withdrawn`, no `active` map): no route, listing or activation takes it for a
//! version, and it fences the number. A publish records a version with a put conditioned on
//! that key being free, so a publish of version `n` still uploading when the mark is put can
//! never record it: it fails, and no record ever names the objects taken away. The same mark
//! lets a delete cut off after its record is withdrawn be run again: it finds the mark and
//! deletes what is left. An unrecorded version (a cut-off or failed publish's number, below
//! the latest reservation) is marked the same way before what it left is deleted; the latest
//! reservation is never touched when no record names it (a publish may be running, or be
//! resumed).

use std::collections::BTreeSet;

use aws_sdk_dynamodb::types::{AttributeValue, ConditionCheck, Put, TransactWriteItem};
use catalog::input::Slug;
use catalog_aws::dynamo::attr::{get_s, get_u64, n, s, time};
use catalog_aws::dynamo::layout::name::{
    ACTIVE, LATEST_VERSION, PK, S3_KEY, SK, UPDATED_AT, VERSION, WITHDRAWN,
};
use catalog_aws::dynamo::layout::{dataset_pk, key_of, version_sk, DATASET_SK};
use catalog_aws::dynamo::requests::query_all;
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::publish::StoredDataset;
use crate::tx::{other, settle};
use crate::writer::DynamoWriter;

/// What deleting a version took from the table; the caller deletes the objects under `prefix`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WithdrawnVersion {
    /// `datasets/<slug>/v<n>/`: every object under it is the version's (its file, or its files
    /// and `publish.json`).
    pub prefix: String,
    /// The `s3_key` the record named (a single file's key, or a many-file version's files
    /// prefix); `None` when no record named one (withdrawn earlier, or never recorded).
    pub object: Option<String>,
    /// How many manifest items were deleted.
    pub manifest_items: usize,
    /// Whether this call withdrew a recorded version (false: an earlier, interrupted delete
    /// did, or no publish recorded it).
    pub recorded: bool,
}

/// The prefix of every object of version `version` of `slug`: `datasets/<slug>/v<n>/`.
pub fn version_prefix(slug: &Slug, version: u64) -> String {
    format!("datasets/{slug}/v{version}/")
}

/// What the version's key holds.
enum AtKey {
    Recorded(String),
    Withdrawn,
    Free,
}

impl DynamoWriter {
    /// Deletes version `version` of `slug` from the table (module docs): its record, withdrawn
    /// in a transaction that checks it is not the active one, then its manifest items. Returns
    /// its prefix, for the caller to delete every object under it. Refuses the active version,
    /// the latest reservation when no record names it, and a number never reserved
    /// (`NoSuchVersion`). Running it again after an interruption finishes the delete.
    pub async fn delete_version(
        &self,
        slug: &Slug,
        version: u64,
        now: DateTime<Utc>,
    ) -> Result<WithdrawnVersion, WriteError> {
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?
            .ok_or_else(|| WriteError::NoSuchDataset(slug.to_string()))?;
        let stored = StoredDataset::try_from(&item)?;
        let latest = get_u64(&item, LATEST_VERSION)?;
        if stored.current == Some(version) {
            return Err(WriteError::Invalid(format!(
                "version {version} is the active version of '{slug}': activate another in the \
                 same step (--activate N), or delete the dataset"
            )));
        }
        if version == 0 || version > latest {
            return Err(WriteError::NoSuchVersion(slug.to_string(), version));
        }
        let (object, recorded) = match self.at_key(slug, version).await? {
            AtKey::Recorded(object) => {
                self.withdraw(slug, version, true, now).await?;
                (Some(object), true)
            }
            AtKey::Withdrawn => (None, false),
            // The latest reservation, unrecorded: a publish may still be running or resume it.
            AtKey::Free if version == latest => {
                return Err(WriteError::NoSuchVersion(slug.to_string(), version))
            }
            AtKey::Free => {
                self.withdraw(slug, version, false, now).await?;
                (None, false)
            }
        };
        let manifest_items = self.delete_manifest(slug, version).await?;
        Ok(WithdrawnVersion {
            prefix: version_prefix(slug, version),
            object,
            manifest_items,
            recorded,
        })
    }

    /// The versions of `slug` that no record names but that left something behind: the numbers
    /// of `found` (the caller found objects under their prefix) and of the dataset's manifest
    /// items, less the versions recorded (withdrawn marks count as not recorded: an interrupted
    /// delete's) and less the latest reservation when no record names it (a publish may be
    /// running, or be resumed). Ascending. Each is for [`Self::delete_version`].
    pub async fn unrecorded_versions(
        &self,
        slug: &Slug,
        found: impl IntoIterator<Item = u64>,
    ) -> Result<Vec<u64>, WriteError> {
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?
            .ok_or_else(|| WriteError::NoSuchDataset(slug.to_string()))?;
        let latest = get_u64(&item, LATEST_VERSION)?;
        let keys = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk AND begins_with({SK}, :m)"))
                .expression_attribute_values(":pk", s(dataset_pk(slug.as_str())))
                .expression_attribute_values(":m", s("M#"))
                .projection_expression(format!("{PK}, {SK}"))
                .consistent_read(true),
        )
        .await?;
        let mut candidates: BTreeSet<u64> = found.into_iter().collect();
        for key in &keys {
            let sk = get_s(key, SK)?;
            if let Some(v) = sk
                .strip_prefix("M#")
                .and_then(|rest| rest.split('#').next())
                .and_then(|digits| digits.parse().ok())
            {
                candidates.insert(v);
            }
        }
        let recorded: BTreeSet<u64> = self
            .list_versions(slug)
            .await?
            .into_iter()
            .map(|v| v.version.version)
            .collect();
        let mut out = Vec::new();
        for v in candidates {
            if v == 0 || v > latest || recorded.contains(&v) {
                continue;
            }
            if v == latest && matches!(self.at_key(slug, v).await?, AtKey::Free) {
                continue;
            }
            out.push(v);
        }
        Ok(out)
    }

    async fn at_key(&self, slug: &Slug, version: u64) -> Result<AtKey, WriteError> {
        let key = key_of(dataset_pk(slug.as_str()), &version_sk(version));
        Ok(match self.get(key).await? {
            None => AtKey::Free,
            Some(item) => match item.get(ACTIVE) {
                Some(AttributeValue::M(v)) => AtKey::Recorded(get_s(v, S3_KEY)?),
                _ => AtKey::Withdrawn,
            },
        })
    }

    /// Puts the withdrawn mark at version `version`'s key: over its record (`recorded`), on the
    /// condition that the dataset does not serve it, or on a free key.
    async fn withdraw(
        &self,
        slug: &Slug,
        version: u64,
        recorded: bool,
        now: DateTime<Utc>,
    ) -> Result<(), WriteError> {
        let mut mark = key_of(dataset_pk(slug.as_str()), &version_sk(version));
        mark.insert(WITHDRAWN.to_owned(), AttributeValue::Bool(true));
        mark.insert(UPDATED_AT.to_owned(), time(&now));
        let condition = if recorded {
            format!("attribute_exists({PK}) AND attribute_exists({ACTIVE})")
        } else {
            format!("attribute_not_exists({PK})")
        };
        let sent = self
            .client
            .transact_write_items()
            .client_request_token(crate::tx::token())
            .transact_items(
                TransactWriteItem::builder()
                    .put(
                        Put::builder()
                            .table_name(&self.datasets_table)
                            .set_item(Some(mark))
                            .condition_expression(condition)
                            .build()
                            .map_err(other)?,
                    )
                    .build(),
            )
            .transact_items(
                TransactWriteItem::builder()
                    .condition_check(
                        ConditionCheck::builder()
                            .table_name(&self.datasets_table)
                            .set_key(Some(key_of(dataset_pk(slug.as_str()), DATASET_SK)))
                            .condition_expression(
                                "attribute_not_exists(#active) OR #active.#version <> :v",
                            )
                            .expression_attribute_names("#active", ACTIVE)
                            .expression_attribute_names("#version", VERSION)
                            .expression_attribute_values(":v", n(version))
                            .build()
                            .map_err(other)?,
                    )
                    .build(),
            )
            .send()
            .await;
        settle(sent, slug)
    }
}
