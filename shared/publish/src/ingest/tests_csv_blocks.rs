//! CSV past the rows read for the schema, in blocks of whole records: split by csv-core where a
//! record ends (quoted line ends, doubled quotes, CRLF, blank lines, a last line without its
//! end, across the blocks' bounds), decoded as the rows read one by one are; a bad record in a
//! block named by its exact line and column, skipped ones counted and named.

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int64Type};

use super::csv_split::BLOCK_BYTES;
use super::error::OnError;
use super::tests::{convert, refusal};
use super::Settings;

/// Rows: several blocks of them.
const ROWS: usize = 90_000;

/// The note of row `i`: every 7th quoted over two lines, with a comma and a doubled quote.
fn note(i: usize) -> String {
    if i % 7 == 0 {
        format!("first {i}\r\nsecond \"quoted\", {i}")
    } else {
        format!("plain note of row {i}")
    }
}

/// `id,note,f` with CRLF line ends and a blank line every 1,000 rows; row `i` replaced by
/// `replace(i)` when it gives a record. Returns the bytes and the line each row starts on,
/// and the line after the last.
fn text(replace: &dyn Fn(usize) -> Option<Vec<u8>>) -> (Vec<u8>, Vec<u64>) {
    let mut out = b"id,note,f\r\n".to_vec();
    let mut lines = Vec::with_capacity(ROWS);
    let mut line = 2u64;
    for i in 0..ROWS {
        if i > 0 && i % 1000 == 0 {
            out.extend_from_slice(b"\r\n");
            line += 1;
        }
        lines.push(line);
        let record = replace(i).unwrap_or_else(|| {
            let note = note(i).replace('"', "\"\"");
            format!("{i},\"{note}\",{}.25\r\n", i % 100).into_bytes()
        });
        line += record.iter().filter(|b| **b == b'\n').count() as u64;
        out.extend_from_slice(&record);
    }
    lines.push(line);
    assert!(out.len() > 3 * BLOCK_BYTES, "several blocks: {}", out.len());
    (out, lines)
}

fn one_row_inferred(on_error: OnError) -> Settings {
    Settings {
        infer_rows: 1,
        on_error,
        ..Settings::default()
    }
}

#[test]
fn blocks_split_where_records_end_and_decode_as_rows_read_one_by_one() {
    let (bytes, _) = text(&|_| None);
    let blocks = convert("data.csv", &bytes, &one_row_inferred(OnError::Fail)).unwrap();
    assert_eq!(blocks.rows, ROWS as u64);
    let batch = blocks.batch();
    let ids = batch.column(0).as_primitive::<Int64Type>();
    let notes = batch.column(1).as_string::<i32>();
    let floats = batch.column(2).as_primitive::<Float64Type>();
    for i in 0..ROWS {
        assert_eq!(ids.value(i), i as i64);
        assert_eq!(notes.value(i), note(i), "row {i}");
        assert_eq!(floats.value(i), (i % 100) as f64 + 0.25);
    }
    // Every row read one by one (all of them read for the schema): the same batch.
    let settings = Settings {
        infer_rows: ROWS,
        ..Settings::default()
    };
    let one_by_one = convert("data.csv", &bytes, &settings).unwrap().batch();
    assert_eq!(batch, one_by_one);
    // The last line without its line end, or with a lone LF: the same rows.
    for end in [&b""[..], b"\n"] {
        let mut cut = bytes[..bytes.len() - 2].to_vec();
        cut.extend_from_slice(end);
        let run = convert("data.csv", &cut, &one_row_inferred(OnError::Fail)).unwrap();
        assert_eq!(run.batch(), batch, "ending {end:?}");
    }
}

#[test]
fn a_bad_record_in_a_block_is_named_by_its_exact_line_and_column() {
    let at = 45_001;
    let cases: [(&str, &[u8], &str); 4] = [
        (
            "too many",
            b"1,x,2.5,extra\r\n",
            "too many fields: 4 where the header has 3 (1 more)",
        ),
        (
            "too few",
            b"1,x\r\n",
            "too few fields: 2 where the header has 3 (1 fewer)",
        ),
        (
            "UTF-8",
            b"1,\"\xff\xfe\",2.5\r\n",
            "column 'note': the value is not valid UTF-8",
        ),
        (
            "a value",
            b"1,x,abc\r\n",
            "column 'f': 'abc' is not a valid float64",
        ),
    ];
    for (what, record, expected) in cases {
        let (bytes, lines) = text(&|i| (i == at).then(|| record.to_vec()));
        let message = refusal(convert(
            "data.csv",
            &bytes,
            &one_row_inferred(OnError::Fail),
        ));
        let named = format!(
            "data.csv, line {}{}{expected}",
            lines[at],
            if expected.starts_with("column") {
                ", "
            } else {
                ": "
            }
        );
        assert!(message.ends_with(&named), "{what}: {message}, not {named}");
    }
    // Two bad records in one block: the first line is named, whatever its kind.
    let (bytes, lines) = text(&|i| match i {
        45_001 => Some(b"1,x,abc\r\n".to_vec()),
        45_003 => Some(b"1,x\r\n".to_vec()),
        _ => None,
    });
    let message = refusal(convert(
        "data.csv",
        &bytes,
        &one_row_inferred(OnError::Fail),
    ));
    assert!(
        message.contains(&format!("line {}, column 'f'", lines[45_001])),
        "{message}"
    );
    // A quote left open in the last record: named by the line it starts on.
    let (mut bytes, lines) = text(&|_| None);
    let last = lines[ROWS];
    bytes.extend_from_slice(b"90000,\"open\r\n1,x,2.5\r\n");
    let message = refusal(convert(
        "data.csv",
        &bytes,
        &one_row_inferred(OnError::Fail),
    ));
    assert!(
        message.contains(&format!("data.csv, line {last}: unterminated quote")),
        "{message}"
    );
}

#[test]
fn skip_in_blocks_counts_each_bad_record_and_keeps_the_rest_in_order() {
    let bad = [20_000, 20_001, 45_001, ROWS - 1];
    let (mut bytes, lines) = text(&|i| match i {
        20_000 => Some(b"1,x,2.5,extra\r\n".to_vec()),
        20_001 => Some(b"1,\"\xff\",2.5\r\n".to_vec()),
        45_001 => Some(b"1,x,abc\r\n".to_vec()),
        i if i == ROWS - 1 => Some(b"1\r\n".to_vec()),
        _ => None,
    });
    bytes.extend_from_slice(b"90000,\"open\r\n");
    let run = convert("data.csv", &bytes, &one_row_inferred(OnError::Skip)).unwrap();
    assert_eq!(run.rows, (ROWS - bad.len()) as u64);
    assert_eq!(run.skipped.count, bad.len() as u64 + 1);
    let named: Vec<(u64, Option<&str>)> = run
        .skipped
        .first
        .iter()
        .map(|row| (row.line, row.column.as_deref()))
        .collect();
    let open_line = lines[ROWS];
    assert_eq!(
        named,
        [
            (lines[20_000], None),
            (lines[20_001], Some("note")),
            (lines[45_001], Some("f")),
            (lines[ROWS - 1], None),
            (open_line, None),
        ]
    );
    let batch = run.batch();
    let ids = batch.column(0).as_primitive::<Int64Type>();
    let kept: Vec<i64> = (0..ROWS)
        .filter(|i| !bad.contains(i))
        .map(|i| i as i64)
        .collect();
    assert_eq!(ids.values().to_vec(), kept);
    assert_eq!(batch.column(1).as_string::<i32>().value(7), note(7));
}
