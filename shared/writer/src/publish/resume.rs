//! Resuming a publish of many files that was cut off: [`DynamoWriter::reserve_or_resume`]
//! hands back the version that publish reserved, so that its re-run uploads to the same keys
//! and skips what is already there.
//!
//! A version number is reserved by bumping the dataset's `latest_version`; a publish cut off
//! before its version was recorded leaves that number unused. Its re-run takes it again only
//! when all of these hold, each read with a strongly consistent read:
//! - it is still the dataset's `latest_version` (no publish reserved one since);
//! - no version item records it (so no reader ever saw its files, and none of its objects
//!   belongs to a recorded or activated version: invariant 2 holds);
//! - the caller's check says the reservation is its own (the CLI reads the plan the cut-off run
//!   wrote under the version's prefix, and compares it with its own: the same files, paths and
//!   SHA-256s).
//!
//! Otherwise the next number is reserved, as [`DynamoWriter::publish`] does. The version
//! active at resumption is the one the activation is conditioned on.

use std::future::Future;

use catalog::input::Slug;
use catalog_aws::dynamo::attr::get_u64;
use catalog_aws::dynamo::layout::name::LATEST_VERSION;
use catalog_aws::dynamo::layout::{dataset_pk, key_of, version_sk, DATASET_SK};

use super::{Publication, Reserved, StoredDataset};
use crate::error::WriteError;
use crate::writer::DynamoWriter;

/// A reservation, and whether it is a cut-off publish's, taken again.
#[derive(Debug, Clone, PartialEq)]
pub struct Resumed {
    pub reserved: Reserved,
    pub resumed: bool,
}

impl DynamoWriter {
    /// The version a publish uploads to: the dataset's latest reserved version when no version
    /// item records it and `ours(version)` says the reservation is this publish's (module docs),
    /// else the next version, reserved as [`DynamoWriter::publish`] reserves it (creating the
    /// dataset, unlisted, if it is new). With `new_only`, a slug that serves a version is
    /// refused (`SlugTaken`); an unpublished dataset is refused (`Unpublished`).
    pub async fn reserve_or_resume<E, R, RFut>(
        &self,
        publication: Publication<'_>,
        ours: R,
    ) -> Result<Resumed, E>
    where
        E: From<WriteError>,
        R: FnOnce(u64) -> RFut,
        RFut: Future<Output = Result<bool, E>>,
    {
        if let Some(reserved) = self
            .unrecorded(publication.slug, publication.new_only)
            .await?
        {
            if ours(reserved.version).await? {
                return Ok(Resumed {
                    reserved,
                    resumed: true,
                });
            }
        }
        let reserved = self.reserve_version(publication).await?;
        Ok(Resumed {
            reserved,
            resumed: false,
        })
    }

    /// The dataset's latest reserved version, when no version item records it.
    async fn unrecorded(
        &self,
        slug: &Slug,
        new_only: bool,
    ) -> Result<Option<Reserved>, WriteError> {
        let key = key_of(dataset_pk(slug.as_str()), DATASET_SK);
        let Some(item) = self.get(key).await? else {
            return Ok(None);
        };
        let stored = StoredDataset::try_from(&item)?;
        if stored.unpublished {
            return Err(WriteError::Unpublished(slug.to_string()));
        }
        if new_only && stored.current.is_some() {
            return Err(WriteError::SlugTaken(slug.to_string()));
        }
        let latest = get_u64(&item, LATEST_VERSION)?;
        if stored.current == Some(latest) {
            return Ok(None);
        }
        let version = key_of(dataset_pk(slug.as_str()), &version_sk(latest));
        if self.get(version).await?.is_some() {
            return Ok(None);
        }
        Ok(Some(Reserved {
            id: stored.id,
            version: latest,
            previous: stored.current,
            stored: stored.meta,
        }))
    }
}
