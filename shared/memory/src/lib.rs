//! In-memory adapters for fast logic tests. Not a substitute for the integration tests, which
//! run the DynamoDB and S3 adapters against servers speaking the real protocols.

pub mod manifest;

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, Duration, Utc};

use catalog::accounts::{IdempotencyConflict, MAX_ACTIVE_KEYS};
use catalog::policy::Grant;

use catalog::error::StoreError;
use catalog::input::DatasetRef;
use catalog::keys::{KeyHash, KeyInfo, KeyRecord, KeyStatus, NewKey, Owner};
use catalog::lock;
use catalog::orgs::{OrgName, Role};
use catalog::ports::Standing;
use catalog::ports::{
    AccountKeyStore, CatalogPager, Created, DatasetReader, DownloadReader, GrantLister,
    GrantReader, KeyReader, KeyUsage, MetadataReader, SignedUrl, TableReader, TargetsReader,
    UrlSigner,
};
use catalog::query::CatalogPage;
use catalog::query::{FacetCounts, Indexed, ListQuery, Scores};
use catalog::records::{DatasetRecord, DatasetSummary, DownloadTarget, StoredVersion, TableRead};
use catalog::slug::Slug;
use catalog_search::index::{TextDoc, TextIndex};

/// A catalog held in memory. Datasets are listed newest first, in insertion order.
#[derive(Default)]
pub struct MemoryCatalog {
    datasets: Mutex<Vec<DatasetRecord>>,
    keys: Mutex<HashMap<KeyHash, KeyRecord>>,
    grants: Mutex<HashMap<(Owner, uuid::Uuid), Grant>>,
    roles: Mutex<HashMap<(Owner, OrgName), Role>>,
    /// Set to make every read fail as the store would when throttled.
    pub unavailable: std::sync::atomic::AtomicBool,
    /// Set to make every read fail as it would on a malformed record.
    pub corrupt: std::sync::atomic::AtomicBool,
    /// Many-file versions' manifests, read through the catalog's [`catalog::ports::ManifestReader`].
    pub manifests: manifest::MemoryManifests,
}

impl MemoryCatalog {
    pub fn insert_dataset(&self, record: DatasetRecord) {
        lock(&self.datasets).push(record);
    }

    pub fn insert_key(&self, hash: KeyHash, record: KeyRecord) {
        lock(&self.keys).insert(hash, record);
    }

    pub fn insert_grant(&self, owner: Owner, dataset: uuid::Uuid, grant: Grant) {
        lock(&self.grants).insert((owner, dataset), grant);
    }

    pub fn insert_member(&self, owner: Owner, org: OrgName, role: Role) {
        lock(&self.roles).insert((owner, org), role);
    }

    /// A stored key's record (to see what the data endpoint wrote to it).
    pub fn key(&self, hash: &KeyHash) -> Option<KeyRecord> {
        lock(&self.keys).get(hash).cloned()
    }

    fn check(&self) -> Result<(), StoreError> {
        if self.unavailable.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Throttled("throttled (in-memory)".into()));
        }
        if self.corrupt.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Corrupt(
                "attribute 'secret-internal-detail' missing".into(),
            ));
        }
        Ok(())
    }

    fn find(&self, dataset: &DatasetRef) -> Option<DatasetRecord> {
        lock(&self.datasets)
            .iter()
            .find(|d| match dataset {
                DatasetRef::Slug(s) => d.slug == *s,
                DatasetRef::Id(id) => d.id == *id,
            })
            .cloned()
    }
}

impl CatalogPager for MemoryCatalog {
    async fn page(
        &self,
        query: &ListQuery,
        offset: Option<u64>,
        limit: u64,
    ) -> Result<CatalogPage, StoreError> {
        self.check()?;
        let datasets = lock(&self.datasets);
        let all: Vec<Indexed> = datasets
            .iter()
            .filter(|d| d.active.is_some())
            .enumerate()
            .filter_map(|(i, d)| summary(d, i as u64 + 1))
            .map(Indexed::new)
            .collect();
        // Facet counts over every listed dataset, oldest published first: the rule itself.
        let facets = query
            .facet_counts
            .then(|| FacetCounts::tally(all.iter().map(|i| &i.summary.card)));
        // Words: the same text index the store keeps, built whole here.
        let scores = match query.words.is_empty() {
            true => None,
            false => Some(text_scores(&all, &query.words)?),
        };
        Ok(CatalogPage {
            facets,
            ..query.select(all.iter(), scores.as_ref(), offset, limit)
        })
    }
}

/// What the text index finds for `words` among `all`.
fn text_scores(all: &[Indexed], words: &[String]) -> Result<Scores, StoreError> {
    let docs: Vec<TextDoc> = all
        .iter()
        .map(|i| TextDoc::of(i.summary.seq, &i.summary.card))
        .collect();
    let index = TextIndex::build(&docs, TextIndex::MAX_SHARD_BYTES)?;
    Ok(index
        .search(words)?
        .into_iter()
        .map(|hit| (hit.seq, hit.score))
        .collect())
}

fn summary(d: &DatasetRecord, seq: u64) -> Option<DatasetSummary> {
    let active = d.active.as_ref()?;
    Some(DatasetSummary::of(
        d.slug.clone(),
        d.id,
        d.meta.card.clone(),
        active,
        d.keyless_until,
        d.updated_at,
        seq,
    ))
}

impl DatasetReader for MemoryCatalog {
    async fn get_dataset(&self, dataset: &DatasetRef) -> Result<Option<DatasetRecord>, StoreError> {
        self.check()?;
        Ok(self.find(dataset))
    }
}

impl MetadataReader for MemoryCatalog {
    async fn get_dataset_and_key(
        &self,
        dataset: &DatasetRef,
        key: &KeyHash,
    ) -> Result<(Option<DatasetRecord>, Option<KeyRecord>), StoreError> {
        self.check()?;
        Ok((self.find(dataset), lock(&self.keys).get(key).cloned()))
    }
}

impl DownloadReader for MemoryCatalog {
    async fn get_download(
        &self,
        dataset: &DatasetRef,
        key: Option<&KeyHash>,
    ) -> Result<(Option<DownloadTarget>, Option<KeyRecord>), StoreError> {
        self.check()?;
        let target = self.find(dataset).map(|d| DownloadTarget {
            slug: d.slug,
            id: d.id,
            level: d.meta.card.access_level,
            keyless_until: d.keyless_until,
            active: d.active,
            unpublished: d.unpublished_at.is_some(),
        });
        let key = key.and_then(|h| lock(&self.keys).get(h).cloned());
        Ok((target, key))
    }
}

impl GrantReader for MemoryCatalog {
    async fn grant(
        &self,
        owner: &Owner,
        dataset: &uuid::Uuid,
    ) -> Result<Option<Grant>, StoreError> {
        self.check()?;
        Ok(lock(&self.grants).get(&(owner.clone(), *dataset)).cloned())
    }

    async fn standing(
        &self,
        owner: &Owner,
        dataset: &uuid::Uuid,
        org: &OrgName,
    ) -> Result<Standing, StoreError> {
        self.check()?;
        Ok(Standing {
            grant: lock(&self.grants).get(&(owner.clone(), *dataset)).cloned(),
            role: lock(&self.roles)
                .get(&(owner.clone(), org.clone()))
                .copied(),
        })
    }
}

impl KeyReader for MemoryCatalog {
    async fn read_key(&self, key: &KeyHash) -> Result<Option<KeyRecord>, StoreError> {
        self.check()?;
        Ok(lock(&self.keys).get(key).cloned())
    }
}

impl TableReader for MemoryCatalog {
    /// The memory catalog keeps only each dataset's active version: a pinned version is found
    /// when it is that one.
    async fn read_table(
        &self,
        slug: &Slug,
        version: Option<u64>,
        key: &KeyHash,
    ) -> Result<TableRead, StoreError> {
        self.check()?;
        let dataset = self.find(&DatasetRef::Slug(slug.clone()));
        let version = dataset.as_ref().and_then(|d| {
            let active = d.active.clone()?;
            (Some(active.version) == version).then(|| StoredVersion {
                version: active,
                schema: d.schema.clone(),
            })
        });
        Ok(TableRead {
            dataset,
            version,
            key: lock(&self.keys).get(key).cloned(),
        })
    }
}

impl catalog::ports::ManifestReader for MemoryCatalog {
    async fn read_chunks(
        &self,
        slug: &Slug,
        version: u64,
        summary: &catalog::files::Summary,
        chunks: &[usize],
        stats: bool,
    ) -> Result<Option<Vec<catalog::files::FileChunk>>, StoreError> {
        self.check()?;
        self.manifests
            .read_chunks(slug, version, summary, chunks, stats)
            .await
    }
}

impl catalog::ports::SplitStatsReader for MemoryCatalog {
    async fn split_schema(
        &self,
        slug: &Slug,
        version: u64,
        split: usize,
    ) -> Result<Option<Box<serde_json::value::RawValue>>, StoreError> {
        self.check()?;
        self.manifests.split_schema(slug, version, split).await
    }
}

impl TargetsReader for MemoryCatalog {
    async fn read_targets(&self, slugs: &[Slug]) -> Result<Vec<DownloadTarget>, StoreError> {
        self.check()?;
        Ok(lock(&self.datasets)
            .iter()
            .filter(|d| slugs.contains(&d.slug))
            .map(DatasetRecord::target)
            .collect())
    }
}

impl GrantLister for MemoryCatalog {
    async fn grants_of(&self, owner: &Owner) -> Result<Vec<(uuid::Uuid, Grant)>, StoreError> {
        self.check()?;
        Ok(lock(&self.grants)
            .iter()
            .filter(|((o, _), _)| o == owner)
            .map(|((_, dataset), grant)| (*dataset, grant.clone()))
            .collect())
    }

    async fn roles_of(&self, owner: &Owner) -> Result<Vec<(OrgName, Role)>, StoreError> {
        self.check()?;
        Ok(lock(&self.roles)
            .iter()
            .filter(|((o, _), _)| o == owner)
            .map(|((_, org), role)| (org.clone(), *role))
            .collect())
    }
}

impl KeyUsage for MemoryCatalog {
    async fn record_use(&self, key: &KeyHash, now: DateTime<Utc>) -> Result<(), StoreError> {
        self.check()?;
        if let Some(record) = lock(&self.keys).get_mut(key) {
            record.last_used_at = Some(now);
        }
        Ok(())
    }
}

/// Accounts' keys held in memory.
#[derive(Default)]
pub struct MemoryAccounts {
    keys: Mutex<Vec<KeyInfo>>,
    /// Idempotency-Key hash → (the request's fingerprint, the key's id).
    replays: Mutex<HashMap<String, (String, String)>>,
    /// Set to make every call fail as the store would when throttled.
    pub unavailable: std::sync::atomic::AtomicBool,
}

impl MemoryAccounts {
    fn check(&self) -> Result<(), StoreError> {
        if self.unavailable.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Throttled("throttled (in-memory)".into()));
        }
        Ok(())
    }
}

impl AccountKeyStore for MemoryAccounts {
    async fn create_key(&self, key: &NewKey, now: DateTime<Utc>) -> Result<Created, StoreError> {
        self.check()?;
        let owner = key.owner.as_ref().map(|o| o.as_str().to_owned());
        let mut keys = lock(&self.keys);
        let active = keys
            .iter()
            .filter(|k| k.owner == owner && k.status_at(now) == KeyStatus::Active)
            .count();
        if active >= MAX_ACTIVE_KEYS {
            return Ok(Created::LimitReached);
        }
        let today = catalog::accounts::creation_day(now);
        let created_today = keys
            .iter()
            .filter(|k| k.owner == owner && catalog::accounts::creation_day(k.created_at) == today)
            .count();
        if created_today >= catalog::accounts::MAX_KEYS_PER_DAY as usize {
            return Ok(Created::DailyLimitReached);
        }
        keys.push(key.info());
        Ok(Created::Created)
    }

    /// Remembers the creation by the Idempotency-Key's hash; a retry re-issues the key (the
    /// in-memory keys hold no secret, so only its record is returned again).
    async fn create_key_once(
        &self,
        key: &NewKey,
        replay: &catalog::accounts::Replay,
        now: DateTime<Utc>,
    ) -> Result<Created, StoreError> {
        let remembered = lock(&self.replays).get(&replay.key_hash).cloned();
        if let Some((fingerprint, id)) = remembered {
            if fingerprint != replay.fingerprint {
                return Ok(Created::IdempotencyConflict(
                    IdempotencyConflict::OtherRequest,
                ));
            }
            let keys = lock(&self.keys);
            return Ok(match keys.iter().find(|k| k.id == id) {
                Some(first) if first.revoked_at.is_none() => Created::Replayed(Box::new(KeyInfo {
                    prefix: key.prefix.clone(),
                    ..first.clone()
                })),
                _ => Created::IdempotencyConflict(IdempotencyConflict::KeyEnded),
            });
        }
        let created = self.create_key(key, now).await?;
        if created == Created::Created {
            lock(&self.replays).insert(
                replay.key_hash.clone(),
                (replay.fingerprint.clone(), key.id.clone()),
            );
        }
        Ok(created)
    }

    async fn list_keys(&self, owner: &Owner) -> Result<Vec<KeyInfo>, StoreError> {
        self.check()?;
        let mut mine: Vec<KeyInfo> = lock(&self.keys)
            .iter()
            .filter(|k| k.owner.as_deref() == Some(owner.as_str()))
            .cloned()
            .collect();
        mine.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.id.cmp(&a.id)));
        Ok(mine)
    }

    async fn revoke_key(
        &self,
        owner: &Owner,
        id: &str,
        at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        self.check()?;
        let mut keys = lock(&self.keys);
        let Some(key) = keys
            .iter_mut()
            .find(|k| k.id == id && k.owner.as_deref() == Some(owner.as_str()))
        else {
            return Ok(false);
        };
        key.revoked_at.get_or_insert(at);
        Ok(true)
    }
}

/// Signs nothing: returns a recognisable fake URL valid for `ttl`.
pub struct FakeSigner {
    pub ttl: Duration,
}

impl UrlSigner for FakeSigner {
    async fn sign(
        &self,
        object_key: &str,
        _filename: &str,
        now: DateTime<Utc>,
    ) -> Result<SignedUrl, StoreError> {
        Ok(SignedUrl {
            url: format!("https://signed.invalid/{object_key}?sig=fake"),
            expires_at: now + self.ttl,
        })
    }
}

/// Reads no file: the version's columns, typed `int64`, and each row's cells its index, for
/// the logic tests of the rows route. Counts its reads.
#[derive(Default)]
pub struct FakeRows {
    pub reads: std::sync::atomic::AtomicUsize,
}

impl catalog::rows::RowsReader for FakeRows {
    async fn read_rows(
        &self,
        version: &catalog::records::ActiveVersion,
        window: catalog::rows::RowWindow,
    ) -> Result<catalog::rows::RowsPage, catalog::rows::RowsError> {
        self.reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let columns = version
            .columns
            .iter()
            .map(|name| catalog::rows::RowColumn {
                name: name.clone(),
                dtype: "int64".into(),
            })
            .collect::<Vec<_>>();
        let rows = window
            .within(version.row_count)
            .map(|i| catalog::rows::Row {
                row_idx: i,
                cells: columns
                    .iter()
                    .map(|_| serde_json::value::to_raw_value(&i).expect("a number is JSON"))
                    .collect(),
                truncated: Vec::new(),
            })
            .collect();
        Ok(catalog::rows::RowsPage { columns, rows })
    }
}
