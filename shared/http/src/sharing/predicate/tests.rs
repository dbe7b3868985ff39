use catalog::files::{
    ChunkSummary, ColumnRange, FileEntry, PartitionColumn, PartitionType, PartitionValue, RelPath,
    StatValue, Summary, ValueRange,
};
use serde_json::{json, Value};

use super::*;

/// A version with file columns of every judged type and three partition columns.
fn summary() -> Summary {
    Summary {
        files: 1,
        rows: 5,
        bytes: 1,
        sha256: "0".repeat(64),
        columns: ["x", "l", "d", "s", "f", "b", "t"]
            .map(String::from)
            .to_vec(),
        partitions: vec![
            PartitionColumn {
                name: "year".into(),
                kind: PartitionType::Int64,
            },
            PartitionColumn {
                name: "day".into(),
                kind: PartitionType::Date,
            },
            PartitionColumn {
                name: "region".into(),
                kind: PartitionType::String,
            },
        ],
        splits: vec![],
        chunks: vec![],
    }
}

fn columns() -> Columns {
    Columns::of(&summary(), |name| {
        Some(
            match name {
                "x" => "int32",
                "l" => "int64",
                "d" => "date32[day]",
                "s" => "string",
                "f" => "double",
                "b" => "bool",
                "t" => "timestamp[us]",
                _ => return None,
            }
            .to_owned(),
        )
    })
}

fn range(min: StatValue, max: StatValue, nulls: u64) -> Option<ColumnRange> {
    Some(ColumnRange {
        min: Some(min),
        max: Some(max),
        null_count: Some(nulls),
    })
}

/// A file of 5 rows: x in [10, 20], l in [-5, 5_000_000_000], d in [2024-01-10, 2024-02-01],
/// s in ['b', 'm'], f in [0.5, 2.5], b all true, t unordered; year 2024, day 2024-03-01,
/// region 'eu'; no nulls.
fn file() -> FileEntry {
    use StatValue::*;
    FileEntry {
        path: RelPath::parse("year=2024/day=2024-03-01/region=eu/a.parquet").unwrap(),
        split: None,
        partitions: vec![
            PartitionValue::Int(2024),
            PartitionValue::parse(Some("2024-03-01"), PartitionType::Date).unwrap(),
            PartitionValue::Text("eu".into()),
        ],
        rows: 5,
        size: 1,
        sha256: "0".repeat(64),
        stats: vec![
            range(Int(10), Int(20), 0),
            range(Int(-5), Int(5_000_000_000), 0),
            range(Text("2024-01-10".into()), Text("2024-02-01".into()), 0),
            range(Text("b".into()), Text("m".into()), 0),
            range(Float(0.5), Float(2.5), 0),
            range(Bool(true), Bool(true), 0),
            range(
                Text("2024-01-01T00:00:00Z".into()),
                Text("2024-01-02T00:00:00Z".into()),
                0,
            ),
        ],
    }
}

fn col(name: &str, ty: &str) -> Value {
    json!({"op": "column", "name": name, "valueType": ty})
}

fn lit(value: &str, ty: &str) -> Value {
    json!({"op": "literal", "value": value, "valueType": ty})
}

fn op(name: &str, children: Vec<Value>) -> Value {
    json!({"op": name, "children": children})
}

fn judge_json(p: &Value, f: &FileEntry) -> Verdict {
    Predicate::new(vec![from_json(&p.to_string())], &columns()).judge(f)
}

fn judge_sql(p: &str, f: &FileEntry) -> Verdict {
    Predicate::new(vec![from_sql(p)], &columns()).judge(f)
}

use Verdict::{AllRows, Maybe, Skip};

#[test]
fn every_comparison_skips_exactly_the_files_it_is_certainly_false_for() {
    let f = file();
    // x in [10, 20], no nulls
    for (name, value, expected) in [
        ("equal", "15", Maybe),
        ("equal", "10", Maybe),
        ("equal", "9", Skip),
        ("equal", "21", Skip),
        ("lessThan", "10", Skip),
        ("lessThan", "11", Maybe),
        ("lessThan", "21", AllRows),
        ("lessThanOrEqual", "9", Skip),
        ("lessThanOrEqual", "10", Maybe),
        ("lessThanOrEqual", "20", AllRows),
        ("greaterThan", "20", Skip),
        ("greaterThan", "19", Maybe),
        ("greaterThan", "9", AllRows),
        ("greaterThanOrEqual", "21", Skip),
        ("greaterThanOrEqual", "20", Maybe),
        ("greaterThanOrEqual", "10", AllRows),
    ] {
        let p = op(name, vec![col("x", "int"), lit(value, "int")]);
        assert_eq!(judge_json(&p, &f), expected, "x {name} {value}");
        // The literal first: the operator read the other way round.
        let flipped = op(name, vec![lit(value, "int"), col("x", "int")]);
        let mirrored = match name {
            "lessThan" => "greaterThan",
            "lessThanOrEqual" => "greaterThanOrEqual",
            "greaterThan" => "lessThan",
            "greaterThanOrEqual" => "lessThanOrEqual",
            other => other,
        };
        let same = op(mirrored, vec![col("x", "int"), lit(value, "int")]);
        assert_eq!(
            judge_json(&flipped, &f),
            judge_json(&same, &f),
            "{value} {name} x"
        );
    }
    // A file holding one value: equality is then certain, and so is its negation.
    let mut one = file();
    one.stats[0] = range(StatValue::Int(15), StatValue::Int(15), 0);
    let eq = op("equal", vec![col("x", "int"), lit("15", "int")]);
    assert_eq!(judge_json(&eq, &one), AllRows);
    assert_eq!(judge_json(&op("not", vec![eq]), &one), Skip);
}

#[test]
fn each_type_is_judged_in_its_own_order() {
    let f = file();
    let cases = [
        // long, beyond 32 bits
        (
            op(
                "greaterThan",
                vec![col("l", "long"), lit("5000000000", "long")],
            ),
            Skip,
        ),
        (
            op(
                "greaterThan",
                vec![col("l", "long"), lit("4999999999", "long")],
            ),
            Maybe,
        ),
        // date column statistics, as text, compared as dates
        (
            op(
                "lessThan",
                vec![col("d", "date"), lit("2024-01-10", "date")],
            ),
            Skip,
        ),
        (
            op("equal", vec![col("d", "date"), lit("2024-01-31", "date")]),
            Maybe,
        ),
        (
            op(
                "greaterThan",
                vec![col("d", "date"), lit("2024-02-01", "date")],
            ),
            Skip,
        ),
        // strings by their bytes
        (
            op("lessThan", vec![col("s", "string"), lit("b", "string")]),
            Skip,
        ),
        (
            op("equal", vec![col("s", "string"), lit("k", "string")]),
            Maybe,
        ),
        (
            op("greaterThan", vec![col("s", "string"), lit("ma", "string")]),
            Skip,
        ),
        // doubles, with double and integer literals
        (
            op(
                "greaterThan",
                vec![col("f", "double"), lit("2.5", "double")],
            ),
            Skip,
        ),
        (
            op("greaterThan", vec![col("f", "double"), lit("2", "int")]),
            Maybe,
        ),
        (
            op("lessThan", vec![col("f", "double"), lit("0.5", "float")]),
            Skip,
        ),
        // booleans
        (
            op("equal", vec![col("b", "bool"), lit("false", "bool")]),
            Skip,
        ),
        (
            op("equal", vec![col("b", "bool"), lit("true", "bool")]),
            AllRows,
        ),
        // partition columns: int64, date, string, exactly
        (
            op("equal", vec![col("year", "int"), lit("2024", "int")]),
            AllRows,
        ),
        (
            op("equal", vec![col("year", "int"), lit("2023", "int")]),
            Skip,
        ),
        (
            op(
                "lessThan",
                vec![col("day", "date"), lit("2024-03-01", "date")],
            ),
            Skip,
        ),
        (
            op("equal", vec![col("region", "string"), lit("eu", "string")]),
            AllRows,
        ),
        (
            op("equal", vec![col("region", "string"), lit("us", "string")]),
            Skip,
        ),
    ];
    for (p, expected) in cases {
        assert_eq!(judge_json(&p, &f), expected, "{p}");
    }
}

#[test]
fn nulls_are_neither_true_nor_false() {
    // x all null (5 of 5 rows), s half null, f's null count unknown
    let mut f = file();
    f.stats[0] = Some(ColumnRange {
        min: None,
        max: None,
        null_count: Some(5),
    });
    f.stats[3] = range(StatValue::Text("b".into()), StatValue::Text("m".into()), 2);
    f.stats[4] = Some(ColumnRange {
        min: Some(StatValue::Float(0.5)),
        max: Some(StatValue::Float(2.5)),
        null_count: None,
    });
    let is_null = |c: &str, ty: &str| op("isNull", vec![col(c, ty)]);
    let cases = [
        // no row of x has a value: no comparison holds, and neither does its negation
        (op("equal", vec![col("x", "int"), lit("1", "int")]), Skip),
        (
            op(
                "not",
                vec![op("equal", vec![col("x", "int"), lit("1", "int")])],
            ),
            Skip,
        ),
        (is_null("x", "int"), AllRows),
        (op("not", vec![is_null("x", "int")]), Skip),
        // s: some null, some not
        (is_null("s", "string"), Maybe),
        (
            op(
                "greaterThanOrEqual",
                vec![col("s", "string"), lit("b", "string")],
            ),
            Maybe,
        ),
        // l: no null
        (is_null("l", "long"), Skip),
        (op("not", vec![is_null("l", "long")]), AllRows),
        // f: unknown null count
        (is_null("f", "double"), Maybe),
    ];
    for (p, expected) in cases {
        assert_eq!(judge_json(&p, &f), expected, "{p}");
    }
    // A null partition value (Hive's __HIVE_DEFAULT_PARTITION__).
    let mut hive_null = file();
    hive_null.partitions[2] = PartitionValue::Null;
    assert_eq!(
        judge_json(
            &op("equal", vec![col("region", "string"), lit("eu", "string")]),
            &hive_null
        ),
        Skip
    );
    assert_eq!(
        judge_json(&is_null("region", "string"), &hive_null),
        AllRows
    );
    // Unknown statistics: anything.
    let mut unknown = file();
    unknown.stats[0] = None;
    assert_eq!(judge_json(&is_null("x", "int"), &unknown), Maybe);
    assert_eq!(
        judge_json(
            &op("equal", vec![col("x", "int"), lit("99", "int")]),
            &unknown
        ),
        Maybe
    );
}

#[test]
fn what_is_not_understood_never_skips_a_file() {
    let f = file();
    let false_x = op("equal", vec![col("x", "int"), lit("99", "int")]);
    let unknown = [
        json!({"op": "like", "children": [col("s", "string"), lit("b%", "string")]}),
        op("equal", vec![col("nope", "int"), lit("1", "int")]),
        op("equal", vec![col("x", "string"), lit("99", "string")]),
        op("equal", vec![col("x", "int"), lit("ninety", "int")]),
        op("equal", vec![col("x", "timestamp"), lit("99", "timestamp")]),
        op("equal", vec![col("t", "string"), lit("2020", "string")]),
        op("equal", vec![col("x", "int"), col("l", "long")]),
        op("equal", vec![col("x", "int")]),
        op("not", vec![]),
        json!({"op": "equal"}),
        json!("x = 99"),
        json!(42),
    ];
    for p in &unknown {
        assert_eq!(judge_json(p, &f), Maybe, "{p}");
        // negated, still nothing known
        assert_eq!(
            judge_json(&op("not", vec![p.clone()]), &f),
            Maybe,
            "not {p}"
        );
        // beside a known false term: AND still skips, OR does not
        assert_eq!(
            judge_json(&op("and", vec![p.clone(), false_x.clone()]), &f),
            Skip,
            "{p} and false"
        );
        assert_eq!(
            judge_json(&op("or", vec![p.clone(), false_x.clone()]), &f),
            Maybe,
            "{p} or false"
        );
    }
    assert_eq!(from_json("{not json"), Expr::Unknown);
    assert_eq!(judge_json(&false_x, &f), Skip);
    // The column's name is matched ignoring case, when only one column matches.
    assert_eq!(
        judge_json(
            &op("equal", vec![col("YEAR", "int"), lit("2023", "int")]),
            &f
        ),
        Skip
    );
    // Two literals: judged exactly.
    let two = |a: &str, b: &str| op("lessThan", vec![lit(a, "int"), lit(b, "int")]);
    assert_eq!(judge_json(&two("1", "2"), &f), AllRows);
    assert_eq!(judge_json(&two("2", "1"), &f), Skip);
}

#[test]
fn sql_hints_are_read_for_the_forms_the_protocol_lists() {
    let f = file();
    for (sql, expected) in [
        ("x >= 21", Skip),
        ("x >= 10", AllRows),
        ("21 <= x", Skip),
        ("x = 15", Maybe),
        ("x <> 15", Maybe),
        ("year <> 2024", Skip),
        ("year = 2023", Skip),
        ("region = 'eu'", AllRows),
        ("'us' = region", Skip),
        ("day < '2024-03-01'", Skip),
        ("d > '2024-02-01'", Skip),
        ("s < 'b'", Skip),
        ("s = 'it''s'", Maybe),
        ("f > 2.5", Skip),
        ("b = false", Skip),
        ("x IS NULL", Skip),
        ("x is not null", AllRows),
        ("l < -5", Skip),
        // not understood: kept
        ("x = '15'", Maybe),
        ("s = 15", Maybe),
        ("x + 1 > 3", Maybe),
        ("x > 1 AND x < 3", Maybe),
        ("nope = 1", Maybe),
        ("x ~ 1", Maybe),
        ("'unterminated", Maybe),
        ("", Maybe),
    ] {
        assert_eq!(judge_sql(sql, &f), expected, "{sql}");
    }
    // Several hints are AND-ed.
    let p = Predicate::new(vec![from_sql("x > 1"), from_sql("year = 2023")], &columns());
    assert_eq!(p.judge(&f), Skip);
    assert!(Predicate::new(vec![], &columns()).is_empty());
    assert_eq!(Predicate::new(vec![], &columns()).judge(&f), AllRows);
}

#[test]
fn a_chunk_is_skipped_on_its_partition_ranges_alone() {
    let s = summary();
    let chunk = ChunkSummary {
        first_file: 0,
        files: 10,
        first_row: 0,
        rows: 50,
        partitions: vec![
            ValueRange {
                min: Some("2020".into()),
                max: Some("2022".into()),
                nulls: false,
            },
            ValueRange::default(),
            ValueRange {
                min: Some("eu".into()),
                max: Some("us".into()),
                nulls: true,
            },
        ],
        file_parts: 1,
        stat_parts: 1,
    };
    let may = |p: Value| {
        Predicate::new(vec![from_json(&p.to_string())], &columns()).may_match_chunk(&s, &chunk)
    };
    assert!(!may(op(
        "equal",
        vec![col("year", "int"), lit("2023", "int")]
    )));
    assert!(may(op(
        "equal",
        vec![col("year", "int"), lit("2021", "int")]
    )));
    assert!(!may(op(
        "lessThan",
        vec![col("year", "int"), lit("2020", "int")]
    )));
    assert!(!may(op("isNull", vec![col("year", "int")])));
    assert!(may(op("isNull", vec![col("region", "string")])));
    assert!(!may(op(
        "equal",
        vec![col("region", "string"), lit("zz", "string")]
    )));
    // file columns say nothing at the chunk's level
    assert!(may(op("equal", vec![col("x", "int"), lit("99", "int")])));
    // a range that holds nothing (not a chunk's): unknown, never wrongly skipped
    assert!(may(op("isNull", vec![col("day", "date")])));
}
