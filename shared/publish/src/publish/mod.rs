//! `publish`: statistics, upload to an immutable versioned key, version record, conditional
//! activation. Bad input is rejected before anything is written; a failure at any later step
//! leaves the previous version serving and no record pointing at a missing object.

use std::io::{IsTerminal, Read};
use std::path::{Path, PathBuf};

use catalog::input::{echo, is_site_path, Description, Slug, Tag, SITE_PATH_MAX};
use catalog::policy::AccessSettings;
use catalog::readme::Readme;
use catalog::records::{ActiveVersion, Card, DatasetMeta, Discussion};
use catalog_aws::s3::object_key;
use catalog_writer::{DynamoWriter, NewVersion, Publication, Staged, WriteError};
use chrono::{DateTime, Utc};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use catalog_stats::{summarize, FileStats, StatsError};

pub mod discover;
pub mod keys;
pub mod many;
pub mod partials;
pub mod prepare;
pub mod staged;
pub mod upload;

pub use upload::PART_SIZE;

/// Descriptive fields given on the command line or in a metadata file; on re-publish, what is
/// not given keeps its stored value. A patch over [`DatasetMeta`]: the same fields, each
/// optional, merged with `over` and checked into a `DatasetMeta` by `resolve`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetaInput {
    pub name: Option<String>,
    pub description: Option<String>,
    pub license: Option<String>,
    pub source: Option<String>,
    pub category: Option<String>,
    pub tags: Option<Vec<String>>,
    pub insights: Option<String>,
    pub discussions: Option<Vec<Discussion>>,
    /// Who may read the data (`level`: `registered` or `approval`) and, for `approval`, how
    /// requests are decided, the request form and the terms. Replaces the stored settings as a
    /// whole when given; kept when not.
    pub access: Option<AccessSettings>,
    /// The dataset's card: Markdown, at most 32 KiB (`catalog::readme`). Kept when not given;
    /// `catalog-admin meta readme SLUG --clear` removes it.
    pub readme: Option<String>,
}

impl MetaInput {
    /// Fields set here win over `base`'s.
    pub fn over(self, base: MetaInput) -> MetaInput {
        MetaInput {
            name: self.name.or(base.name),
            description: self.description.or(base.description),
            license: self.license.or(base.license),
            source: self.source.or(base.source),
            category: self.category.or(base.category),
            tags: self.tags.or(base.tags),
            insights: self.insights.or(base.insights),
            discussions: self.discussions.or(base.discussions),
            access: self.access.or(base.access),
            readme: self.readme.or(base.readme),
        }
    }

    /// Reads a metadata file: YAML when it ends in `.yaml` or `.yml`, JSON otherwise.
    pub fn from_file(path: &Path) -> Result<Self, PublishError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| PublishError::BadInput(format!("cannot read {}: {e}", path.display())))?;
        let yaml = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"));
        let bad =
            |e: &dyn std::fmt::Display| PublishError::BadInput(format!("{}: {e}", path.display()));
        if yaml {
            serde_norway::from_str(&text).map_err(|e| bad(&e))
        } else {
            serde_json::from_str(&text).map_err(|e| bad(&e))
        }
    }

    fn resolve(self, stored: Option<DatasetMeta>) -> Result<DatasetMeta, PublishError> {
        let base = stored.map(|m| MetaInput {
            name: Some(m.card.name),
            description: m.card.description,
            license: Some(m.card.license),
            source: Some(m.source),
            category: Some(m.card.category),
            tags: Some(m.card.tags),
            insights: Some(m.insights),
            discussions: Some(m.discussions),
            access: Some(AccessSettings::new(m.card.access_level, m.access)),
            readme: m.readme,
        });
        let merged = self.over(base.unwrap_or_default());
        let required = |v: Option<String>, flag: &str| {
            v.filter(|s| !s.trim().is_empty()).ok_or_else(|| {
                PublishError::BadInput(format!("--{flag} is required for a new dataset"))
            })
        };
        let tags = merged.tags.unwrap_or_default();
        Tag::parse_all(&tags).map_err(|e| PublishError::BadInput(e.to_string()))?;
        let discussions = merged.discussions.unwrap_or_default();
        if let Some(d) = discussions.iter().find(|d| !is_site_path(&d.path)) {
            return Err(PublishError::BadInput(format!(
                "discussion '{}': path {:?} is not a path on this site (one leading '/', no \
                 backslash, whitespace or control character, at most {SITE_PATH_MAX} bytes)",
                echo(&d.id),
                echo(&d.path)
            )));
        }
        let description = merged.description.filter(|d| !d.is_empty());
        if let Some(d) = &description {
            Description::parse(d).map_err(|e| PublishError::BadInput(e.to_string()))?;
        }
        // Checked in this order, so the first missing flag named is always the same.
        let name = required(merged.name, "name")?;
        let license = required(merged.license, "license")?;
        let source = required(merged.source, "source")?;
        let category = required(merged.category, "category")?;
        let access = merged.access.unwrap_or_default();
        access.policy().check().map_err(PublishError::BadInput)?;
        let readme = merged
            .readme
            .map(|text| Readme::parse(&text).map(Readme::into_string))
            .transpose()
            .map_err(|e| PublishError::BadInput(e.to_string()))?;
        Ok(DatasetMeta {
            access: access.policy(),
            card: Card {
                access_level: access.level,
                name,
                description,
                category,
                tags,
                license,
            },
            source,
            insights: merged.insights.unwrap_or_default(),
            discussions,
            readme,
        })
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    #[error("{0}")]
    BadInput(String),
    #[error("{0}")]
    BadFile(#[from] StatsError),
    #[error("upload to S3 failed: {0}")]
    Upload(String),
    #[error(transparent)]
    Write(#[from] WriteError),
}

/// What a successful publish made.
#[derive(Debug, Clone)]
pub struct Published {
    pub slug: Slug,
    pub id: uuid::Uuid,
    pub version: u64,
    pub object_key: String,
    pub size: u64,
    pub sha256: String,
    pub stats: FileStats,
    /// True when the histograms were left out of the stored schema, which would not have fit
    /// with them (`stats` then has none either).
    pub histograms_left_out: bool,
}

pub struct Publisher {
    pub writer: DynamoWriter,
    pub s3: aws_sdk_s3::Client,
    pub bucket: String,
}

fn digest(path: &Path) -> Result<(u64, String), StatsError> {
    let mut file =
        std::fs::File::open(path).map_err(|e| StatsError::Io(path.display().to_string(), e))?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file
            .read(&mut buf)
            .map_err(|e| StatsError::Io(path.display().to_string(), e))?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((size, hex::encode(hasher.finalize())))
}

/// Statistics, size and SHA-256 of a Parquet file, without writing anything.
pub async fn inspect(path: &Path) -> Result<(FileStats, u64, String), PublishError> {
    let owned: PathBuf = path.to_owned();
    let joined = tokio::task::spawn_blocking(move || {
        // The digest reads the file beside the statistics' passes, on its own thread.
        let (stats, digested) = std::thread::scope(|scope| {
            let digest = scope.spawn(|| digest(&owned));
            let stats = summarize(&owned);
            (stats, digest.join())
        });
        let (size, sha) = digested.map_err(|_| StatsError::Panicked)??;
        Ok::<_, StatsError>((stats?, size, sha))
    })
    .await
    .map_err(|e| PublishError::BadInput(format!("statistics task failed: {e}")))??;
    if joined.0.row_count == 0 {
        return Err(PublishError::BadInput(
            "the file has no rows: nothing to publish".into(),
        ));
    }
    Ok(joined)
}

/// The widest version number, at which a version's records are measured before one is reserved.
const WIDEST: u64 = 9_999_999_999;

/// Checks that the version `preview` makes of a schema (numbered [`WIDEST`]) fits: every item
/// under DynamoDB's 400 KB, the metadata answer under Lambda's 6 MB, before a version number is
/// used or a byte uploaded. Histograms are beyond the spec and the bulk of a wide schema: a
/// schema that would not fit with them is stored without them (taken out of `stats` too)
/// rather than refused. Returns the schema to store, and whether the histograms were left out.
fn fit(
    slug: &Slug,
    meta: &DatasetMeta,
    stats: &mut FileStats,
    preview: impl Fn(String) -> NewVersion,
) -> Result<(String, bool), PublishError> {
    let schema_json = |stats: &FileStats| {
        serde_json::to_string(&stats.columns).map_err(|e| PublishError::BadInput(e.to_string()))
    };
    let mut version = preview(schema_json(stats)?);
    let mut fits = catalog_writer::check_fits(slug, meta, &version);
    let mut histograms_left_out = false;
    if matches!(fits, Err(WriteError::TooLarge(_)))
        && stats.columns.iter().any(|c| c.histogram.is_some())
    {
        for column in &mut stats.columns {
            column.histogram = None;
        }
        histograms_left_out = true;
        version = preview(schema_json(stats)?);
        fits = catalog_writer::check_fits(slug, meta, &version);
    }
    match fits {
        Err(WriteError::TooLarge(why)) => {
            return Err(PublishError::BadInput(format!(
                "{slug} cannot be published: {why}"
            )))
        }
        other => other?,
    };
    Ok((version.schema_json, histograms_left_out))
}

impl Publisher {
    /// Publishes `path` as the next version of `slug` and activates it. With `new_only`, the
    /// slug must not exist yet.
    pub async fn publish(
        &self,
        path: &Path,
        slug: &Slug,
        input: MetaInput,
        new_only: bool,
        now: DateTime<Utc>,
    ) -> Result<Published, PublishError> {
        self.publish_ingested(path, slug, input, new_only, now, None)
            .await
    }

    /// [`Publisher::publish`] of a file converted from text inputs, the version recording
    /// `ingested` (what the conversion read, skipped and kept).
    pub async fn publish_ingested(
        &self,
        path: &Path,
        slug: &Slug,
        input: MetaInput,
        new_only: bool,
        now: DateTime<Utc>,
        ingested: Option<std::sync::Arc<crate::ingest::record::Record>>,
    ) -> Result<Published, PublishError> {
        // Check what can be checked before the (long) statistics and before writing anything.
        let provisional = input
            .clone()
            .resolve(self.writer.dataset_meta(slug).await?)?;
        let (mut stats, size, sha256) = inspect(path).await?;
        let (row_count, columns) = (
            stats.row_count,
            stats
                .columns
                .iter()
                .map(|c| c.name.clone())
                .collect::<Vec<_>>(),
        );
        let version_of = |number: u64, s3_key: String, schema_json: String| NewVersion {
            active: ActiveVersion {
                version: number,
                s3_key,
                size,
                row_count,
                columns: columns.clone(),
                sha256: sha256.clone(),
                published_at: now,
                files: None,
                ingested: ingested.as_ref().map(|r| r.at(slug, number)),
            },
            schema_json,
        };
        let (schema_json, histograms_left_out) = fit(slug, &provisional, &mut stats, |schema| {
            version_of(WIDEST, object_key(slug, WIDEST, &sha256), schema)
        })?;

        let publication = Publication {
            slug,
            meta: &provisional,
            id: None,
            new_only,
            now,
        };
        let published = self
            .writer
            .publish(publication, |reserved| {
                let (sha256, version_of, ingested) = (&sha256, &version_of, &ingested);
                async move {
                    // Fields not given keep what is stored *now*, so that a concurrent publish's
                    // metadata is never silently reverted.
                    let meta = input.resolve(Some(reserved.stored.clone()))?;
                    let key = object_key(slug, reserved.version, sha256);
                    self.upload(path, &key, size, sha256).await?;
                    // The inputs kept as they came (--keep-original), beside the Parquet.
                    if let Some(record) = ingested {
                        self.put_originals(record, slug, reserved.version).await?;
                    }
                    let version = version_of(reserved.version, key, schema_json);
                    Ok(Staged { version, meta })
                }
            })
            .await;
        let reserved = match published {
            Err(PublishError::Write(WriteError::SlugTaken(_))) => return Err(many::taken(slug)),
            other => other?,
        };
        Ok(Published {
            slug: slug.clone(),
            id: reserved.id,
            version: reserved.version,
            object_key: object_key(slug, reserved.version, &sha256),
            size,
            sha256,
            stats,
            histograms_left_out,
        })
    }

    /// Uploads the inputs a conversion kept as they came (`--keep-original`) to version
    /// `version`'s keys, one after the other, each with its SHA-256 (S3 checks it).
    pub(crate) async fn put_originals(
        &self,
        record: &crate::ingest::record::Record,
        slug: &Slug,
        version: u64,
    ) -> Result<(), PublishError> {
        for (path, key, size, sha256) in record.uploads(slug, version) {
            upload::put_file(&self.s3, &self.bucket, path, &key, size, sha256, None).await?;
        }
        Ok(())
    }

    /// Uploads one file to `key` ([`upload::put_file`]), with a progress bar for a large
    /// file when stdout is a terminal.
    async fn upload(
        &self,
        path: &Path,
        key: &str,
        size: u64,
        sha256: &str,
    ) -> Result<(), PublishError> {
        let bar = (size > PART_SIZE as u64 && std::io::stdout().is_terminal())
            .then(|| upload::bytes_bar(size, "uploading"));
        let result = upload::put_file(
            &self.s3,
            &self.bucket,
            path,
            key,
            size,
            sha256,
            bar.as_ref(),
        )
        .await;
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        result
    }
}
