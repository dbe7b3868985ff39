//! Per-file partial statistics and their merge: the same statistics as one pass over every
//! file where every file's partial is exact, and estimates within their stated bounds where
//! not.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, Int64Array, StringArray};
use rustc_hash::FxHashMap;

use super::*;
use crate::testdata::*;
use crate::{summarize_files, ColumnStats};

/// Every file's partial, written to JSON and read back (as the CLI and a Lambda function
/// hand them over), then merged.
fn fan_out(files: &[PathBuf]) -> Merged {
    let edges = edges(files).unwrap();
    let edges: Edges = serde_json::from_str(&serde_json::to_string(&edges).unwrap()).unwrap();
    let partials: Vec<FilePartial> = files
        .iter()
        .map(|f| {
            let partial = file_partial(f, &edges).unwrap();
            serde_json::from_str(&serde_json::to_string(&partial).unwrap()).unwrap()
        })
        .collect();
    merge(&partials).unwrap()
}

fn close(a: Option<f64>, b: Option<f64>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0),
        (a, b) => a == b,
    }
}

/// Equal but for the mean and std, which agree up to floating point (Chan's merge against
/// Welford's one pass).
fn assert_same(got: &ColumnStats, expected: &ColumnStats) {
    assert!(close(got.mean, expected.mean), "{}: mean {got:?}", got.name);
    assert!(close(got.std, expected.std), "{}: std {got:?}", got.name);
    let strip = |c: &ColumnStats| ColumnStats {
        mean: None,
        std: None,
        ..c.clone()
    };
    assert_eq!(strip(got), strip(expected));
}

/// Every kind of column (integers, floats with NaN, ±infinity and nulls, decimals, text with
/// values past 200 characters, a dictionary, booleans, dates, timestamps, unsigned 64-bit
/// integers, binary, lists), 6,000 rows in 9 files (one empty; their columns in three orders;
/// every other file without footer statistics, so the edges read those columns' data): the
/// merged partials are the statistics of one pass over every file, histograms, medians, top
/// values and sample values in file order included, and nothing is flagged approximate.
#[test]
fn merged_partials_are_the_statistics_of_every_file_read_in_one_pass() {
    let dir = temp_dir("partial-exact");
    let table = table(6_000);
    let cuts = [1, 750, 750, 1_500, 2_250, 3_000, 3_750, 4_500, 5_250];
    let parts = split(&dir, &table, &cuts);
    assert_eq!(parts.len(), 10);
    let expected = summarize_files(&parts).unwrap();
    let merged = fan_out(&parts);
    assert_eq!(merged.stats.row_count, 6_000);
    assert_eq!(merged.stats.columns.len(), expected.columns.len());
    for (got, want) in merged.stats.columns.iter().zip(&expected.columns) {
        assert_same(got, want);
    }
    assert!(merged.estimates.is_empty(), "{:?}", merged.estimates);
    // Not vacuous: every statistic is there where the column has it.
    let column = |name: &str| {
        merged
            .stats
            .columns
            .iter()
            .find(|c| c.name == name)
            .unwrap()
    };
    for name in ["id", "few", "x", "price", "day", "ts", "big"] {
        assert!(column(name).histogram.is_some(), "{name}");
    }
    for name in ["id", "few", "x", "price", "big"] {
        assert!(
            column(name).median.is_some() && column(name).std.is_some(),
            "{name}"
        );
    }
    assert_eq!(column("id").unique_count, 6_000);
    assert_eq!(column("id").sample_values, [-500, -497, -494, -491, -488]);
    assert_eq!(column("flag").top_values.len(), 2);
    assert!(column("x").null_count > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The edges from the footers are those read from the data: the same table written with and
/// without statistics.
#[test]
fn edges_from_footers_are_the_edges_from_the_data() {
    let dir = temp_dir("partial-edges");
    let table = table(3_000);
    let order: Vec<usize> = (0..table.num_columns()).collect();
    let (with, without) = (dir.join("with.parquet"), dir.join("without.parquet"));
    write(&with, &table, &order, true);
    write(&without, &table, &order, false);
    let (a, b) = (edges(&[&with]).unwrap(), edges(&[&without]).unwrap());
    assert_eq!(a.columns, b.columns);
    let bounds = |name: &str| a.column(name).unwrap().bounds.clone();
    assert_eq!(
        bounds("id"),
        Some(Bounds::Int {
            min: -500,
            max: 2_999 * 3 - 500
        })
    );
    // The footer's maximum of x is +infinity: the finite values' maximum is read instead.
    assert!(matches!(bounds("x"), Some(Bounds::Float { max, .. }) if max.is_finite()));
    assert_eq!(bounds("name"), None);
    let _ = std::fs::remove_dir_all(&dir);
}

fn one_column(dir: &Path, name: &str, file: &str, array: ArrayRef) -> PathBuf {
    let path = dir.join(file);
    write_columns(&path, vec![(name, array)]);
    path
}

/// A file outside the edges, partials counted with other edges, and partials of another
/// schema are refused with the file and column named.
#[test]
fn mismatched_edges_and_schemas_are_refused_by_name() {
    let dir = temp_dir("partial-refused");
    let a = one_column(
        &dir,
        "v",
        "a.parquet",
        Arc::new(Int64Array::from(vec![1, 2, 3])),
    );
    let b = one_column(
        &dir,
        "v",
        "b.parquet",
        Arc::new(Int64Array::from(vec![9, 10])),
    );
    let c = one_column(
        &dir,
        "v",
        "c.parquet",
        Arc::new(StringArray::from(vec!["x"])),
    );
    let only_a = edges(&[&a]).unwrap();
    let err = file_partial(&b, &only_a).unwrap_err().to_string();
    assert!(
        err.contains("b.parquet") && err.contains("\"v\"") && err.contains("outside"),
        "{err}"
    );
    let both = edges(&[&a, &b]).unwrap();
    let merged = merge(&[
        file_partial(&a, &both).unwrap(),
        file_partial(&b, &both).unwrap(),
    ]);
    assert_eq!(
        merged.unwrap().stats.columns[0]
            .histogram
            .as_ref()
            .unwrap()
            .counts
            .iter()
            .sum::<u64>(),
        5
    );
    // a's partial counted with edges over a and b, merged alone: other bins.
    let err = merge(&[file_partial(&a, &both).unwrap()])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("a.parquet") && err.contains("stats edges"),
        "{err}"
    );
    let err = edges(&[&a, &c]).unwrap_err().to_string();
    assert!(err.contains("c.parquet") && err.contains("v"), "{err}");
    let text_edges = edges(&[&c]).unwrap();
    let err = merge(&[
        file_partial(&a, &both).unwrap(),
        file_partial(&c, &text_edges).unwrap(),
    ])
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("c.parquet") && err.contains("do not share one schema"),
        "{err}"
    );
    let mut damaged = file_partial(&a, &only_a).unwrap();
    damaged.columns[0].count += 1;
    let err = merge(&[damaged]).unwrap_err().to_string();
    assert!(err.contains("damaged"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A tiny deterministic generator (splitmix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// Files built to stress the estimates: each file has its own frequent values (so a value
/// frequent overall is rare in most files), among tens of thousands of distinct rare ones,
/// and numbers skewed differently in each file. The merged unique count is within 3 % (about
/// 4 standard errors of HyperLogLog), every top count within `top_count_error` of the truth,
/// no unlisted value more frequent than the fifth plus that error, and the median's true rank
/// within `median_rank_error` of the middle; each partial stays small.
#[test]
fn estimates_stay_within_their_stated_bounds() {
    let dir = temp_dir("partial-bounds");
    let mut rng = Rng(7);
    let (mut all_text, mut all_numbers) = (Vec::new(), Vec::new());
    let mut files = Vec::new();
    for f in 0..4u64 {
        let rows = 60_000;
        let (mut texts, mut numbers) = (Vec::new(), Vec::new());
        for _ in 0..rows {
            let r = rng.next();
            let text = match r % 10 {
                // Frequent in this file: 6 values, one of them shared by every file.
                0..=3 => format!(
                    "hot-{}",
                    if r % 7 == 0 {
                        99
                    } else {
                        f * 10 + (r >> 8) % 5
                    }
                ),
                _ => format!("rare-{}", (r >> 8) % 200_000),
            };
            let x = ((r >> 11) as f64 / (1u64 << 53) as f64).powi(1 + f as i32) * 1e3 + f as f64;
            texts.push(text);
            numbers.push(x);
        }
        let path = dir.join(format!("part-{f}.parquet"));
        write_columns(
            &path,
            vec![
                (
                    "word",
                    Arc::new(StringArray::from(texts.clone())) as ArrayRef,
                ),
                ("x", Arc::new(Float64Array::from(numbers.clone()))),
            ],
        );
        files.push(path);
        all_text.extend(texts);
        all_numbers.extend(numbers);
    }
    let edges = edges(&files).unwrap();
    let partials: Vec<FilePartial> = files
        .iter()
        .map(|f| file_partial(f, &edges).unwrap())
        .collect();
    for p in &partials {
        let bytes = serde_json::to_string(p).unwrap().len();
        assert!(bytes < 96 << 10, "{}: {bytes} bytes", p.file);
    }
    let merged = merge(&partials).unwrap();
    let (word, x) = (&merged.stats.columns[0], &merged.stats.columns[1]);
    assert!(word.approximate && x.approximate);
    let estimate = |name: &str| merged.estimates.iter().find(|e| e.column == name).unwrap();

    let mut truth: FxHashMap<&str, u64> = FxHashMap::default();
    for t in &all_text {
        *truth.entry(t.as_str()).or_insert(0) += 1;
    }
    let distinct = truth.len() as f64;
    let relative = (word.unique_count as f64 - distinct).abs() / distinct;
    assert!(relative < 0.03, "{} against {distinct}", word.unique_count);
    let error = estimate("word").top_count_error;
    assert!(error > 0, "the stress reached the summary's reductions");
    for (value, count) in word.top_values.iter().zip(&word.top_counts) {
        let true_count = truth[value.as_str().unwrap()];
        assert!(
            *count <= true_count && true_count <= count + error,
            "{value}: {count} against {true_count}"
        );
    }
    let fifth = word.top_counts[4];
    for (value, count) in &truth {
        if !word.top_values.iter().any(|v| v == value) {
            assert!(*count <= fifth + error, "{value}: {count} unlisted");
        }
    }
    assert_eq!(word.top_values[0], "hot-99");

    let e = estimate("x");
    assert!(!e.median_sampled && e.median_rank_error > 0);
    let median = x.median.unwrap();
    let n = all_numbers.len() as u64;
    let below = all_numbers.iter().filter(|v| **v < median).count() as u64;
    let at_most = all_numbers.iter().filter(|v| **v <= median).count() as u64;
    assert!(below <= n / 2 + e.median_rank_error, "{below} below of {n}");
    assert!(
        at_most + e.median_rank_error >= n / 2,
        "{at_most} at most of {n}"
    );
    // The exact statistics still are: count, nulls, minimum, maximum, histogram.
    let one = summarize_files(&files).unwrap();
    assert_eq!(x.histogram, one.columns[1].histogram);
    assert_eq!(
        (x.min.clone(), x.max.clone()),
        (one.columns[1].min.clone(), one.columns[1].max.clone())
    );
    assert!(close(x.mean, one.columns[1].mean) && close(x.std, one.columns[1].std));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Long distinct text (6,000 values of 2,000 characters, 12 MB, one of them repeated) keeps a
/// partial small: the counters hold at most 4 MiB of text, the partial at most 64 KiB of top
/// values and 5 samples cut as shown; the repeated value is still the top one, its count within
/// the stated error.
#[test]
fn long_text_keeps_a_partial_small() {
    let dir = temp_dir("partial-long-text");
    let texts: Vec<String> = (0..6_000)
        .map(|i| {
            let n = if i % 3 == 0 { 0 } else { i };
            format!("{n:06}{}", "x".repeat(1_994))
        })
        .collect();
    let path = one_column(
        &dir,
        "t",
        "long.parquet",
        Arc::new(StringArray::from(texts)),
    );
    let edges = edges(&[&path]).unwrap();
    let partial = file_partial(&path, &edges).unwrap();
    let column = &partial.columns[0];
    assert!(column.values.is_none() && column.top_error > 0);
    let top_bytes: usize = column
        .top
        .iter()
        .map(|c| match &c.value {
            Key::Text(t) => t.len(),
            _ => 0,
        })
        .sum();
    assert!(top_bytes <= PARTIAL_TEXT_BYTES, "{top_bytes}");
    let bytes = serde_json::to_string(&partial).unwrap().len();
    assert!(bytes < 120 << 10, "{bytes} bytes");
    let merged = merge(&[partial]).unwrap();
    let t = &merged.stats.columns[0];
    let error = merged.estimates[0].top_count_error;
    assert!(t.top_counts[0] <= 2_000 && 2_000 <= t.top_counts[0] + error);
    assert!(t.top_values[0].as_str().unwrap().starts_with("000000x"));
    assert!(t.sample_values[0].as_str().unwrap().ends_with('…'));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Past [`SAMPLE_LIMIT`] numbers a file's quantile points come from a uniform sample: the
/// merged median is flagged `median_sampled`, and its true rank is within `median_rank_error`
/// plus 5 standard deviations of the sample's rank error (0.5 / √SAMPLE_LIMIT of each file's
/// values), though each file's values come in ascending order.
#[test]
fn a_sampled_median_stays_within_its_statistical_bound() {
    let dir = temp_dir("partial-sampled");
    let mut rng = Rng(11);
    let mut files = Vec::new();
    let mut all = Vec::new();
    for f in 0..2 {
        let mut numbers: Vec<f64> = (0..150_000)
            .map(|_| (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * (1.0 + f as f64))
            .collect();
        // Ascending in the file: a sample that favoured early values would be far off.
        numbers.sort_by(f64::total_cmp);
        all.extend_from_slice(&numbers);
        let path = one_column(
            &dir,
            "x",
            &format!("{f}.parquet"),
            Arc::new(Float64Array::from(numbers)),
        );
        files.push(path);
    }
    let edges = edges(&files).unwrap();
    let partials: Vec<FilePartial> = files
        .iter()
        .map(|f| file_partial(f, &edges).unwrap())
        .collect();
    let merged = merge(&partials).unwrap();
    let estimate = &merged.estimates[0];
    assert!(estimate.median_sampled);
    let median = merged.stats.columns[0].median.unwrap();
    let n = all.len() as f64;
    let slack = estimate.median_rank_error as f64
        + 5.0 * 0.5 * 150_000.0 / (SAMPLE_LIMIT as f64).sqrt() * 2.0;
    let below = all.iter().filter(|v| **v < median).count() as f64;
    assert!(
        (below - n / 2.0).abs() <= slack,
        "{below} below of {n}, slack {slack}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
