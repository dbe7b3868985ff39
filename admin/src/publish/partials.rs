//! `catalog-admin stage publish --partials`: a version's statistics merged from the per-file
//! partial statistics the fan-out computed (docs/scaling.md: `catalog-file-stats` under the
//! stack's Distributed Map, or `stats file` anywhere) rather than read again on this machine.
//!
//! Each staged file must have exactly one partial, computed over that object as it is now: the
//! partial names it (`s3://bucket/key`) and carries the ETag it was read under, which must be
//! the listed one (an object replaced since is refused, naming it); its row count must be the
//! footer's. The version's statistics are the merge of every partial in the version's file
//! order, by `catalog_stats::partial::merge`, estimates flagged `approximate` as that merge flags them. Refused (the statistics are then
//! read in place, without `--partials`): a version with Hive partition columns, which the
//! partials do not hold, and a version with splits, whose histograms have the bins of each
//! split's own bounds, which partials counted into the version's bins cannot give exactly.

use std::collections::BTreeMap;

use catalog_stats::partial::{self, FilePartial};
use catalog_stats::remote::RemoteObject;
use catalog_stats::FileStats;

use super::PublishError;

fn bad(e: impl std::fmt::Display) -> PublishError {
    PublishError::BadInput(e.to_string())
}

/// The partials in the order of `objects` (the version's files), each checked against its
/// object: one per file, no other, under the object's current ETag (the listing's, or a
/// HeadObject's where the listing gave none).
pub async fn arrange(
    partials: &[FilePartial],
    objects: &[RemoteObject],
) -> Result<Vec<FilePartial>, PublishError> {
    let mut by_file: BTreeMap<&str, &FilePartial> = BTreeMap::new();
    for p in partials {
        if by_file.insert(p.file.as_str(), p).is_some() {
            return Err(bad(format!("two partial statistics of {}", p.file)));
        }
    }
    let mut arranged = Vec::with_capacity(objects.len());
    for object in objects {
        let url = object.url();
        let Some(p) = by_file.remove(url.as_str()) else {
            return Err(bad(format!(
                "no partial statistics of {url}: compute them over every staged file \
                 (docs/scaling.md)"
            )));
        };
        let now = match &object.etag {
            Some(etag) => Some(etag.clone()),
            None => current_etag(object).await?,
        };
        let unquoted = |e: &Option<String>| e.as_deref().map(|e| e.trim_matches('"').to_owned());
        if p.etag.is_none() || unquoted(&p.etag) != unquoted(&now) {
            return Err(bad(format!(
                "{url} is not the object its partial statistics were computed over (ETag {} \
                 then, {} now): compute them again",
                p.etag.as_deref().unwrap_or("unknown"),
                now.as_deref().unwrap_or("unknown")
            )));
        }
        arranged.push(p.clone());
    }
    if let Some(extra) = by_file.keys().next() {
        return Err(bad(format!(
            "partial statistics of {extra}, which is not one of the version's files"
        )));
    }
    Ok(arranged)
}

async fn current_etag(object: &RemoteObject) -> Result<Option<String>, PublishError> {
    let head = object
        .s3
        .head_object()
        .bucket(&object.bucket)
        .key(&object.key)
        .send()
        .await
        .map_err(|e| {
            PublishError::Upload(format!(
                "{}: {}",
                object.url(),
                aws_sdk_s3::error::DisplayErrorContext(e)
            ))
        })?;
    Ok(head.e_tag().map(str::to_owned))
}

/// The statistics of `partials`' files (in the version's order), merged.
pub fn merged(partials: &[FilePartial]) -> Result<FileStats, PublishError> {
    partial::merge(partials)
        .map(|m| m.stats)
        .map_err(|e| bad(format!("the partial statistics: {e}")))
}
