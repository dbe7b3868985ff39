//! The conversion of JSON Lines: inference, bad lines named by file, line and key, skipping,
//! gzip.

use std::io::Write;

use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::Array;
use arrow_schema::{DataType, TimeUnit};

use super::error::OnError;
use super::schema::ColumnType;
use super::tests::{convert, refusal};
use super::Settings;

fn jsonl(text: &str) -> Result<super::tests::Run, super::error::IngestError> {
    convert("rows.jsonl", text.as_bytes(), &Settings::default())
}

#[test]
fn lines_are_typed_as_arrow_json_infers_and_dates_are_recognised() {
    let run = jsonl(concat!(
        r#"{"id": 1, "x": 1.5, "ok": true, "day": "2024-01-31", "at": "2024-01-31T10:00:00Z", "s": "a", "none": null}"#,
        "\n\n",
        r#"{"id": 2, "x": 2, "ok": false, "day": "2024-02-01", "at": "2024-02-01T09:00:00+01:00", "s": "b"}"#,
        "\n",
    ))
    .unwrap();
    let batch = run.batch();
    let types: Vec<(String, DataType)> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| (f.name().clone(), f.data_type().clone()))
        .collect();
    let expect = |name: &str| types.iter().find(|(n, _)| n == name).unwrap().1.clone();
    assert_eq!(expect("id"), DataType::Int64);
    assert_eq!(expect("x"), DataType::Float64);
    assert_eq!(expect("ok"), DataType::Boolean);
    assert_eq!(expect("day"), DataType::Date32);
    assert_eq!(
        expect("at"),
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(expect("s"), DataType::Utf8);
    assert_eq!(expect("none"), DataType::Utf8, "only ever null: a string");
    let index = |name: &str| batch.schema().index_of(name).unwrap();
    let ids = batch.column(index("id")).as_primitive::<Int64Type>();
    assert_eq!((ids.value(0), ids.value(1)), (1, 2));
    let days = batch.column(index("day")).as_primitive::<Date32Type>();
    assert_eq!(days.value(1) - days.value(0), 1);
    let at = batch
        .column(index("at"))
        .as_primitive::<TimestampMicrosecondType>();
    assert_eq!(at.value(1) - at.value(0), 22 * 3600 * 1_000_000);
    assert_eq!(batch.column(index("none")).null_count(), 2);
}

#[test]
fn each_bad_line_is_named_by_file_line_and_key() {
    let settings = Settings {
        infer_rows: 1,
        ..Settings::default()
    };
    let cases: [(&str, &[u8], &str); 6] = [
        (
            "not an object",
            b"{\"a\": 1}\n[1, 2]\n",
            "rows.jsonl, line 2: the line is not a JSON object",
        ),
        (
            "a value",
            b"{\"a\": 1}\n{\"a\": \"x\"}\n",
            "rows.jsonl, line 2, column 'a': \"x\" is not a valid int64",
        ),
        (
            "a new key",
            b"{\"a\": 1}\n{\"a\": 2, \"b\": 3}\n",
            "rows.jsonl, line 2, column 'b': a key the first lines did not have (the columns: a)",
        ),
        (
            "UTF-8",
            b"{\"a\": 1}\n{\"a\": \"\xff\"}\n",
            "rows.jsonl, line 2: the line is not valid UTF-8",
        ),
        ("empty", b"\n\n", "rows.jsonl: the file is empty"),
        (
            "nested",
            b"{\"a\": {\"b\": 1}}\n",
            "rows.jsonl, line 1, column 'a': a nested value",
        ),
    ];
    for (what, bytes, expected) in cases {
        let message = refusal(convert("rows.jsonl", bytes, &settings));
        assert!(message.contains(expected), "{what}: {message}");
        assert!(
            message.contains("/in/rows.jsonl"),
            "{what}: names the file: {message}"
        );
    }
    // Invalid JSON in the lines read for the types.
    let message = refusal(jsonl("{\"a\": 1}\n{\"a\": \n"));
    assert!(
        message.contains("rows.jsonl, line 2: not valid JSON ("),
        "{message}"
    );
}

#[test]
fn skip_and_gzip_and_a_forced_type() {
    let mut text = String::new();
    for i in 0..5 {
        text.push_str(&format!("{{\"n\": {i}, \"code\": \"00{i}\"}}\n"));
    }
    text.push_str("{\"n\": \"five\", \"code\": \"005\"}\n42\n");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let mut settings = Settings {
        on_error: OnError::Skip,
        infer_rows: 5,
        ..Settings::default()
    };
    settings.overrides.add_flag("n=float64").unwrap();
    let run = convert("rows.jsonl.gz", &gz.finish().unwrap(), &settings).unwrap();
    assert_eq!(run.rows, 5);
    assert_eq!(run.skipped.count, 2);
    let lines: Vec<u64> = run.skipped.first.iter().map(|r| r.line).collect();
    assert_eq!(
        lines,
        [7, 6],
        "the line not an object is met first, the bad value at its chunk"
    );
    assert_eq!(run.skipped.first[1].column.as_deref(), Some("n"));
    let batch = run.batch();
    let (n, code) = (
        batch.schema().index_of("n").unwrap(),
        batch.schema().index_of("code").unwrap(),
    );
    assert_eq!(
        batch.schema().field(n).data_type(),
        &ColumnType::Float64.data_type()
    );
    assert_eq!(
        batch.column(code).as_string::<i32>().value(0),
        "000",
        "a string kept as written"
    );
}
