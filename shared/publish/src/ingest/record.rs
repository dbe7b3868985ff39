//! What a version records of its text inputs ([`catalog::ingested::Ingested`]), and the inputs
//! kept as they came (`--keep-original`): hashed before anything is written, uploaded beside
//! the Parquet, under `datasets/<slug>/v<n>/original/<path as published>`, each with its
//! SHA-256 checksum as the Parquet goes up (`Publisher::put_originals`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use catalog::ingested::{Ingested, Original};
use catalog::input::Slug;
use sha2::{Digest, Sha256};

use super::error::IngestError;
use super::source::Compression;
use super::Input;

/// The record of a conversion, and the local files of the originals it lists (in order).
#[derive(Debug, Clone)]
pub struct Record {
    /// With each original's `key` empty: it is the version's ([`Record::at`]).
    pub ingested: Ingested,
    pub local: Vec<PathBuf>,
}

/// Where an original goes in the bucket.
pub fn original_key(slug: &Slug, version: u64, name: &str) -> String {
    format!("datasets/{slug}/v{version}/original/{name}")
}

/// An original's media type: its format's, or its compression's when compressed.
pub fn media_type(input: &Input) -> &'static str {
    match input.compression {
        Compression::None => input.format.media_type(),
        Compression::Gzip => "application/gzip",
        Compression::Zstd => "application/zstd",
    }
}

/// Size and hex SHA-256 of a file, read through once.
pub fn hash_file(path: &Path) -> Result<(u64, String), IngestError> {
    let unreadable = |e| IngestError::Io(format!("cannot read {}", path.display()), e);
    let mut file = std::fs::File::open(path).map_err(unreadable)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(unreadable)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((size, hex::encode(hasher.finalize())))
}

impl Record {
    /// The record with each input kept: hashed here, named by its path as published.
    pub fn keeping(mut ingested: Ingested, inputs: &[Input]) -> Result<Self, IngestError> {
        if inputs.len() > catalog::ingested::ORIGINALS_MAX {
            return Err(IngestError::Usage(format!(
                "--keep-original keeps at most {} inputs; {} are given",
                catalog::ingested::ORIGINALS_MAX,
                inputs.len()
            )));
        }
        let mut local = Vec::with_capacity(inputs.len());
        for input in inputs {
            let (size, sha256) = hash_file(&input.path)?;
            ingested.originals.push(Original {
                name: input.rel.clone(),
                key: String::new(),
                size,
                sha256,
                media_type: media_type(input).to_owned(),
            });
            local.push(input.path.clone());
        }
        Ok(Record { ingested, local })
    }

    /// The record as version `version` of `slug` stores it: each original's key filled in.
    pub fn at(&self, slug: &Slug, version: u64) -> Arc<Ingested> {
        let mut ingested = self.ingested.clone();
        for original in &mut ingested.originals {
            original.key = original_key(slug, version, &original.name);
        }
        Arc::new(ingested)
    }

    /// Each original to upload for version `version` of `slug`: its local file, its key, size
    /// and SHA-256.
    pub fn uploads<'a>(
        &'a self,
        slug: &'a Slug,
        version: u64,
    ) -> impl Iterator<Item = (&'a Path, String, u64, &'a str)> + 'a {
        self.ingested
            .originals
            .iter()
            .zip(&self.local)
            .map(move |(original, path)| {
                (
                    path.as_path(),
                    original_key(slug, version, &original.name),
                    original.size,
                    original.sha256.as_str(),
                )
            })
    }
}
