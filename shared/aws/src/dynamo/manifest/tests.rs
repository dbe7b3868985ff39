use super::*;
use crate::dynamo::codec::{item_size, ITEM_LIMIT_BYTES};
use catalog::files::{FileInput, ManifestInput, PartitionType, CHUNK_FILES};

/// A manifest of `n` files in two splits under `year=…/day=…/` (a null day among them), with
/// `columns` columns of mixed statistics: some unknown, some partly known.
fn manifest(n: usize, columns: usize) -> Manifest {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let names: Vec<String> = (0..columns).map(|c| format!("c{c}")).collect();
    let files = (0..n)
        .map(|i| {
            let split = if i % 3 == 0 { "test" } else { "train" };
            let day = if i % 7 == 0 {
                "__HIVE_DEFAULT_PARTITION__".to_owned()
            } else {
                format!("2024-03-{:02}", 1 + i % 28)
            };
            let stats = (0..columns)
                .filter(|c| c % 5 != 4)
                .map(|c| {
                    let r = next();
                    let (min, max) = match c % 5 {
                        0 => (
                            StatValue::Int(-((r >> 20) as i64)),
                            StatValue::Int((r >> 20) as i64),
                        ),
                        1 => (StatValue::Float(r as f64 / 3.0), StatValue::Float(r as f64)),
                        2 => (
                            StatValue::Text(format!("a{r:x}")),
                            StatValue::Text(format!("z{r:x}")),
                        ),
                        _ => (StatValue::Bool(false), StatValue::Bool(r % 2 == 0)),
                    };
                    let range = ColumnRange {
                        min: Some(min),
                        max: (i % 11 != 0).then_some(max),
                        null_count: Some(r % 100),
                    };
                    (names[c].clone(), range)
                })
                .collect();
            FileInput {
                path: RelPath::parse(&format!(
                    "{split}/year={}/day={day}/part-{i:06}-{:016x}.parquet",
                    2020 + i % 4,
                    next()
                ))
                .unwrap(),
                split: Some(SplitName::parse(split).unwrap()),
                rows: 1 + next() % 100_000,
                size: next() % 1_000_000_000,
                sha256: format!(
                    "{:016x}{:016x}{:016x}{:016x}",
                    next(),
                    next(),
                    next(),
                    next()
                ),
                stats,
            }
        })
        .collect();
    Manifest::build(ManifestInput {
        files,
        columns: names,
        ..Default::default()
    })
    .unwrap()
}

/// Every chunk encoded, the summary's part counts set, and the items by sort key.
fn store(m: &Manifest) -> (Summary, HashMap<String, Item>) {
    let mut summary = m.summary.clone();
    let mut found = HashMap::new();
    for c in 0..summary.chunks.len() {
        let encoded = encode_chunk("ds", 7, m, c);
        summary.chunks[c].file_parts = encoded.file_parts;
        summary.chunks[c].stat_parts = encoded.stat_parts;
        for item in encoded.items {
            assert!(item_size(&item) <= ITEM_LIMIT_BYTES, "{}", item_size(&item));
            found.insert(sort_key(&item), item);
        }
    }
    (summary, found)
}

#[test]
fn every_chunk_reads_back_as_it_was_built() {
    let m = manifest(2_345, 12);
    assert_eq!(m.summary.partitions[0].kind, PartitionType::Int64);
    assert_eq!(m.summary.partitions[1].kind, PartitionType::Date);
    let (summary, found) = store(&m);
    assert!(summary.chunks.len() >= 3);
    for c in 0..summary.chunks.len() {
        let with = decode_chunk(7, &summary, c, &found, true).unwrap().unwrap();
        let built = m.chunk(c).unwrap();
        for (a, b) in with.files.iter().zip(&built.files) {
            for (x, y) in a.stats.iter().zip(&b.stats) {
                assert_eq!(x, y, "{}", a.path);
            }
        }
        assert!(with == built, "chunk {c} with its statistics");
        let without = decode_chunk(7, &summary, c, &found, false)
            .unwrap()
            .unwrap();
        assert!(without.files.iter().all(|f| f.stats.is_empty()));
        let files: Vec<_> = with
            .files
            .into_iter()
            .map(|f| FileEntry {
                stats: Vec::new(),
                ..f
            })
            .collect();
        assert_eq!(without.files, files);
        assert_eq!(
            chunk_keys("ds", 7, &summary, c, false).len(),
            summary.chunks[c].file_parts as usize
        );
    }
}

#[test]
fn statistics_larger_than_an_item_take_several_parts() {
    let m = manifest(CHUNK_FILES, 200);
    let (summary, found) = store(&m);
    let c = &summary.chunks[0];
    assert_eq!(c.file_parts, 1);
    assert!(c.stat_parts > 1, "{} parts", c.stat_parts);
    let keys = chunk_keys("ds", 7, &summary, 0, true);
    assert_eq!(keys.len(), (c.file_parts + c.stat_parts) as usize);
    assert_eq!(
        decode_chunk(7, &summary, 0, &found, true).unwrap(),
        m.chunk(0)
    );
    let mut partial = found.clone();
    partial.remove(&manifest_part_sk(7, true, 0, 1));
    assert_eq!(
        decode_chunk(7, &summary, 0, &partial, true).unwrap(),
        None,
        "a part is missing"
    );
    assert!(
        decode_chunk(7, &summary, 0, &partial, false)
            .unwrap()
            .is_some(),
        "files alone"
    );
}

#[test]
fn the_summary_round_trips_and_a_single_file_version_has_none() {
    let m = manifest(1_500, 3);
    let (summary, _) = store(&m);
    let item: Item = HashMap::from([(FILES.to_owned(), summary_value(&summary))]);
    assert_eq!(summary_from(&item).unwrap(), Some(summary));
    assert_eq!(summary_from(&HashMap::new()).unwrap(), None);
    let bad: Item = HashMap::from([(FILES.to_owned(), AttributeValue::B(vec![1, 2, 3].into()))]);
    assert!(matches!(summary_from(&bad), Err(StoreError::Corrupt(_))));
}

#[test]
fn a_damaged_part_is_corrupt_not_a_panic() {
    let m = manifest(10, 2);
    let (summary, mut found) = store(&m);
    let sk = manifest_part_sk(7, false, 0, 0);
    let json = serde_json::to_vec(
        &serde_json::json!({"paths": ["a"], "rows": [1], "sizes": [1], "sha256": ["x"]}),
    )
    .unwrap();
    let mut item = found[&sk].clone();
    item.insert(
        BYTES.into(),
        AttributeValue::B(miniz_oxide::deflate::compress_to_vec(&json, 6).into()),
    );
    found.insert(sk.clone(), item);
    assert!(
        matches!(
            decode_chunk(7, &summary, 0, &found, false),
            Err(StoreError::Corrupt(_))
        ),
        "lengths that disagree with the summary"
    );
    found
        .get_mut(&sk)
        .unwrap()
        .insert(BYTES.into(), AttributeValue::S("x".into()));
    assert!(matches!(
        decode_chunk(7, &summary, 0, &found, false),
        Err(StoreError::Corrupt(_))
    ));
}

#[test]
fn statistics_values_read_back_exactly_and_refuse_other_shapes() {
    for value in [
        StatValue::Bool(true),
        StatValue::Int(i64::MIN),
        StatValue::Float(0.1 + 0.2),
        StatValue::Float(-1.2957581408148897e18),
        StatValue::Text("2024-01-01T00:00:00.000Z".into()),
    ] {
        let json = serde_json::to_string(&Wire::of(&value)).unwrap();
        let back: Wire = serde_json::from_str(&json).unwrap();
        assert_eq!(back.value().unwrap(), value, "{json}");
    }
    for bad in [
        "18446744073709551615",
        "1.5",
        "[1]",
        r#"{"g": "1"}"#,
        r#"{"f": "1", "g": "2"}"#,
    ] {
        assert!(serde_json::from_str::<Wire>(bad).is_err(), "{bad}");
    }
    let not_a_float: Wire = serde_json::from_str(r#"{"f": "x"}"#).unwrap();
    assert!(matches!(not_a_float.value(), Err(StoreError::Corrupt(_))));
}

#[test]
fn the_active_map_carries_a_many_file_versions_summary_and_a_single_file_version_none() {
    use crate::dynamo::codec::ActiveVersionItem;
    use catalog::records::ActiveVersion;
    use std::sync::Arc;
    let (summary, _) = store(&manifest(2_500, 3));
    let version = |files: Option<Arc<Summary>>| ActiveVersion {
        version: 2,
        s3_key: "datasets/x/v2/files/".into(),
        size: summary.bytes,
        row_count: summary.rows,
        columns: summary.columns.clone(),
        sha256: summary.sha256.clone(),
        published_at: chrono::DateTime::UNIX_EPOCH,
        files,
        ingested: None,
    };
    for files in [Some(Arc::new(summary.clone())), None] {
        let stored = version(files);
        let item = Item::from([("active".to_owned(), stored.to_value())]);
        let read = ActiveVersion::from_item(&item).unwrap().unwrap();
        assert_eq!(read, stored);
        let map = item["active"].as_m().unwrap();
        assert_eq!(map.contains_key(FILES), stored.files.is_some());
    }
}
