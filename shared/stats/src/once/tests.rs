//! Passes planned from the footers: the same statistics, each column read in as few passes as
//! the answer allows, counted by the reads that start each column chunk.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_array::{ArrayRef, Float64Array, Int32Array, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::errors::ParquetError;
use parquet::file::reader::{ChunkReader, FileReader, Length, SerializedFileReader};

use crate::listed::LIST_LIMIT;
use crate::testdata::temp_dir;
use crate::{summarize_files_within, StatsError, StatsInput, MEMORY_BUDGET};

/// (file, offset, length) of every read of bytes.
type Reads = Arc<Mutex<Vec<(usize, u64, u64)>>>;

/// A local file whose reads of bytes are logged (offset, length), read once or not
/// ([`StatsInput::READ_ONCE`]).
struct Logged<const ONCE: bool> {
    file: usize,
    path: PathBuf,
    reads: Reads,
}

impl<const ONCE: bool> StatsInput for Logged<ONCE> {
    type Reader = LoggedReader;
    const READ_ONCE: bool = ONCE;

    fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn open(&self) -> Result<LoggedReader, StatsError> {
        let bytes = std::fs::read(&self.path).map_err(|e| StatsError::Io(self.name(), e))?;
        Ok(LoggedReader {
            file: self.file,
            bytes: Bytes::from(bytes),
            reads: self.reads.clone(),
        })
    }
}

/// Logs its reads of bytes: a page's data (its header is read by `get_read`).
struct LoggedReader {
    file: usize,
    bytes: Bytes,
    reads: Reads,
}

impl Length for LoggedReader {
    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }
}

impl ChunkReader for LoggedReader {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> Result<Self::T, ParquetError> {
        Ok(bytes::Buf::reader(self.bytes.slice(start as usize..)))
    }

    fn get_bytes(&self, start: u64, length: usize) -> Result<Bytes, ParquetError> {
        let read = (self.file, start, length as u64);
        self.reads.lock().unwrap().push(read);
        Ok(self.bytes.slice(start as usize..start as usize + length))
    }
}

/// Two files of `LIST_LIMIT / 2 + 3000` rows each: `id` (integers, each value once), `x`
/// (ascending floats, the largest row +∞, so that the footer's bound is not the column's
/// maximum), `few` (integers, half null: under LIST_LIMIT values) and `name` (text).
fn files(dir: &Path) -> Vec<PathBuf> {
    let rows = LIST_LIMIT / 2 + 3000;
    (0..2)
        .map(|f| {
            let base = f * rows;
            let id = Int64Array::from_iter_values(
                (0..rows).map(|i| ((base + i) * 7 % 1_000_003) as i64),
            );
            let x = Float64Array::from_iter_values((0..rows).map(|i| match (f, rows - 1 - i) {
                (1, 0) => f64::INFINITY,
                _ => (base + i) as f64 / 8.0,
            }));
            let few =
                Int32Array::from_iter((0..rows).map(|i| (i % 2 == 0).then_some((i % 13) as i32)));
            let name = StringArray::from_iter_values((0..rows).map(|i| format!("n{}", i % 50)));
            let columns: Vec<(&str, ArrayRef)> = vec![
                ("id", Arc::new(id)),
                ("x", Arc::new(x)),
                ("few", Arc::new(few)),
                ("name", Arc::new(name)),
            ];
            let batch = RecordBatch::try_from_iter(columns).unwrap();
            let path = dir.join(format!("part-{f}.parquet"));
            let mut writer =
                ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None)
                    .unwrap();
            writer.write(&batch).unwrap();
            writer.close().unwrap();
            path
        })
        .collect()
}

/// How many passes read each column: the bytes of its pages' data read, over its chunks'
/// bytes, rounded (the page headers are a few bytes of each page).
fn passes(paths: &[PathBuf], reads: &[(usize, u64, u64)]) -> Vec<(String, u64)> {
    let mut by_column: Vec<(String, u64, u64)> = Vec::new();
    for (file, path) in paths.iter().enumerate() {
        let reader = SerializedFileReader::new(std::fs::File::open(path).unwrap()).unwrap();
        let metadata = reader.metadata();
        for g in 0..metadata.num_row_groups() {
            for (c, chunk) in metadata.row_group(g).columns().iter().enumerate() {
                if by_column.len() <= c {
                    by_column.push((chunk.column_path().string(), 0, 0));
                }
                let (start, len) = chunk.byte_range();
                by_column[c].1 += len;
                by_column[c].2 += reads
                    .iter()
                    .filter(|(f, at, _)| *f == file && (start..start + len).contains(at))
                    .map(|(_, _, n)| n)
                    .sum::<u64>();
            }
        }
    }
    by_column
        .into_iter()
        .map(|(name, size, read)| (name, (read as f64 / size as f64).round() as u64))
        .collect()
}

#[test]
fn columns_past_the_list_limit_are_read_once_for_inputs_read_once_with_the_same_statistics() {
    let dir = temp_dir("once");
    let paths = files(&dir);
    let reads = Arc::new(Mutex::new(Vec::new()));
    let logged = |reads: &Reads| {
        paths
            .iter()
            .enumerate()
            .map(|(file, path)| Logged::<true> {
                file,
                path: path.clone(),
                reads: reads.clone(),
            })
            .collect::<Vec<_>>()
    };
    let once = summarize_files_within(&logged(&reads), MEMORY_BUDGET).unwrap();
    let once_reads = std::mem::take(&mut *reads.lock().unwrap());
    let twice_inputs: Vec<Logged<false>> = paths
        .iter()
        .enumerate()
        .map(|(file, path)| Logged::<false> {
            file,
            path: path.clone(),
            reads: reads.clone(),
        })
        .collect();
    let twice = summarize_files_within(&twice_inputs, MEMORY_BUDGET).unwrap();
    let twice_reads = std::mem::take(&mut *reads.lock().unwrap());
    // The same statistics, histograms too, as the files read from disk.
    let from_disk = summarize_files_within(&paths, MEMORY_BUDGET).unwrap();
    assert_eq!(once.columns, from_disk.columns);
    assert_eq!(twice.columns, from_disk.columns);
    let numbers = once.columns.iter().filter(|c| c.name != "name");
    assert!(numbers.clone().all(|c| c.histogram.is_some()) && numbers.count() == 3);
    // Read once: `id` in a pass of its own with the footers' bins; `x` there too, its
    // histogram counted in another (the footer's +∞ is not its maximum); `name` in the
    // shared pass. Otherwise `id` and `x` are read in the shared pass, then again.
    let once_passes = passes(&paths, &once_reads);
    let twice_passes = passes(&paths, &twice_reads);
    let read = |all: &[(String, u64)], name: &str| all.iter().find(|c| c.0 == name).unwrap().1;
    assert_eq!(read(&once_passes, "id"), 1, "{once_passes:?}");
    assert_eq!(read(&once_passes, "x"), 2, "{once_passes:?}");
    assert_eq!(read(&once_passes, "name"), 1, "{once_passes:?}");
    assert_eq!(read(&twice_passes, "id"), 2, "{twice_passes:?}");
    assert_eq!(read(&twice_passes, "x"), 2, "{twice_passes:?}");
    assert_eq!(read(&twice_passes, "name"), 1, "{twice_passes:?}");
    // `few` (under LIST_LIMIT values) outgrows its share of the shared pass either way.
    assert_eq!(read(&once_passes, "few"), read(&twice_passes, "few"));
    std::fs::remove_dir_all(dir).ok();
}

/// Bytes of each file's column chunks read, over their bytes, rounded: (file, column, passes).
fn passes_by_file(paths: &[PathBuf], reads: &[(usize, u64, u64)]) -> Vec<(usize, String, u64)> {
    let mut found = Vec::new();
    for (file, path) in paths.iter().enumerate() {
        let one = [path.clone()];
        let of_file: Vec<(usize, u64, u64)> = reads
            .iter()
            .filter(|r| r.0 == file)
            .map(|&(_, at, n)| (0, at, n))
            .collect();
        for (column, n) in passes(&one, &of_file) {
            found.push((file, column, n));
        }
    }
    found
}

#[test]
fn text_that_outgrows_its_share_in_the_first_file_is_left_out_of_the_others_in_that_pass() {
    let dir = temp_dir("once-text");
    // Three files: `word` of 20,000 distinct words each (its counts outgrow a share of a
    // 2 MiB budget within the first file), `tag` of three words, `n` small integers.
    let paths: Vec<PathBuf> = (0..3)
        .map(|f| {
            let rows = 20_000usize;
            let word = StringArray::from_iter_values(
                (0..rows).map(|i| format!("word-{:08}-{f}", i * 7919 % rows)),
            );
            let tag = StringArray::from_iter_values((0..rows).map(|i| ["a", "b", "c"][i % 3]));
            let n = Int64Array::from_iter_values((0..rows).map(|i| (i % 97) as i64));
            let columns: Vec<(&str, ArrayRef)> = vec![
                ("word", Arc::new(word)),
                ("tag", Arc::new(tag)),
                ("n", Arc::new(n)),
            ];
            let batch = RecordBatch::try_from_iter(columns).unwrap();
            let path = dir.join(format!("part-{f}.parquet"));
            let mut writer =
                ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), batch.schema(), None)
                    .unwrap();
            writer.write(&batch).unwrap();
            writer.close().unwrap();
            path
        })
        .collect();
    let budget = 2 << 20;
    let reads: Reads = Arc::new(Mutex::new(Vec::new()));
    let once_inputs: Vec<Logged<true>> = paths
        .iter()
        .enumerate()
        .map(|(file, path)| Logged::<true> {
            file,
            path: path.clone(),
            reads: reads.clone(),
        })
        .collect();
    let once = summarize_files_within(&once_inputs, budget).unwrap();
    let once_reads = std::mem::take(&mut *reads.lock().unwrap());
    let twice_inputs: Vec<Logged<false>> = paths
        .iter()
        .enumerate()
        .map(|(file, path)| Logged::<false> {
            file,
            path: path.clone(),
            reads: reads.clone(),
        })
        .collect();
    let twice = summarize_files_within(&twice_inputs, budget).unwrap();
    let twice_reads = std::mem::take(&mut *reads.lock().unwrap());
    let from_disk = summarize_files_within(&paths, budget).unwrap();
    assert_eq!(once.columns, from_disk.columns);
    assert_eq!(twice.columns, from_disk.columns);
    let word = once.columns.iter().find(|c| c.name == "word").unwrap();
    assert_eq!(
        word.unique_count, 60_000,
        "every word counted, from every file"
    );
    // `word` is read twice in the first file (its share outgrown there), once in the others;
    // read twice in every file otherwise. `tag` and `n` once either way.
    let of = |all: &[(usize, String, u64)], file: usize, name: &str| {
        all.iter().find(|c| c.0 == file && c.1 == name).unwrap().2
    };
    let once_passes = passes_by_file(&paths, &once_reads);
    let twice_passes = passes_by_file(&paths, &twice_reads);
    assert_eq!(
        (0..3)
            .map(|f| of(&once_passes, f, "word"))
            .collect::<Vec<_>>(),
        [2, 1, 1],
        "{once_passes:?}"
    );
    assert_eq!(
        (0..3)
            .map(|f| of(&twice_passes, f, "word"))
            .collect::<Vec<_>>(),
        [2, 2, 2],
        "{twice_passes:?}"
    );
    for file in 0..3 {
        for name in ["tag", "n"] {
            assert_eq!(of(&once_passes, file, name), 1, "{once_passes:?}");
            assert_eq!(of(&twice_passes, file, name), 1, "{twice_passes:?}");
        }
    }
    std::fs::remove_dir_all(dir).ok();
}
