use super::partition::{check_not_columns, infer_type, percent_decode, segments};
use super::*;

fn path(p: &str) -> RelPath {
    RelPath::parse(p).unwrap()
}

fn file(p: &str, split: Option<&str>, rows: u64) -> FileInput {
    FileInput {
        path: path(p),
        split: split.map(|s| SplitName::parse(s).unwrap()),
        rows,
        size: rows * 10,
        sha256: format!("{:064x}", rows),
        stats: Vec::new(),
    }
}

fn build(files: Vec<FileInput>) -> Result<Manifest, FilesError> {
    Manifest::build(ManifestInput {
        files,
        columns: vec!["a".into(), "b".into()],
        ..Default::default()
    })
}

#[test]
fn relative_paths_are_accepted_as_given() {
    for ok in [
        "a.parquet",
        "year=2024/part-0.parquet",
        "data/train-00000-of-00002.parquet",
        "é/x y.parquet",
        "..a/b..",
        "a/.hidden",
    ] {
        assert_eq!(RelPath::parse(ok).unwrap().as_str(), ok);
    }
    let p = path("data/year=2024/f.parquet");
    assert_eq!(p.directories().collect::<Vec<_>>(), ["data", "year=2024"]);
    assert_eq!(p.file_name(), "f.parquet");
    assert_eq!(path("f.parquet").directories().count(), 0);
}

#[test]
fn bad_paths_are_refused_naming_the_path_and_the_problem() {
    let cases = [
        ("", PathProblem::Empty),
        ("/etc/passwd", PathProblem::Absolute),
        ("C:/data/f.parquet", PathProblem::Absolute),
        ("a\\b.parquet", PathProblem::Backslash),
        ("a/\u{7}.parquet", PathProblem::Control),
        ("a\n.parquet", PathProblem::Control),
        ("a//b.parquet", PathProblem::EmptySegment),
        ("a/", PathProblem::EmptySegment),
        ("../b.parquet", PathProblem::DotSegment("..")),
        ("a/../b.parquet", PathProblem::DotSegment("..")),
        ("./b.parquet", PathProblem::DotSegment(".")),
    ];
    for (raw, problem) in cases {
        let err = RelPath::parse(raw).unwrap_err();
        assert_eq!(
            err,
            FilesError::Path {
                path: raw.to_owned(),
                problem: problem.clone()
            },
            "{raw:?}"
        );
    }
    let msg = RelPath::parse("../secret").unwrap_err().to_string();
    assert_eq!(msg, "file path '../secret' has a '..' segment");
    let long = "a".repeat(RelPath::MAX_BYTES + 1);
    let err = RelPath::parse(&long).unwrap_err();
    assert!(matches!(
        &err,
        FilesError::Path {
            problem: PathProblem::TooLong(1025),
            ..
        }
    ));
    assert!(
        err.to_string().len() < 200,
        "the path is not repeated whole: {err}"
    );
    assert!(RelPath::parse(&"a".repeat(RelPath::MAX_BYTES)).is_ok());
}

#[test]
fn split_names_follow_the_pattern() {
    for ok in [
        "train",
        "validation",
        "test_2",
        "en.train",
        "A.b.C",
        &"x".repeat(64),
    ] {
        assert_eq!(SplitName::parse(ok).unwrap().as_str(), ok);
    }
    for bad in [
        "",
        "a-b",
        "a..b",
        ".a",
        "a.",
        "a b",
        "a/b",
        "é",
        "a%20",
        &"x".repeat(65),
    ] {
        let err = SplitName::parse(bad).unwrap_err();
        assert_eq!(err, FilesError::SplitName(crate::input::echo(bad)), "{bad}");
        assert!(err.to_string().contains("ASCII letters, digits and '_'"));
    }
}

#[test]
fn partition_segments_are_decoded_with_nulls() {
    let seg = |p: &str| segments(&path(p)).unwrap();
    assert_eq!(
        seg("year=2024/city=New%20York/x=a%3Db/f=1.parquet"),
        [
            ("year".to_owned(), Some("2024".to_owned())),
            ("city".to_owned(), Some("New York".to_owned())),
            ("x".to_owned(), Some("a=b".to_owned())),
        ],
        "the file's own name is never a partition"
    );
    assert_eq!(
        seg("train/k=__HIVE_DEFAULT_PARTITION__/f.parquet"),
        [("k".to_owned(), None)]
    );
    assert_eq!(
        seg("a=b=c/f.parquet"),
        [("a".to_owned(), Some("b=c".to_owned()))]
    );
    for (bad, problem) in [
        ("=x/f.parquet", "has a key"),
        ("k%20=x/f.parquet", "has a key"),
        ("k=/f.parquet", "has an empty value"),
        ("k=%zz/f.parquet", "percent-encoded"),
        ("k=%ff/f.parquet", "percent-encoded"),
        ("k=1/k=2/f.parquet", "repeats a key"),
    ] {
        let err = segments(&path(bad)).unwrap_err();
        assert!(
            matches!(&err, FilesError::PartitionSegment { path, problem: p, .. } if path == bad && p.contains(problem)),
            "{bad}: {err}"
        );
    }
    assert_eq!(percent_decode("%C3%A9"), Some("é".to_owned()));
    assert_eq!(percent_decode("100%"), None);
}

#[test]
fn partition_types_are_inferred_from_every_value() {
    let t = |values: &[Option<&str>]| infer_type(values.iter().copied());
    assert_eq!(
        t(&[Some("2024"), Some("-3"), Some("01"), None]),
        PartitionType::Int64
    );
    assert_eq!(
        t(&[Some("2024-01-31"), Some("1999-12-01")]),
        PartitionType::Date
    );
    assert_eq!(
        t(&[Some("2024-02-30")]),
        PartitionType::String,
        "not a real date"
    );
    assert_eq!(t(&[Some("2024"), Some("x")]), PartitionType::String);
    assert_eq!(
        t(&[Some("2024"), Some("2024-01-01")]),
        PartitionType::String
    );
    assert_eq!(
        t(&[Some("99999999999999999999")]),
        PartitionType::String,
        "past 64 bits"
    );
    assert_eq!(t(&[Some("+1")]), PartitionType::String);
    assert_eq!(t(&[None, None]), PartitionType::String);
    assert_eq!(
        PartitionValue::parse(Some("01"), PartitionType::Int64),
        Some(PartitionValue::Int(1))
    );
    assert_eq!(PartitionValue::Int(1).to_text().as_deref(), Some("1"));
    assert_eq!(
        PartitionValue::parse(None, PartitionType::Date),
        Some(PartitionValue::Null)
    );
}

#[test]
fn a_manifest_sorts_files_and_sums_them_up() {
    let m = build(vec![
        file("test/b.parquet", Some("test"), 5),
        file("train/b.parquet", Some("train"), 7),
        file("test/a.parquet", Some("test"), 3),
        file("train/a.parquet", Some("train"), 11),
    ])
    .unwrap();
    let order: Vec<_> = m.entries.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(
        order,
        [
            "test/a.parquet",
            "test/b.parquet",
            "train/a.parquet",
            "train/b.parquet"
        ]
    );
    let s = &m.summary;
    assert_eq!((s.files, s.rows, s.bytes), (4, 26, 260));
    let splits: Vec<_> = s
        .splits
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.files,
                s.rows,
                s.bytes,
                s.first_file,
                s.first_row,
            )
        })
        .collect();
    assert_eq!(
        splits,
        [("test", 2, 8, 80, 0, 0), ("train", 2, 18, 180, 2, 8)]
    );
    assert_eq!(s.chunks.len(), 2, "a chunk never spans two splits");
    assert_eq!(m.entries[0].stats, vec![None, None]);
}

#[test]
fn the_manifest_hash_is_over_the_documented_lines() {
    let m = build(vec![file("b.parquet", None, 2), file("a.parquet", None, 1)]).unwrap();
    let lines = format!(
        "\ta.parquet\t10\t1\t{}\n\tb.parquet\t20\t2\t{}\n",
        format_args!("{:064x}", 1),
        format_args!("{:064x}", 2)
    );
    use sha2::Digest;
    assert_eq!(
        m.sha256(),
        hex::encode(sha2::Sha256::digest(lines.as_bytes()))
    );
    let again = build(vec![file("a.parquet", None, 1), file("b.parquet", None, 2)]).unwrap();
    assert_eq!(
        again.sha256(),
        m.sha256(),
        "the input order does not matter"
    );
    let other = build(vec![file("a.parquet", None, 1), file("c.parquet", None, 2)]).unwrap();
    assert_ne!(other.sha256(), m.sha256());
}

#[test]
fn chunks_hold_at_most_chunk_files_and_find_pages_and_rows() {
    let n = CHUNK_FILES * 2 + 500;
    let files: Vec<_> = (0..n)
        .map(|i| {
            let split = if i < 1_200 { "a" } else { "b" };
            file(
                &format!("{split}/f{i:06}.parquet"),
                Some(split),
                1 + (i % 3) as u64,
            )
        })
        .collect();
    let m = build(files).unwrap();
    let sizes: Vec<u32> = m.summary.chunks.iter().map(|c| c.files).collect();
    assert_eq!(sizes, [1_000, 200, 1_000, 300]);
    let s = &m.summary;
    assert_eq!(s.page_chunk(Some("a"), 1), Some(1));
    assert_eq!(s.page_chunk(Some("b"), 0), Some(2));
    assert_eq!(s.page_chunk(Some("b"), 2), None);
    assert_eq!(s.page_chunk(Some("c"), 0), None);
    assert_eq!(s.page_chunk(None, 3), Some(3));
    // Every row of the version and of each split is found in the file that holds it.
    let chunks: Vec<FileChunk> = (0..s.chunks.len()).map(|c| m.chunk(c).unwrap()).collect();
    for split in [None, Some("a"), Some("b")] {
        let span = s.span(split).unwrap();
        let files: Vec<&FileEntry> = m.entries[span.first_file as usize..][..span.files as usize]
            .iter()
            .collect();
        let mut offset = 0;
        for (fi, f) in files.iter().enumerate() {
            for r in [0, f.rows - 1] {
                let (c, row) = s.chunk_of_row(split, offset + r).unwrap();
                let chunk = &chunks[c];
                let (i, within) = chunk.locate_row(row).unwrap();
                assert_eq!(chunk.first_file as usize + i, span.first_file as usize + fi);
                assert_eq!(within, r);
            }
            offset += f.rows;
        }
        assert_eq!(s.chunk_of_row(split, offset), None, "past the end");
    }
}

#[test]
fn partition_filters_find_chunks_and_files() {
    let files: Vec<_> = (0..2_500)
        .map(|i| {
            let year = 2000 + i / 1_000;
            let day = if i % 2 == 0 {
                "__HIVE_DEFAULT_PARTITION__".to_owned()
            } else {
                format!("2024-01-{:02}", 1 + i % 28)
            };
            file(&format!("year={year}/day={day}/f{i}.parquet"), None, 1)
        })
        .collect();
    let m = build(files).unwrap();
    let s = &m.summary;
    assert_eq!(
        s.partitions,
        [
            PartitionColumn {
                name: "year".into(),
                kind: PartitionType::Int64
            },
            PartitionColumn {
                name: "day".into(),
                kind: PartitionType::Date
            },
        ]
    );
    let find = |raw: &[&str]| {
        let filter = PartitionFilter::parse(raw.iter().copied()).unwrap();
        let resolved = s.resolve(&filter)?;
        let chunks = s.chunks_matching(None, &resolved);
        let files: Vec<String> = chunks
            .iter()
            .flat_map(|&c| m.chunk(c).unwrap().files)
            .filter(|f| resolved.matches(&f.partitions))
            .map(|f| f.path.to_string())
            .collect();
        Some((chunks, files))
    };
    let (chunks, files) = find(&["year=2001"]).unwrap();
    assert_eq!(chunks, [1], "only the chunk whose range holds 2001 is read");
    assert_eq!(files.len(), 1_000);
    let (chunks, files) = find(&["year=2002", "day=__HIVE_DEFAULT_PARTITION__"]).unwrap();
    assert_eq!((chunks, files.len()), (vec![2], 250));
    let (_, files) = find(&["day=2024-01-02"]).unwrap();
    let expected = m
        .entries
        .iter()
        .filter(|e| e.path.as_str().contains("day=2024-01-02/"))
        .count();
    assert_eq!(files.len(), expected);
    assert!(find(&["year=1999"]).unwrap().0.is_empty());
    assert_eq!(
        find(&["month=1"]),
        None,
        "a key that is no partition names nothing"
    );
    assert_eq!(
        find(&["year=abc"]),
        None,
        "a value not of the column's type names nothing"
    );
    assert!(matches!(
        PartitionFilter::parse(["year"]),
        Err(FilesError::MalformedFilter(_))
    ));
    assert!(matches!(
        PartitionFilter::parse(["=1"]),
        Err(FilesError::MalformedFilter(_))
    ));
}

#[test]
fn bad_versions_are_refused_naming_the_files() {
    assert_eq!(build(vec![]).unwrap_err(), FilesError::NoFiles);
    let many: Vec<_> = (0..MAX_FILES + 1)
        .map(|i| file(&format!("f{i}"), None, 1))
        .collect();
    assert_eq!(
        build(many).unwrap_err(),
        FilesError::TooManyFiles(MAX_FILES + 1)
    );
    assert_eq!(
        build(vec![file("a", None, 1), file("a", None, 2)]).unwrap_err(),
        FilesError::DuplicatePath("a".into())
    );
    let err = build(vec![file("x/a", Some("train"), 1), file("b", None, 2)]).unwrap_err();
    assert_eq!(
        err.to_string(),
        "file 'x/a' is in split 'train' but file 'b' is in none: give every file a split, or none"
    );
    let err = Manifest::build(ManifestInput {
        files: vec![file("train/a", Some("train"), 1)],
        splits: vec![
            SplitName::parse("train").unwrap(),
            SplitName::parse("test").unwrap(),
        ],
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "split 'test' has no files");
    let mut bad_hash = file("a", None, 1);
    bad_hash.sha256 = "ABC".into();
    assert!(
        matches!(build(vec![bad_hash]).unwrap_err(), FilesError::Sha256 { path, .. } if path == "a")
    );
    let err = build(vec![
        file("year=2024/a", None, 1),
        file("year=2024/month=1/b", None, 1),
    ])
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "files 'year=2024/a' and 'year=2024/month=1/b' have different partition keys: [year] and [year, month]"
    );
    let err = build(vec![file("m=1/y=2/a", None, 1), file("y=2/m=1/b", None, 1)]).unwrap_err();
    assert!(
        matches!(err, FilesError::PartitionKeys { .. }),
        "the order counts too"
    );
    let err = build(vec![file("a=1/f", None, 1), file("a=2/g", None, 1)]).unwrap_err();
    assert_eq!(err.to_string(), "partition key(s) a also column(s) of the files: rename the directories or drop the column(s)");
    assert_eq!(
        build(vec![file("k=1/f", None, 1)])
            .unwrap()
            .summary
            .partitions
            .len(),
        1
    );
}

#[test]
fn declared_partition_types_are_checked() {
    let input = |types: Vec<(&str, PartitionType)>| ManifestInput {
        files: vec![file("y=2024/f", None, 1), file("y=x/g", None, 1)],
        partition_types: types.into_iter().map(|(k, t)| (k.to_owned(), t)).collect(),
        ..Default::default()
    };
    let err = Manifest::build(input(vec![("y", PartitionType::Int64)])).unwrap_err();
    assert_eq!(
        err.to_string(),
        "file 'y=x/g': partition value 'x' of 'y' is not an int64"
    );
    let m = Manifest::build(input(vec![])).unwrap();
    assert_eq!(
        m.summary.partitions[0].kind,
        PartitionType::String,
        "inferred over both values"
    );
    let err = Manifest::build(input(vec![("z", PartitionType::Date)])).unwrap_err();
    assert_eq!(err, FilesError::UnknownPartitionKey("z".into()));
    assert!(check_not_columns(&m.summary.partitions, &["y".into(), "v".into()]).is_err());
    assert!(check_not_columns(&m.summary.partitions, &["v".into()]).is_ok());
}

#[test]
fn statistics_are_kept_in_column_order_and_checked() {
    let range = |min, max| ColumnRange {
        min: Some(min),
        max: Some(max),
        null_count: Some(0),
    };
    let mut f = file("a", None, 1);
    f.stats = vec![("b".into(), range(StatValue::Int(1), StatValue::Float(2.5)))];
    let m = build(vec![f.clone()]).unwrap();
    assert_eq!(m.entries[0].stats[0], None);
    assert_eq!(
        m.entries[0].stats[1].as_ref().unwrap().max,
        Some(StatValue::Float(2.5))
    );
    f.stats = vec![("c".into(), ColumnRange::default())];
    assert_eq!(
        build(vec![f.clone()]).unwrap_err(),
        FilesError::UnknownColumn {
            path: "a".into(),
            column: "c".into()
        }
    );
    f.stats = vec![(
        "a".into(),
        range(StatValue::Text("z".into()), StatValue::Text("a".into())),
    )];
    assert_eq!(
        build(vec![f.clone()]).unwrap_err().to_string(),
        "file 'a': column 'a' has minimum 'z' above (or not comparable with) its maximum 'a'"
    );
    f.stats = vec![(
        "a".into(),
        range(StatValue::Int(1), StatValue::Text("a".into())),
    )];
    assert!(matches!(
        build(vec![f.clone()]).unwrap_err(),
        FilesError::StatsOrder { .. }
    ));
    f.stats = vec![(
        "a".into(),
        range(StatValue::Float(f64::NAN), StatValue::Float(1.0)),
    )];
    let kept = build(vec![f.clone()]).unwrap().entries[0].stats[0]
        .clone()
        .unwrap();
    assert_eq!(
        (kept.min, kept.max),
        (None, Some(StatValue::Float(1.0))),
        "NaN is unknown"
    );
    f.stats = vec![("a".into(), ColumnRange::default())];
    let kept = &build(vec![f]).unwrap().entries[0].stats;
    assert_eq!(kept[0], None, "a range that knows nothing is unknown");
    let err = Manifest::build(ManifestInput {
        files: vec![file("a", None, 1)],
        columns: vec!["x".into(), "x".into()],
        ..Default::default()
    })
    .unwrap_err();
    assert_eq!(err, FilesError::DuplicateColumn("x".into()));
}

#[test]
fn long_text_bounds_are_cut_and_stay_bounds() {
    let long = format!("{}é{}", "a".repeat(63), "z".repeat(10));
    let StatValue::Text(min) = StatValue::text_min(&long) else {
        panic!()
    };
    assert_eq!(min, "a".repeat(63), "cut on a character boundary");
    let StatValue::Text(max) = StatValue::text_max(&long).unwrap() else {
        panic!()
    };
    assert_eq!(max, format!("{}b", "a".repeat(62)));
    assert!(min.as_str() <= long.as_str() && max.as_str() >= long.as_str());
    let top = char::MAX.to_string().repeat(20);
    assert_eq!(StatValue::text_max(&top), None, "no upper bound that short");
    assert_eq!(
        StatValue::text_max("short"),
        Some(StatValue::Text("short".into()))
    );
    assert_eq!(StatValue::Int(3).to_json(), serde_json::json!(3));
    assert_eq!(
        StatValue::Text("2024-01-01".into()).to_json(),
        serde_json::json!("2024-01-01")
    );
    let back: StatValue = serde_json::from_value(serde_json::json!(2.5)).unwrap();
    assert_eq!(back, StatValue::Float(2.5));
}

#[test]
fn a_summary_round_trips_through_json() {
    let m = build(vec![
        file("k=1/a", None, 2),
        file("k=__HIVE_DEFAULT_PARTITION__/b", None, 1),
    ])
    .unwrap();
    let text = serde_json::to_string(&m.summary).unwrap();
    let back: Summary = serde_json::from_str(&text).unwrap();
    assert_eq!(back, m.summary);
    assert_eq!(
        m.summary.chunks[0].partitions[0],
        ValueRange {
            min: Some("1".into()),
            max: Some("1".into()),
            nulls: true
        }
    );
}
