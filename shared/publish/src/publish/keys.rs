//! Where a publish of many files puts things in the bucket: its files' prefix, its plan, and
//! the plan itself (what [`many`](super::many) writes and [`prepare`](super::prepare) checks
//! the keys against).

use catalog::input::Slug;
use serde::{Deserialize, Serialize};

/// The prefix of version `version`'s files: `datasets/<slug>/v<n>/files/`.
pub fn files_prefix(slug: &Slug, version: u64) -> String {
    format!("datasets/{slug}/v{version}/files/")
}

/// Where a publish of many files writes its plan: `datasets/<slug>/v<n>/publish.json`.
pub fn plan_key(slug: &Slug, version: u64) -> String {
    format!("datasets/{slug}/v{version}/publish.json")
}

/// S3's longest object key, in bytes.
pub(crate) const KEY_MAX_BYTES: usize = 1024;

/// What a publish of many files writes before its first upload, to find its version again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// The manifest hash of the files to upload.
    pub manifest_sha256: String,
    pub files: usize,
    pub bytes: u64,
}
