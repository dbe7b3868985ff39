//! Per-file ranges: from the footer, from the data, and both the same.

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::*;
use serde_json::json;

use super::*;
use crate::testdata::*;

/// The footer path and the data path agree on every column of the test table: the same file
/// written with statistics and without. With them, only the text column (whose long values
/// parquet-rs truncates in the footer) is read; without them, every column but the list.
#[test]
fn footer_and_data_give_the_same_ranges() {
    let dir = temp_dir("ranges");
    let table = table(3_000);
    let order: Vec<usize> = (0..table.num_columns()).collect();
    let (with, without) = (dir.join("with.parquet"), dir.join("without.parquet"));
    write(&with, &table, &order, true);
    write(&without, &table, &order, false);
    let footer = file_ranges(&with).unwrap();
    let data = file_ranges(&without).unwrap();
    assert_eq!(footer.columns, data.columns);
    assert_eq!(footer.row_count, 3_000);
    assert_eq!(footer.computed, ["name"]);
    let schema = table.schema();
    let all_but_the_list: Vec<&str> = schema
        .fields()
        .iter()
        .map(|f| f.name().as_str())
        .filter(|n| *n != "tags")
        .collect();
    assert_eq!(data.computed, all_but_the_list);
    let column = |name: &str| footer.columns.iter().find(|c| c.column == name).unwrap();
    assert_eq!(column("id").min, Some(json!(-500)));
    assert_eq!(column("id").max, Some(json!(2_999 * 3 - 500)));
    assert_eq!(column("id").null_count, Some(0));
    // An infinite maximum is no bound JSON can write; NaN is neither a bound nor a null.
    assert_eq!(column("x").max, None);
    assert!(column("x").min.is_some());
    assert_eq!(
        column("x").null_count,
        Some((0..3_000).filter(|i| i % 97 == 5).count() as u64)
    );
    assert_eq!(column("big").max, Some(json!(u64::MAX)));
    assert_eq!(column("blob").min, None);
    assert_eq!(column("blob").null_count, Some(750));
    let tags = column("tags");
    assert_eq!(
        (&tags.min, &tags.max, tags.null_count),
        (&None, &None, None)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Each type written as the protocol's `stats` write it, from the footer and from the data.
#[test]
fn each_type_is_written_as_delta_sharing_stats_write_it() {
    let dir = temp_dir("ranges-types");
    let mut list = ListBuilder::new(Int64Builder::new());
    list.values().append_value(1);
    list.append(true);
    list.append_null();
    list.append(true);
    list.append(true);
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "i",
            Arc::new(Int32Array::from(vec![Some(3), None, Some(-7), Some(0)])),
        ),
        (
            "f",
            Arc::new(Float64Array::from(vec![
                Some(f64::NAN),
                Some(-0.0),
                Some(2.5),
                None,
            ])),
        ),
        (
            "s",
            Arc::new(StringArray::from(vec![
                Some("b"),
                None,
                Some("a"),
                Some("ab"),
            ])),
        ),
        (
            "b",
            Arc::new(BooleanArray::from(vec![Some(true), Some(true), None, None])),
        ),
        (
            "d",
            Arc::new(Date32Array::from(vec![19_783, 0, 19_783, 19_784])),
        ),
        (
            "t",
            Arc::new(
                TimestampMillisecondArray::from(vec![1_709_251_200_000, 1_709_251_200_500, 0, 1])
                    .with_timezone("UTC"),
            ),
        ),
        (
            "n",
            Arc::new(TimestampMicrosecondArray::from(vec![
                Some(1_500_000),
                None,
                None,
                None,
            ])),
        ),
        (
            "p",
            Arc::new(
                Decimal128Array::from(vec![12_345, -5, 0, 1])
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
        (
            "e",
            Arc::new(Int64Array::from(vec![None::<i64>, None, None, None])),
        ),
        ("l", Arc::new(list.finish())),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let order: Vec<usize> = (0..batch.num_columns()).collect();
    let expected = [
        ("i", json!(-7), json!(3), Some(1)),
        ("f", json!(0.0), json!(2.5), Some(1)),
        ("s", json!("a"), json!("b"), Some(1)),
        ("b", json!(true), json!(true), Some(2)),
        ("d", json!("1970-01-01"), json!("2024-03-02"), Some(0)),
        (
            "t",
            json!("1970-01-01T00:00:00Z"),
            json!("2024-03-01T00:00:00.500Z"),
            Some(0),
        ),
        (
            "n",
            json!("1970-01-01T00:00:01.500"),
            json!("1970-01-01T00:00:01.500"),
            Some(3),
        ),
        ("p", json!(-0.05), json!(123.45), Some(0)),
        ("e", Value::Null, Value::Null, Some(4)),
        ("l", Value::Null, Value::Null, None),
    ];
    for statistics in [true, false] {
        let path = dir.join(format!("types-{statistics}.parquet"));
        write(&path, &batch, &order, statistics);
        let ranges = file_ranges(&path).unwrap();
        assert_eq!(ranges.row_count, 4);
        let got: Vec<_> = ranges
            .columns
            .iter()
            .map(|c| {
                let json = |v: &Option<Value>| v.clone().unwrap_or(Value::Null);
                (c.column.as_str(), json(&c.min), json(&c.max), c.null_count)
            })
            .collect();
        assert_eq!(got, expected, "statistics written: {statistics}");
        // With statistics, nothing is read but where the footer has no bound: here none.
        assert_eq!(
            ranges.computed.is_empty(),
            statistics,
            "{:?}",
            ranges.computed
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Text longer than 200 characters is bounded: its first 200 characters below, those with the
/// last raised by one above.
#[test]
fn long_text_is_bounded_by_its_first_characters() {
    let dir = temp_dir("ranges-text");
    let path = dir.join("long.parquet");
    let low = "a".repeat(250);
    let high = format!("{}x", "b".repeat(250));
    write_columns(
        &path,
        vec![(
            "s",
            Arc::new(StringArray::from(vec![high.as_str(), low.as_str()])),
        )],
    );
    let ranges = file_ranges(&path).unwrap();
    let s = &ranges.columns[0];
    assert_eq!(s.min, Some(json!("a".repeat(200))));
    assert_eq!(s.max, Some(json!(format!("{}c", "b".repeat(199)))));
    assert!(low.as_str() >= "a".repeat(200).as_str());
    assert!(high.as_str() < format!("{}c", "b".repeat(199)).as_str());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_upper_bound_raises_the_last_character_that_can_be() {
    assert_eq!(upper_bound("ab").as_deref(), Some("ac"));
    assert_eq!(upper_bound("a\u{10FFFF}").as_deref(), Some("b"));
    // Past the surrogates, which are no characters.
    assert_eq!(upper_bound("a\u{D7FF}").as_deref(), Some("a\u{E000}"));
    assert_eq!(upper_bound("\u{10FFFF}"), None);
    assert_eq!(upper_bound(""), None);
}

/// Many files' ranges, in parallel: each file's own ranges, its columns in the first file's
/// order; the schema they share; files that disagree refused, naming them.
#[test]
fn many_files_are_scanned_in_order_with_their_columns_in_the_first_files_order() {
    let dir = temp_dir("ranges-scan");
    let table = table(4_000);
    let cuts: Vec<usize> = (1..40).map(|i| i * 100).collect();
    let parts = split(&dir, &table, &cuts);
    let scanned = scan_files(&parts).unwrap();
    assert_eq!(scanned.schema.fields(), table.schema().fields());
    assert_eq!(scanned.files.len(), 40);
    let schema = table.schema();
    let names: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
    for (path, got) in parts.iter().zip(&scanned.files) {
        let mut own = file_ranges(path).unwrap();
        own.columns
            .sort_by_key(|c| names.iter().position(|n| *n == c.column));
        assert_eq!(*got, own, "{}", path.display());
        let order: Vec<&str> = got.columns.iter().map(|c| c.column.as_str()).collect();
        assert_eq!(order, names);
    }
    let rows: u64 = scanned.files.iter().map(|f| f.row_count).sum();
    assert_eq!(rows, 4_000);
    // The second part's ids: 100..200 → 3·100 − 500 ..= 3·199 − 500.
    let id = &scanned.files[1].columns[0];
    assert_eq!((&id.min, &id.max), (&Some(json!(-200)), &Some(json!(97))));

    let odd = dir.join("odd.parquet");
    write_columns(&odd, vec![("id", Arc::new(StringArray::from(vec!["1"])))]);
    let mut with_odd = parts.clone();
    with_odd.insert(3, odd.clone());
    let err = scan_files(&with_odd).unwrap_err().to_string();
    let first = parts[0].display();
    let odd = odd.display();
    assert!(
        err.starts_with(&format!(
            "the files do not share one schema: {first} has column id int64, {odd} has id string; \
             {odd} lacks column few"
        )),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn ranges_convert_to_the_manifests_column_ranges() {
    use catalog::files::{ColumnRange, StatValue};
    let range = |min: Value, max: Value| FileColumnRange {
        column: "c".into(),
        min: Some(min),
        max: Some(max),
        null_count: Some(2),
    };
    let converted = ColumnRange::from(&range(json!(-7), json!(u64::MAX)));
    assert_eq!(converted.min, Some(StatValue::Int(-7)));
    assert_eq!(converted.max, Some(StatValue::Float(u64::MAX as f64)));
    assert_eq!(converted.null_count, Some(2));
    let converted = range(json!(0.5), json!(true)).to_catalog();
    assert_eq!(converted.min, Some(StatValue::Float(0.5)));
    assert_eq!(converted.max, Some(StatValue::Bool(true)));
    let converted = range(json!("2024-03-01"), json!("b")).to_catalog();
    assert_eq!(converted.min, Some(StatValue::Text("2024-03-01".into())));
    assert_eq!(converted.max, Some(StatValue::Text("b".into())));
    let unknown = FileColumnRange {
        column: "l".into(),
        min: None,
        max: None,
        null_count: None,
    };
    assert_eq!(unknown.to_catalog(), ColumnRange::default());
    let ranges = FileRanges {
        row_count: 4,
        columns: vec![range(json!(1), json!(2)), unknown],
        computed: Vec::new(),
    };
    let stats = ranges.catalog_stats();
    assert_eq!(stats.len(), 2);
    assert_eq!((stats[0].0.as_str(), stats[1].0.as_str()), ("c", "l"));
    assert_eq!(stats[0].1.max, Some(StatValue::Int(2)));
}
