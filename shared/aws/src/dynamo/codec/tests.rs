use super::*;

fn item(attributes: [(&'static str, AttributeValue); 2]) -> Item {
    attributes
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v))
        .collect()
}

#[test]
fn small_schemas_are_text_and_large_ones_compressed_and_both_read_back() {
    let small = r#"[{"name":"a","dtype":"int64"}]"#;
    let stored = item(schema_attributes(small));
    assert!(matches!(stored.get(SCHEMA), Some(AttributeValue::S(_))));
    assert_eq!(stored.get(SCHEMA_Z), Some(&AttributeValue::Null(true)));
    assert_eq!(schema_from(&stored).unwrap().get(), small);

    let columns: Vec<String> = (0..2_000)
        .map(|i| format!(r#"{{"name":"column_{i}","dtype":"double","mean":{i}.5}}"#))
        .collect();
    let large = format!("[{}]", columns.join(","));
    let stored = item(schema_attributes(&large));
    let Some(AttributeValue::B(blob)) = stored.get(SCHEMA_Z) else {
        panic!("a large schema is compressed");
    };
    assert!(blob.as_ref().len() * 4 < large.len(), "it shrinks");
    assert_eq!(stored.get(SCHEMA), Some(&AttributeValue::Null(true)));
    assert_eq!(schema_from(&stored).unwrap().get(), large);
}

#[test]
fn stored_discussions_with_a_field_a_later_writer_added_still_read() {
    let text = r#"[{"id":"1","title":"t","slug":"s","path":"/p","votes":3}]"#;
    let read = stored_discussions(text).unwrap();
    assert_eq!(read.len(), 1);
    assert_eq!(read[0].path, "/p");
    assert!(stored_discussions("not json").is_err());
}

#[test]
fn an_item_without_a_schema_reads_as_an_empty_one() {
    assert_eq!(schema_from(&Item::new()).unwrap().get(), "[]");
}

#[test]
fn item_sizes_count_names_and_values() {
    let item: Item = [
        ("pk".to_owned(), s("DS#a")),
        ("n".to_owned(), n(12345)),
        ("l".to_owned(), strings(&["ab".to_owned(), "c".to_owned()])),
    ]
    .into_iter()
    .collect();
    // 2+4, 1+4 (5 digits: 3 + 1), 1 + 3 + (1+2) + (1+1)
    assert_eq!(item_size(&item), 6 + 5 + 9);
}

#[test]
fn a_list_entry_keeps_a_many_file_versions_brief_and_a_one_file_version_clears_it() {
    use catalog::files::{FilesBrief, PartitionColumn, PartitionType, SplitBrief};
    use catalog::records::{Card, DatasetSummary};
    let brief = FilesBrief {
        count: 3,
        partition_columns: vec![PartitionColumn {
            name: "year".into(),
            kind: PartitionType::Int64,
        }],
        splits: vec![SplitBrief {
            name: "train".into(),
            files: 3,
            row_count: 12,
            size: 4_096,
        }],
    };
    let summary = |files: Option<Box<FilesBrief>>| DatasetSummary {
        slug: Slug::parse("sales").unwrap(),
        id: uuid::Uuid::nil(),
        card: Card {
            name: "Sales".into(),
            description: None,
            category: "c".into(),
            tags: Vec::new(),
            license: "l".into(),
            access_level: Default::default(),
        },
        size: 4_096,
        row_count: 12,
        column_count: 2,
        keyless_until: None,
        updated_at: chrono::DateTime::UNIX_EPOCH,
        keyless: false,
        downloads: 0,
        files,
        seq: 1,
    };
    for files in [Some(Box::new(brief.clone())), None] {
        let written = summary(files);
        let attributes = written.to_attributes();
        let (_, stored) = attributes
            .iter()
            .find(|(name, _)| *name == name::FILES_BRIEF)
            .expect("set or cleared by every refresh of the entry");
        assert_eq!(
            matches!(stored, AttributeValue::Null(_)),
            written.files.is_none()
        );
        let mut entry: Item = attributes
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        entry.insert(name::SK.to_owned(), s("SEQ#000000000001"));
        assert_eq!(DatasetSummary::from_item(&entry).unwrap(), written);
    }
}

/// The card is stored on the dataset item as `readme` (NULL without one, so that an update
/// clears it) and read back as written; a list entry never carries it.
#[test]
fn a_card_round_trips_on_the_dataset_item_and_stays_out_of_list_entries() {
    use catalog::records::{Card, DatasetMeta, DatasetSummary};
    let card = Card {
        name: "Sales".into(),
        description: Some("Monthly".into()),
        category: "c".into(),
        tags: vec!["t".into()],
        license: "l".into(),
        access_level: Default::default(),
    };
    for readme in [
        Some("# Sales\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".to_owned()),
        None,
    ] {
        let meta = DatasetMeta {
            card: card.clone(),
            source: "s".into(),
            insights: String::new(),
            discussions: Vec::new(),
            access: Default::default(),
            readme: readme.clone(),
        };
        let attributes = meta.to_attributes();
        let (_, stored) = attributes
            .iter()
            .find(|(n, _)| *n == name::README)
            .expect("set or cleared by every metadata write");
        match &readme {
            Some(text) => assert_eq!(stored, &s(text)),
            None => assert_eq!(stored, &AttributeValue::Null(true)),
        }
        let item: Item = attributes
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        assert_eq!(DatasetMeta::from_item(&item).unwrap(), meta);
        let mut absent = item.clone();
        absent.remove(name::README);
        assert_eq!(DatasetMeta::from_item(&absent).unwrap().readme, None);

        let entry = DatasetSummary {
            slug: Slug::parse("sales").unwrap(),
            id: uuid::Uuid::nil(),
            card: meta.card.clone(),
            size: 1,
            row_count: 1,
            column_count: 1,
            keyless_until: None,
            updated_at: chrono::DateTime::UNIX_EPOCH,
            keyless: false,
            downloads: 0,
            files: None,
            seq: 1,
        };
        for (name, value) in entry.to_attributes() {
            assert_ne!(name, name::README, "a list entry holds no card");
            if let AttributeValue::S(text) = value {
                assert!(!text.contains("| a | b |"), "{name} holds the card");
            }
        }
    }
}
