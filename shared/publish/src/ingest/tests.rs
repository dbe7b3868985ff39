//! The conversion of CSV and TSV: inference, overrides, bad input named by file, line and
//! column, skipping, compression, and the Parquet written.

use std::io::Write;
use std::path::PathBuf;

use ::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use ::parquet::file::reader::{FileReader, SerializedFileReader};
use arrow_array::cast::AsArray;
use arrow_array::types::{Date32Type, Float64Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use arrow_schema::{DataType, TimeUnit};

use super::error::{IngestError, OnError, Skipped};
use super::schema::{ColumnType, Overrides};
use super::source::{detect, Compression, Format};
use super::work::convert_one;
use super::*;

pub(super) struct Run {
    /// Holds the files until the run is dropped.
    pub _work: WorkDir,
    pub files: Vec<PathBuf>,
    pub rows: u64,
    pub skipped: Skipped,
}

impl Run {
    /// The rows of the (one) file written, in one batch.
    pub fn batch(&self) -> RecordBatch {
        assert_eq!(self.files.len(), 1, "{:?}", self.files);
        let batches: Vec<RecordBatch> =
            ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&self.files[0]).unwrap())
                .unwrap()
                .with_batch_size(1 << 20)
                .build()
                .unwrap()
                .map(Result::unwrap)
                .collect();
        assert_eq!(batches.len(), 1);
        batches.into_iter().next().unwrap()
    }
}

/// Writes `bytes` as `name` in a directory of its own and converts it.
pub(super) fn convert(name: &str, bytes: &[u8], settings: &Settings) -> Result<Run, IngestError> {
    let work = WorkDir::new(None).unwrap();
    let dir = work.path.join("in");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let (_, format, compression) = detect(name).expect("a text name");
    let input = Input {
        path,
        rel: name.to_owned(),
        format,
        compression,
    };
    let out = work.path.join("out");
    let (files, rows, skipped) = convert_one(&input, settings, &out)?;
    Ok(Run {
        _work: work,
        files,
        rows,
        skipped,
    })
}

pub(super) fn csv(text: &str) -> Result<Run, IngestError> {
    convert("data.csv", text.as_bytes(), &Settings::default())
}

/// The message of a bad input, which must name the file.
pub(super) fn refusal(result: Result<Run, IngestError>) -> String {
    match result {
        Err(e @ IngestError::Bad(_)) => e.to_string(),
        Err(other) => panic!("not a bad-input error: {other:?}"),
        Ok(run) => panic!("converted {} rows", run.rows),
    }
}

#[test]
fn names_are_read_as_formats_and_compressions() {
    assert_eq!(detect("a.csv"), Some(("a", Format::Csv, Compression::None)));
    assert_eq!(
        detect("a.TSV.gz"),
        Some(("a", Format::Tsv, Compression::Gzip))
    );
    assert_eq!(
        detect("x.y.jsonl.zst"),
        Some(("x.y", Format::JsonLines, Compression::Zstd))
    );
    assert_eq!(
        detect("a.ndjson"),
        Some(("a", Format::JsonLines, Compression::None))
    );
    assert_eq!(detect("a.parquet"), None);
    assert_eq!(detect("a.gz"), None);
    assert_eq!(detect(".csv"), None);
    assert_eq!(source::stem_of("data.txt.gz"), "data");
}

#[test]
fn sizes_and_delimiters_parse() {
    assert_eq!(parse_size("256M").unwrap(), 256 << 20);
    assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
    assert_eq!(parse_size("2097152").unwrap(), 2 << 20);
    assert!(parse_size("12K").is_err(), "under 1 MiB");
    assert!(parse_size("lots").is_err());
    assert_eq!(parse_delimiter(";").unwrap(), b';');
    assert_eq!(parse_delimiter("\\t").unwrap(), b'\t');
    assert!(parse_delimiter("ab").is_err());
    assert!(parse_delimiter("\"").is_err());
}

#[test]
fn inference_recognises_each_type() {
    let run = csv("i,f,b,d,ts,tz,s,empty\n\
                   1,1.5,true,2024-01-31,2024-01-31 10:00:00,2024-01-31T10:00:00Z,x,\n\
                   -7,2,False,2024-02-01,2024-02-01T11:30:00.123456,2024-02-01T11:00:00+02:00,\"y, z\",\n\
                   ,,,,,,,\n")
    .unwrap();
    let batch = run.batch();
    let types: Vec<DataType> = batch
        .schema()
        .fields()
        .iter()
        .map(|f| f.data_type().clone())
        .collect();
    assert_eq!(
        types,
        vec![
            DataType::Int64,
            DataType::Float64,
            DataType::Boolean,
            DataType::Date32,
            DataType::Timestamp(TimeUnit::Microsecond, None),
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            DataType::Utf8,
            DataType::Utf8,
        ]
    );
    assert_eq!(run.rows, 3);
    let ints = batch.column(0).as_primitive::<Int64Type>();
    assert_eq!(
        (ints.value(0), ints.value(1), ints.is_null(2)),
        (1, -7, true)
    );
    let floats = batch.column(1).as_primitive::<Float64Type>();
    assert_eq!((floats.value(0), floats.value(1)), (1.5, 2.0));
    let bools = batch.column(2).as_boolean();
    assert_eq!((bools.value(0), bools.value(1)), (true, false));
    let dates = batch.column(3).as_primitive::<Date32Type>();
    assert_eq!(dates.value(0), 19753, "2024-01-31 is day 19753");
    let ts = batch.column(4).as_primitive::<TimestampMicrosecondType>();
    assert_eq!(
        ts.value(1) - ts.value(0),
        (25 * 3600 + 30 * 60) * 1_000_000 + 123_456
    );
    let tz = batch.column(5).as_primitive::<TimestampMicrosecondType>();
    // 11:00 at +02:00 is 09:00 UTC, 23 hours after 10:00 UTC the day before.
    assert_eq!(tz.value(1) - tz.value(0), 23 * 3600 * 1_000_000);
    assert_eq!(batch.column(6).as_string::<i32>().value(1), "y, z");
    assert_eq!(batch.column(7).null_count(), 3, "an empty field is null");
}

#[test]
fn inference_reads_only_the_rows_it_is_told() {
    // The first two rows are integers; the third is not: past --infer-rows, it is bad input.
    let settings = Settings {
        infer_rows: 2,
        ..Settings::default()
    };
    let message = refusal(convert("n.csv", b"n\n1\n2\n2.5\n", &settings));
    assert!(
        message.contains("n.csv, line 4, column 'n': '2.5' is not a valid int64"),
        "{message}"
    );
    // Reading three rows, the column is a float.
    let settings = Settings {
        infer_rows: 3,
        ..Settings::default()
    };
    let run = convert("n.csv", b"n\n1\n2\n2.5\n", &settings).unwrap();
    assert_eq!(
        run.batch().schema().field(0).data_type(),
        &DataType::Float64
    );
}

#[test]
fn overrides_fix_types_and_nulls_are_chosen() {
    let mut overrides = Overrides::default();
    overrides.add_flag("code=string").unwrap();
    overrides.add_flag("when=timestamp_tz").unwrap();
    let settings = Settings {
        overrides,
        nulls: vec!["NA".into()],
        ..Settings::default()
    };
    let run = convert(
        "o.csv",
        b"code,when,x\n007,2024-01-01 00:00:00,NA\n010,2024-01-02 00:00:00,3\n",
        &settings,
    )
    .unwrap();
    let batch = run.batch();
    assert_eq!(
        batch.column(0).as_string::<i32>().value(0),
        "007",
        "kept as written"
    );
    assert_eq!(
        batch.schema().field(1).data_type(),
        &ColumnType::TimestampTz.data_type()
    );
    assert_eq!(batch.schema().field(2).data_type(), &DataType::Int64);
    assert!(batch.column(2).is_null(0), "NA is null");

    let mut overrides = Overrides::default();
    overrides.add_flag("nope=int64").unwrap();
    let settings = Settings {
        overrides,
        ..Settings::default()
    };
    let message = refusal(convert("o.csv", b"a\n1\n", &settings));
    assert!(message.contains("o.csv, column 'nope': the schema names a column the file does not have (its columns: a)"), "{message}");
    assert!(Overrides::default().add_flag("a=int32").is_err());
    assert!(Overrides::default().add_flag("a").is_err());
}

#[test]
fn a_schema_file_is_json_or_yaml() {
    let work = WorkDir::new(None).unwrap();
    let json = work.path.join("s.json");
    std::fs::write(&json, r#"{"a": "float64", "b": "date"}"#).unwrap();
    let yaml = work.path.join("s.yaml");
    std::fs::write(&yaml, "a: bool\nb: string\n").unwrap();
    let from_json = Overrides::from_file(&json).unwrap();
    assert_eq!(from_json.types["a"], ColumnType::Float64);
    assert_eq!(from_json.types["b"], ColumnType::Date);
    let from_yaml = Overrides::from_file(&yaml).unwrap();
    assert_eq!(from_yaml.types["a"], ColumnType::Bool);
    let bad = work.path.join("bad.json");
    std::fs::write(&bad, r#"{"a": "decimal"}"#).unwrap();
    let message = Overrides::from_file(&bad).unwrap_err().to_string();
    assert!(
        message.contains("column 'a': unknown type 'decimal'"),
        "{message}"
    );
}

#[test]
fn each_bad_row_is_named_by_file_line_and_column() {
    let cases: [(&str, &[u8], &str); 9] = [
        (
            "too many",
            b"a,b\n1,2\n3,4,5\n",
            "data.csv, line 3: too many fields: 3 where the header has 2",
        ),
        (
            "too few",
            b"a,b\n1,2\n3\n",
            "data.csv, line 3: too few fields: 1 where the header has 2",
        ),
        (
            "a value",
            b"a,b\n1,true\n2,maybe\n",
            "data.csv, line 3, column 'b': 'maybe' is not a valid bool",
        ),
        (
            "UTF-8",
            b"a,b\n1,x\n2,\xff\xfe\n",
            "data.csv, line 3, column 'b': the value is not valid UTF-8",
        ),
        (
            "an open quote",
            b"a,b\n1,x\n2,\"open\n3,y\n",
            "data.csv, line 3: unterminated quote",
        ),
        ("empty", b"", "data.csv: the file is empty"),
        (
            "a header only",
            b"a,b\n",
            "data.csv: the file has a header and no rows",
        ),
        (
            "a name twice",
            b"a,b,a\n1,2,3\n",
            "data.csv, line 1, column 'a': the header names this column twice (columns 1 and 3)",
        ),
        (
            "a name empty",
            b"a,,c\n1,2,3\n",
            "data.csv, line 1: the header's column 2 has no name",
        ),
    ];
    // The first row alone is read for the types: later values are held to them.
    let settings = Settings {
        infer_rows: 1,
        ..Settings::default()
    };
    for (what, bytes, expected) in cases {
        let message = refusal(convert("data.csv", bytes, &settings));
        assert!(
            message.ends_with(expected) || message.contains(expected),
            "{what}: {message}"
        );
        assert!(
            message.contains("/in/data.csv"),
            "{what}: names the file: {message}"
        );
    }
}

#[test]
fn lines_count_the_header_and_the_lines_of_quoted_fields() {
    let text = "a,b\n1,\"two\nlines\"\n\n2,x\n3,bad,extra\n";
    let message = refusal(csv(text));
    assert!(message.contains("line 6: too many fields"), "{message}");
    // A bad value in a later chunk, far down.
    let mut big = String::from("n,s\n");
    for i in 0..20_000 {
        big.push_str(&format!("{i},x\n"));
    }
    big.push_str("oops,y\n");
    let settings = Settings {
        infer_rows: 100,
        ..Settings::default()
    };
    let message = refusal(convert("big.csv", big.as_bytes(), &settings));
    assert!(
        message.contains("big.csv, line 20002, column 'n': 'oops' is not a valid int64"),
        "{message}"
    );
}

#[test]
fn skip_leaves_bad_rows_out_counted_and_named() {
    let settings = Settings {
        on_error: OnError::Skip,
        infer_rows: 1,
        ..Settings::default()
    };
    let mut text = String::from("a,b\n1,x\n");
    for i in 0..12 {
        text.push_str(&format!("{i},y,z\n"));
    }
    text.push_str("bad,y\n5,z\n");
    let run = convert("s.csv", text.as_bytes(), &settings).unwrap();
    assert_eq!(run.rows, 2);
    assert_eq!(run.skipped.count, 13);
    assert_eq!(run.skipped.first.len(), error::FIRST_SKIPPED);
    assert_eq!(run.skipped.first[0].line, 3);
    assert!(run.skipped.first[0].reason.starts_with("too many fields"));
    let ints = run.batch();
    let ints = ints.column(0).as_primitive::<Int64Type>();
    assert_eq!((ints.value(0), ints.value(1)), (1, 5));
    // Every row bad: nothing to publish.
    let message = refusal(convert("s.csv", b"a,b\n1\n2\n", &settings));
    assert!(
        message.contains("no row left to publish: all 2 were skipped"),
        "{message}"
    );
}

#[test]
fn gzip_zstd_tsv_and_other_delimiters_read_the_same() {
    let text = "a\tb\n1\tx y\n2\tz\n";
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(text.as_bytes()).unwrap();
    let gz = gz.finish().unwrap();
    let zst = zstd::encode_all(text.as_bytes(), 3).unwrap();
    let plain = convert("t.tsv", text.as_bytes(), &Settings::default())
        .unwrap()
        .batch();
    for (name, bytes) in [("t.tsv.gz", gz), ("t.tsv.zst", zst)] {
        let got = convert(name, &bytes, &Settings::default()).unwrap().batch();
        assert_eq!(got, plain, "{name}");
    }
    assert_eq!(plain.column(1).as_string::<i32>().value(0), "x y");
    let settings = Settings {
        delimiter: Some(b';'),
        ..Settings::default()
    };
    let semi = convert("s.csv", b"a;b\n1;x y\n2;z\n", &settings)
        .unwrap()
        .batch();
    assert_eq!(semi, plain);
    // A corrupt gzip stream names the file.
    let message = refusal(convert(
        "c.csv.gz",
        b"\x1f\x8b\x08\x00garbage",
        &Settings::default(),
    ));
    assert!(message.contains("c.csv.gz"), "{message}");
}

#[test]
fn the_parquet_has_zstd_a_page_index_and_splits_at_the_target_size() {
    let mut text = String::from("id,word\n");
    for i in 0..300_000u64 {
        text.push_str(&format!(
            "{},{:x}\n",
            i,
            i.wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ));
    }
    let settings = Settings {
        target_file_size: 1 << 20,
        ..Settings::default()
    };
    let run = convert("big.csv", text.as_bytes(), &settings).unwrap();
    assert!(run.files.len() > 1, "split: {:?}", run.files);
    assert!(
        run.files[0].ends_with("out/big-part-00000.parquet"),
        "{:?}",
        run.files[0]
    );
    let mut rows = 0;
    for file in &run.files {
        let reader = SerializedFileReader::new_with_options(
            std::fs::File::open(file).unwrap(),
            ::parquet::file::serialized_reader::ReadOptionsBuilder::new()
                .with_page_index()
                .build(),
        )
        .unwrap();
        let meta = reader.metadata();
        rows += meta.file_metadata().num_rows();
        assert!(meta.offset_index().is_some(), "an offset index");
        assert!(meta.column_index().is_some(), "a column index");
        for group in meta.row_groups() {
            assert!(group.num_rows() as usize <= parquet::ROW_GROUP_ROWS);
            for column in group.columns() {
                assert!(matches!(
                    column.compression(),
                    ::parquet::basic::Compression::ZSTD(_)
                ));
                assert!(column.statistics().is_some());
            }
        }
    }
    assert_eq!(rows, 300_000);
    let one = convert("one.csv", b"a\n1\n", &Settings::default()).unwrap();
    assert_eq!(one.files.len(), 1);
    assert!(
        one.files[0].ends_with("out/one.parquet"),
        "{:?}",
        one.files[0]
    );
}

#[test]
fn text_and_parquet_are_not_mixed_and_paths_keep_their_directories() {
    let work = WorkDir::new(None).unwrap();
    let root = work.path.join("sales");
    for rel in ["train/a.csv", "test/b.jsonl.gz", "README.md"] {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, b"x").unwrap();
    }
    let found = text_inputs(std::slice::from_ref(&root), None)
        .unwrap()
        .unwrap();
    let rels: Vec<&str> = found.iter().map(|i| i.rel.as_str()).collect();
    assert_eq!(rels, ["test/b.jsonl.gz", "train/a.csv"]);
    assert_eq!(found[0].compression, Compression::Gzip);
    std::fs::write(root.join("train/c.parquet"), b"PAR1").unwrap();
    let message = text_inputs(std::slice::from_ref(&root), None)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("c.parquet is not CSV, TSV or JSON Lines"),
        "{message}"
    );
    assert_eq!(
        text_inputs(&[root.join("train/c.parquet")], None).unwrap(),
        None
    );
    let message = text_inputs(&[root.join("missing.csv")], None)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("cannot read") && message.contains("missing.csv"),
        "{message}"
    );
    std::fs::write(root.join("test/b.csv"), b"x").unwrap();
    let message = text_inputs(&[root.join("test")], None)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("would both become 'b.parquet'"),
        "{message}"
    );
}

#[test]
fn the_parquet_draws_no_preview_warning() {
    // Mixed columns, one of them of many distinct strings (its dictionary fills up).
    let mut text = String::from("id,name,price,day,ok,note\n");
    for i in 0..400_000u64 {
        let h = i.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        text.push_str(&format!(
            "{i},w-{},{}.{:03},2024-{:02}-{:02},{},\"some text, quoted {i}\"\n",
            h % 600_000,
            (h >> 20) % 1000,
            (h >> 40) % 1000,
            h % 12 + 1,
            h % 28 + 1,
            h % 2 == 0
        ));
    }
    let run = convert("mixed.csv", text.as_bytes(), &Settings::default()).unwrap();
    assert_eq!(run.files.len(), 1);
    let file = std::fs::File::open(&run.files[0]).unwrap();
    let size = file.metadata().unwrap().len();
    let meta = ::parquet::file::metadata::ParquetMetaDataReader::new()
        .with_page_index_policy(::parquet::file::metadata::PageIndexPolicy::Required)
        .parse_and_finish(&file)
        .unwrap();
    assert!(meta.num_row_groups() > 1);
    assert_eq!(catalog_preview::plan::preview_warning(&meta, size), None);
    // Well under the warning's 1 MB: with dictionaries of up to 1 MiB (parquet's default) this
    // file's worst page of 100 rows reads 1.0 MB, with 128 KiB 0.3 MB.
    let cost = catalog_preview::plan::preview_cost(&meta, 100, &Default::default());
    assert!(cost.worst_bytes < 512 * 1024, "{}", cost.worst_bytes);
}

#[test]
fn a_forced_format_reads_any_name_and_its_compression() {
    let work = WorkDir::new(None).unwrap();
    let file = work.path.join("export.txt.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"{\"a\": 1}\n").unwrap();
    std::fs::write(&file, gz.finish().unwrap()).unwrap();
    // Without --format the name says nothing: not a text input.
    assert_eq!(
        text_inputs(std::slice::from_ref(&file), None).unwrap(),
        None
    );
    let found = text_inputs(std::slice::from_ref(&file), Some(Format::JsonLines))
        .unwrap()
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(
        (found[0].format, found[0].compression),
        (Format::JsonLines, Compression::Gzip)
    );
    let (files, rows, _) =
        convert_one(&found[0], &Settings::default(), &work.path.join("out")).unwrap();
    assert_eq!(rows, 1);
    assert!(files[0].ends_with("out/export.parquet"), "{:?}", files[0]);
}

#[test]
fn many_chunks_decode_in_order_and_a_bad_row_far_in_stops_at_its_line() {
    // 100,000 rows: about a dozen chunks, decoded on several threads.
    let mut text = String::from("id,name\n");
    for i in 0..100_000u64 {
        text.push_str(&format!("{i},n{i}\n"));
    }
    let run = csv(&text).unwrap();
    assert_eq!(run.rows, 100_000);
    let batch = run.batch();
    let ids = batch.column(0).as_primitive::<Int64Type>();
    assert!(
        (0..100_000).all(|i| ids.value(i) == i as i64),
        "the rows keep the input's order"
    );
    // A bad value in the ninth chunk, and a bad record further on: the value's line is named
    // (rows before it decoded in order), and the conversion stops rather than reading on.
    let mut bad = text.clone();
    bad.push_str("x,late\n");
    let at = bad.find("\n70000,").unwrap() + 1;
    bad.replace_range(at..at + 5, "70k00");
    bad.push_str("1,2,3\n");
    let message = refusal(csv(&bad));
    assert!(
        message.contains("data.csv, line 70002, column 'id': '70k00' is not a valid int64"),
        "{message}"
    );
    // Skipped: both, counted, in line order.
    let settings = Settings {
        on_error: OnError::Skip,
        ..Settings::default()
    };
    let run = convert("data.csv", bad.as_bytes(), &settings).unwrap();
    assert_eq!(run.rows, 99_999);
    assert_eq!(run.skipped.count, 3);
    let lines: Vec<u64> = run.skipped.first.iter().map(|r| r.line).collect();
    assert_eq!(lines, [70_002, 100_002, 100_003]);
}
