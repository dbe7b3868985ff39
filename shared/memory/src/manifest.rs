//! Many-file versions' manifests in memory: [`ManifestReader`] over [`Manifest`]s as built.

use std::collections::HashMap;
use std::sync::Mutex;

use catalog::error::StoreError;
use catalog::files::{FileChunk, Manifest, Summary};
use catalog::lock;
use catalog::ports::{ManifestReader, SplitStatsReader};
use catalog::slug::Slug;
use serde_json::value::RawValue;

/// Manifests by dataset and version, and how many reads were asked of them.
#[derive(Default)]
pub struct MemoryManifests {
    manifests: Mutex<HashMap<(String, u64), Manifest>>,
    /// Each split's statistics, by dataset, version and split index.
    split_stats: Mutex<HashMap<(String, u64, usize), String>>,
    reads: Mutex<Vec<usize>>,
}

impl MemoryManifests {
    pub fn new() -> Self {
        Self::default()
    }

    /// Stores `manifest` as version `version` of `slug`'s; returns the summary a version item
    /// would hold (each chunk one part of files and one of statistics).
    pub fn insert(&self, slug: &Slug, version: u64, manifest: Manifest) -> Summary {
        let mut manifest = manifest;
        for chunk in &mut manifest.summary.chunks {
            chunk.file_parts = 1;
            chunk.stat_parts = 1;
        }
        let summary = manifest.summary.clone();
        lock(&self.manifests).insert((slug.to_string(), version), manifest);
        summary
    }

    /// Stores the statistics of split `split` of version `version` of `slug`.
    pub fn insert_split_stats(&self, slug: &Slug, version: u64, split: usize, schema: &str) {
        lock(&self.split_stats).insert((slug.to_string(), version, split), schema.to_owned());
    }

    /// Deletes version `version` of `slug`'s manifest; whether there was one.
    pub fn remove(&self, slug: &Slug, version: u64) -> bool {
        lock(&self.manifests)
            .remove(&(slug.to_string(), version))
            .is_some()
    }

    /// How many chunks each read so far asked for, in order (a test's count of round trips).
    pub fn reads(&self) -> Vec<usize> {
        lock(&self.reads).clone()
    }
}

impl ManifestReader for MemoryManifests {
    async fn read_chunks(
        &self,
        slug: &Slug,
        version: u64,
        _summary: &Summary,
        chunks: &[usize],
        stats: bool,
    ) -> Result<Option<Vec<FileChunk>>, StoreError> {
        lock(&self.reads).push(chunks.len());
        let manifests = lock(&self.manifests);
        let Some(manifest) = manifests.get(&(slug.to_string(), version)) else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(chunks.len());
        for &c in chunks {
            let Some(mut chunk) = manifest.chunk(c) else {
                return Ok(None);
            };
            if !stats {
                for file in &mut chunk.files {
                    file.stats.clear();
                }
            }
            out.push(chunk);
        }
        Ok(Some(out))
    }
}

impl SplitStatsReader for MemoryManifests {
    async fn split_schema(
        &self,
        slug: &Slug,
        version: u64,
        split: usize,
    ) -> Result<Option<Box<RawValue>>, StoreError> {
        let stored = lock(&self.split_stats)
            .get(&(slug.to_string(), version, split))
            .cloned();
        stored
            .map(|schema| {
                RawValue::from_string(schema).map_err(|e| StoreError::Corrupt(e.to_string()))
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::files::{FileInput, ManifestInput, RelPath};

    #[tokio::test]
    async fn chunks_read_back_as_built_with_or_without_statistics() {
        let files = (0..2_500)
            .map(|i| FileInput {
                path: RelPath::parse(&format!("k={}/f{i}.parquet", i % 3)).unwrap(),
                split: None,
                rows: 2,
                size: 10,
                sha256: format!("{i:064x}"),
                stats: vec![("a".into(), Default::default())],
            })
            .collect();
        let manifest = Manifest::build(ManifestInput {
            files,
            columns: vec!["a".into()],
            ..Default::default()
        })
        .unwrap();
        let store = MemoryManifests::new();
        let slug = Slug::parse("many").unwrap();
        let summary = store.insert(&slug, 3, manifest.clone());
        let read = store
            .read_chunks(&slug, 3, &summary, &[2, 0], true)
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            read,
            vec![manifest.chunk(2).unwrap(), manifest.chunk(0).unwrap()]
        );
        let bare = store
            .read_chunks(&slug, 3, &summary, &[1], false)
            .await
            .unwrap()
            .unwrap();
        assert!(bare[0].files.iter().all(|f| f.stats.is_empty()));
        assert_eq!(bare[0].files.len(), 1_000);
        let none = store.read_chunks(&slug, 3, &summary, &[3], false).await;
        assert_eq!(none.unwrap(), None, "past the last chunk");
        assert!(store.remove(&slug, 3));
        let gone = store.read_chunks(&slug, 3, &summary, &[0], false).await;
        assert_eq!(gone.unwrap(), None);
        assert_eq!(store.reads(), [2, 1, 1, 1]);
    }
}
