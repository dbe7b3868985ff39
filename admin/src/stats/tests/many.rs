//! Statistics over many files are those of one file holding all their rows.

use crate::stats::testdata::*;
use crate::stats::*;

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
