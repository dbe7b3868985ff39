//! Statistics over many files are those of one file holding all their rows.

use crate::testdata::*;
use crate::*;

/// Every statistic (histograms, medians, top values, sample values in file order across the
/// files) of 7 parts, one empty, their columns in three orders, equals the one file's: with
/// the default budget and with 1 KiB (each column counted again in passes of its own, and the
/// histograms in a later pass, across the files).
#[test]
fn parts_with_reordered_columns_give_the_one_file_statistics() {
    let dir = temp_dir("parts");
    let table = table(6_000);
    let one = whole(&dir, &table);
    let parts = split(&dir, &table, &[1, 900, 900, 2_500, 4_100, 5_999]);
    assert_eq!(parts.len(), 7);
    for budget in [MEMORY_BUDGET, 1 << 10] {
        let expected = summarize_within(&one, budget).unwrap();
        let got = summarize_files_within(&parts, budget).unwrap();
        assert_eq!(got.row_count, 6_000);
        assert_eq!(got.columns, expected.columns, "budget {budget}");
        assert_eq!(got.passes, expected.passes, "budget {budget}");
    }
    let stats = summarize_files(&parts).unwrap();
    // Not vacuous: histograms, medians and samples are there, the samples from the first part
    // then the second.
    let id = &stats.columns[0];
    assert_eq!(id.name, "id");
    assert!(id.histogram.is_some() && id.median.is_some());
    assert_eq!(id.sample_values, [-500, -497, -494, -491, -488]);
    let x = stats.columns.iter().find(|c| c.name == "x").unwrap();
    assert!(x.null_count > 0 && x.histogram.is_some());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A few hundred small files (300 of 20 rows): the same statistics as one file.
#[test]
fn hundreds_of_small_files_give_the_one_file_statistics() {
    let dir = temp_dir("hundreds");
    let table = table(6_000);
    let one = whole(&dir, &table);
    let cuts: Vec<usize> = (1..300).map(|i| i * 20).collect();
    let parts = split(&dir, &table, &cuts);
    assert_eq!(parts.len(), 300);
    let expected = summarize_within(&one, MEMORY_BUDGET).unwrap();
    let got = summarize_files_within(&parts, MEMORY_BUDGET).unwrap();
    assert_eq!(got.columns, expected.columns);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn files_that_disagree_are_named_with_their_columns() {
    let dir = temp_dir("disagree");
    let a = dir.join("a.parquet");
    let b = dir.join("b.parquet");
    let c = dir.join("c.parquet");
    write_columns(&a, vec![("x", int64(&[1])), ("y", int64(&[2]))]);
    write_columns(&b, vec![("y", int64(&[3])), ("x", text(&["4"]))]);
    write_columns(&c, vec![("x", int64(&[5]))]);
    let err = summarize_files(&[&a, &b, &c]).unwrap_err();
    let (a, b, c) = (a.display(), b.display(), c.display());
    assert_eq!(
        err.to_string(),
        format!(
            "the files do not share one schema: {a} has column x int64, {b} has x string; \
             {c} lacks column y"
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_file_that_is_not_parquet_is_named() {
    let dir = temp_dir("not-parquet");
    let a = dir.join("a.parquet");
    let b = dir.join("b.parquet");
    write_columns(&a, vec![("x", int64(&[1]))]);
    std::fs::write(&b, b"not parquet at all").unwrap();
    let err = summarize_files(&[&a, &b]).unwrap_err();
    assert!(
        matches!(&err, StatsError::InFile(path, inner)
            if *path == b.display().to_string() && matches!(**inner, StatsError::Parquet(_))),
        "{err}"
    );
    assert!(err.to_string().starts_with(&format!("{}: ", b.display())));
    let none: [&std::path::Path; 0] = [];
    assert!(matches!(summarize_files(&none), Err(StatsError::NoFiles)));
    let _ = std::fs::remove_dir_all(&dir);
}

fn int64(values: &[i64]) -> arrow_array::ArrayRef {
    std::sync::Arc::new(arrow_array::Int64Array::from(values.to_vec()))
}

fn text(values: &[&str]) -> arrow_array::ArrayRef {
    std::sync::Arc::new(arrow_array::StringArray::from(values.to_vec()))
}

/// Hive partition columns count as columns of each file holding its value in every row: the
/// parts with their partition values give the statistics of one file holding the partition
/// columns (after the others), nulls too; a pass can read them alone.
#[test]
fn partition_columns_count_as_columns_holding_each_files_value() {
    use catalog::files::{PartitionColumn, PartitionType, PartitionValue};
    use std::sync::Arc;
    let dir = temp_dir("partitions");
    let table = table(3_000);
    let cuts = [700, 1_500, 2_200];
    let parts = split(&dir, &table, &cuts);
    let date = |d: u32| chrono::NaiveDate::from_ymd_opt(2024, 3, d).unwrap();
    let values = vec![
        vec![
            PartitionValue::Int(2023),
            PartitionValue::Text("north".into()),
            PartitionValue::Date(date(1)),
        ],
        vec![
            PartitionValue::Int(2023),
            PartitionValue::Null,
            PartitionValue::Date(date(2)),
        ],
        vec![
            PartitionValue::Int(2024),
            PartitionValue::Text("south".into()),
            PartitionValue::Null,
        ],
        vec![
            PartitionValue::Null,
            PartitionValue::Text("north".into()),
            PartitionValue::Date(date(1)),
        ],
    ];
    let columns = [
        PartitionColumn {
            name: "year".into(),
            kind: PartitionType::Int64,
        },
        PartitionColumn {
            name: "region".into(),
            kind: PartitionType::String,
        },
        PartitionColumn {
            name: "on".into(),
            kind: PartitionType::Date,
        },
    ];
    // The one file: the table, then the partition columns, each part's value on its rows.
    let part_of = |row: usize| cuts.iter().filter(|c| row >= **c).count();
    let rows = 0..table.num_rows();
    let year =
        arrow_array::Int64Array::from_iter(rows.clone().map(|r| match &values[part_of(r)][0] {
            PartitionValue::Int(y) => Some(*y),
            _ => None,
        }));
    let region =
        arrow_array::StringArray::from_iter(rows.clone().map(|r| match &values[part_of(r)][1] {
            PartitionValue::Text(t) => Some(t.clone()),
            _ => None,
        }));
    let on = arrow_array::Date32Array::from_iter(rows.map(|r| match &values[part_of(r)][2] {
        PartitionValue::Date(d) => {
            Some((*d - chrono::DateTime::UNIX_EPOCH.date_naive()).num_days() as i32)
        }
        _ => None,
    }));
    let mut all: Vec<(String, arrow_array::ArrayRef)> = table
        .schema()
        .fields()
        .iter()
        .zip(table.columns())
        .map(|(f, a)| (f.name().clone(), a.clone()))
        .collect();
    all.push(("year".into(), Arc::new(year)));
    all.push(("region".into(), Arc::new(region)));
    all.push(("on".into(), Arc::new(on)));
    let one = arrow_array::RecordBatch::try_from_iter(all).unwrap();
    let one = whole(&dir, &one);
    let partitions = Partitions {
        columns: &columns,
        values: &values,
    };
    for budget in [MEMORY_BUDGET, 1 << 10] {
        let expected = summarize_within(&one, budget).unwrap();
        let got = summarize_partitioned_within(&parts, partitions, budget).unwrap();
        assert_eq!(got.columns, expected.columns, "budget {budget}");
    }
    let stats = summarize_partitioned(&parts, partitions).unwrap();
    let year = &stats.columns[stats.columns.len() - 3];
    assert_eq!((year.name.as_str(), year.dtype.as_str()), ("year", "int64"));
    assert_eq!(year.null_count, 800);
    assert_eq!(year.unique_count, 2);
    let on = &stats.columns[stats.columns.len() - 1];
    assert_eq!(on.dtype, "date32[day]");
    assert_eq!(on.top_values, ["2024-03-01", "2024-03-02"]);

    // Values that do not fit: too few rows of values, a value of another type, a partition
    // column named as a column of the files.
    let short = Partitions {
        columns: &columns,
        values: &values[..3],
    };
    assert!(matches!(
        summarize_partitioned(&parts, short),
        Err(StatsError::Partitions(_))
    ));
    let mut wrong = values.clone();
    wrong[2][0] = PartitionValue::Text("2024".into());
    let wrong = Partitions {
        columns: &columns,
        values: &wrong,
    };
    let err = summarize_partitioned(&parts, wrong).unwrap_err();
    assert_eq!(
        err.to_string(),
        "partition values: file 2's value of year is not an int64"
    );
    let clash = [PartitionColumn {
        name: "id".into(),
        kind: PartitionType::Int64,
    }];
    let clash_values = vec![vec![PartitionValue::Int(1)]; parts.len()];
    let clash = Partitions {
        columns: &clash,
        values: &clash_values,
    };
    let err = summarize_partitioned(&parts, clash).unwrap_err();
    assert_eq!(
        err.to_string(),
        "partition values: id is both a partition column and a column of the files"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
