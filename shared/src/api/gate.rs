//! The gate in front of a dataset's data, shared by every route that serves it (the data
//! endpoint's URL, the rows API): the dataset and its active version read with the presented
//! key in one round trip, the key verified, who may read decided by [`crate::access::authorize`],
//! the version pin checked, and the key's use recorded.

use chrono::{DateTime, Utc};

use crate::access::{authorize, verify_key, Allowed, Guarded};
use crate::error::ApiError;
use crate::input::{DatasetRef, VersionPin};
use crate::keys::ApiKey;
use crate::ports::{DownloadReader, GrantReader, KeyUsage};
use crate::records::ActiveVersion;
use crate::slug::Slug;

/// A request let through to a dataset's active version.
#[derive(Debug)]
pub struct Admitted {
    pub slug: Slug,
    /// The version served: one read, so an answer never mixes two versions.
    pub active: ActiveVersion,
    /// The presented key's public id, for logs.
    pub key_id: Option<String>,
    pub allowed: Allowed,
}

impl Admitted {
    /// The key's id as logs show it (`-` without a key).
    pub fn key_label(&self) -> &str {
        self.key_id.as_deref().unwrap_or("-")
    }
}

/// Lets a request through to `dataset`'s active version, or says why not. The rules, in order:
/// a presented key is always verified (401 however the dataset is shared); the dataset must
/// exist and have an active version (404); [`authorize`] decides who may read; a pinned
/// version must be the active one (404 naming it). A key's use is recorded at most once per
/// [`crate::keys::LAST_USED_GRANULARITY`]; a failure to record it is logged, never the request's.
pub async fn admit(
    dataset: &DatasetRef,
    pin: Option<VersionPin>,
    key: Option<ApiKey>,
    reader: &(impl DownloadReader + KeyUsage + GrantReader),
    now: DateTime<Utc>,
) -> Result<Admitted, ApiError> {
    let hash = key.as_ref().map(ApiKey::hash);
    let (target, key_record) = reader.get_download(dataset, hash.as_ref()).await?;

    // A presented key is always verified, whatever the dataset's window says.
    let key_record = match key {
        Some(_) => Some(verify_key(key_record, now)?),
        None => None,
    };
    let target = target.ok_or_else(|| ApiError::DatasetNotFound(dataset.to_string()))?;
    let Some(active) = target.active else {
        return Err(ApiError::NoActiveVersion(format!("'{}'", target.slug)));
    };
    let guarded = Guarded {
        slug: &target.slug,
        id: target.id,
        level: target.level,
        keyless_until: target.keyless_until,
    };
    let allowed = authorize(&guarded, key_record.as_ref(), reader, now).await?;
    // Only the active version is ever served: a pinned client whose version was replaced gets
    // a 404 naming the active one, never the newer file under the old number.
    if let Some(requested) = pin.map(VersionPin::get) {
        if requested != active.version {
            return Err(ApiError::VersionNotActive {
                slug: target.slug.to_string(),
                requested,
                active: active.version,
            });
        }
    }
    let key_id = key_record.as_ref().map(|k| k.id.clone());
    let record_use = key_record
        .as_ref()
        .is_some_and(|k| k.use_worth_recording(now));
    if let (true, Some(hash)) = (record_use, &hash) {
        // One more round trip, at most once an hour per key; the answer does not depend on it.
        if let Err(e) = reader.record_use(hash, now).await {
            tracing::warn!(key_id = key_id.as_deref().unwrap_or("-"), error = %e, "could not record the key's use");
        }
    }
    Ok(Admitted {
        slug: target.slug,
        active,
        key_id,
        allowed,
    })
}
