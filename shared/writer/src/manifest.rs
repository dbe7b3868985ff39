//! A many-file version's manifest ([`catalog::files::Manifest`]) in the datasets table: its
//! chunk items written before the version is recorded, and deleted with the version.
//!
//! The items' layout and codec are `catalog_aws::dynamo::manifest`'s; docs/data-model.md
//! ("Many-file versions") says why they live in the table and what a read costs.

use aws_sdk_dynamodb::types::WriteRequest;
use catalog::files::{Manifest, Summary};
use catalog::slug::Slug;
use catalog_aws::dynamo::attr::s;
use catalog_aws::dynamo::layout::name::{PK, SK};
use catalog_aws::dynamo::layout::{dataset_pk, manifest_prefix, Item};
use catalog_aws::dynamo::manifest::encode_chunk;
use catalog_aws::dynamo::manifest::splits::split_stats_item;
use catalog_aws::dynamo::requests::query_all;

use crate::error::WriteError;
use crate::tx::{delete_request, put_request};
use crate::writer::DynamoWriter;

/// Items one BatchWriteItem takes.
const BATCH_ITEMS: usize = 25;

impl DynamoWriter {
    /// Writes every chunk of `manifest` as the manifest items of version `version` of `slug`
    /// (BatchWriteItem, 25 items a request, unprocessed items retried), encoding one chunk at a
    /// time so that memory holds at most one request and one chunk of items. Returns the
    /// summary to record on the version item: `manifest.summary` with each chunk's part counts.
    ///
    /// Call it before the version item is written: until then nothing names these items, so a
    /// publish that fails on the way leaves nothing served, and [`Self::delete_manifest`] (or a
    /// dataset's delete, which removes its whole partition) takes away what it wrote. Writing
    /// the same manifest again puts the same items (a re-run is safe).
    pub async fn write_manifest(
        &self,
        slug: &Slug,
        version: u64,
        manifest: &Manifest,
    ) -> Result<Summary, WriteError> {
        let mut summary = manifest.summary.clone();
        let mut pending: Vec<WriteRequest> = Vec::with_capacity(BATCH_ITEMS * 2);
        for chunk in 0..summary.chunks.len() {
            let encoded = encode_chunk(slug.as_str(), version, manifest, chunk);
            summary.chunks[chunk].file_parts = encoded.file_parts;
            summary.chunks[chunk].stat_parts = encoded.stat_parts;
            for item in encoded.items {
                pending.push(put_request(item)?);
            }
            while pending.len() >= BATCH_ITEMS {
                let rest = pending.split_off(BATCH_ITEMS);
                self.batch_write(std::mem::replace(&mut pending, rest))
                    .await?;
            }
        }
        if !pending.is_empty() {
            self.batch_write(pending).await?;
        }
        Ok(summary)
    }

    /// Writes the statistics of each split of version `version` of `slug` (`schemas[i]`: split
    /// `i` of the summary's splits, a JSON array of Column objects), one item each beside the
    /// manifest's chunks: call it with [`Self::write_manifest`], before the version is
    /// recorded; [`Self::delete_manifest`] deletes them with the chunks.
    pub async fn write_split_stats(
        &self,
        slug: &Slug,
        version: u64,
        schemas: &[String],
    ) -> Result<(), WriteError> {
        let requests = schemas
            .iter()
            .enumerate()
            .map(|(i, schema)| put_request(split_stats_item(slug, version, i, schema)))
            .collect::<Result<Vec<_>, _>>()?;
        // One split's statistics may take most of an item: a request of 25 stays under
        // BatchWriteItem's 16 MB.
        for batch in requests.chunks(BATCH_ITEMS) {
            self.batch_write(batch.to_vec()).await?;
        }
        Ok(())
    }

    /// Deletes every manifest item of version `version` of `slug` (one Query of their keys,
    /// then BatchWriteItem), whether or not a version item names them (what a failed publish
    /// left included). Returns how many it deleted; a version without a manifest deletes
    /// none, and running it again is safe.
    pub async fn delete_manifest(&self, slug: &Slug, version: u64) -> Result<usize, WriteError> {
        let keys: Vec<Item> = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk AND begins_with({SK}, :m)"))
                .expression_attribute_values(":pk", s(dataset_pk(slug.as_str())))
                .expression_attribute_values(":m", s(manifest_prefix(version)))
                .projection_expression(format!("{PK}, {SK}"))
                .consistent_read(true),
        )
        .await?;
        let n = keys.len();
        let requests = keys
            .into_iter()
            .map(delete_request)
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_write(requests).await?;
        Ok(n)
    }
}
