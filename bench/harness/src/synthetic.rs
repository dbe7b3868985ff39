//! A synthetic version of many files, recorded in moto as `catalog-admin publish` records it
//! (`DynamoWriter::publish_files`: the manifest's chunk items, the version item with its
//! summary, activation), for the benches of issue 38 (`data-listing`, `rows-many`,
//! `sharing-many`). Only the records are written; a bench uploads whatever objects it reads
//! through `upload`.

use std::future::Future;

use catalog::files::{Manifest, ManifestInput};
use catalog::input::Slug;
use catalog::records::{ActiveVersion, Card, DatasetMeta};
use catalog_tests::stack::Stack;
use catalog_writer::publish::StagedFiles;
use catalog_writer::{NewVersion, Publication, WriteError};
use chrono::Utc;

/// The process's CPU time so far, in milliseconds (`CLOCK_PROCESS_CPUTIME_ID`: every thread).
pub fn cpu_ms() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 / 1e6
}

/// The median of some figures (the upper one of an even count).
pub fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// 64 hex digits that look like a SHA-256 (as little compressible): splitmix64 of `i`, four
/// times.
pub fn digest(i: u64) -> String {
    let mut x = i.wrapping_mul(4).wrapping_add(0x9e37_79b9_7f4a_7c15);
    (0..4)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            format!("{:016x}", z ^ (z >> 31))
        })
        .collect()
}

/// The Hive path of file `i` of `files`, spread in order over 60 partitions, years 2020 to 2024
/// and months 1 to 12 (`month=01` when `padded`).
pub fn hive_path(i: u64, files: u64, padded: bool) -> String {
    let p = i * 60 / files;
    let (year, month) = (2020 + p / 12, p % 12 + 1);
    if padded {
        format!("year={year}/month={month:02}/part-{i:06}.parquet")
    } else {
        format!("year={year}/month={month}/part-{i:06}.parquet")
    }
}

/// What the version holds besides its manifest.
pub struct Version<'a> {
    /// The version's columns, partition columns included.
    pub columns: &'a [&'a str],
    /// The schema as the metadata shows it (`[]` when the bench reads none).
    pub schema_json: String,
    /// The dataset's name and source.
    pub name: &'a str,
    pub source: &'a str,
}

/// Records `input` as the next version of `slug` and activates it. `upload` is given the
/// version's files prefix (`datasets/<slug>/v<n>/files/`) before anything is recorded.
pub async fn record<F, Fut>(
    stack: &Stack,
    slug: &Slug,
    input: ManifestInput,
    version: Version<'_>,
    upload: F,
) -> Result<(), String>
where
    F: FnOnce(String) -> Fut,
    Fut: Future<Output = Result<(), WriteError>>,
{
    let size = input.files.iter().map(|f| f.size).sum::<u64>();
    let rows = input.files.iter().map(|f| f.rows).sum::<u64>();
    let manifest = Manifest::build(input).map_err(|e| e.to_string())?;
    let now = Utc::now();
    let meta = DatasetMeta {
        readme: None,
        access: Default::default(),
        card: Card {
            access_level: Default::default(),
            name: version.name.into(),
            description: None,
            category: "bench".into(),
            tags: vec![],
            license: "CC0-1.0".into(),
        },
        source: version.source.into(),
        insights: String::new(),
        discussions: vec![],
    };
    let publication = Publication {
        slug,
        meta: &meta,
        id: None,
        new_only: false,
        now,
    };
    stack
        .writer()
        .publish_files(
            publication,
            |_| async { Ok::<_, WriteError>(false) },
            |resumed| {
                let meta = meta.clone();
                async move {
                    let number = resumed.reserved.version;
                    let prefix = format!("datasets/{slug}/v{number}/files/");
                    upload(prefix.clone()).await?;
                    let active = ActiveVersion {
                        version: number,
                        s3_key: prefix,
                        size,
                        row_count: rows,
                        columns: version.columns.iter().map(|c| c.to_string()).collect(),
                        sha256: manifest.sha256().to_owned(),
                        published_at: now,
                        files: None,
                        ingested: None,
                    };
                    Ok(StagedFiles {
                        version: NewVersion {
                            active,
                            schema_json: version.schema_json,
                        },
                        meta,
                        manifest,
                        split_schemas: Vec::new(),
                    })
                }
            },
        )
        .await
        .map(|_| ())
        .map_err(|e| format!("publish: {e}"))
}
