use super::*;

/// A temporary directory holding `files` (relative paths): those named `*.parquet` with
/// Parquet's magic bytes at both ends, the others with text.
fn tree(files: &[&str]) -> PathBuf {
    let root = std::env::temp_dir().join(format!("discover-{}", uuid::Uuid::new_v4()));
    for file in files {
        let path = root.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let bytes: &[u8] = if file.ends_with(".parquet") {
            b"PAR1 not really a footer PAR1"
        } else {
            b"some text"
        };
        std::fs::write(path, bytes).unwrap();
    }
    root
}

fn inputs(args: &[&Path], splits: &[&str]) -> Inputs {
    Inputs {
        args: args.iter().map(|p| p.to_path_buf()).collect(),
        splits: splits.iter().map(|s| (*s).to_owned()).collect(),
        no_splits: false,
    }
}

fn rels_and_splits(found: &Discovered) -> Vec<(&str, Option<&str>)> {
    found
        .files
        .iter()
        .map(|f| (f.rel.as_str(), f.split.as_deref()))
        .collect()
}

fn refused(inputs: &Inputs) -> String {
    match discover(inputs) {
        Err(PublishError::BadInput(message)) => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_directory_of_split_directories_and_partitions_is_walked_sorted_skipping_hidden_files() {
    let root = tree(&[
        "train/year=2025/b.parquet",
        "train/year=2024/a.parquet",
        "test/year=2024/c.parquet",
        "train/README.md",
        "train/_SUCCESS",
        "train/_delta_log/00.parquet",
        ".cache/x.parquet",
        "test/.part-0.parquet.crc",
    ]);
    let found = discover(&inputs(&[&root], &[])).unwrap();
    assert_eq!(found.root, root);
    assert_eq!(found.layout, Layout::SplitDirectories);
    assert_eq!(
        rels_and_splits(&found),
        [
            ("test/year=2024/c.parquet", Some("test")),
            ("train/year=2024/a.parquet", Some("train")),
            ("train/year=2025/b.parquet", Some("train")),
        ]
    );
    assert_eq!(found.ignored, ["train/README.md"]);
    assert_eq!(found.files[0].path, root.join("test/year=2024/c.parquet"));
}

#[test]
fn hugging_face_data_files_are_split_by_their_names() {
    let root = tree(&[
        "data/train-00000-of-00002.parquet",
        "data/train-00001-of-00002.parquet",
        "data/validation-00000-of-00001.parquet",
    ]);
    let found = discover(&inputs(&[&root], &[])).unwrap();
    assert_eq!(found.layout, Layout::HuggingFace);
    assert_eq!(
        rels_and_splits(&found),
        [
            ("data/train-00000-of-00002.parquet", Some("train")),
            ("data/train-00001-of-00002.parquet", Some("train")),
            ("data/validation-00000-of-00001.parquet", Some("validation")),
        ]
    );
}

#[test]
fn a_layout_applies_only_when_it_covers_every_file() {
    let root = tree(&["train/a.parquet", "extra/b.parquet"]);
    let found = discover(&inputs(&[&root], &[])).unwrap();
    assert_eq!(found.layout, Layout::None);
    assert!(found.files.iter().all(|f| f.split.is_none()));
    let root = tree(&["data/train-0.parquet", "data/notes.parquet"]);
    assert_eq!(
        discover(&inputs(&[&root], &[])).unwrap().layout,
        Layout::None,
        "notes.parquet has no '-': not Hugging Face's layout"
    );
}

#[test]
fn split_flags_win_over_layouts_and_no_splits_turns_layouts_off() {
    let root = tree(&["train/a.parquet", "test/b.parquet", "test/c.parquet"]);
    let found = discover(&inputs(
        &[&root],
        &["all=train/*.parquet", "all=test/b.parquet", "held=test/c.*"],
    ))
    .unwrap();
    assert_eq!(found.layout, Layout::Flags);
    assert_eq!(found.splits, ["all", "held"]);
    assert_eq!(
        rels_and_splits(&found),
        [
            ("test/b.parquet", Some("all")),
            ("test/c.parquet", Some("held")),
            ("train/a.parquet", Some("all")),
        ]
    );
    let mut off = inputs(&[&root], &[]);
    off.no_splits = true;
    let found = discover(&off).unwrap();
    assert_eq!(found.layout, Layout::None);
    assert!(found.files.iter().all(|f| f.split.is_none()));
}

#[test]
fn a_split_glob_stays_within_a_directory_unless_it_says_two_stars() {
    let root = tree(&["a/b/c.parquet", "a/d.parquet"]);
    let message = refused(&inputs(&[&root], &["x=a/*.parquet"]));
    assert!(
        message.contains("'a/b/c.parquet' matches no --split glob"),
        "{message}"
    );
    let found = discover(&inputs(&[&root], &["x=a/**/*.parquet"])).unwrap();
    assert!(found.files.iter().all(|f| f.split.as_deref() == Some("x")));
}

#[test]
fn several_files_are_relative_to_their_common_directory_and_a_glob_to_its_own() {
    let root = tree(&[
        "sales/year=2024/month=01/a.parquet",
        "sales/year=2024/month=02/b.parquet",
        "other/c.parquet",
    ]);
    let a = root.join("sales/year=2024/month=01/a.parquet");
    let b = root.join("sales/year=2024/month=02/b.parquet");
    let found = discover(&inputs(&[&a, &b], &[])).unwrap();
    assert_eq!(found.root, root.join("sales/year=2024"));
    assert_eq!(
        rels_and_splits(&found),
        [("month=01/a.parquet", None), ("month=02/b.parquet", None)]
    );
    // One match of a glob keeps the directories under the glob's own.
    let glob = root.join("sales/year=*/month=01/*.parquet");
    let found = discover(&inputs(&[&glob], &[])).unwrap();
    assert_eq!(found.root, root.join("sales"));
    assert_eq!(
        rels_and_splits(&found),
        [("year=2024/month=01/a.parquet", None)]
    );
    // Two directories keep their names.
    let found = discover(&inputs(&[&root.join("sales"), &root.join("other")], &[])).unwrap();
    assert_eq!(found.root, root);
    assert_eq!(
        found
            .files
            .iter()
            .map(|f| f.rel.as_str())
            .collect::<Vec<_>>(),
        [
            "other/c.parquet",
            "sales/year=2024/month=01/a.parquet",
            "sales/year=2024/month=02/b.parquet"
        ]
    );
}

#[test]
fn one_file_without_split_is_a_single_file_version() {
    let root = tree(&["a.parquet", "b.parquet"]);
    let file = root.join("a.parquet");
    assert_eq!(inputs(&[&file], &[]).single_file(), Some(file.clone()));
    let missing = root.join("missing.parquet");
    assert_eq!(inputs(&[&missing], &[]).single_file(), Some(missing));
    assert_eq!(inputs(&[&root], &[]).single_file(), None);
    assert_eq!(inputs(&[&file], &["all=*"]).single_file(), None);
    assert_eq!(inputs(&[&root.join("*.parquet")], &[]).single_file(), None);
    assert_eq!(
        inputs(&[&file, &root.join("b.parquet")], &[]).single_file(),
        None
    );
}

#[test]
fn bad_input_is_refused_naming_what_is_wrong() {
    let root = tree(&["train/a.parquet", "train/b.parquet", "test/c.parquet"]);
    std::fs::write(root.join("train/b.parquet"), b"col\n1\n2\n3\n4\n5\n6\n").unwrap();
    let cases: Vec<(Inputs, &str)> = vec![
        (
            inputs(&[&root], &[]),
            "file 'train/b.parquet' is not a Parquet file",
        ),
        (
            inputs(&[&root.join("nothing-*.parquet")], &[]),
            "matches no file",
        ),
        (
            inputs(
                &[&root.join("test")],
                &["test=*.parquet", "empty=none-*.parquet"],
            ),
            "split 'empty' has no files",
        ),
        (
            inputs(&[&root.join("test")], &["Bad-Name=*.parquet"]),
            "split name 'Bad-Name' is not allowed",
        ),
        (
            inputs(&[&root.join("test")], &["test=../train/*.parquet"]),
            "has a '..' segment",
        ),
        (
            inputs(&[&root.join("test")], &["test=/tmp/*.parquet"]),
            "is absolute",
        ),
        (
            inputs(&[&root.join("test")], &["test"]),
            "expected NAME=GLOB",
        ),
        (
            inputs(&[&root.join("test"), &root.join("test/c.parquet")], &[]),
            "file 'test/c.parquet' is given twice",
        ),
        (
            inputs(&[&root.join("missing")], &[]),
            "no such file or directory",
        ),
    ];
    for (given, expected) in cases {
        let message = refused(&given);
        assert!(message.contains(expected), "{given:?}: {message}");
    }
}

#[test]
fn a_file_in_two_splits_is_refused() {
    let root = tree(&["a.parquet"]);
    let message = refused(&inputs(&[&root], &["x=*.parquet", "y=a.*"]));
    assert!(
        message.contains("file 'a.parquet' matches the globs of two splits, 'x' and 'y'"),
        "{message}"
    );
}

#[test]
fn the_magic_bytes_must_be_at_both_ends() {
    let root = tree(&["ok.parquet"]);
    let path = root.join("ok.parquet");
    assert!(is_parquet(&path).unwrap());
    std::fs::write(&path, b"PAR1 but not at the end").unwrap();
    assert!(!is_parquet(&path).unwrap());
    std::fs::write(&path, b"not at the start PAR1").unwrap();
    assert!(!is_parquet(&path).unwrap());
    std::fs::write(&path, b"PAR1PAR1").unwrap();
    assert!(!is_parquet(&path).unwrap(), "too short for a footer");
}
