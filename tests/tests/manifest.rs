//! A many-file version's manifest in the datasets table (issue 38), against moto: the writer's
//! chunk items (`catalog_writer::manifest`) read back by the functions' reader
//! (`catalog_aws::dynamo::manifest`, the `ManifestReader` port), counted on the wire, and
//! deleted.

use catalog::files::{ColumnRange, FileInput, Manifest, ManifestInput, RelPath, StatValue};
use catalog::ports::ManifestReader;
use catalog::slug::Slug;
use catalog_tests::wire::Wire;
use catalog_tests::Stack;

/// `n` files under `part=<i % 7>/`, with `columns` columns of statistics.
fn manifest(n: usize, columns: usize) -> Manifest {
    let names: Vec<String> = (0..columns).map(|c| format!("c{c}")).collect();
    let files = (0..n)
        .map(|i| FileInput {
            path: RelPath::parse(&format!("part={}/file-{i:06}.parquet", i % 7)).unwrap(),
            split: None,
            rows: 1 + (i as u64 * 7919) % 1_000,
            size: 4_096 + i as u64,
            sha256: format!("{:064x}", i as u64 * 0x9e37_79b9),
            stats: names
                .iter()
                .enumerate()
                .map(|(c, name)| {
                    let x = (i * 31 + c * 17) as f64 * 1.000_1;
                    let range = ColumnRange {
                        min: Some(StatValue::Float(x)),
                        max: Some(StatValue::Float(x * 3.5 + 1.0)),
                        null_count: Some((i + c) as u64 % 13),
                    };
                    (name.clone(), range)
                })
                .collect(),
        })
        .collect();
    Manifest::build(ManifestInput {
        files,
        columns: names,
        ..Default::default()
    })
    .unwrap()
}

#[tokio::test]
async fn chunks_written_read_back_in_one_round_trip_and_are_deleted() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let slug = Slug::parse("many-files").unwrap();
    let built = manifest(2_500, 150);
    let summary = writer.write_manifest(&slug, 4, &built).await.unwrap();
    assert_eq!(summary.chunks.len(), 3);
    assert!(summary.chunks.iter().all(|c| c.file_parts == 1));
    assert!(
        summary.chunks[0].stat_parts > 1,
        "150 columns of statistics take more than one item: {}",
        summary.chunks[0].stat_parts
    );

    let (wire, s3) = (Wire::default(), Wire::default());
    let (catalog, _) = stack.wired(&wire, &s3);
    // A data page: one chunk's files, one BatchGetItem.
    let page = catalog
        .read_chunks(&slug, 4, &summary, &[1], false)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wire.take(), ["DynamoDB.BatchGetItem"]);
    let expected = built.chunk(1).unwrap();
    assert_eq!(page[0].files.len(), 1_000);
    for (got, want) in page[0].files.iter().zip(&expected.files) {
        assert_eq!(
            (&got.path, got.rows, &got.sha256),
            (&want.path, want.rows, &want.sha256)
        );
        assert!(got.stats.is_empty());
    }
    // Every chunk with its statistics, in the order asked: still one BatchGetItem.
    let all = catalog
        .read_chunks(&slug, 4, &summary, &[2, 0, 1], true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(wire.take(), ["DynamoDB.BatchGetItem"]);
    let want: Vec<_> = [2, 0, 1].iter().map(|&c| built.chunk(c).unwrap()).collect();
    assert_eq!(all, want);

    // Another version's chunks are not this one's.
    let other = catalog.read_chunks(&slug, 5, &summary, &[0], false).await;
    assert_eq!(other.unwrap(), None);
    assert_eq!(
        wire.take(),
        ["DynamoDB.BatchGetItem", "DynamoDB.BatchGetItem"],
        "a missing item is looked for again, strongly consistent"
    );

    let stored: u32 = summary
        .chunks
        .iter()
        .map(|c| c.file_parts + c.stat_parts)
        .sum();
    let deleted = writer.delete_manifest(&slug, 4).await.unwrap();
    assert_eq!(deleted, stored as usize);
    let gone = catalog.read_chunks(&slug, 4, &summary, &[0], false).await;
    assert_eq!(gone.unwrap(), None);
    assert_eq!(
        writer.delete_manifest(&slug, 4).await.unwrap(),
        0,
        "again: nothing left"
    );
}

#[tokio::test]
async fn more_than_a_hundred_items_are_read_in_batches_of_a_hundred() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let slug = Slug::parse("wide-manifest").unwrap();
    let built = manifest(51_000, 1);
    let summary = writer.write_manifest(&slug, 1, &built).await.unwrap();
    assert_eq!(summary.chunks.len(), 51);
    let (wire, s3) = (Wire::default(), Wire::default());
    let (catalog, _) = stack.wired(&wire, &s3);
    let every: Vec<usize> = (0..51).collect();
    let read = catalog
        .read_chunks(&slug, 1, &summary, &every, true)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        wire.take(),
        ["DynamoDB.BatchGetItem", "DynamoDB.BatchGetItem"],
        "102 items"
    );
    assert_eq!(read.len(), 51);
    assert_eq!(read[50], built.chunk(50).unwrap());
    let files: usize = read.iter().map(|c| c.files.len()).sum();
    assert_eq!(files, 51_000);
    // The version's other items are left alone: deleting version 2's manifest deletes nothing.
    assert_eq!(writer.delete_manifest(&slug, 2).await.unwrap(), 0);
    assert_eq!(writer.delete_manifest(&slug, 1).await.unwrap(), 102);
}

#[tokio::test]
async fn each_splits_statistics_are_read_back_in_one_get_and_deleted_with_the_manifest() {
    use catalog::ports::SplitStatsReader;
    let stack = Stack::start().await;
    let writer = stack.writer();
    let slug = Slug::parse("split-stats").unwrap();
    let summary = writer
        .write_manifest(&slug, 2, &manifest(10, 2))
        .await
        .unwrap();
    let small = r#"[{"name":"c0","dtype":"double","null_count":1}]"#.to_owned();
    // Large enough to be stored deflated (`schema_z`), as a wide version's schema is.
    let wide = format!(
        "[{}]",
        (0..2_000)
            .map(|i| format!(r#"{{"name":"c{i}","dtype":"int64","null_count":{i}}}"#))
            .collect::<Vec<_>>()
            .join(",")
    );
    writer
        .write_split_stats(&slug, 2, &[small.clone(), wide.clone()])
        .await
        .unwrap();

    let (wire, s3) = (Wire::default(), Wire::default());
    let (catalog, _) = stack.wired(&wire, &s3);
    let read = |split| catalog.split_schema(&slug, 2, split);
    assert_eq!(read(0).await.unwrap().unwrap().get(), small);
    assert_eq!(wire.take(), ["DynamoDB.GetItem"]);
    assert_eq!(read(1).await.unwrap().unwrap().get(), wide);
    assert!(read(2).await.unwrap().is_none(), "no third split");
    assert!(catalog.split_schema(&slug, 3, 0).await.unwrap().is_none());

    let stored: u32 = summary
        .chunks
        .iter()
        .map(|c| c.file_parts + c.stat_parts)
        .sum();
    assert_eq!(
        writer.delete_manifest(&slug, 2).await.unwrap(),
        stored as usize + 2,
        "the chunks and both splits' statistics"
    );
    assert!(read(0).await.unwrap().is_none());
}
