//! Keeping the listings' text index ([`catalog_search::index`], stored as [`catalog_search::text`]).
//!
//! - **A change** to a dataset's searched text (its first listing, a restore, new metadata with
//!   another name, description or tags) goes into the index after the activation's
//!   transaction, before the catalog's `rev` is bumped: [`DynamoWriter::index_text`] reads the
//!   manifest, the delta and the one shard the change folds into, and writes the new delta and
//!   that shard (or the two it splits into) under the next generation's ids, then moves the
//!   manifest to them with a write conditioned on the generation it read, then deletes what
//!   they replaced. It reads and writes about the same whatever the catalog's size: the
//!   delta, one shard and the manifest. Two writers at once: one loses the condition, deletes
//!   what it wrote and starts again.
//! - **`reindex`** (and so every take-down, which renumbers positions) builds the index whole
//!   from the catalog list ([`DynamoWriter::rebuild_text`]), moves the manifest to it, and
//!   deletes every blob of an earlier generation that it does not name (what interrupted
//!   writers left).
//!
//! A catalog listed before the index existed has no manifest and no `text_indexed` mark on
//! its counter: changes leave it alone until `reindex` builds it (the list answers `q` from a
//! scan meanwhile). A catalog whose first listing came with the index is marked, and its first
//! change creates the index.

use std::collections::BTreeSet;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog::error::StoreError;
use catalog::input::Slug;
use catalog_aws::dynamo::attr::get_u64;
use catalog_aws::dynamo::layout::name::{PK, SK, TEXT_INDEXED, TOTAL};
use catalog_aws::dynamo::layout::{counter_key, key_of, Item, COUNTER_PK};
use catalog_aws::dynamo::requests::{classify, query_all};
use catalog_aws::dynamo::retry::Attempt;
use catalog_search::index::{Shard, TextDoc, TextIndex};
use catalog_search::text::{
    blob_items, delta_bytes, delta_from, delta_id, shard_id, Blob, Manifest, MANIFEST_SK, TEXT_PK,
};

use crate::error::WriteError;
use crate::tx::{delete_request, is_condition_failure, put_request};
use crate::writer::DynamoWriter;

/// What building the text index whole did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextRebuilt {
    /// How many datasets it holds.
    pub datasets: u64,
    /// How many shards, and their bytes as stored.
    pub shards: usize,
    pub bytes: usize,
    /// How many items of earlier generations were deleted.
    pub swept: usize,
}

/// A generation's writes, not yet named by the manifest.
struct Staged {
    manifest: Manifest,
    items: Vec<Item>,
}

impl Staged {
    /// Generation `generation` of `index`: its manifest, naming these blobs, and every item
    /// the generation writes.
    fn of(
        index: &TextIndex,
        generation: u64,
        shards: Vec<Blob>,
        delta: Blob,
        items: Vec<Item>,
    ) -> Self {
        Self {
            manifest: Manifest {
                generation,
                change: index.change(),
                max_shard_bytes: index.max_shard_bytes(),
                layout: index.layout.clone(),
                shards,
                delta,
            },
            items,
        }
    }
}

impl DynamoWriter {
    /// Puts a dataset's text, as its item holds it now, into the index at its position now:
    /// see the module's documentation. Each attempt reads both again (a take-down may have
    /// moved it meanwhile; one that unlisted it leaves nothing to do). Retried when another
    /// writer moved the manifest first.
    pub async fn index_text(&self, slug: &Slug) -> Result<(), WriteError> {
        crate::patience::RACE
            .run(
                (),
                |()| async {
                    let stored = self.stored_dataset(slug).await?;
                    let Some(seq) = stored.seq.filter(|_| !stored.unpublished) else {
                        return Ok(Attempt::Done(()));
                    };
                    let doc = TextDoc::of(seq, &stored.meta.card);
                    Ok(match self.index_text_once(&doc).await? {
                        true => Attempt::Done(()),
                        false => Attempt::Retry(()),
                    })
                },
                |()| WriteError::Raced("the text index".into()),
            )
            .await
    }

    /// One attempt: `false` when another writer moved the manifest first.
    async fn index_text_once(&self, doc: &TextDoc) -> Result<bool, WriteError> {
        let counter = self.get(counter_key(COUNTER_PK)).await?;
        let datasets = match &counter {
            Some(item) => get_u64(item, TOTAL)?,
            None => 0,
        };
        let read = match self.get(Manifest::key()).await? {
            Some(item) => Some(Manifest::from_item(&item)?),
            None => None,
        };
        let (mut index, replaced) = match &read {
            Some(manifest) => {
                let target = manifest.layout.fold_target();
                let mut blobs: Vec<&Blob> = vec![&manifest.delta];
                blobs.extend(target.map(|t| &manifest.shards[t]));
                let found = self.get_blobs(&blobs).await?;
                let Some(delta) = manifest.delta.join(&found)? else {
                    return Ok(false);
                };
                let mut shards: Vec<Option<Shard>> = vec![None; manifest.shards.len()];
                if let Some(t) = target {
                    let Some(bytes) = manifest.shards[t].join(&found)? else {
                        return Ok(false);
                    };
                    shards[t] = Some(Shard::from_blob(&bytes).map_err(StoreError::from)?);
                }
                let replaced: Vec<Blob> = blobs.into_iter().cloned().collect();
                (manifest.index(delta_from(&delta)?, shards), replaced)
            }
            None => {
                let marked = counter.as_ref().is_some_and(|c| {
                    matches!(c.get(TEXT_INDEXED), Some(AttributeValue::Bool(true)))
                });
                if !marked {
                    tracing::warn!(
                        "the catalog's text index is not built: run `catalog-admin datasets reindex`"
                    );
                    return Ok(true);
                }
                (
                    TextIndex::build(&[], TextIndex::MAX_SHARD_BYTES).map_err(StoreError::from)?,
                    Vec::new(),
                )
            }
        };
        let target = index
            .layout
            .fold_target()
            .ok_or_else(|| StoreError::Corrupt("text index: a layout without shards".into()))?;
        index.upsert(doc.clone()).map_err(StoreError::from)?;
        index.layout.datasets = datasets;
        let written = index.fold_one().map_err(StoreError::from)?;
        let generation = read.as_ref().map_or(1, |m| m.generation + 1);
        let nonce = nonce();
        let mut shards: Vec<Blob> = match &read {
            Some(m) => m.shards.clone(),
            None => vec![
                Blob {
                    id: String::new(),
                    parts: 0,
                    bytes: 0,
                };
                1
            ],
        };
        let mut items = Vec::new();
        let mut new_shards = Vec::new();
        for i in written {
            let shard = index.shard(i).ok_or_else(|| {
                StoreError::Other("text index: a folded shard is not loaded".into())
            })?;
            let (blob, parts) = blob_items(
                shard_id(generation, &nonce, i),
                &shard.to_blob().map_err(StoreError::from)?,
            );
            items.extend(parts);
            new_shards.push(blob);
        }
        shards.splice(target..=target, new_shards);
        let (delta, parts) = blob_items(delta_id(generation, &nonce), &delta_bytes(index.delta())?);
        items.extend(parts);
        let staged = Staged::of(&index, generation, shards, delta, items);
        if !self
            .commit_text(staged, read.as_ref().map(|m| m.generation))
            .await?
        {
            return Ok(false);
        }
        // What the new generation replaced; a failure leaves items `reindex` sweeps.
        let keys: Vec<Item> = replaced.iter().flat_map(Blob::keys).collect();
        if let Err(e) = self.delete_keys(keys).await {
            tracing::warn!(error = %e, "the text index's replaced blobs were not all deleted");
        }
        Ok(true)
    }

    /// Builds the index whole from these datasets (every listed one), moves the manifest to it,
    /// and deletes what earlier generations left.
    pub async fn rebuild_text(&self, docs: &[TextDoc]) -> Result<TextRebuilt, WriteError> {
        let index = TextIndex::build(docs, TextIndex::MAX_SHARD_BYTES).map_err(StoreError::from)?;
        let shards = index.layout.lowers.len();
        let mut blobs = Vec::with_capacity(shards);
        let mut bytes = 0;
        for i in 0..shards {
            let shard = index
                .shard(i)
                .ok_or_else(|| StoreError::Other("text index: a built shard is missing".into()))?;
            let blob = shard.to_blob().map_err(StoreError::from)?;
            bytes += blob.len();
            blobs.push(blob);
        }
        let delta = delta_bytes(index.delta())?;
        let generation = crate::patience::RACE
            .run(
                (),
                |()| async {
                    let read = match self.get(Manifest::key()).await? {
                        Some(item) => Some(Manifest::from_item(&item)?.generation),
                        None => None,
                    };
                    let generation = read.map_or(1, |g| g + 1);
                    let nonce = nonce();
                    let mut items = Vec::new();
                    let mut shard_blobs = Vec::new();
                    for (i, blob) in blobs.iter().enumerate() {
                        let (blob, parts) = blob_items(shard_id(generation, &nonce, i), blob);
                        items.extend(parts);
                        shard_blobs.push(blob);
                    }
                    let (delta, parts) = blob_items(delta_id(generation, &nonce), &delta);
                    items.extend(parts);
                    let staged = Staged::of(&index, generation, shard_blobs, delta, items);
                    Ok::<_, WriteError>(match self.commit_text(staged, read).await? {
                        true => Attempt::Done(generation),
                        false => Attempt::Retry(()),
                    })
                },
                |()| WriteError::Raced("the text index".into()),
            )
            .await?;
        // The index is built and served: what earlier generations left is only garbage, which
        // the next `reindex` sweeps if this one cannot.
        let swept = match self.sweep_text(generation).await {
            Ok(swept) => swept,
            Err(e) => {
                tracing::warn!(error = %e, "the text index's stale blobs were not all deleted");
                0
            }
        };
        Ok(TextRebuilt {
            datasets: docs.len() as u64,
            shards,
            bytes,
            swept,
        })
    }

    /// Writes a generation's blobs, then its manifest under the condition that the manifest
    /// is still generation `read`. `false` (its blobs deleted again) when it is not.
    async fn commit_text(&self, staged: Staged, read: Option<u64>) -> Result<bool, StoreError> {
        // Only what this attempt wrote: the other blobs its manifest names are the stored one's.
        let keys: Vec<Item> = staged
            .items
            .iter()
            .map(|item| key_of(TEXT_PK, &sort_key(item)))
            .collect();
        let puts = staged
            .items
            .into_iter()
            .map(put_request)
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_write(puts).await?;
        let (condition, value) = Manifest::condition(read);
        let mut put = self
            .client
            .put_item()
            .table_name(&self.datasets_table)
            .set_item(Some(staged.manifest.to_item()?))
            .condition_expression(condition);
        if let Some(value) = value {
            put = put.expression_attribute_values(":generation", value);
        }
        match put.send().await {
            Ok(_) => Ok(true),
            Err(e) if is_condition_failure(e.code()) => {
                self.delete_keys(keys).await?;
                Ok(false)
            }
            Err(e) => Err(classify(e)),
        }
    }

    /// Deletes every blob of a generation up to `generation` that its manifest does not name.
    /// A writer that read an earlier manifest fails its condition; one that read this one
    /// writes a later generation: neither loses a blob it needs.
    async fn sweep_text(&self, generation: u64) -> Result<usize, StoreError> {
        let item = self
            .get(Manifest::key())
            .await?
            .ok_or_else(|| StoreError::Corrupt("text index: the manifest is gone".into()))?;
        let manifest = Manifest::from_item(&item)?;
        let named: BTreeSet<String> = manifest
            .blobs()
            .flat_map(Blob::keys)
            .filter_map(|k| match k.get(SK) {
                Some(AttributeValue::S(sk)) => Some(sk.clone()),
                _ => None,
            })
            .collect();
        let stored = query_all(
            self.client
                .query()
                .table_name(&self.datasets_table)
                .key_condition_expression(format!("{PK} = :pk"))
                .expression_attribute_values(":pk", catalog_aws::dynamo::attr::s(TEXT_PK))
                .projection_expression(format!("{PK}, {SK}"))
                .consistent_read(true),
        )
        .await?;
        let stale: Vec<Item> = stored
            .iter()
            .filter_map(|item| match item.get(SK) {
                Some(AttributeValue::S(sk)) => Some(sk.clone()),
                _ => None,
            })
            .filter(|sk| sk != MANIFEST_SK && !named.contains(sk))
            .filter(|sk| blob_generation(sk).is_some_and(|g| g <= generation))
            .map(|sk| key_of(TEXT_PK, &sk))
            .collect();
        let swept = stale.len();
        self.delete_keys(stale).await?;
        Ok(swept)
    }

    /// Blob parts by key, a BatchGetItem per hundred.
    async fn get_blobs(&self, blobs: &[&Blob]) -> Result<Vec<Item>, StoreError> {
        self.get_keys(blobs.iter().flat_map(|b| b.keys()).collect())
            .await
    }

    /// Items by key, consistently, a BatchGetItem per hundred.
    pub(crate) async fn get_keys(&self, keys: Vec<Item>) -> Result<Vec<Item>, StoreError> {
        let mut found = Vec::new();
        for chunk in keys.chunks(100) {
            let request = std::collections::HashMap::from([(
                self.datasets_table.clone(),
                aws_sdk_dynamodb::types::KeysAndAttributes::builder()
                    .set_keys(Some(chunk.to_vec()))
                    .consistent_read(true)
                    .build()
                    .map_err(crate::tx::other)?,
            )]);
            let mut by_table =
                catalog_aws::dynamo::requests::batch_get_all(&self.client, request).await?;
            found.extend(by_table.remove(&self.datasets_table).unwrap_or_default());
        }
        Ok(found)
    }

    pub(crate) async fn delete_keys(&self, keys: Vec<Item>) -> Result<(), StoreError> {
        let deletes = keys
            .into_iter()
            .map(delete_request)
            .collect::<Result<Vec<_>, _>>()?;
        self.batch_write(deletes).await
    }
}

/// The generation a blob part's sort key names (`S<generation>-<nonce>.<i>#<part>`,
/// `D<generation>-<nonce>#<part>`).
fn blob_generation(sk: &str) -> Option<u64> {
    sk.get(1..13)?.parse().ok()
}

/// What tells apart the blobs of writers that read the same generation: the loser's never
/// overwrite the winner's.
pub(crate) fn nonce() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_owned()
}

fn sort_key(item: &Item) -> String {
    match item.get(SK) {
        Some(AttributeValue::S(sk)) => sk.clone(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blobs_generation_is_read_from_its_key() {
        assert_eq!(
            blob_generation(&format!("{}#0", shard_id(42, &nonce(), 7))),
            Some(42)
        );
        assert_eq!(
            blob_generation(&format!("{}#3", delta_id(9, &nonce()))),
            Some(9)
        );
        assert_ne!(shard_id(1, &nonce(), 0), shard_id(1, &nonce(), 0));
        assert_eq!(blob_generation(MANIFEST_SK), None);
    }
}
