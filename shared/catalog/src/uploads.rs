//! Publishing from the site (issue 40 §3): an organisation's editor uploads a file straight to
//! the data bucket in a presigned multipart upload, and the publishing function
//! (`catalog-publish`) publishes it as the next version of `org~name`, by the code
//! `catalog-admin publish` runs. This module is the upload's record, its limits and its
//! refusals; the routes are `catalog_http::api::uploads`, the stores `catalog_aws`'s.
//!
//! The object's key is `uploads/{org}/{id}/{filename}` ([`Upload::key`]): under its own
//! prefix, not `staging/` (whose bucket policy lets only the operators' principals write).

use chrono::{DateTime, Duration, Utc};
use serde::{Deserialize, Serialize};

use crate::input::echo;
use crate::orgs::OrgName;
use crate::slug::Slug;
use crate::store::StoreError;

/// What the browser path takes, and how long its pieces live. Past them, `catalog-admin
/// publish` (no size limit, no time limit but the operator's).
pub struct Limits;

impl Limits {
    /// The largest file the site takes: 5 GiB (the publishing function's 15 minutes and its
    /// 10 GiB of `/tmp` hold a file this size and its Parquet).
    pub const MAX_SIZE: u64 = 5 * 1024 * 1024 * 1024;
    /// S3's limit on a multipart upload's parts.
    pub const MAX_PARTS: u64 = 10_000;
    /// The smallest part size handed out (S3's own minimum is 5 MiB, the last part aside).
    pub const MIN_PART_SIZE: u64 = 8 * 1024 * 1024;
    /// How long a part's presigned URL is valid.
    pub const PART_URL_SECONDS: u64 = 3600;
    /// An upload not completed within this is abandoned: the routes refuse to go on with it,
    /// and the bucket's lifecycle rule aborts its multipart upload a day after it began.
    pub const ABANDONED_AFTER_HOURS: i64 = 24;
    /// The longest file name kept in the key.
    pub const FILENAME_MAX: usize = 128;
    /// How long the upload's record is kept after it was made (DynamoDB's time to live).
    pub const RECORD_DAYS: i64 = 30;
}

/// The prefix every upload's object lives under.
pub const PREFIX: &str = "uploads/";

/// Where an upload stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UploadState {
    /// Parts are being sent.
    Uploading,
    /// Completed; the publishing function has it.
    Publishing,
    /// Published as `version`.
    Published,
    /// Refused or failed, with `reason`; no version was recorded.
    Failed,
}

impl UploadState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Uploading => "uploading",
            Self::Publishing => "publishing",
            Self::Published => "published",
            Self::Failed => "failed",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        Some(match raw {
            "uploading" => Self::Uploading,
            "publishing" => Self::Publishing,
            "published" => Self::Published,
            "failed" => Self::Failed,
            _ => return None,
        })
    }
}

/// One upload: who, what, where it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Upload {
    pub id: String,
    pub org: OrgName,
    /// The dataset's name within the organisation (the slug is `org~dataset`).
    pub dataset: String,
    pub filename: String,
    pub size: u64,
    /// The SHA-256 the browser computed, lowercase hex; the publishing function checks it.
    pub sha256: String,
    /// The account (Cognito `sub`) that made it.
    pub by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub state: UploadState,
    /// S3's multipart upload id.
    #[serde(skip_serializing)]
    pub s3_upload_id: String,
    pub part_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl Upload {
    /// The object's key: `uploads/{org}/{id}/{filename}`.
    pub fn key(&self) -> String {
        format!("{PREFIX}{}/{}/{}", self.org, self.id, self.filename)
    }

    /// The dataset it publishes: `org~dataset`.
    pub fn slug(&self) -> Slug {
        Slug::within(&self.org, &self.dataset).expect("checked when the upload was made")
    }

    /// How many parts the file takes at its part size.
    pub fn parts(&self) -> u64 {
        self.size.div_ceil(self.part_size).max(1)
    }

    /// Whether the time to finish it has passed.
    pub fn abandoned_at(&self, now: DateTime<Utc>) -> bool {
        now - self.created_at > Duration::hours(Limits::ABANDONED_AFTER_HOURS)
    }
}

/// The part size for a file: [`Limits::MIN_PART_SIZE`], or larger (whole MiB) so that the
/// file takes at most [`Limits::MAX_PARTS`] parts.
pub fn part_size_for(size: u64) -> u64 {
    const MIB: u64 = 1024 * 1024;
    let needed = size.div_ceil(Limits::MAX_PARTS).div_ceil(MIB) * MIB;
    needed.max(Limits::MIN_PART_SIZE)
}

/// A key under [`PREFIX`] as `(org, id, filename)`, or `None` for any other key.
pub fn parse_key(key: &str) -> Option<(OrgName, String, String)> {
    let rest = key.strip_prefix(PREFIX)?;
    let mut parts = rest.splitn(3, '/');
    let org = OrgName::parse(parts.next()?).ok()?;
    let id = parts.next()?;
    let filename = parts.next()?;
    (is_upload_id(id) && is_filename(filename)).then(|| (org, id.to_owned(), filename.to_owned()))
}

/// An upload id: 32 lowercase hex digits.
pub fn is_upload_id(raw: &str) -> bool {
    raw.len() == 32
        && raw
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A file name the key may carry: 1 to [`Limits::FILENAME_MAX`] of ASCII letters, digits,
/// `.`, `_` and `-`, not starting with `.`.
pub fn is_filename(raw: &str) -> bool {
    !raw.is_empty()
        && raw.len() <= Limits::FILENAME_MAX
        && !raw.starts_with('.')
        && raw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// A new upload as asked (`POST /api/v1/orgs/{org}/uploads`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewUpload {
    pub dataset: String,
    pub filename: String,
    #[serde(deserialize_with = "whole_number")]
    pub size: u64,
    pub sha256: String,
}

/// A JSON number that is a whole number of bytes: `22984` or `22984.0` (JSON Schema's
/// `integer`), never a fraction or a negative.
fn whole_number<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let n = serde_json::Number::deserialize(d)?;
    if let Some(v) = n.as_u64() {
        return Ok(v);
    }
    match n.as_f64() {
        Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= u64::MAX as f64 => Ok(f as u64),
        _ => Err(serde::de::Error::custom(format!(
            "size: a whole number of bytes, got {n}"
        ))),
    }
}

impl NewUpload {
    /// Checks the request against the rules and limits, naming what is wrong.
    pub fn check(&self, org: &OrgName) -> Result<(), UploadError> {
        Slug::within(org, &self.dataset)
            .map_err(|e| UploadError::Invalid(format!("dataset '{}': {e}", echo(&self.dataset))))?;
        if !is_filename(&self.filename) {
            return Err(UploadError::Invalid(format!(
                "filename '{}': 1 to {} ASCII letters, digits, '.', '_' and '-', not starting with '.'",
                echo(&self.filename),
                Limits::FILENAME_MAX
            )));
        }
        if self.sha256.len() != 64
            || !self
                .sha256
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(UploadError::Invalid(
                "sha256: the file's SHA-256 as 64 lowercase hex digits".into(),
            ));
        }
        if self.size == 0 {
            return Err(UploadError::Invalid("size: the file is empty".into()));
        }
        if self.size > Limits::MAX_SIZE {
            return Err(UploadError::TooLarge { size: self.size });
        }
        Ok(())
    }
}

/// A part the browser sent, as it names it when completing: its number and S3's ETag.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Part {
    pub number: u64,
    pub etag: String,
}

/// The refusals of the upload routes and of the publishing function.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UploadError {
    #[error("{0}")]
    Invalid(String),
    #[error(
        "the file is {size} bytes; the site takes at most {} bytes (5 GiB): publish it with \
         `catalog-admin publish` instead",
        Limits::MAX_SIZE
    )]
    TooLarge { size: u64 },
    #[error("no upload '{0}' in this organisation")]
    NotFound(String),
    #[error("the upload is {state}, not uploading: {what}")]
    NotUploading { state: &'static str, what: String },
    #[error(
        "the upload was begun over {} hours ago and is abandoned: begin it again, or publish \
         with `catalog-admin publish`",
        Limits::ABANDONED_AFTER_HOURS
    )]
    Abandoned,
    #[error("only the editors and admins of '{org}' (and the catalog's operators) may publish")]
    NotEditor { org: OrgName },
}

impl UploadError {
    /// The stable code clients match on.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid(_) => "invalid_upload",
            Self::TooLarge { .. } => "upload_too_large",
            Self::NotFound(_) => "upload_not_found",
            Self::NotUploading { .. } => "upload_not_uploading",
            Self::Abandoned => "upload_abandoned",
            Self::NotEditor { .. } => "not_an_editor",
        }
    }
}

/// The upload records (the keys table: `catalog_aws::dynamo::uploads`).
#[allow(async_fn_in_trait)]
pub trait UploadStore {
    /// Records a new upload.
    async fn create_upload(&self, upload: &Upload) -> Result<(), StoreError>;
    /// One upload, read strongly consistent.
    async fn upload(&self, org: &OrgName, id: &str) -> Result<Option<Upload>, StoreError>;
    /// Writes `upload` if its stored state is still `from`; false if it is not (someone else
    /// moved it first).
    async fn move_upload(&self, upload: &Upload, from: UploadState) -> Result<bool, StoreError>;
    /// Deletes the upload's record if its stored state is still `from`; false if it is not.
    async fn delete_upload(&self, upload: &Upload, from: UploadState) -> Result<bool, StoreError>;
    /// Claims the upload for one publish: true for the first caller only, ever (S3's events
    /// are delivered at least once, and two deliveries must not publish two versions).
    async fn claim_upload(&self, upload: &Upload) -> Result<bool, StoreError>;
}

/// The bucket's side of an upload (S3's multipart upload under [`PREFIX`]).
#[allow(async_fn_in_trait)]
pub trait UploadBucket {
    /// Begins the multipart upload of `key`; S3's upload id.
    async fn begin(&self, key: &str) -> Result<String, StoreError>;
    /// A presigned UploadPart URL for part `number`, valid `seconds`.
    async fn part_url(
        &self,
        key: &str,
        upload_id: &str,
        number: u64,
        seconds: u64,
    ) -> Result<String, StoreError>;
    /// The parts S3 holds (ListParts), in order.
    async fn parts(&self, key: &str, upload_id: &str) -> Result<Vec<Part>, StoreError>;
    /// Completes it with `parts`; `Ok(Err(why))` when S3 refuses the parts (a missing or
    /// wrong ETag, a part too small), naming why.
    async fn complete(
        &self,
        key: &str,
        upload_id: &str,
        parts: &[Part],
    ) -> Result<Result<(), String>, StoreError>;
    /// Aborts it (nothing left of the parts).
    async fn abort(&self, key: &str, upload_id: &str) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn part_sizes_keep_within_ten_thousand_parts() {
        assert_eq!(part_size_for(1), Limits::MIN_PART_SIZE);
        assert_eq!(part_size_for(100 << 20), Limits::MIN_PART_SIZE);
        let largest = part_size_for(Limits::MAX_SIZE);
        assert!(Limits::MAX_SIZE.div_ceil(largest) <= Limits::MAX_PARTS);
        assert_eq!(largest % (1 << 20), 0);
    }

    #[test]
    fn keys_parse_back_and_nothing_else_does() {
        let id = "0123456789abcdef0123456789abcdef";
        let (org, got, name) = parse_key(&format!("uploads/acme/{id}/x.parquet")).unwrap();
        assert_eq!(
            (org.as_str(), got.as_str(), name.as_str()),
            ("acme", id, "x.parquet")
        );
        for bad in [
            format!("staging/acme/{id}/x.parquet"),
            format!("uploads/ACME/{id}/x.parquet"),
            "uploads/acme/123/x.parquet".to_owned(),
            format!("uploads/acme/{id}/a/b.parquet"),
            format!("uploads/acme/{id}/.hidden"),
        ] {
            assert_eq!(parse_key(&bad), None, "{bad}");
        }
    }

    #[test]
    fn a_new_upload_is_checked_naming_what_is_wrong() {
        let org = OrgName::parse("acme").unwrap();
        let good = NewUpload {
            dataset: "sales".into(),
            filename: "sales.parquet".into(),
            size: 10,
            sha256: "a".repeat(64),
        };
        assert_eq!(good.check(&org), Ok(()));
        let with = |f: &dyn Fn(&mut NewUpload)| {
            let mut u = good.clone();
            f(&mut u);
            u.check(&org).unwrap_err()
        };
        assert!(
            matches!(with(&|u| u.dataset = "Bad Name".into()), UploadError::Invalid(m) if m.starts_with("dataset"))
        );
        assert!(
            matches!(with(&|u| u.filename = "../x".into()), UploadError::Invalid(m) if m.starts_with("filename"))
        );
        assert!(
            matches!(with(&|u| u.sha256 = "A".repeat(64)), UploadError::Invalid(m) if m.starts_with("sha256"))
        );
        assert!(matches!(with(&|u| u.size = 0), UploadError::Invalid(m) if m.starts_with("size")));
        let too_large = with(&|u| u.size = Limits::MAX_SIZE + 1);
        assert_eq!(too_large.code(), "upload_too_large");
        assert!(too_large.to_string().contains("catalog-admin publish"));
    }

    #[test]
    fn a_size_is_a_whole_number_of_bytes_however_json_writes_it() {
        let parse = |size: &str| {
            serde_json::from_str::<NewUpload>(&format!(
                r#"{{"dataset": "d", "filename": "f", "sha256": "", "size": {size}}}"#
            ))
            .map(|u| u.size)
        };
        assert_eq!(parse("22984").unwrap(), 22984);
        assert_eq!(parse("22984.0").unwrap(), 22984);
        for bad in ["1.5", "-1", "\"7\""] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
