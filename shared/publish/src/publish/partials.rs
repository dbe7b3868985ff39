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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use catalog_stats::partial::FORMAT;
    use catalog_stats::remote::ReadCounts;

    use super::*;

    /// Objects whose ETags are known (no request is made for them).
    fn objects(keys: &[&str]) -> Vec<RemoteObject> {
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(aws_sdk_s3::config::BehaviorVersion::latest())
            .build();
        let s3 = aws_sdk_s3::Client::from_conf(config);
        let runtime = tokio::runtime::Handle::current();
        keys.iter()
            .map(|key| RemoteObject {
                s3: s3.clone(),
                bucket: "b".into(),
                key: (*key).into(),
                size: 10,
                etag: Some(format!("\"{key}\"")),
                handle: runtime.clone(),
                counts: Arc::new(ReadCounts::default()),
            })
            .collect()
    }

    fn partial(key: &str, etag: Option<&str>) -> FilePartial {
        FilePartial {
            format: FORMAT,
            file: format!("s3://b/{key}"),
            etag: etag.map(str::to_owned),
            row_count: 1,
            columns: Vec::new(),
        }
    }

    #[tokio::test]
    async fn the_partials_come_in_the_files_order_whatever_the_order_given() {
        let objects = objects(&["s/a.parquet", "s/b.parquet"]);
        let given = [
            partial("s/b.parquet", Some("\"s/b.parquet\"")),
            // S3's ETag with or without its quotes is the same ETag.
            partial("s/a.parquet", Some("s/a.parquet")),
        ];
        let arranged = arrange(&given, &objects).await.unwrap();
        let files: Vec<&str> = arranged.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(files, ["s3://b/s/a.parquet", "s3://b/s/b.parquet"]);
    }

    #[tokio::test]
    async fn missing_extra_twice_given_or_unconditioned_partials_are_refused() {
        let objects = objects(&["s/a.parquet", "s/b.parquet"]);
        let a = || partial("s/a.parquet", Some("\"s/a.parquet\""));
        let b = || partial("s/b.parquet", Some("\"s/b.parquet\""));
        for (given, why) in [
            (vec![a()], "no partial statistics of s3://b/s/b.parquet"),
            (
                vec![a(), b(), partial("s/c.parquet", Some("\"c\""))],
                "partial statistics of s3://b/s/c.parquet, which is not one of the version's files",
            ),
            (vec![a(), a(), b()], "two partial statistics of s3://b/s/a.parquet"),
            (
                vec![a(), partial("s/b.parquet", None)],
                "s3://b/s/b.parquet is not the object its partial statistics were computed over (ETag unknown then",
            ),
            (
                vec![a(), partial("s/b.parquet", Some("\"older\""))],
                "(ETag \"older\" then, \"s/b.parquet\" now)",
            ),
        ] {
            let refused = arrange(&given, &objects).await.unwrap_err().to_string();
            assert!(refused.contains(why), "{why}: {refused}");
        }
    }
}
