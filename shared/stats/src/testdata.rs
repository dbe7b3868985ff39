//! Test files: a table of every kind of column, written whole or split into parts.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::builder::{Int64Builder, ListBuilder};
use arrow_array::types::Int32Type;
use arrow_array::*;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

/// A fresh directory under the system's temporary one.
pub(super) fn temp_dir(label: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("catalog-stats-{label}-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `rows` rows of integers, floats (nulls, NaN, ±infinity, −0.0), decimals, text (some longer
/// than 200 characters), a dictionary, booleans, dates, timestamps, unsigned 64-bit integers,
/// binary and lists: the values depend on the row number only.
pub(super) fn table(rows: usize) -> RecordBatch {
    let r = |i: usize| (i as u64).wrapping_mul(2_654_435_761) % 1_000_003;
    let id = Int64Array::from_iter_values((0..rows).map(|i| i as i64 * 3 - 500));
    let few = Int32Array::from_iter((0..rows).map(|i| (i % 7 != 3).then_some((r(i) % 11) as i32)));
    let x = Float64Array::from_iter((0..rows).map(|i| match i % 97 {
        5 => None,
        6 => Some(f64::NAN),
        7 => Some(-0.0),
        8 if i > 2000 => Some(f64::INFINITY),
        _ => Some((r(i) as f64 - 500_000.0) / 1_000.0),
    }));
    let price = Decimal128Array::from_iter((0..rows).map(|i| Some(r(i) as i128 - 400_000)))
        .with_precision_and_scale(10, 2)
        .unwrap();
    let name = StringArray::from_iter((0..rows).map(|i| match i % 13 {
        0 => None,
        1 => Some(format!("{}{}", "z".repeat(230), i % 3)),
        _ => Some(format!("name-{}", r(i) % 5_000)),
    }));
    let cat: DictionaryArray<Int32Type> = (0..rows)
        .map(|i| ["red", "green", "blue", "grey"][r(i) as usize % 4])
        .collect();
    let flag = BooleanArray::from_iter((0..rows).map(|i| (i % 5 != 0).then_some(r(i) % 3 == 0)));
    let day = Date32Array::from_iter_values((0..rows).map(|i| 19_000 + (r(i) % 400) as i32));
    let ts = TimestampMicrosecondArray::from_iter_values(
        (0..rows).map(|i| 1_700_000_000_000_000 + r(i) as i64 * 1_000_003),
    )
    .with_timezone("UTC");
    let big = UInt64Array::from_iter_values((0..rows).map(|i| u64::MAX - r(i) % 50));
    let blob = BinaryArray::from_iter((0..rows).map(|i| (i % 4 != 1).then(|| vec![i as u8; 3])));
    let mut tags = ListBuilder::new(Int64Builder::new());
    for i in 0..rows {
        if i % 6 == 0 {
            tags.append_null();
        } else {
            tags.values().append_value(i as i64);
            tags.values().append_value(r(i) as i64);
            tags.append(true);
        }
    }
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(id)),
        ("few", Arc::new(few)),
        ("x", Arc::new(x)),
        ("price", Arc::new(price)),
        ("name", Arc::new(name)),
        ("cat", Arc::new(cat)),
        ("flag", Arc::new(flag)),
        ("day", Arc::new(day)),
        ("ts", Arc::new(ts)),
        ("big", Arc::new(big)),
        ("blob", Arc::new(blob)),
        ("tags", Arc::new(tags.finish())),
    ];
    RecordBatch::try_from_iter(columns).unwrap()
}

/// Writes `batch` with its columns in the order of `order` (indices), in row groups of
/// `group_rows`, with or without statistics.
pub(super) fn write(path: &Path, batch: &RecordBatch, order: &[usize], statistics: bool) {
    let batch = batch.project(order).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_size(700)
        .set_statistics_enabled(if statistics {
            EnabledStatistics::Chunk
        } else {
            EnabledStatistics::None
        })
        .build();
    let file = std::fs::File::create(path).unwrap();
    let mut writer = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
}

/// Writes a file of one column of each of these types.
pub(super) fn write_columns(path: &Path, columns: Vec<(&str, ArrayRef)>) {
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let order: Vec<usize> = (0..batch.num_columns()).collect();
    write(path, &batch, &order, true);
}

/// Writes `table`'s rows into parts cut at `cuts` (row numbers), each part's columns in another
/// order: as written, reversed, rotated.
pub(super) fn split(dir: &Path, table: &arrow_array::RecordBatch, cuts: &[usize]) -> Vec<PathBuf> {
    let width = table.num_columns();
    let mut bounds = vec![0];
    bounds.extend_from_slice(cuts);
    bounds.push(table.num_rows());
    bounds
        .windows(2)
        .enumerate()
        .map(|(i, w)| {
            let mut order: Vec<usize> = (0..width).collect();
            match i % 3 {
                0 => {}
                1 => order.reverse(),
                _ => order.rotate_left(i % width),
            }
            let path = dir.join(format!("part-{i:04}.parquet"));
            write(&path, &table.slice(w[0], w[1] - w[0]), &order, i % 2 == 0);
            path
        })
        .collect()
}

pub(super) fn whole(dir: &Path, table: &arrow_array::RecordBatch) -> PathBuf {
    let path = dir.join("whole.parquet");
    let order: Vec<usize> = (0..table.num_columns()).collect();
    write(&path, table, &order, true);
    path
}
