//! The text index ([`crate::index`]) as the datasets table stores it, in one partition
//! (`TEXT`):
//!
//! - the **manifest** (`TEXT`, `LAYOUT`): the generation, the index's layout (where each shard
//!   starts), and the item holding each shard and the delta. A listing with `q` reads it with
//!   the catalog counter, in its first request;
//! - **blobs** (`TEXT`, `<id>#<part>`): each shard (at most [`TextIndex::MAX_SHARD_BYTES`]) and
//!   the delta, cut in parts of at most [`PART_BYTES`] so that any fits an item. A blob is
//!   never rewritten: a change writes new ones under new ids, then moves the manifest to them
//!   (a conditional write on the generation), then deletes the ones it replaced. A reader that
//!   read the manifest before may find a blob gone; it reads the manifest again.
//!
//! A listing reads the manifest, then the blobs its words need (one BatchGetItem); each
//! instance keeps blobs it has read by id, since an id's content never changes.

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};

use crate::index::{Delta, Layout, TextDoc, TextIndex};
use catalog::error::StoreError;
use catalog_aws::dynamo::attr::{get_u64, n};
use catalog_aws::dynamo::layout::name::{PK, SK};
use catalog_aws::dynamo::layout::{key_of, Item};

/// The partition of the text index.
pub const TEXT_PK: &str = "TEXT";
/// The manifest's sort key.
pub const MANIFEST_SK: &str = "LAYOUT";
/// At most this many bytes of a blob in one item (an item holds at most 400 KB).
pub const PART_BYTES: usize = 350 * 1024;
/// The manifest's attributes: its generation (what a writer's condition checks) and the rest,
/// as deflated JSON.
const GENERATION: &str = "generation";
const MANIFEST: &str = "manifest";
/// A blob part's bytes.
const BYTES: &str = "bytes";

/// A stored blob: its id and how many parts it has.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Blob {
    pub id: String,
    pub parts: u32,
    /// Its length: what a listing's read budget counts. 0 in a manifest written before it
    /// was recorded ([`Blob::read_cost`]).
    #[serde(default)]
    pub bytes: u64,
}

impl Blob {
    /// The bytes reading it costs: its length, or `unrecorded` when the manifest that names it
    /// was written before lengths were recorded.
    pub fn read_cost(&self, unrecorded: u64) -> u64 {
        match self.bytes {
            0 => unrecorded,
            n => n,
        }
    }

    /// The keys of its parts.
    pub fn keys(&self) -> Vec<Item> {
        self.keys_in(TEXT_PK)
    }

    /// The keys of its parts, stored in partition `pk`.
    pub fn keys_in(&self, pk: &str) -> Vec<Item> {
        (0..self.parts)
            .map(|part| key_of(pk, &part_sk(&self.id, part)))
            .collect()
    }

    /// Its bytes, from the items read (in any order); `None` when a part is missing (the blob
    /// was replaced and deleted since the manifest was read).
    pub fn join(&self, found: &[Item]) -> Result<Option<Vec<u8>>, StoreError> {
        self.join_in(TEXT_PK, found)
    }

    /// [`Blob::join`], for a blob stored in partition `pk`.
    pub fn join_in(&self, pk: &str, found: &[Item]) -> Result<Option<Vec<u8>>, StoreError> {
        let mut bytes = Vec::new();
        for part in 0..self.parts {
            let sk = part_sk(&self.id, part);
            let item = found.iter().find(|item| {
                matches!(item.get(SK), Some(AttributeValue::S(v)) if *v == sk)
                    && matches!(item.get(PK), Some(AttributeValue::S(v)) if v == pk)
            });
            let Some(item) = item else {
                return Ok(None);
            };
            match item.get(BYTES) {
                Some(AttributeValue::B(b)) => bytes.extend_from_slice(b.as_ref()),
                _ => return Err(catalog_aws::dynamo::attr::corrupt(BYTES)),
            }
        }
        Ok(Some(bytes))
    }
}

fn part_sk(id: &str, part: u32) -> String {
    format!("{id}#{part}")
}

/// `bytes` stored as the blob `id`: the blob and its items.
pub fn blob_items(id: String, bytes: &[u8]) -> (Blob, Vec<Item>) {
    blob_items_in(TEXT_PK, id, bytes)
}

/// [`blob_items`], in partition `pk`.
pub fn blob_items_in(pk: &str, id: String, bytes: &[u8]) -> (Blob, Vec<Item>) {
    let chunks: Vec<&[u8]> = if bytes.is_empty() {
        vec![bytes]
    } else {
        bytes.chunks(PART_BYTES).collect()
    };
    let items = chunks
        .iter()
        .enumerate()
        .map(|(part, chunk)| {
            let mut item = key_of(pk, &part_sk(&id, part as u32));
            item.insert(
                BYTES.to_owned(),
                AttributeValue::B(aws_smithy_types::Blob::new(chunk.to_vec())),
            );
            item
        })
        .collect();
    (
        Blob {
            id,
            parts: chunks.len() as u32,
            bytes: bytes.len() as u64,
        },
        items,
    )
}

/// The index's manifest: which blobs hold its shards and delta, as of one generation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Incremented by every write; blob ids start with the generation that wrote them.
    pub generation: u64,
    /// The number of the index's last change.
    pub change: u64,
    pub max_shard_bytes: usize,
    pub layout: Layout,
    /// Each shard's blob, in the layout's order.
    pub shards: Vec<Blob>,
    pub delta: Blob,
}

impl Manifest {
    pub fn key() -> Item {
        key_of(TEXT_PK, MANIFEST_SK)
    }

    pub fn to_item(&self) -> Result<Item, StoreError> {
        manifest_item(Self::key(), self.generation, self)
    }

    pub fn from_item(item: &Item) -> Result<Self, StoreError> {
        let (generation, manifest): (u64, Self) = manifest_of(item)?;
        let layout = &manifest.layout;
        let shards = layout.lowers.len();
        let well_formed = manifest.generation == generation
            && shards > 0
            && layout.lowers[0].is_empty()
            && layout.lowers.windows(2).all(|w| w[0] <= w[1])
            && manifest.shards.len() == shards
            && layout.seq_lowers.len() == shards
            && layout.folded.len() == shards
            && manifest.blobs().all(|b| (1..=MAX_PARTS).contains(&b.parts));
        if !well_formed {
            return Err(catalog_aws::dynamo::attr::corrupt(MANIFEST));
        }
        Ok(manifest)
    }

    /// The condition a writer of the next generation puts it under: the manifest it read is
    /// still the stored one (none was: none is).
    pub fn condition(read: Option<u64>) -> (String, Option<AttributeValue>) {
        match read {
            Some(generation) => (format!("{GENERATION} = :generation"), Some(n(generation))),
            None => (format!("attribute_not_exists({PK})"), None),
        }
    }

    /// Every blob it names.
    pub fn blobs(&self) -> impl Iterator<Item = &Blob> {
        self.shards.iter().chain(std::iter::once(&self.delta))
    }

    /// The index with these shards loaded (`None` for those not) and this delta.
    pub fn index(&self, delta: Delta, shards: Vec<Option<crate::index::Shard>>) -> TextIndex {
        TextIndex::from_parts(
            self.layout.clone(),
            delta,
            shards,
            self.change,
            self.max_shard_bytes,
        )
    }
}

/// A manifest's item: `key`, its `generation` (what a writer's condition checks), and `value`
/// as deflated JSON.
pub(super) fn manifest_item<T: Serialize>(
    key: Item,
    generation: u64,
    value: &T,
) -> Result<Item, StoreError> {
    let json = serde_json::to_vec(value).map_err(|e| StoreError::Other(Box::new(e)))?;
    let mut item = key;
    item.insert(GENERATION.to_owned(), n(generation));
    item.insert(
        MANIFEST.to_owned(),
        AttributeValue::B(aws_smithy_types::Blob::new(
            miniz_oxide::deflate::compress_to_vec(&json, 6),
        )),
    );
    Ok(item)
}

/// A manifest's generation and value, read back from [`manifest_item`] (inflating to at most
/// [`MANIFEST_MAX_BYTES`]).
pub(super) fn manifest_of<T: serde::de::DeserializeOwned>(
    item: &Item,
) -> Result<(u64, T), StoreError> {
    let generation = get_u64(item, GENERATION)?;
    let Some(AttributeValue::B(deflated)) = item.get(MANIFEST) else {
        return Err(catalog_aws::dynamo::attr::corrupt(MANIFEST));
    };
    let json =
        miniz_oxide::inflate::decompress_to_vec_with_limit(deflated.as_ref(), MANIFEST_MAX_BYTES)
            .map_err(|_| catalog_aws::dynamo::attr::corrupt(MANIFEST))?;
    let value =
        serde_json::from_slice(&json).map_err(|_| catalog_aws::dynamo::attr::corrupt(MANIFEST))?;
    Ok((generation, value))
}

/// The most parts a blob has (a shard is at most 256 KB, one part; a delta of a few hundred
/// datasets, a few).
const MAX_PARTS: u32 = 64;
/// A manifest inflates to at most this (about 50 bytes a text shard: 100,000 shards; about 150
/// bytes an order's chunk: 50,000 chunks).
const MANIFEST_MAX_BYTES: usize = 8 << 20;
/// A delta inflates to at most this.
const DELTA_MAX_BYTES: usize = 64 << 20;

/// The delta as stored: its changes (each dataset's last change number and text), as deflated
/// JSON. Its tantivy index is built again when read (a few hundred datasets).
pub fn delta_bytes(delta: &Delta) -> Result<Vec<u8>, StoreError> {
    let changes: Vec<(u64, &TextDoc)> = delta.changes().collect();
    let json = serde_json::to_vec(&changes).map_err(|e| StoreError::Other(Box::new(e)))?;
    Ok(miniz_oxide::deflate::compress_to_vec(&json, 6))
}

pub fn delta_from(bytes: &[u8]) -> Result<Delta, StoreError> {
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(bytes, DELTA_MAX_BYTES)
        .map_err(|_| StoreError::Corrupt("text index: the delta is damaged".into()))?;
    let changes: Vec<(u64, TextDoc)> = serde_json::from_slice(&json)
        .map_err(|_| StoreError::Corrupt("text index: the delta is damaged".into()))?;
    Ok(Delta::from_changes(changes)?)
}

/// A shard's id in generation `generation`, written by the writer that drew `nonce`, at
/// position `i` of its layout then.
pub fn shard_id(generation: u64, nonce: &str, i: usize) -> String {
    format!("S{generation:012}-{nonce}.{i}")
}

/// The delta's id in generation `generation`, written by the writer that drew `nonce`.
pub fn delta_id(generation: u64, nonce: &str) -> String {
    format!("D{generation:012}-{nonce}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(seq: u64, name: &str) -> TextDoc {
        TextDoc {
            seq,
            name: name.into(),
            description: Some("river levels".into()),
            tags: vec!["water".into()],
            facets: vec!["tag#water".into()],
        }
    }

    #[test]
    fn a_blob_is_cut_into_parts_that_fit_an_item_and_joined_back() {
        let bytes: Vec<u8> = (0..(PART_BYTES * 2 + 10)).map(|i| i as u8).collect();
        let (blob, items) = blob_items("S1.0".into(), &bytes);
        assert_eq!(blob.parts, 3);
        assert_eq!(blob.keys().len(), 3);
        let mut shuffled = items.clone();
        shuffled.reverse();
        assert_eq!(blob.join(&shuffled).unwrap().unwrap(), bytes);
        assert_eq!(blob.join(&items[..2]).unwrap(), None, "a part is missing");
        let (empty, items) = blob_items("D1".into(), &[]);
        assert_eq!(empty.join(&items).unwrap().unwrap(), Vec::<u8>::new());
    }

    #[test]
    fn the_manifest_and_the_delta_read_back_as_written() {
        let mut index = TextIndex::build(&[doc(1, "Birds")], 4096).unwrap();
        index.upsert(doc(2, "Bees")).unwrap();
        let manifest = Manifest {
            generation: 3,
            change: index.change(),
            max_shard_bytes: 4096,
            layout: index.layout.clone(),
            shards: vec![Blob {
                id: shard_id(3, "n", 0),
                parts: 1,
                bytes: 100,
            }],
            delta: Blob {
                id: delta_id(3, "n"),
                parts: 1,
                bytes: 0,
            },
        };
        assert_eq!(
            Manifest::from_item(&manifest.to_item().unwrap()).unwrap(),
            manifest
        );
        let delta = delta_from(&delta_bytes(index.delta()).unwrap()).unwrap();
        let changes: Vec<(u64, TextDoc)> = delta.changes().map(|(c, d)| (c, d.clone())).collect();
        assert_eq!(changes, [(1, doc(2, "Bees"))]);
        let mut damaged = manifest.to_item().unwrap();
        damaged.insert(GENERATION.into(), n(4));
        assert!(matches!(
            Manifest::from_item(&damaged),
            Err(StoreError::Corrupt(_))
        ));
        for broken in [
            Manifest {
                layout: Layout::default(),
                shards: Vec::new(),
                ..manifest.clone()
            },
            Manifest {
                delta: Blob {
                    id: "D".into(),
                    parts: 1 << 30,
                    bytes: 0,
                },
                ..manifest.clone()
            },
        ] {
            let item = broken.to_item().unwrap();
            assert!(
                matches!(Manifest::from_item(&item), Err(StoreError::Corrupt(_))),
                "{broken:?}"
            );
        }
        assert!(matches!(delta_from(b"nope"), Err(StoreError::Corrupt(_))));
    }
}
