//! Publishing a version of many files ([`DynamoWriter::publish_files`]): the same order as a
//! single file's publish, with the manifest written between the uploads and the version record.
//!
//! 1. reserve the next version, or take again the one a cut-off publish of the same files
//!    reserved and never recorded ([`DynamoWriter::reserve_or_resume`]);
//! 2. upload every file (the caller's step);
//! 3. write the manifest's chunk items ([`DynamoWriter::write_manifest`]): nothing names them
//!    until the version item does, and writing them again puts the same items;
//! 4. record the version: its `active` map carries the manifest's summary (`files`), which
//!    activation copies onto the dataset item; its `sha256` is the manifest hash, its `s3_key`
//!    the prefix of its files;
//! 5. activate it, conditioned on the version active at reservation (or resumption).
//!
//! A failure at any step leaves the previous version serving: before step 4 nothing names the
//! files or the chunk items, and a re-run of the same files resumes the version.

use std::future::Future;
use std::sync::Arc;

use catalog::files::Manifest;
use catalog::records::DatasetMeta;
use catalog_aws::dynamo::codec::version_item;

use super::{NewVersion, Publication, Resumed};
use crate::error::WriteError;
use crate::writer::DynamoWriter;

/// What the upload step of a publish of many files hands back: the version (numbered as
/// reserved, `sha256` the manifest hash), the metadata to activate it with, its manifest, and
/// each split's statistics (`split_schemas[i]` of the summary's split `i`, Column objects as
/// JSON text; empty when the files have no split).
#[derive(Debug, Clone)]
pub struct StagedFiles {
    pub version: NewVersion,
    pub meta: DatasetMeta,
    pub manifest: Manifest,
    pub split_schemas: Vec<String>,
}

/// Room kept on the version and dataset items for the chunks' part counts, which
/// [`DynamoWriter::write_manifest`] sets in the summary once it has written them: `check_fits`
/// measures a version of many files with its summary and this room.
pub(crate) const PART_COUNTS_ROOM: usize = 4 * 1024;

impl DynamoWriter {
    /// Publishes a version of many files, in the order of the module's docs. `ours` tells
    /// whether a cut-off publish's unrecorded version is this publish's
    /// ([`Self::reserve_or_resume`]); `upload` puts every file under the version's prefix and
    /// hands back the version, its metadata and its manifest. Returns the reservation.
    pub async fn publish_files<E, R, RFut, F, Fut>(
        &self,
        publication: Publication<'_>,
        ours: R,
        upload: F,
    ) -> Result<Resumed, E>
    where
        E: From<WriteError>,
        R: FnOnce(u64) -> RFut,
        RFut: Future<Output = Result<bool, E>>,
        F: FnOnce(Resumed) -> Fut,
        Fut: Future<Output = Result<StagedFiles, E>>,
    {
        let (slug, now) = (publication.slug, publication.now);
        // Refused before anything is reserved or uploaded (the activation checks it again).
        crate::private::check_level(slug, publication.meta.card.access_level)?;
        let resumed = self.reserve_or_resume(publication, ours).await?;
        let number = resumed.reserved.version;
        let staged = upload(resumed.clone()).await?;
        let active = &staged.version.active;
        if active.version != number || active.sha256 != staged.manifest.sha256() {
            return Err(WriteError::Invalid(format!(
                "the version staged ({}, sha256 {}) is not version {number} with its manifest's \
                 hash {}",
                active.version,
                active.sha256,
                staged.manifest.sha256()
            ))
            .into());
        }
        let summary = self.write_manifest(slug, number, &staged.manifest).await?;
        self.write_split_stats(slug, number, &staged.split_schemas)
            .await?;
        // The summary rides in the version's `active` map: activation copies it onto the
        // dataset item and its alias, where the data, rows and sharing routes read it.
        let mut active = active.clone();
        active.files = Some(Arc::new(summary));
        let item = version_item(slug, &active, &staged.version.schema_json);
        self.put_version_item(slug, item).await?;
        let meta = self
            .publish_meta(slug, &staged.meta, &resumed.reserved.stored)
            .await?;
        self.activate(
            slug,
            number,
            resumed.reserved.previous.into(),
            Some(&meta),
            now,
        )
        .await?;
        Ok(resumed)
    }
}
