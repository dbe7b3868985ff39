//! The kept orders ([`crate::order`]) as the datasets table stores them, in one partition
//! (`ORDER`):
//!
//! - each order's **manifest** (`ORDER`, `name` | `updated` | `downloads`): its generation,
//!   how many datasets it holds, and each chunk's first key, length and blobs. A sorted
//!   listing reads it with the catalog counter, in its first request;
//! - each chunk's two **blobs** (`ORDER`, `<id>.s#<part>` and `<id>.k#<part>`): its positions
//!   (what a listing reads) and its keys (what a writer reads), never rewritten, like the
//!   text index's ([`crate::text`]);
//! - for each listed dataset, **where it is** (`ORDER`, `at#<position>`): its key in every
//!   order, moved in the same transaction as the manifests, so that a writer finds the place
//!   a dataset leaves.

use aws_sdk_dynamodb::types::AttributeValue;
use serde::{Deserialize, Serialize};

use crate::order::{self, Bounds, Chunk, Key, Sorted};
use crate::text::{blob_items_in, manifest_item, manifest_of, Blob};
use catalog::error::StoreError;
use catalog_aws::dynamo::attr::n;
use catalog_aws::dynamo::layout::{key_of, Item};

/// The partition of the kept orders.
pub const ORDER_PK: &str = "ORDER";
const GENERATION: &str = "generation";
/// An `at#` item's keys, as JSON.
const KEYS: &str = "keys";

/// A chunk as its order's manifest names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChunkRef {
    #[serde(flatten)]
    pub bounds: Bounds,
    /// Its positions ([`Chunk::seqs_packed`]) and its keys.
    pub seqs: Blob,
    pub keys: Blob,
    /// The width of its positions in bits; 0 in a chunk written before positions were packed
    /// (4 bytes each).
    #[serde(default)]
    pub bits: u8,
}

impl ChunkRef {
    /// The bytes of its positions, what a listing reads.
    pub fn seqs_bytes(&self) -> u64 {
        let len = self.bounds.len as usize;
        match self.bits {
            0 => len as u64 * 4,
            bits => order::packed_len(len, bits) as u64,
        }
    }
}

/// One order's manifest: which blobs hold its chunks, as of one generation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OrderManifest {
    pub sort: Sorted,
    /// Incremented by every write; blob ids start with the generation that wrote them.
    pub generation: u64,
    /// How many datasets it holds (the sum of its chunks' lengths).
    pub datasets: u64,
    pub chunks: Vec<ChunkRef>,
}

impl OrderManifest {
    pub fn key(sort: Sorted) -> Item {
        key_of(ORDER_PK, sort.as_str())
    }

    /// An order with nothing in it, before its first generation.
    pub fn empty(sort: Sorted) -> Self {
        Self {
            sort,
            generation: 0,
            datasets: 0,
            chunks: Vec::new(),
        }
    }

    pub fn bounds(&self) -> Vec<Bounds> {
        self.chunks.iter().map(|c| c.bounds.clone()).collect()
    }

    pub fn lens(&self) -> Vec<u32> {
        self.chunks.iter().map(|c| c.bounds.len).collect()
    }

    pub fn to_item(&self) -> Result<Item, StoreError> {
        manifest_item(Self::key(self.sort), self.generation, self)
    }

    pub fn from_item(item: &Item) -> Result<Self, StoreError> {
        let (generation, manifest): (u64, Self) = manifest_of(item)?;
        let well_formed = manifest.generation == generation
            && manifest.datasets == manifest.lens().iter().map(|l| u64::from(*l)).sum::<u64>()
            && manifest.chunks.iter().all(|c| c.bounds.len > 0)
            && manifest
                .chunks
                .windows(2)
                .all(|w| w[0].bounds.lower < w[1].bounds.lower);
        if !well_formed {
            return Err(catalog_aws::dynamo::attr::corrupt("manifest"));
        }
        Ok(manifest)
    }

    /// The condition a writer of the next generation puts it under: the manifest it read is
    /// still the stored one (none was: none is).
    pub fn condition(&self) -> (String, Option<AttributeValue>) {
        match self.generation {
            0 => (
                format!(
                    "attribute_not_exists({})",
                    catalog_aws::dynamo::layout::name::PK
                ),
                None,
            ),
            g => (format!("{GENERATION} = :generation"), Some(n(g))),
        }
    }

    /// Every blob it names.
    pub fn blobs(&self) -> impl Iterator<Item = &Blob> {
        self.chunks.iter().flat_map(|c| [&c.seqs, &c.keys])
    }
}

/// A chunk written by generation `generation` of `sort`'s order, by the writer that drew
/// `nonce`, at index `i`: its reference and the items that store it.
pub fn chunk_items(
    sort: Sorted,
    generation: u64,
    nonce: &str,
    i: usize,
    chunk: &Chunk,
) -> Result<Option<(ChunkRef, Vec<Item>)>, StoreError> {
    let Some(bounds) = chunk.bounds() else {
        return Ok(None);
    };
    let id = chunk_id(sort, generation, nonce, i);
    let (bits, seqs) = chunk.seqs_packed().map_err(order_error)?;
    let (seqs, mut items) = blob_items_in(ORDER_PK, format!("{id}.s"), &seqs);
    let (keys, more) = blob_items_in(ORDER_PK, format!("{id}.k"), &chunk.keys_bytes());
    items.extend(more);
    Ok(Some((
        ChunkRef {
            bounds,
            seqs,
            keys,
            bits,
        },
        items,
    )))
}

/// A chunk's id: the order's initial, the generation (12 digits), the writer's nonce, the index.
pub fn chunk_id(sort: Sorted, generation: u64, nonce: &str, i: usize) -> String {
    let initial = match sort {
        Sorted::Name => 'N',
        Sorted::Updated => 'U',
        Sorted::Downloads => 'W',
    };
    format!("{initial}{generation:012}-{nonce}.{i}")
}

/// The order and generation a blob part's sort key names (`None` for a manifest or an `at#`
/// item).
pub fn blob_generation(sk: &str) -> Option<(Sorted, u64)> {
    let sort = match sk.chars().next()? {
        'N' => Sorted::Name,
        'U' => Sorted::Updated,
        'W' => Sorted::Downloads,
        _ => return None,
    };
    Some((sort, sk.get(1..13)?.parse().ok()?))
}

/// The sort key of where the dataset at `seq` is.
pub fn at_sk(seq: u64) -> String {
    format!("at#{seq}")
}

/// The position an `at#` sort key names.
pub fn at_seq(sk: &str) -> Option<u64> {
    sk.strip_prefix("at#")?.parse().ok()
}

/// Where the dataset at `seq` is in every order, as stored.
pub fn at_item(seq: u64, keys: &[Key]) -> Result<Item, StoreError> {
    let mut item = key_of(ORDER_PK, &at_sk(seq));
    let json = serde_json::to_string(keys).map_err(|e| StoreError::Other(Box::new(e)))?;
    item.insert(KEYS.to_owned(), AttributeValue::S(json));
    Ok(item)
}

/// The keys an `at#` item records, in the order of [`Sorted::ALL`].
pub fn at_keys(item: &Item) -> Result<Vec<Key>, StoreError> {
    let json = catalog_aws::dynamo::attr::get_s(item, KEYS)?;
    let keys: Vec<Key> =
        serde_json::from_str(&json).map_err(|_| catalog_aws::dynamo::attr::corrupt(KEYS))?;
    if keys.len() != Sorted::ALL.len() {
        return Err(catalog_aws::dynamo::attr::corrupt(KEYS));
    }
    Ok(keys)
}

pub fn order_error(e: crate::order::OrderError) -> StoreError {
    StoreError::Corrupt(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::build;

    #[test]
    fn a_manifest_and_its_chunks_read_back_as_written() {
        let chunks = build((1..=4000).map(|s| (Key::Downloads(s % 13, s), s)).collect());
        let mut refs = Vec::new();
        let mut items = Vec::new();
        for (i, chunk) in chunks.iter().enumerate() {
            let (r, it) = chunk_items(Sorted::Downloads, 7, "abc", i, chunk)
                .unwrap()
                .unwrap();
            refs.push(r);
            items.extend(it);
        }
        let manifest = OrderManifest {
            sort: Sorted::Downloads,
            generation: 7,
            datasets: 4000,
            chunks: refs,
        };
        assert_eq!(
            OrderManifest::from_item(&manifest.to_item().unwrap()).unwrap(),
            manifest
        );
        for (chunk, r) in chunks.iter().zip(&manifest.chunks) {
            let keys = r.keys.join_in(ORDER_PK, &items).unwrap().unwrap();
            assert_eq!(&Chunk::from_keys_bytes(&keys).unwrap(), chunk);
            let seqs = r.seqs.join_in(ORDER_PK, &items).unwrap().unwrap();
            assert_eq!(r.bits, 12, "positions up to 4000 take 12 bits");
            assert_eq!(seqs.len() as u64, r.seqs_bytes());
            assert_eq!(
                seqs.len() as u64,
                r.seqs.bytes,
                "the manifest records its length"
            );
            let back = order::seqs_from(&seqs, chunk.len(), r.bits).unwrap();
            assert!(back.iter().map(|s| u64::from(*s)).eq(chunk.seqs()));
            let sk = match r.seqs.keys_in(ORDER_PK)[0].get("sk") {
                Some(AttributeValue::S(sk)) => sk.clone(),
                other => panic!("{other:?}"),
            };
            assert_eq!(blob_generation(&sk), Some((Sorted::Downloads, 7)));
        }
        let miscounted = OrderManifest {
            datasets: 3999,
            ..manifest.clone()
        };
        assert!(matches!(
            OrderManifest::from_item(&miscounted.to_item().unwrap()),
            Err(StoreError::Corrupt(_))
        ));
        assert_eq!(blob_generation("name"), None);
        assert_eq!(blob_generation(&at_sk(12)), None);
        assert_eq!(at_seq(&at_sk(12)), Some(12));
        let keys = vec![
            Key::Name("birds".into(), "birds".into()),
            Key::Updated(5, 1, 3),
            Key::Downloads(2, 3),
        ];
        assert_eq!(at_keys(&at_item(3, &keys).unwrap()).unwrap(), keys);
    }
}
