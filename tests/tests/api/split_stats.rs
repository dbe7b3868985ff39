//! Each split's statistics (issue 38): a version of many files published with the real
//! `catalog-admin publish` stores its splits' Column objects beside its manifest, and the
//! metadata endpoint answers `?split=NAME` with them, the split's rows and bytes.

use super::many_files::{local_files, publish_dir, write_files};
use super::*;

fn column<'a>(body: &'a Value, name: &str) -> &'a Value {
    body["schema"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no column {name}: {body}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_metadata_of_a_split_shows_its_own_statistics_rows_and_bytes() {
    // GIVEN `split-sales` published from the files of many_files: test holds ids 0-9 and
    // 100-109 (years 2024 and Hive's null), train ids 200-209, 300-309 and 400-409
    let g = given().await;
    let root = write_files();
    publish_dir(&g.stack, &root, "split-sales");
    let local = local_files(&root);
    let size = |split: &str| -> u64 {
        local
            .iter()
            .filter(|(p, _)| p.starts_with(&format!("{split}/")))
            .map(|(_, (s, _))| s)
            .sum()
    };

    // WHEN the whole version and each split are read
    let whole = json_body(&g.metadata("/api/v1/datasets/split-sales").await);
    let test = g.metadata("/api/v1/datasets/split-sales?split=test").await;
    assert_eq!(test.status(), 200);
    let test = json_body(&test);
    let train = json_body(&g.metadata("/api/v1/datasets/split-sales?split=train").await);

    // THEN the whole version's statistics cover every file, and no split is named
    assert_eq!(column(&whole, "id")["min"], 0);
    assert_eq!(column(&whole, "id")["max"], 409);
    assert_eq!(column(&whole, "id")["unique_count"], 50);
    assert!(whole.get("split").is_none(), "{whole}");
    // AND each split's are its own files', with its rows and bytes
    assert_eq!(test["split"], "test");
    assert_eq!(test["row_count"], 20);
    assert_eq!(test["size"], size("test"));
    assert_eq!(column(&test, "id")["min"], 0);
    assert_eq!(column(&test, "id")["max"], 109);
    assert_eq!(column(&test, "id")["unique_count"], 20);
    assert_eq!(column(&test, "year")["null_count"], 10);
    assert_eq!(train["split"], "train");
    assert_eq!(train["row_count"], 30);
    assert_eq!(train["size"], size("train"));
    assert_eq!(column(&train, "id")["min"], 200);
    assert_eq!(column(&train, "id")["max"], 409);
    assert_eq!(column(&train, "year")["null_count"], 0);
    assert_eq!(column(&train, "year")["min"], 2024);
    assert_eq!(column(&train, "year")["max"], 2025);
    // AND the rest of the answer is the version's
    for key in ["version", "sha256", "files", "column_count", "name"] {
        assert_eq!(test[key], whole[key], "{key}");
    }

    // WHEN a split the version does not have, or a one-file dataset's split, is asked for
    // THEN 404 not_found, naming it
    for path in [
        "/api/v1/datasets/split-sales?split=validation",
        "/api/v1/datasets/city-bikes?split=train",
    ] {
        let resp = g.metadata(path).await;
        assert_eq!(resp.status(), 404, "{path}");
        let body = json_body(&resp);
        assert_eq!(body["code"], "not_found", "{body}");
        assert!(
            body["error"].as_str().unwrap().contains("no split"),
            "{body}"
        );
    }
    // AND `split` given twice is a 400
    let twice = g
        .metadata("/api/v1/datasets/split-sales?split=test&split=train")
        .await;
    assert_eq!(twice.status(), 400);
    let _ = std::fs::remove_dir_all(&root);
}
