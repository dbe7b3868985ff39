//! The gate in front of a dataset's data, shared by every route that serves it (the data
//! endpoint's URL, the rows API): the dataset and its active version read with the presented
//! key in one round trip, the key verified, who may read decided by [`catalog::access::authorize`],
//! the version pin checked, and the key's use recorded.

use chrono::{DateTime, Utc};

use crate::error::{ApiError, Named};
use catalog::access::{authorize, verify_key, Allowed, Denied, Guarded, Refusal};
use catalog::audit::{Event, What};
use catalog::input::{DatasetRef, VersionPin};
use catalog::keys::{ApiKey, KeyHash, KeyRecord};
use catalog::policy::AccessLevel;
use catalog::ports::{DownloadReader, GrantReader, KeyUsage};
use catalog::records::{ActiveVersion, DownloadTarget};
use catalog::slug::Slug;

/// A request let through to a dataset's active version.
#[derive(Debug)]
pub struct Admitted {
    pub slug: Slug,
    /// The version served: one read, so an answer never mixes two versions.
    pub active: ActiveVersion,
    /// The presented key's public id, for logs.
    pub key_id: Option<String>,
    /// The presented key's account (a Cognito `sub`), for the download log.
    pub account: Option<String>,
    pub allowed: Allowed,
}

impl Admitted {
    /// The key's id as logs show it (`-` without a key).
    pub fn key_label(&self) -> &str {
        self.key_id.as_deref().unwrap_or("-")
    }

    /// The download log's event of what was handed out to this request.
    pub fn event(&self, what: What) -> Event<'_> {
        Event {
            slug: self.slug.as_str(),
            version: self.active.version,
            key_id: self.key_id.as_deref(),
            account: self.account.as_deref(),
            allowed: self.allowed,
            what,
        }
    }
}

/// Lets a request through to `dataset`'s active version, or says why not. The rules, in order:
/// a presented key is always verified (401 however the dataset is shared); the dataset must
/// exist and have an active version (404); [`authorize`] decides who may read; a pinned
/// version must be the active one (404 naming it). A key's use is recorded at most once per
/// [`catalog::keys::LAST_USED_GRANULARITY`]; a failure to record it is logged, never the request's.
pub async fn admit(
    dataset: &DatasetRef,
    pin: Option<VersionPin>,
    key: Option<ApiKey>,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    now: DateTime<Utc>,
) -> Result<Admitted, ApiError> {
    let hash = key.as_ref().map(ApiKey::hash);
    let (target, key_record) = reader.get_download(dataset, hash.as_ref()).await?;
    let presented = hash.as_ref().map(|h| (h, key_record));
    let admitted = judge(
        Named::Dataset(dataset.clone()),
        target,
        presented,
        reader,
        now,
    )
    .await?;
    // Only the active version is ever served: a pinned client whose version was replaced gets
    // a 404 naming the active one, never the newer file under the old number.
    if let Some(requested) = pin.map(VersionPin::get) {
        if requested != admitted.active.version {
            return Err(ApiError::VersionNotActive {
                slug: admitted.slug,
                requested,
                active: admitted.active.version,
            });
        }
    }
    Ok(admitted)
}

/// Judges what was read for a request to a dataset's data (by any route or protocol): the
/// dataset (`None`: there is none called `named`) and, when a key was presented, its hash and
/// stored record. A presented key is verified first, whatever the dataset's window says; then
/// the dataset must exist (404), be published (410 once unpublished) and have an active version
/// (404); then [`authorize`] decides. A `private` dataset is judged first, so that a request
/// it does not show itself to gets the 404 of a slug that names no dataset, whatever else is
/// true of it.
pub async fn judge(
    named: Named,
    target: Option<DownloadTarget>,
    presented: Option<(&KeyHash, Option<KeyRecord>)>,
    reader: &(impl KeyUsage + GrantReader),
    now: DateTime<Utc>,
) -> Result<Admitted, ApiError> {
    let key_record = match presented {
        Some((hash, record)) => Some(authenticate(hash, record, reader, now).await?),
        None => None,
    };
    let Some(target) = target else {
        return Err(ApiError::DatasetNotFound(named));
    };
    let judged = if target.level == AccessLevel::Private {
        match authorize(&Guarded::from(&target), key_record.as_ref(), reader, now).await {
            Err(Denied::Refused(Refusal::Hidden(_))) => {
                return Err(ApiError::DatasetNotFound(named))
            }
            other => Some(other?),
        }
    } else {
        None
    };
    if target.unpublished {
        return Err(ApiError::Unpublished(target.slug.clone()));
    }
    let Some(active) = target.active.clone() else {
        return Err(ApiError::NoActiveVersion(target.slug.clone()));
    };
    let allowed = match judged {
        Some(allowed) => allowed,
        None => authorize(&Guarded::from(&target), key_record.as_ref(), reader, now).await?,
    };
    Ok(Admitted {
        slug: target.slug,
        active,
        account: key_record
            .as_ref()
            .and_then(|k| k.owner.as_ref())
            .map(|o| o.to_string()),
        key_id: key_record.map(|k| k.id),
        allowed,
    })
}

/// A presented key, verified ([`verify_key`]: 401 unless usable, 403 without the read scope),
/// and its use recorded, one more round trip at most once an hour per key; the answer does not
/// depend on it.
pub async fn authenticate(
    hash: &KeyHash,
    record: Option<KeyRecord>,
    usage: &impl KeyUsage,
    now: DateTime<Utc>,
) -> Result<KeyRecord, ApiError> {
    let record = verify_key(record, now)?;
    if record.use_worth_recording(now) {
        if let Err(e) = usage.record_use(hash, now).await {
            tracing::warn!(key_id = %record.id, error = %e, "could not record the key's use");
            catalog::metrics::record(catalog::metrics::Metric::KeyUseNotRecorded);
        }
    }
    Ok(record)
}
