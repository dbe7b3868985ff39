//! The column chunks a footer names, as the remote readers fetch within them. The readers
//! against a server answering ranged GETs: admin's `publish::staged` tests.

use super::chunks::{footer_len, needed_footer_len, Chunks};
use crate::testdata::{table, temp_dir, write};

use parquet::file::reader::{FileReader, SerializedFileReader};

/// A file of several row groups (700 rows each) of every kind of column, and its bytes.
fn file() -> (std::path::PathBuf, Vec<u8>) {
    let dir = temp_dir("remote-chunks");
    let path = dir.join("f.parquet");
    let batch = table(3000);
    let order: Vec<usize> = (0..batch.num_columns()).collect();
    write(&path, &batch, &order, true);
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

#[test]
fn the_footer_gives_every_column_chunks_exact_bytes_and_the_columns_next_chunk() {
    let (path, bytes) = file();
    let size = bytes.len() as u64;
    let chunks = Chunks::from_tail(&bytes, size).expect("the footer decodes");
    let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
    let metadata = reader.metadata();
    let groups = metadata.num_row_groups();
    let width = metadata.row_group(0).num_columns();
    assert!(groups >= 4, "{groups} row groups");
    // Every chunk of every row group, at the bytes parquet itself gives, in file order.
    let mut expected: Vec<(u64, u64, usize, usize)> = Vec::new();
    for g in 0..groups {
        for (c, column) in metadata.row_group(g).columns().iter().enumerate() {
            let (start, len) = column.byte_range();
            expected.push((start, start + len, g, c));
        }
    }
    expected.sort_unstable();
    assert_eq!(chunks.list.len(), groups * width);
    for (chunk, (start, end, group, column)) in chunks.list.iter().zip(&expected) {
        assert_eq!(
            (chunk.start, chunk.end, chunk.column),
            (*start, *end, *column)
        );
        // The same column's chunk in the next row group, none after the last.
        let next = chunk.next.map(|n| &expected[n]);
        match next {
            Some(&(_, _, g, c)) => assert_eq!((g, c), (group + 1, *column)),
            None => assert_eq!(*group, groups - 1),
        }
    }
    assert!(chunks.list.windows(2).all(|w| w[0].end <= w[1].start));
    // A byte of a chunk finds it; a byte before the first, or in the footer, none.
    for (k, chunk) in chunks.list.iter().enumerate() {
        assert_eq!(chunks.find(chunk.start), Some(k));
        assert_eq!(chunks.find(chunk.end - 1), Some(k));
    }
    assert_eq!(chunks.find(0), None, "the magic before the first chunk");
    assert_eq!(chunks.find(size - 1), None, "the footer");
}

#[test]
fn a_tail_that_holds_part_of_the_footer_says_how_much_is_missing() {
    let (_, bytes) = file();
    let size = bytes.len() as u64;
    let whole = footer_len(&bytes).expect("a Parquet footer");
    let tail = &bytes[bytes.len() - 100..];
    assert!(
        whole > 100,
        "the footer of {whole} bytes is longer than the tail"
    );
    assert_eq!(footer_len(tail), None, "not all there");
    assert_eq!(needed_footer_len(tail), Some(whole), "but its length is");
    assert_eq!(Chunks::from_tail(tail, size), None);
    // Not Parquet at all: no footer, no chunks (the reads then go by blocks).
    assert_eq!(needed_footer_len(b"a,b,c\n1,2,3\n"), None);
    assert_eq!(
        needed_footer_len(b"PAR1"),
        None,
        "shorter than a footer's last 8 bytes"
    );
    assert_eq!(Chunks::from_tail(b"\xff\xff\xff\xffPAR1", 8), None);
    // A footer naming chunks past the object's end: no chunks either.
    assert_eq!(Chunks::from_tail(&bytes, size / 2), None);
}
