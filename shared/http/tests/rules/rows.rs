//! The rows route: its answer, its window, and the data endpoint's rules, case for case.

use super::*;

async fn rows(path: &str, headers: &[(&str, &str)]) -> Response<Body> {
    catalog_http::api::rows(&get(path, headers), &catalog(), &FakeRows::default(), now()).await
}

#[tokio::test]
async fn rows_with_a_read_key_hold_the_window_the_columns_and_the_version() {
    let resp = rows(
        "/api/v1/datasets/gated/rows?offset=1&length=5",
        &[("x-api-key", READ_KEY)],
    )
    .await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    assert_eq!(
        body(&resp),
        json!({
            "slug": "gated",
            "version": 3,
            "columns": [{"name": "x", "type": "int64"}, {"name": "s", "type": "int64"}],
            "rows": [{"row_idx": 1, "row": {"x": 1, "s": 1}, "truncated_cells": []}],
            "offset": 1,
            "length": 1,
            "num_rows_total": 2,
            "next_offset": null,
        })
    );
}

#[tokio::test]
async fn rows_answer_every_access_case_as_the_data_endpoint_does() {
    let cases: [(&str, &[(&str, &str)]); 12] = [
        ("gated", &[]),
        ("gated", &[("x-api-key", READ_KEY)]),
        ("gated", &[("x-api-key", WRITE_ONLY_KEY)]),
        ("gated", &[("x-api-key", REVOKED_KEY)]),
        ("gated", &[("x-api-key", EXPIRED_KEY)]),
        ("gated", &[("x-api-key", UNKNOWN_KEY)]),
        ("open-window", &[]),
        ("open-window", &[("x-api-key", UNKNOWN_KEY)]),
        ("closed-window", &[]),
        ("unpublished", &[("x-api-key", READ_KEY)]),
        ("nope", &[("x-api-key", READ_KEY)]),
        ("NOT-A-SLUG", &[]),
    ];
    for (slug, headers) in cases {
        let data = data(&format!("/api/v1/datasets/{slug}/data"), headers).await;
        let rows = rows(&format!("/api/v1/datasets/{slug}/rows"), headers).await;
        assert_eq!(rows.status(), data.status(), "{slug} {headers:?}");
        assert_eq!(
            body(&rows)["code"],
            body(&data)["code"],
            "{slug} {headers:?}"
        );
        assert_eq!(
            rows.headers().get("www-authenticate"),
            data.headers().get("www-authenticate"),
            "{slug} {headers:?}"
        );
    }
}

#[tokio::test]
async fn rows_at_or_past_the_end_are_an_empty_page() {
    for offset in ["2", "3", "18446744073709551615", "99999999999999999999999"] {
        let resp = rows(
            &format!("/api/v1/datasets/open-window/rows?offset={offset}"),
            &[],
        )
        .await;
        assert_eq!(resp.status(), 200, "{offset}");
        let b = body(&resp);
        assert_eq!(b["rows"], json!([]), "{offset}");
        assert_eq!(b["length"], 0, "{offset}");
        assert_eq!(b["next_offset"], Value::Null, "{offset}");
        assert_eq!(b["num_rows_total"], 2, "{offset}");
    }
}

#[tokio::test]
async fn rows_length_is_capped_at_100_and_the_offset_defaults_to_0() {
    let resp = rows("/api/v1/datasets/open-window/rows?length=1", &[]).await;
    let b = body(&resp);
    assert_eq!(
        (b["offset"].clone(), b["length"].clone()),
        (json!(0), json!(1))
    );
    assert_eq!(b["next_offset"], 1);
    assert_eq!(
        catalog::rows::RowWindow::parse(None, Some("5000"))
            .unwrap()
            .length(),
        100
    );
}

#[tokio::test]
async fn rows_with_bad_parameters_are_400() {
    for query in [
        "offset=-1",
        "offset=x",
        "length=0",
        "length=-1",
        "offset=1&offset=1",
        "version=0",
    ] {
        let resp = rows(&format!("/api/v1/datasets/open-window/rows?{query}"), &[]).await;
        assert_error(&resp, 400, "bad_request");
    }
}

#[tokio::test]
async fn rows_of_a_pinned_version_that_is_not_active_are_404_naming_the_active_one() {
    let resp = rows("/api/v1/datasets/open-window/rows?version=2", &[]).await;
    let message = assert_error(&resp, 404, "not_found");
    assert!(message.contains("active version is 3"), "{message}");
    let resp = rows("/api/v1/datasets/open-window/rows?version=3", &[]).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn rows_read_the_file_only_once_the_request_is_let_through() {
    let reader = FakeRows::default();
    for headers in [vec![], vec![("x-api-key", UNKNOWN_KEY)]] {
        catalog_http::api::rows(
            &get("/api/v1/datasets/gated/rows", &headers),
            &catalog(),
            &reader,
            now(),
        )
        .await;
    }
    assert_eq!(reader.reads.load(Ordering::SeqCst), 0);
}

/// Rows as (file, row in the file), in manifest order.
type Placed = Vec<(u64, u64)>;

/// GIVEN `many`, a gated version of 2,500 files in splits `a` (files 0-1,199) and `b` (the
/// rest), file `i` holding `1 + i % 3` rows; each split two manifest chunks. Returns the
/// catalog and each split's rows as (file, row in the file), in manifest order.
fn many_files() -> (MemoryCatalog, Placed, Placed) {
    use catalog::files::{FileInput, Manifest, ManifestInput, RelPath, SplitName};
    let split = |i: u64| if i < 1_200 { "a" } else { "b" };
    let rows_of = |i: u64| 1 + i % 3;
    let files = (0..2_500u64)
        .map(|i| FileInput {
            path: RelPath::parse(&format!("{}/part-{i:04}.parquet", split(i))).unwrap(),
            split: Some(SplitName::parse(split(i)).unwrap()),
            rows: rows_of(i),
            size: 100,
            sha256: "ab".repeat(32),
            stats: Vec::new(),
        })
        .collect();
    let manifest = Manifest::build(ManifestInput {
        files,
        columns: vec!["x".into(), "s".into()],
        ..Default::default()
    })
    .unwrap();
    let c = catalog();
    let slug = Slug::parse("many").unwrap();
    let summary = c.manifests.insert(&slug, 3, manifest);
    let mut dataset = record("many", None, true);
    if let Some(active) = dataset.active.as_mut() {
        active.s3_key = "datasets/many/v3/files/".into();
        active.row_count = summary.rows;
        active.files = Some(std::sync::Arc::new(summary));
    }
    c.insert_dataset(dataset);
    let rows = |files: std::ops::Range<u64>| -> Placed {
        files
            .flat_map(|i| (0..rows_of(i)).map(move |r| (i, r)))
            .collect()
    };
    (c, rows(0..1_200), rows(1_200..2_500))
}

#[tokio::test]
async fn rows_of_a_many_file_version_run_over_files_and_chunks_from_one_manifest_read() {
    let (c, a, b) = many_files();
    let reader = FakeRows::default();
    let read = |path: String, headers: Vec<(&'static str, &'static str)>| {
        let (c, reader) = (&c, &reader);
        async move { catalog_http::api::rows(&get(&path, &headers), c, reader, now()).await }
    };
    // WHEN it is asked without a key, THEN nothing is read, neither manifest nor file
    let resp = read("/api/v1/datasets/many/rows".into(), vec![]).await;
    assert_error(&resp, 401, "missing_key");
    assert_eq!(reader.reads.load(Ordering::SeqCst), 0);
    assert_eq!(c.manifests.reads(), Vec::<usize>::new());
    // WHEN pages cross a file's end and a chunk's end (split b's first chunk ends at its
    // 1,000th file), over a split and over the whole version
    let b_chunk_end: u64 = (1_200..2_200).map(|i| 1 + i % 3).sum();
    let whole: Placed = a.iter().chain(&b).copied().collect();
    for (split, expected, offset) in [
        (Some("b"), &b, b_chunk_end - 40),
        (Some("a"), &a, 0),
        (None, &whole, a.len() as u64 - 30),
        (Some("b"), &b, b.len() as u64 - 70),
    ] {
        let param = split.map(|s| format!("&split={s}")).unwrap_or_default();
        let before = reader.reads.load(Ordering::SeqCst);
        let resp = read(
            format!("/api/v1/datasets/many/rows?offset={offset}&length=100{param}"),
            vec![("x-api-key", READ_KEY)],
        )
        .await;
        let page = body(&resp);
        assert_eq!(resp.status(), 200, "{page}");
        // THEN each row is the one at that place in manifest order (FakeRows' cells are the
        // row's index in its file), numbered over the split or the version
        let want = &expected[offset as usize..(offset as usize + 100).min(expected.len())];
        let rows = page["rows"].as_array().unwrap();
        assert_eq!(rows.len(), want.len(), "{split:?} {offset}");
        for (n, (row, (_, in_file))) in rows.iter().zip(want).enumerate() {
            assert_eq!(row["row_idx"], offset + n as u64, "{split:?} {offset}");
            assert_eq!(row["row"]["x"], *in_file, "{split:?} {offset} row {n}");
        }
        assert_eq!(page["num_rows_total"], expected.len(), "{split:?}");
        // AND one manifest read of the chunks the page reaches, and one file read per file
        let files: std::collections::BTreeSet<u64> = want.iter().map(|(f, _)| *f).collect();
        assert_eq!(
            reader.reads.load(Ordering::SeqCst) - before,
            files.len(),
            "{split:?} {offset}"
        );
    }
    assert_eq!(c.manifests.reads(), vec![2, 1, 2, 1], "chunks per read");
    // AND a split the version does not have reads nothing
    let (manifest_reads, file_reads) = (
        c.manifests.reads().len(),
        reader.reads.load(Ordering::SeqCst),
    );
    let resp = read(
        "/api/v1/datasets/many/rows?split=c".into(),
        vec![("x-api-key", READ_KEY)],
    )
    .await;
    let page = body(&resp);
    assert_eq!(
        (page["num_rows_total"].clone(), page["rows"].clone()),
        (json!(0), json!([]))
    );
    assert_eq!(c.manifests.reads().len(), manifest_reads);
    assert_eq!(reader.reads.load(Ordering::SeqCst), file_reads);
}
