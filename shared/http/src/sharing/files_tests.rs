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
