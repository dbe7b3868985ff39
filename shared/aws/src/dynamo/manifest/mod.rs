//! A many-file version's manifest in the datasets table ([`catalog::files`]; docs/data-model.md,
//! "Many-file versions").
//!
//! - The **summary** ([`catalog::files::Summary`]) is an attribute of the version item (and of
//!   the dataset item's active version, as the publish flow writes it): `files`, deflated JSON
//!   ([`summary_value`], [`summary_from`]).
//! - Each **chunk** of at most [`catalog::files::CHUNK_FILES`] files is stored twice over, each a
//!   blob of deflated JSON cut in parts of at most [`PART_BYTES`] (one item each, `bytes`): its
//!   files (path, rows, size, SHA-256, partition values: what a data page and a rows offset
//!   read, usually one item) and its statistics (what a Delta Sharing query reads), under
//!   [`manifest_part_sk`]. The summary counts each chunk's parts, so a reader names every key
//!   it needs and reads them in one BatchGetItem.
//! - Both blobs are column-oriented (one array per field) so that deflate finds the repeats.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, KeysAndAttributes};
use serde::{Deserialize, Serialize};

use super::attr::corrupt;
use super::codec::files::{deflate, inflate};
pub use super::codec::files::{summary_from, summary_value, INFLATED_MAX_BYTES};
use super::layout::name::{BYTES, FILES, PK, SK};
use super::layout::{dataset_pk, key_of, manifest_part_sk, Item};
use super::requests::batch_get_all;
use super::{DatasetsTable, DynamoCatalog};
use catalog::error::StoreError;
use catalog::files::{
    ColumnRange, FileChunk, FileEntry, Manifest, PartitionValue, RelPath, SplitName, StatValue,
    Summary,
};
use catalog::ports::ManifestReader;
use catalog::slug::Slug;

pub mod splits;
#[cfg(test)]
mod tests;

/// Most bytes one part item holds (DynamoDB's item limit is 400 KB, key and names included).
pub const PART_BYTES: usize = 350 * 1024;

/// Most keys one BatchGetItem asks for.
const BATCH_KEYS: usize = 100;

/// A chunk's files, column-oriented.
#[derive(Debug, Serialize, Deserialize)]
struct FilesBlob {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    split: Option<String>,
    paths: Vec<String>,
    rows: Vec<u64>,
    sizes: Vec<u64>,
    sha256: Vec<String>,
    /// Per partition column, each file's value as text (`null`: null).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    partitions: Vec<Vec<Option<String>>>,
}

/// A chunk's statistics: per column (`null` when no file's is known), per file.
#[derive(Debug, Serialize, Deserialize)]
struct StatsBlob {
    columns: Vec<Option<ColumnStats>>,
}

#[derive(Debug, Serialize, Deserialize)]
struct ColumnStats {
    min: Vec<Option<Wire>>,
    max: Vec<Option<Wire>>,
    nulls: Vec<Option<u64>>,
}

/// A [`StatValue`] as the blob holds it: a float as `{"f": "<shortest digits>e<exponent>"}`,
/// which Rust reads back exactly (serde_json's own float reading may miss by one unit in the
/// last place), the others as JSON has them.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Wire {
    Bool(bool),
    Int(i64),
    Text(String),
    Float { f: String },
}

/// Read by hand: serde's untagged enums buffer every value first, several times slower on a
/// chunk of statistics (the bench's `manifest` command).
impl<'de> Deserialize<'de> for Wire {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Wire;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a boolean, an integer, a string or {\"f\": digits}")
            }
            fn visit_bool<E: Error>(self, v: bool) -> Result<Wire, E> {
                Ok(Wire::Bool(v))
            }
            fn visit_i64<E: Error>(self, v: i64) -> Result<Wire, E> {
                Ok(Wire::Int(v))
            }
            fn visit_u64<E: Error>(self, v: u64) -> Result<Wire, E> {
                i64::try_from(v)
                    .map(Wire::Int)
                    .map_err(|_| E::custom("integer past 64 bits"))
            }
            fn visit_str<E: Error>(self, v: &str) -> Result<Wire, E> {
                Ok(Wire::Text(v.to_owned()))
            }
            fn visit_string<E: Error>(self, v: String) -> Result<Wire, E> {
                Ok(Wire::Text(v))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wire, A::Error> {
                match (
                    map.next_entry::<String, String>()?,
                    map.next_key::<String>()?,
                ) {
                    (Some((k, f)), None) if k == "f" => Ok(Wire::Float { f }),
                    _ => Err(A::Error::custom("a float is {\"f\": digits}")),
                }
            }
        }
        d.deserialize_any(V)
    }
}

impl Wire {
    fn of(value: &StatValue) -> Self {
        match value {
            StatValue::Bool(b) => Self::Bool(*b),
            StatValue::Int(i) => Self::Int(*i),
            StatValue::Text(t) => Self::Text(t.clone()),
            StatValue::Float(x) => Self::Float {
                f: format!("{x:e}"),
            },
        }
    }

    fn value(&self) -> Result<StatValue, StoreError> {
        Ok(match self {
            Self::Bool(b) => StatValue::Bool(*b),
            Self::Int(i) => StatValue::Int(*i),
            Self::Text(t) => StatValue::Text(t.clone()),
            Self::Float { f } => {
                StatValue::Float(f.parse().map_err(|_| corrupt("manifest statistics"))?)
            }
        })
    }
}

/// One chunk, encoded: its items, and how many of them hold its files and its statistics.
#[derive(Debug, Clone, PartialEq)]
pub struct EncodedChunk {
    pub items: Vec<Item>,
    pub file_parts: u32,
    pub stat_parts: u32,
}

/// Chunk `chunk` of `manifest` as the items of version `version` of `slug`.
pub fn encode_chunk(slug: &str, version: u64, manifest: &Manifest, chunk: usize) -> EncodedChunk {
    let c = &manifest.summary.chunks[chunk];
    let first = c.first_file as usize;
    let files = &manifest.entries[first..first + c.files as usize];
    let blob = FilesBlob {
        split: files[0].split.as_ref().map(|s| s.to_string()),
        paths: files.iter().map(|f| f.path.to_string()).collect(),
        rows: files.iter().map(|f| f.rows).collect(),
        sizes: files.iter().map(|f| f.size).collect(),
        sha256: files.iter().map(|f| f.sha256.clone()).collect(),
        partitions: (0..manifest.summary.partitions.len())
            .map(|i| files.iter().map(|f| f.partitions[i].to_text()).collect())
            .collect(),
    };
    let stats = StatsBlob {
        columns: (0..manifest.summary.columns.len())
            .map(|i| {
                let of = |f: &FileEntry| f.stats.get(i).cloned().flatten();
                if files.iter().all(|f| of(f).is_none()) {
                    return None;
                }
                let ranges: Vec<ColumnRange> =
                    files.iter().map(|f| of(f).unwrap_or_default()).collect();
                Some(ColumnStats {
                    min: ranges
                        .iter()
                        .map(|r| r.min.as_ref().map(Wire::of))
                        .collect(),
                    max: ranges
                        .iter()
                        .map(|r| r.max.as_ref().map(Wire::of))
                        .collect(),
                    nulls: ranges.iter().map(|r| r.null_count).collect(),
                })
            })
            .collect(),
    };
    let pk = dataset_pk(slug);
    let mut items = Vec::new();
    let file_parts = parts(&pk, version, false, chunk, &deflate(&blob), &mut items);
    let stat_parts = parts(&pk, version, true, chunk, &deflate(&stats), &mut items);
    EncodedChunk {
        items,
        file_parts,
        stat_parts,
    }
}

/// `bytes` cut in parts, pushed as items; how many.
fn parts(
    pk: &str,
    version: u64,
    stats: bool,
    chunk: usize,
    bytes: &[u8],
    items: &mut Vec<Item>,
) -> u32 {
    let mut n = 0;
    for part in bytes.chunks(PART_BYTES) {
        let mut item = key_of(pk, &manifest_part_sk(version, stats, chunk, n));
        item.insert(BYTES.to_owned(), AttributeValue::B(part.to_vec().into()));
        items.push(item);
        n += 1;
    }
    n
}

/// The keys of chunk `chunk`'s parts (its files, and with `stats` its statistics).
pub fn chunk_keys(
    slug: &str,
    version: u64,
    summary: &Summary,
    chunk: usize,
    stats: bool,
) -> Vec<Item> {
    let pk = dataset_pk(slug);
    let c = &summary.chunks[chunk];
    let files = (0..c.file_parts).map(|p| (false, p));
    let stat = (0..if stats { c.stat_parts } else { 0 }).map(|p| (true, p));
    files
        .chain(stat)
        .map(|(s, p)| key_of(pk.as_str(), &manifest_part_sk(version, s, chunk, p)))
        .collect()
}

/// Chunk `chunk` from the items read (by sort key); `None` when a part is missing.
pub fn decode_chunk(
    version: u64,
    summary: &Summary,
    chunk: usize,
    found: &HashMap<String, Item>,
    stats: bool,
) -> Result<Option<FileChunk>, StoreError> {
    let c = summary.chunks.get(chunk).ok_or_else(|| corrupt(FILES))?;
    let blob = |is_stats: bool, n: u32| -> Result<Option<Vec<u8>>, StoreError> {
        let mut bytes = Vec::new();
        for part in 0..n {
            let Some(item) = found.get(&manifest_part_sk(version, is_stats, chunk, part)) else {
                return Ok(None);
            };
            match item.get(BYTES) {
                Some(AttributeValue::B(b)) => bytes.extend_from_slice(b.as_ref()),
                _ => return Err(corrupt(BYTES)),
            }
        }
        Ok(Some(bytes))
    };
    let Some(bytes) = blob(false, c.file_parts)? else {
        return Ok(None);
    };
    let f: FilesBlob = inflate(&bytes, "manifest files")?;
    let n = c.files as usize;
    let lengths_ok = [f.paths.len(), f.rows.len(), f.sizes.len(), f.sha256.len()]
        .iter()
        .all(|&l| l == n)
        && f.partitions.len() == summary.partitions.len()
        && f.partitions.iter().all(|p| p.len() == n);
    if !lengths_ok {
        return Err(corrupt("manifest files"));
    }
    let mut column_stats = Vec::new();
    if stats {
        let Some(bytes) = blob(true, c.stat_parts)? else {
            return Ok(None);
        };
        let s: StatsBlob = inflate(&bytes, "manifest statistics")?;
        let fits = |v: &ColumnStats| v.min.len() == n && v.max.len() == n && v.nulls.len() == n;
        if s.columns.len() != summary.columns.len() || !s.columns.iter().flatten().all(fits) {
            return Err(corrupt("manifest statistics"));
        }
        column_stats = s.columns;
    }
    let split = match &f.split {
        None => None,
        Some(s) => Some(SplitName::parse(s).map_err(|_| corrupt("manifest split"))?),
    };
    let mut files = Vec::with_capacity(n);
    for i in 0..n {
        let partitions = summary
            .partitions
            .iter()
            .zip(&f.partitions)
            .map(|(col, values)| PartitionValue::parse(values[i].as_deref(), col.kind))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| corrupt("manifest partition value"))?;
        let mut stats = Vec::with_capacity(column_stats.len());
        for col in &column_stats {
            let Some(col) = col else {
                stats.push(None);
                continue;
            };
            let range = ColumnRange {
                min: col.min[i].as_ref().map(Wire::value).transpose()?,
                max: col.max[i].as_ref().map(Wire::value).transpose()?,
                null_count: col.nulls[i],
            };
            let known = range.min.is_some() || range.max.is_some() || range.null_count.is_some();
            stats.push(known.then_some(range));
        }
        files.push(FileEntry {
            path: RelPath::parse(&f.paths[i]).map_err(|_| corrupt("manifest path"))?,
            split: split.clone(),
            partitions,
            rows: f.rows[i],
            size: f.sizes[i],
            sha256: f.sha256[i].clone(),
            stats,
        });
    }
    Ok(Some(FileChunk {
        index: chunk,
        first_file: c.first_file,
        first_row: c.first_row,
        files,
    }))
}

/// The chunks asked for, read with as few BatchGetItems as DynamoDB allows (100 keys each):
/// eventually consistent first (the items never change once written), then strongly consistent
/// for any key not found (an item written a moment before the version was activated).
pub async fn read_chunks(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    slug: &Slug,
    version: u64,
    summary: &Summary,
    chunks: &[usize],
    stats: bool,
) -> Result<Option<Vec<FileChunk>>, StoreError> {
    if chunks.iter().any(|&c| c >= summary.chunks.len()) {
        return Ok(None);
    }
    let keys: Vec<Item> = chunks
        .iter()
        .flat_map(|&c| chunk_keys(slug.as_str(), version, summary, c, stats))
        .collect();
    let mut found = get_all(client, table, &keys, false).await?;
    let missing: Vec<Item> = keys
        .into_iter()
        .filter(|k| !found.contains_key(&sort_key(k)))
        .collect();
    if !missing.is_empty() {
        found.extend(get_all(client, table, &missing, true).await?);
    }
    let mut out = Vec::with_capacity(chunks.len());
    for &c in chunks {
        match decode_chunk(version, summary, c, &found, stats)? {
            Some(chunk) => out.push(chunk),
            None => return Ok(None),
        }
    }
    Ok(Some(out))
}

fn sort_key(item: &Item) -> String {
    match item.get(SK) {
        Some(AttributeValue::S(sk)) => sk.clone(),
        _ => String::new(),
    }
}

/// The items of `keys`, by sort key (they share one partition).
async fn get_all(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    keys: &[Item],
    consistent: bool,
) -> Result<HashMap<String, Item>, StoreError> {
    let mut found = HashMap::new();
    for batch in keys.chunks(BATCH_KEYS) {
        let request = KeysAndAttributes::builder()
            .set_keys(Some(batch.to_vec()))
            .consistent_read(consistent)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let got = batch_get_all(client, HashMap::from([(table.to_owned(), request)])).await?;
        for item in got.into_values().flatten() {
            if matches!(item.get(PK), Some(AttributeValue::S(_))) {
                found.insert(sort_key(&item), item);
            }
        }
    }
    Ok(found)
}

impl<P: Send + Sync> ManifestReader for DatasetsTable<P> {
    async fn read_chunks(
        &self,
        slug: &Slug,
        version: u64,
        summary: &Summary,
        chunks: &[usize],
        stats: bool,
    ) -> Result<Option<Vec<FileChunk>>, StoreError> {
        read_chunks(
            self.client(),
            self.name(),
            slug,
            version,
            summary,
            chunks,
            stats,
        )
        .await
    }
}

impl<P: Send + Sync> ManifestReader for DynamoCatalog<P> {
    async fn read_chunks(
        &self,
        slug: &Slug,
        version: u64,
        summary: &Summary,
        chunks: &[usize],
        stats: bool,
    ) -> Result<Option<Vec<FileChunk>>, StoreError> {
        self.datasets()
            .read_chunks(slug, version, summary, chunks, stats)
            .await
    }
}
