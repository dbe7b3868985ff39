use super::*;
use catalog::files::{FileInput, Manifest, ManifestInput, RelPath, SplitName};
use catalog_memory::manifest::MemoryManifests;

fn slug() -> Slug {
    Slug::parse("many").unwrap()
}

/// `files` files: split `train` for the first `train`, `test` for the rest; partitions
/// `year=2020+i/(files/5 per year)`, one in 7 of the test files in year null.
fn manifest(files: usize, train: usize) -> Manifest {
    let inputs = (0..files)
        .map(|i| {
            let split = if i < train { "train" } else { "test" };
            let year = if i >= train && i % 7 == 0 {
                "__HIVE_DEFAULT_PARTITION__".to_owned()
            } else {
                (2020 + i * 5 / files).to_string()
            };
            FileInput {
                path: RelPath::parse(&format!("{split}/year={year}/part-{i:06}.parquet")).unwrap(),
                split: Some(SplitName::parse(split).unwrap()),
                rows: 10,
                size: 100,
                sha256: format!("{i:064x}"),
                stats: Vec::new(),
            }
        })
        .collect();
    Manifest::build(ManifestInput {
        files: inputs,
        columns: vec!["id".into()],
        ..ManifestInput::default()
    })
    .unwrap()
}

fn query(split: Option<&str>, filter: &[&str], page_size: usize) -> FileQuery {
    FileQuery {
        split: split.map(str::to_owned),
        filter: PartitionFilter::parse(filter.iter().copied()).unwrap(),
        page_size,
        token: None,
    }
}

/// Every page of `query`, with the chunks each read.
async fn every_page(
    reader: &MemoryManifests,
    summary: &Summary,
    mut query: FileQuery,
) -> (Vec<FilePage>, Vec<String>) {
    let mut pages = Vec::new();
    let mut paths = Vec::new();
    loop {
        let page = page(reader, &slug(), 1, summary, &query).await.unwrap();
        paths.extend(page.files.iter().map(|f| f.path.to_string()));
        let next = page.next;
        pages.push(page);
        match next {
            Some(token) => query.token = Some(token),
            None => return (pages, paths),
        }
    }
}

#[tokio::test]
async fn pages_hand_out_every_matching_file_once_reading_one_or_two_chunks_each() {
    let reader = MemoryManifests::new();
    let built = manifest(5_000, 3_000);
    let all: Vec<FileEntry> = built.entries.clone();
    let summary = reader.insert(&slug(), 1, built);

    // The whole version, in pages of 1,000: one chunk each
    let (pages, paths) = every_page(&reader, &summary, query(None, &[], 1_000)).await;
    let expected: Vec<String> = all.iter().map(|f| f.path.to_string()).collect();
    assert_eq!(paths, expected);
    assert_eq!(pages.len(), 5);
    assert!(pages
        .iter()
        .all(|p| p.file_count == 5_000 && p.chunks_read == 1));
    assert_eq!(reader.reads(), vec![1; 5]);

    // Pages of 700 across chunk boundaries: at most two chunks, one read each
    let (pages, paths) = every_page(&reader, &summary, query(Some("train"), &[], 700)).await;
    let train: Vec<String> = all
        .iter()
        .filter(|f| f.split.as_ref().unwrap().as_str() == "train")
        .map(|f| f.path.to_string())
        .collect();
    assert_eq!(paths, train);
    assert_eq!(pages.len(), 5);
    assert!(pages
        .iter()
        .all(|p| p.chunks_read <= 2 && p.file_count == 3_000));
    assert!(pages.last().unwrap().next.is_none());
}

#[tokio::test]
async fn a_partition_filter_reads_only_the_chunks_its_ranges_allow_and_counts_exactly() {
    let reader = MemoryManifests::new();
    let built = manifest(5_000, 3_000);
    let all = built.entries.clone();
    let summary = reader.insert(&slug(), 1, built);
    for (split, filter) in [
        (None, vec!["year=2021"]),
        (Some("test"), vec!["year=2023"]),
        (Some("test"), vec!["year=__HIVE_DEFAULT_PARTITION__"]),
        (None, vec!["year=2024", "year=2024"]),
    ] {
        let resolved = summary
            .resolve(&PartitionFilter::parse(filter.iter().copied()).unwrap())
            .unwrap();
        let expected: Vec<String> = all
            .iter()
            .filter(|f| split.is_none_or(|s| f.split.as_ref().unwrap().as_str() == s))
            .filter(|f| resolved.matches(&f.partitions))
            .map(|f| f.path.to_string())
            .collect();
        assert!(!expected.is_empty(), "{filter:?}");
        let (pages, paths) = every_page(&reader, &summary, query(split, &filter, 300)).await;
        assert_eq!(paths, expected, "{split:?} {filter:?}");
        for page in &pages {
            assert_eq!(page.file_count, expected.len() as u64, "{filter:?}");
            assert!(page.chunks_read <= 3, "{filter:?}: {}", page.chunks_read);
        }
    }
    // year=2021 is files 1,000..2,000: chunk 1 of the train split only, never the others
    reader.reads();
    let before = reader.reads().len();
    let one = page(
        &reader,
        &slug(),
        1,
        &summary,
        &query(None, &["year=2021"], 1_000),
    )
    .await
    .unwrap();
    assert_eq!(one.files.len(), 1_000);
    assert_eq!(one.chunks_read, 1);
    assert_eq!(reader.reads()[before..], [1]);
}

#[tokio::test]
async fn filters_naming_nothing_are_an_empty_page_read_from_nothing() {
    let reader = MemoryManifests::new();
    let summary = reader.insert(&slug(), 1, manifest(2_000, 1_000));
    for (split, filter) in [
        (Some("validation"), vec![]),
        (None, vec!["month=1"]),
        (None, vec!["year=1999"]),
        (Some("train"), vec!["year=__HIVE_DEFAULT_PARTITION__"]),
    ] {
        let page = page(&reader, &slug(), 1, &summary, &query(split, &filter, 10))
            .await
            .unwrap();
        assert!(page.files.is_empty() && page.next.is_none(), "{filter:?}");
        assert_eq!(page.file_count, 0, "{filter:?}");
    }
    assert!(reader.reads().is_empty(), "{:?}", reader.reads());
}

#[tokio::test]
async fn a_value_not_of_its_keys_type_is_malformed() {
    let reader = MemoryManifests::new();
    let summary = reader.insert(&slug(), 1, manifest(20, 10));
    for filter in ["year=abc", "year=2024-01-01", "year="] {
        let got = page(&reader, &slug(), 1, &summary, &query(None, &[filter], 10)).await;
        match got {
            Err(ApiError::BadRequest(message)) => {
                assert!(message.contains("of 'year' is not an int64"), "{message}")
            }
            other => panic!("{filter}: {other:?}"),
        }
    }
}

#[test]
fn tokens_round_trip_and_anything_else_is_refused() {
    let token = PageToken {
        version: 3,
        next: 1_000,
        done: 1_000,
        count: 4_321,
    };
    assert_eq!(PageToken::parse(&token.encode()).unwrap(), token);
    for bad in [
        "".to_owned(),
        "zz".to_owned(),
        hex::encode("2.3.1000.1000.4321"),
        hex::encode("1.3.1000.1000"),
        hex::encode("1.3.1000.1000.4321.9"),
        hex::encode("1.3.-1.0.1"),
        hex::encode("1.3.10.9.5"),
        hex::encode("1.3.99999999999999999999.0.1"),
    ] {
        assert!(
            matches!(PageToken::parse(&bad), Err(ApiError::BadRequest(_))),
            "{bad}"
        );
    }
}
