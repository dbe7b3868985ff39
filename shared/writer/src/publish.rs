//! Publishing: [`DynamoWriter::publish`] runs the whole sequence, the core write guarantee (no
//! record ever points at a missing file, and a failed publish leaves the previous version
//! serving): reserve a version number (creating the dataset, unlisted, if it is new), upload the
//! file (the caller's step), record the version, activate it ([`crate::activate`]). Also what a
//! publish checks before it starts ([`check_fits`]), and reading what is stored.

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::update_item::UpdateItemError;
use aws_sdk_dynamodb::types::{
    AttributeValue, ReturnValue, ReturnValuesOnConditionCheckFailure, TransactWriteItem,
};
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::records::{ActiveVersion, DatasetMeta};
use catalog_aws::dynamo::attr::{get_time_opt, get_u64, get_uuid, n, s};
use catalog_aws::dynamo::codec::{version_item, DatasetItem, ServedVersions};
use catalog_aws::dynamo::layout::name::{
    ACTIVE, ID, KEYLESS_UNTIL, LATEST_VERSION, PK, REV, SEQ, SK, UNPUBLISHED_AT,
};
use catalog_aws::dynamo::layout::{dataset_pk, key_of, Item, DATASET_SK};
use catalog_aws::dynamo::requests::{classify, query_all};
use chrono::{DateTime, Utc};
use std::future::Future;
use uuid::Uuid;

use crate::error::WriteError;
use crate::tx::{is_condition_failure, put_new, settle, Guard};
use crate::writer::DynamoWriter;
use catalog_aws::dynamo::codec::prelude::*;

mod files;
mod fit;
mod resume;

pub use files::StagedFiles;
pub use fit::{check_fits, Fit, ANSWER_LIMIT_BYTES};
pub use resume::Resumed;

/// A version whose Parquet object is already in S3.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub active: ActiveVersion,
    /// JSON array of Column objects.
    pub schema_json: String,
}

/// A stored version of a dataset.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionInfo {
    pub version: ActiveVersion,
    pub active: bool,
}

/// The version number reserved for a publish.
#[derive(Debug, Clone, PartialEq)]
pub struct Reserved {
    pub id: Uuid,
    pub version: u64,
    /// The version active when the reservation was made: activation succeeds only if it still is.
    pub previous: Option<u64>,
    /// The descriptive metadata stored at that moment (for a new dataset, what was given).
    pub stored: DatasetMeta,
}

pub use crate::tx::Expected;

/// What a publish asks for, besides the file.
#[derive(Debug, Clone, Copy)]
pub struct Publication<'a> {
    pub slug: &'a Slug,
    /// The descriptive metadata a new dataset is created with (unlisted until its first version
    /// is active). A re-publish keeps what is stored until activation.
    pub meta: &'a DatasetMeta,
    /// The UUID a new dataset gets (a random one when `None`).
    pub id: Option<Uuid>,
    /// Refuse a slug that already serves a version (`SlugTaken`), changing nothing.
    pub new_only: bool,
    pub now: DateTime<Utc>,
}

/// What the upload step of a publish hands back: the version whose object is now in S3, and the
/// metadata to activate it with.
#[derive(Debug, Clone)]
pub struct Staged {
    pub version: NewVersion,
    pub meta: DatasetMeta,
}

/// What the writer needs of a stored dataset item.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct StoredDataset {
    pub id: Uuid,
    /// The active version's number.
    pub current: Option<u64>,
    /// Its position in the catalog list, once listed.
    pub seq: Option<u64>,
    pub meta: DatasetMeta,
    pub keyless_until: Option<DateTime<Utc>>,
    /// Its revision (0 before the first write that sets one): see [`crate::tx::Guard`].
    pub rev: u64,
    /// Whether an operator unpublished it.
    pub unpublished: bool,
    /// Its 30-day downloads, as the daily count last set them.
    pub downloads: u64,
    /// The versions that may be read by number (activated, not withdrawn since).
    pub served: ServedVersions,
    /// The token of the activation that last committed on it (`activated_by`).
    pub activated_by: Option<String>,
}

/// The attribute of a dataset item naming the activation that last committed on it: the token
/// of that attempt, so that an attempt whose answer was lost can tell its own write.
pub(crate) const ACTIVATED_BY: &str = "activated_by";

impl StoredDataset {
    /// What a write to this dataset's item checks: that it is still as read.
    pub fn guard(&self, active: Option<Expected>) -> Guard {
        Guard {
            active,
            rev: self.rev,
            unpublished: self.unpublished,
        }
    }
}

impl StoredDataset {
    /// Whether this dataset, read after a transaction activating `version` with the token
    /// `attempt` was refused, shows that this very attempt committed (a retry of a transaction
    /// whose answer was lost meets its own write): the version is active and the item names
    /// the attempt, which no other write does.
    pub fn shows_activation(&self, version: u64, attempt: &str) -> bool {
        self.current == Some(version)
            && !self.unpublished
            && self.activated_by.as_deref() == Some(attempt)
    }
}

impl TryFrom<&Item> for StoredDataset {
    type Error = StoreError;

    fn try_from(item: &Item) -> Result<Self, StoreError> {
        Ok(Self {
            id: get_uuid(item, ID)?,
            current: ActiveVersion::from_item(item)?.map(|a| a.version),
            seq: match item.get(SEQ) {
                None | Some(AttributeValue::Null(_)) => None,
                Some(_) => Some(get_u64(item, SEQ)?),
            },
            meta: DatasetMeta::from_item(item)?,
            keyless_until: get_time_opt(item, KEYLESS_UNTIL)?,
            rev: match item.get(REV) {
                None => 0,
                Some(_) => get_u64(item, REV)?,
            },
            unpublished: get_time_opt(item, UNPUBLISHED_AT)?.is_some(),
            downloads: catalog_aws::dynamo::codec::downloads(item)?,
            served: ServedVersions::of_item(item)?,
            activated_by: match item.get(ACTIVATED_BY) {
                Some(AttributeValue::S(token)) => Some(token.clone()),
                _ => None,
            },
        })
    }
}

impl DynamoWriter {
    /// The stored dataset, or `NoSuchDataset`.
    pub(crate) async fn stored_dataset(&self, slug: &Slug) -> Result<StoredDataset, WriteError> {
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?
            .ok_or_else(|| WriteError::NoSuchDataset(slug.to_string()))?;
        Ok(StoredDataset::try_from(&item)?)
    }

    /// The descriptive metadata stored for a dataset, if it exists.
    pub async fn dataset_meta(&self, slug: &Slug) -> Result<Option<DatasetMeta>, WriteError> {
        let item = self
            .get(key_of(dataset_pk(slug.as_str()), DATASET_SK))
            .await?;
        Ok(item.as_ref().map(DatasetMeta::from_item).transpose()?)
    }

    /// Publishes a version, in the one order that keeps every record pointing at a file that
    /// exists: reserve the next version number (creating the dataset, unlisted, if it is new),
    /// run `upload` (which puts the object at its immutable key for that version and returns the
    /// version's record, numbered as reserved, and the metadata to activate), record the version, then activate it on
    /// the condition that the version active at reservation still is.
    ///
    /// Whatever step fails, nothing already served changes: an upload that fails leaves a
    /// reserved number unused; a lost race (another publish activated first) is `Conflict`.
    /// Returns the reservation the publish went through (the dataset's id and the version now
    /// active).
    pub async fn publish<E, F, Fut>(
        &self,
        publication: Publication<'_>,
        upload: F,
    ) -> Result<Reserved, E>
    where
        E: From<WriteError>,
        F: FnOnce(Reserved) -> Fut,
        Fut: Future<Output = Result<Staged, E>>,
    {
        let (slug, now) = (publication.slug, publication.now);
        // Refused before anything is reserved or uploaded (the activation checks it again).
        crate::private::check_level(slug, publication.meta.card.access_level)?;
        let reserved = self.reserve_version(publication).await?;
        let staged = upload(reserved.clone()).await?;
        self.put_version(slug, &staged.version).await?;
        let meta = self
            .publish_meta(slug, &staged.meta, &reserved.stored)
            .await?;
        self.activate(
            slug,
            reserved.version,
            reserved.previous.into(),
            Some(&meta),
            now,
        )
        .await?;
        Ok(reserved)
    }

    /// Reserves the next version number of `slug`, creating the dataset (unlisted, with no
    /// active version, under `id` if given) when it does not exist yet. With `new_only`, a slug
    /// that already has an active version is refused (`SlugTaken`) and nothing changes.
    async fn reserve_version(&self, publication: Publication<'_>) -> Result<Reserved, WriteError> {
        let Publication {
            slug,
            meta,
            id,
            new_only,
            now,
        } = publication;
        for _ in 0..2 {
            // An unpublished dataset takes no new version until it is restored.
            let condition = if new_only {
                format!("attribute_exists({PK}) AND attribute_not_exists({ACTIVE}) AND attribute_not_exists({UNPUBLISHED_AT})")
            } else {
                format!("attribute_exists({PK}) AND attribute_not_exists({UNPUBLISHED_AT})")
            };
            let bumped = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key_of(dataset_pk(slug.as_str()), DATASET_SK)))
                .update_expression(format!("SET {LATEST_VERSION} = {LATEST_VERSION} + :one"))
                .condition_expression(condition)
                .expression_attribute_values(":one", n(1))
                .return_values(ReturnValue::AllNew)
                .return_values_on_condition_check_failure(
                    ReturnValuesOnConditionCheckFailure::AllOld,
                )
                .send()
                .await;
            match bumped {
                Ok(out) => {
                    let item = out.attributes.unwrap_or_default();
                    return Ok(Reserved {
                        id: get_uuid(&item, ID)?,
                        version: get_u64(&item, LATEST_VERSION)?,
                        previous: ActiveVersion::from_item(&item)?.map(|a| a.version),
                        stored: DatasetMeta::from_item(&item)?,
                    });
                }
                Err(e) => match e.as_service_error() {
                    Some(UpdateItemError::ConditionalCheckFailedException(failed)) => {
                        if failed
                            .item()
                            .and_then(|i| get_time_opt(i, UNPUBLISHED_AT).ok().flatten())
                            .is_some()
                        {
                            return Err(WriteError::Unpublished(slug.to_string()));
                        }
                        // It exists but already serves a version: taken (only with new_only).
                        if failed.item().is_some_and(|i| i.contains_key(PK)) {
                            return Err(WriteError::SlugTaken(slug.to_string()));
                        }
                    }
                    _ => return Err(classify(e).into()),
                },
            }
            // A new dataset: its item and alias, unlisted, version 1 reserved.
            let id = id.unwrap_or_else(Uuid::new_v4);
            let new = DatasetItem {
                slug,
                id,
                meta,
                created_at: now,
                updated_at: now,
                keyless_until: None,
                latest_version: 1,
                seq: None,
                active: None,
            };
            let (item, alias) = (new.to_item(), new.alias());
            let created = self
                .client
                .transact_write_items()
                .client_request_token(crate::tx::token())
                .transact_items(
                    TransactWriteItem::builder()
                        .put(put_new(&self.datasets_table, item)?)
                        .build(),
                )
                .transact_items(
                    TransactWriteItem::builder()
                        .put(put_new(&self.datasets_table, alias)?)
                        .build(),
                )
                .send()
                .await;
            match created {
                Ok(_) => {
                    return Ok(Reserved {
                        id,
                        version: 1,
                        previous: None,
                        stored: meta.clone(),
                    })
                }
                // Someone created it meanwhile: bump its counter instead.
                Err(e) if is_condition_failure(e.code()) => continue,
                Err(e) => return Err(classify(e).into()),
            }
        }
        Err(WriteError::Conflict(slug.to_string()))
    }

    /// Records a version whose object is already in S3. Versions are immutable: the put is
    /// conditioned on the version being new. When the condition fails on an item equal to the
    /// one being put, the version is already recorded as asked (the SDK retried a put whose
    /// answer was lost), and that is success, not a conflict.
    async fn put_version(&self, slug: &Slug, version: &NewVersion) -> Result<(), WriteError> {
        self.put_version_item(
            slug,
            version_item(slug, &version.active, &version.schema_json),
        )
        .await
    }

    /// [`Self::put_version`] of a version item as built.
    async fn put_version_item(&self, slug: &Slug, item: Item) -> Result<(), WriteError> {
        let result = self
            .client
            .put_item()
            .table_name(&self.datasets_table)
            .set_item(Some(item.clone()))
            .condition_expression(format!("attribute_not_exists({PK})"))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld)
            .send()
            .await;
        match result {
            Err(e)
                if matches!(
                    e.as_service_error(),
                    Some(PutItemError::ConditionalCheckFailedException(failed))
                        if failed.item() == Some(&item)
                ) =>
            {
                Ok(())
            }
            other => settle(other, slug),
        }
    }

    /// Every stored version of a dataset, oldest first.
    pub async fn list_versions(&self, slug: &Slug) -> Result<Vec<VersionInfo>, WriteError> {
        let current = self.stored_dataset(slug).await?.current;
        let items = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk AND begins_with({SK}, :v)"))
                .expression_attribute_values(":pk", s(dataset_pk(slug.as_str())))
                .expression_attribute_values(":v", s("V#"))
                .consistent_read(true),
        )
        .await?;
        let mut versions = Vec::new();
        for item in &items {
            if let Some(version) = ActiveVersion::from_item(item)? {
                let active = current == Some(version.version);
                versions.push(VersionInfo { version, active });
            }
        }
        Ok(versions)
    }
}
