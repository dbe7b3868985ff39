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
