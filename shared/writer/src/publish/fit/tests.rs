use std::sync::Arc;

use catalog::files::{ChunkSummary, PartitionColumn, PartitionType, Summary, ValueRange};
use catalog::records::{ActiveVersion, Card};
use chrono::Utc;

use super::*;

fn meta(insights_bytes: usize) -> DatasetMeta {
    DatasetMeta {
        readme: None,
        card: Card {
            name: "Wide partitions".into(),
            description: None,
            category: "testing".into(),
            tags: vec![],
            license: "CC0-1.0".into(),
            access_level: Default::default(),
        },
        source: "tests".into(),
        insights: "i".repeat(insights_bytes),
        discussions: vec![],
        access: Default::default(),
    }
}

/// Text that deflate cannot shrink much: hex of random UUIDs.
fn noise(len: usize) -> String {
    let mut out = String::new();
    while out.len() < len {
        out.push_str(&Uuid::new_v4().simple().to_string());
    }
    out.truncate(len);
    out
}

/// A summary of 100 chunks whose four string partition columns hold long values: each chunk's
/// smallest and largest value of each, 600 characters.
fn wide_summary() -> Summary {
    let columns = 4;
    Summary {
        files: 100_000,
        rows: 100_000,
        bytes: 1 << 30,
        sha256: "0".repeat(64),
        columns: vec!["id".into()],
        partitions: (0..columns)
            .map(|i| PartitionColumn {
                name: format!("p{i}"),
                kind: PartitionType::String,
            })
            .collect(),
        splits: vec![],
        chunks: (0..100u64)
            .map(|c| ChunkSummary {
                first_file: c * 1000,
                files: 1000,
                first_row: c * 1000,
                rows: 1000,
                partitions: (0..columns)
                    .map(|_| ValueRange {
                        min: Some(noise(600)),
                        max: Some(noise(600)),
                        nulls: false,
                    })
                    .collect(),
                file_parts: 0,
                stat_parts: 0,
            })
            .collect(),
    }
}

fn version(files: Option<Arc<Summary>>) -> NewVersion {
    NewVersion {
        active: ActiveVersion {
            version: 1,
            s3_key: "datasets/wide/v1/files/".into(),
            size: 1 << 30,
            row_count: 100_000,
            columns: vec![
                "id".into(),
                "p0".into(),
                "p1".into(),
                "p2".into(),
                "p3".into(),
            ],
            sha256: "0".repeat(64),
            published_at: Utc::now(),
            files,
            ingested: None,
        },
        schema_json: "[]".into(),
    }
}

#[test]
fn the_dataset_item_is_measured_with_its_files_summary_and_refused_when_it_does_not_fit() {
    let slug = Slug::parse("wide").unwrap();
    let summary = Arc::new(wide_summary());
    let stored = item_size(&Item::from([(
        String::new(),
        catalog_aws::dynamo::manifest::summary_value(&summary),
    )]));
    assert!(
        (200 * 1024..300 * 1024).contains(&stored),
        "the summary stored: {stored} bytes"
    );
    let with = version(Some(summary.clone()));
    // The version item, summary included, fits on its own: measuring it alone let this
    // version through, and its activation would have failed.
    let version_alone = item_size(&version_item(&slug, &with.active, &with.schema_json));
    assert!(version_alone < ITEM_LIMIT_BYTES, "{version_alone}");

    // 150 KB of insights: with the summary, the dataset item is over 400 KB
    let why = match check_fits(&slug, &meta(150 * 1024), &with) {
        Err(WriteError::TooLarge(why)) => why,
        other => panic!("expected TooLarge, got {other:?}"),
    };
    assert!(
        why.contains("the dataset's record would be")
            && why.contains("its files' summary (100000 files in 100 chunks)"),
        "{why}"
    );
    // The same metadata and version without the summary fit: the summary is what is measured
    let fit = check_fits(&slug, &meta(150 * 1024), &version(None)).unwrap();
    assert!(fit.dataset_item < ITEM_LIMIT_BYTES);
    // With less metadata the summary fits, and is counted in both items with the part counts'
    // room
    let fit = check_fits(&slug, &meta(1024), &with).unwrap();
    assert!(fit.dataset_item > stored + super::super::files::PART_COUNTS_ROOM);
    assert_eq!(
        fit.version_item,
        version_alone + super::super::files::PART_COUNTS_ROOM
    );
}

/// A publish measures the dataset item with its card: one that fits without it is refused with
/// a 32 KiB card, the message naming the card among what to shorten.
#[test]
fn a_card_counts_in_the_dataset_item_a_publish_measures() {
    let slug = Slug::parse("wide").unwrap();
    let with = version(Some(Arc::new(wide_summary())));
    let bare = check_fits(&slug, &meta(0), &with).unwrap().dataset_item;
    // Insights that leave 16 KiB of room: the item fits, a 32 KiB card does not.
    let insights = ITEM_LIMIT_BYTES - bare - 16 * 1024;
    let fit = check_fits(&slug, &meta(insights), &with).unwrap();
    assert!(fit.dataset_item <= ITEM_LIMIT_BYTES - 16 * 1024, "{fit:?}");
    let mut carded = meta(insights);
    carded.readme = Some("r".repeat(catalog::readme::Readme::MAX_BYTES));
    let why = match check_fits(&slug, &carded, &with) {
        Err(WriteError::TooLarge(why)) => why,
        other => panic!("expected TooLarge, got {other:?}"),
    };
    assert!(
        why.contains("over DynamoDB's 400 KB item limit")
            && why.contains("its description, insights, discussions and card")
            && why.ends_with("or shorten the insights, discussions and card"),
        "{why}"
    );
    // A small card fits where the large one did not.
    carded.readme = Some("# Wide\n".into());
    assert!(check_fits(&slug, &carded, &with).is_ok());
}
