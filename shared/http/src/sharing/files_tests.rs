//! [`super::files::list_files`] over a manifest in memory: which chunks it reads, `limitHint`,
//! pages and their positions, a missing manifest.

use chrono::{Duration, Utc};
use serde_json::json;

use super::files::{list_files, FilesQuery, Paging, Position};
use super::predicate::{from_json, Columns, Predicate};
use crate::error::ToHttp;
use catalog::files::{FileInput, Manifest, ManifestInput, RelPath, Summary};
use catalog::records::ActiveVersion;
use catalog::slug::Slug;
use catalog_memory::manifest::MemoryManifests;
use catalog_memory::FakeSigner;

/// 2,500 files of 3 rows, 100 in each partition `part=00` to `part=24`: chunks of 1,000 hold
/// ten partitions each (the last, five).
fn stored() -> (MemoryManifests, Summary, Slug) {
    let files = (0..2_500u64)
        .map(|i| FileInput {
            path: RelPath::parse(&format!("part={:02}/f-{:03}.parquet", i / 100, i % 100)).unwrap(),
            split: None,
            rows: 3,
            size: 100,
            sha256: format!("{i:064x}"),
            stats: Vec::new(),
        })
        .collect();
    let manifest = Manifest::build(ManifestInput {
        files,
        columns: vec!["id".into()],
        ..Default::default()
    })
    .unwrap();
    let slug = Slug::parse("parts").unwrap();
    let manifests = MemoryManifests::new();
    let summary = manifests.insert(&slug, 1, manifest);
    (manifests, summary, slug)
}

fn version(summary: &Summary) -> ActiveVersion {
    ActiveVersion {
        version: 1,
        s3_key: "datasets/parts/v1/files/".into(),
        size: summary.bytes,
        row_count: summary.rows,
        columns: vec!["id".into(), "part".into()],
        sha256: summary.sha256.clone(),
        published_at: Utc::now(),
        files: None,
        ingested: None,
    }
}

fn part_is(n: u32) -> Vec<super::predicate::Expr> {
    let hint = json!({"op": "equal", "children": [
        {"op": "column", "name": "part", "valueType": "int"},
        {"op": "literal", "value": n.to_string(), "valueType": "int"}]});
    vec![from_json(&hint.to_string())]
}

#[tokio::test]
async fn a_query_reads_only_the_chunks_it_needs_and_stops_at_its_page_or_limit() {
    let (manifests, summary, slug) = stored();
    let v = version(&summary);
    let columns = Columns::of(&summary, |_| Some("int64".into()));
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let query = |predicate: &'static Predicate, limit, paging| FilesQuery {
        slug: &slug,
        version: &v,
        summary: &summary,
        predicate,
        limit,
        paging,
        pinned: false,
        gzip: false,
        now: Utc::now(),
    };
    let none: &'static Predicate = Box::leak(Box::new(Predicate::default()));
    let seven: &'static Predicate = Box::leak(Box::new(Predicate::new(part_is(7), &columns)));
    let twenty: &'static Predicate = Box::leak(Box::new(Predicate::new(part_is(20), &columns)));

    // A partition predicate: its chunk alone, its 100 files.
    let listed = list_files(&query(seven, None, None), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!(listed.lines.len(), 100);
    assert_eq!(listed.first_paths[0], "part=07/f-000.parquet");
    assert_eq!(manifests.reads(), vec![1]);
    let listed = list_files(&query(twenty, None, None), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!(listed.first_paths[0], "part=20/f-000.parquet");
    assert_eq!(manifests.reads(), vec![1, 1]);

    // No predicate, no paging: every file, as many chunks a read as one BatchGetItem holds.
    let listed = list_files(&query(none, None, None), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!(listed.lines.len(), 2_500);
    assert!(listed.next.is_none());
    assert_eq!(manifests.reads(), vec![1, 1, 3]);

    // A limit of 10 rows: four files of 3, from the first chunk only.
    let listed = list_files(&query(none, Some(10), None), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!(listed.lines.len(), 4);
    assert_eq!(manifests.reads(), vec![1, 1, 3, 1]);

    // Pages of 1,000: each reads its one chunk, and points past its last file.
    let mut from = Position::default();
    let mut seen = 0;
    loop {
        let paging = Some(Paging {
            max_files: 1_000,
            from,
        });
        let listed = list_files(&query(none, None, paging), &manifests, &signer)
            .await
            .unwrap();
        seen += listed.lines.len();
        match listed.next {
            Some(next) => from = next,
            None => break,
        }
    }
    assert_eq!(seen, 2_500);
    assert_eq!(manifests.reads()[4..], [1, 1, 1]);
    // The rows that certainly passed ride in the position: a limit spans pages.
    let paging = Some(Paging {
        max_files: 2,
        from: Position::default(),
    });
    let first = list_files(&query(none, Some(10), paging), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!(first.next, Some(Position { file: 2, rows: 6 }));
    let paging = Some(Paging {
        max_files: 2,
        from: first.next.unwrap(),
    });
    let second = list_files(&query(none, Some(10), paging), &manifests, &signer)
        .await
        .unwrap();
    assert_eq!((second.lines.len(), second.next), (2, None));

    // A manifest that is gone: an internal error, not an empty table.
    assert!(manifests.remove(&slug, 1));
    let e = list_files(&query(none, None, None), &manifests, &signer)
        .await
        .unwrap_err();
    assert_eq!(e.status().as_u16(), 500);
}

/// File lines as a deployed function writes them: a URL whose session token is the same in
/// every line, a signature and an id of its own in each.
fn file_line(i: u64, token: &str) -> String {
    use sha2::{Digest, Sha256};
    let hex = |s: String| hex::encode(Sha256::digest(s.as_bytes()));
    format!(
        r#"{{"file":{{"url":"https://catalog-data.s3.us-east-1.amazonaws.com/datasets/d/v1/files/part%3D{:02}/f-{i:06}.parquet?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIAEXAMPLE%2F20261129%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20261129T010203Z&X-Amz-Expires=900&X-Amz-Security-Token={token}&X-Amz-Signature={}&X-Amz-SignedHeaders=host","id":"{}","partitionValues":{{"part":"{}"}},"size":{},"stats":"{{\"numRecords\":{}}}"}}}}"#,
        i % 100,
        hex(format!("signature {i}")),
        hex(format!("id {i}")),
        i % 100,
        10_000 + i * 7 % 5_000,
        1_000 + i % 17,
    )
}

#[test]
fn a_gzip_answer_holds_many_more_lines_than_a_plain_one_within_its_compressed_bound() {
    use super::files::{Budget, MAX_BODY_BYTES, MAX_GZIP_BYTES};
    use std::io::Write;
    // A session token of about 1 KB, as an assumed role's.
    let token: String = (0..16)
        .map(|n| hex::encode(sha2::Sha256::digest(format!("token {n}").as_bytes())))
        .collect::<String>();
    use sha2::Digest;
    let taken = |gzip: bool| {
        let mut budget = Budget::new(gzip);
        let mut lines = Vec::new();
        for i in 0.. {
            let line = file_line(i, &token);
            if !budget.take(&line) {
                break;
            }
            lines.push(line);
        }
        lines
    };
    let plain = taken(false);
    let gzip = taken(true);
    // Sent as it is: the lines stay within MAX_BODY_BYTES (about 2,000 such lines).
    let plain_bytes: usize = plain.iter().map(|l| l.len() + 1).sum();
    assert!(plain_bytes <= MAX_BODY_BYTES, "{plain_bytes}");
    assert!(
        plain_bytes + plain[0].len() > MAX_BODY_BYTES,
        "it fills the answer"
    );
    // Compressed: seven to nine times as many lines (by the deflate the build links: miniz_oxide
    // alone, zlib-rs where the workspace's features unify), and compressed they stay within
    // the bound,
    // with the encoder's lag
    assert!(
        gzip.len() > 6 * plain.len(),
        "{} vs {}",
        gzip.len(),
        plain.len()
    );
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for line in &gzip {
        encoder.write_all(line.as_bytes()).unwrap();
        encoder.write_all(b"\n").unwrap();
    }
    let compressed = encoder.finish().unwrap().len();
    assert!(compressed <= MAX_GZIP_BYTES + 64 * 1024, "{compressed}");
    assert!(
        compressed > MAX_GZIP_BYTES / 2,
        "it fills the answer: {compressed}"
    );
}
