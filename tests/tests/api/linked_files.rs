//! The open metadata of a version of many files (issue 38), read by the tools that speak it,
//! against the local API over moto and s3s-fs, the versions published by the real CLI:
//! Croissant documents validated by `mlcroissant`, the files fetched through the data listing's
//! presigned URLs and every split's records read by `mlcroissant` from the document's FileSet
//! (tests/croissant_client.py), compared with pyarrow's reading of the same files.

use std::path::Path;

use catalog_tests::{admin_command, run_admin, start_local_api, tool};
use serde_json::json;

use super::*;

fn croissant_client(ops: &Value) -> Vec<Value> {
    let python = tool("PROTOCOLS_PYTHON", ".venv-protocols/bin/python");
    let cache = std::env::temp_dir().join(format!("catalog-croissant-{}", uuid::Uuid::new_v4()));
    let results = catalog_tests::python_json(
        &python,
        "tests/croissant_client.py",
        ops,
        &[("CROISSANT_CACHE", cache.as_os_str())],
    );
    let _ = std::fs::remove_dir_all(&cache);
    serde_json::from_value(results).expect("one result per operation")
}

fn publish_dir(env: &[(String, String)], dir: &Path, slug: &str) {
    let out = run_admin(admin_command().envs(env.iter().cloned()).args([
        "publish",
        &dir.to_string_lossy(),
        "--slug",
        slug,
        "--name",
        "Many files",
        "--license",
        "CC0-1.0",
        "--source",
        "https://tests.example.org/many",
        "--category",
        "testing",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mlcroissant_reads_each_split_of_a_many_file_version_from_its_file_set_equal_to_pyarrow() {
    // GIVEN a version of 5 files in splits train and test under Hive partitions year (int64)
    // and region (string), and one of 3 files without splits under day (date), published by
    // catalog-admin, and the local API
    let g = given().await;
    let env = g.stack.function_env();
    let root = std::env::temp_dir().join(format!("catalog-linked-files-{}", uuid::Uuid::new_v4()));
    let split_dir = root.join("splits");
    let plain_dir = root.join("plain");
    croissant_client(&json!([
        {"op": "tree", "root": split_dir, "files": [
            ["train/year=2023/region=eu/part-0.parquet", 0, 7],
            ["train/year=2023/region=us/part-0.parquet", 100, 5],
            ["train/year=2024/region=eu/part-0.parquet", 200, 9],
            ["test/year=2024/region=eu/part-0.parquet", 300, 4],
            ["test/year=2024/region=us/part-1.parquet", 400, 6],
        ]},
        {"op": "tree", "root": plain_dir, "files": [
            ["day=2024-01-30/a.parquet", 0, 3],
            ["day=2024-01-31/a.parquet", 10, 4],
            ["day=2024-01-31/b.parquet", 20, 2],
        ]},
    ]));
    publish_dir(&env, &split_dir, "split-files");
    publish_dir(&env, &plain_dir, "plain-files");
    let (api, _guard) = start_local_api(&g.stack);

    // WHEN mlcroissant validates each document, the files are fetched through the data listing
    // (a read key) into the layout the FileSet describes, and mlcroissant reads each split
    let results = croissant_client(&json!([
        {"op": "files", "url": format!("{api}/datasets/split-files/croissant"), "api": api,
         "slug": "split-files", "key": READ_KEY, "dir": root.join("local-split")},
        {"op": "files", "url": format!("{api}/datasets/plain-files/croissant"), "api": api,
         "slug": "plain-files", "key": READ_KEY, "dir": root.join("local-plain")},
    ]));

    // THEN both documents validate with no error and no warning
    for result in &results {
        assert_eq!(result["errors"], json!([]), "{result}");
        assert_eq!(result["warnings"], json!([]), "{result}");
        assert_eq!(result.get("read_error"), None, "{result}");
    }
    // AND the split version's FileSet includes one glob per split, each split's records (21 and
    // 10) equal pyarrow's rows of its files with year, region and split, and so do all 31
    let split = &results[0];
    assert_eq!(split["includes"], json!(["test/*", "train/*"]), "{split}");
    assert_eq!(split["files"], 5);
    assert_eq!(
        split["fields"],
        json!(["id", "name", "region", "score", "split", "year"]),
        "{split}"
    );
    assert_eq!(split["splits"]["train"]["records"], 21, "{split}");
    assert_eq!(split["splits"]["test"]["records"], 10, "{split}");
    for name in ["train", "test"] {
        assert_eq!(split["splits"][name]["equal"], true, "{name}: {split}");
    }
    assert_eq!(split["all"]["records"], 31, "{split}");
    assert_eq!(split["all"]["equal"], true, "{split}");
    // AND the version without splits is one FileSet under files/, its 9 records with day (a
    // date) equal to pyarrow's
    let plain = &results[1];
    assert_eq!(plain["includes"], json!(["files/*"]), "{plain}");
    assert_eq!(plain["files"], 3);
    assert_eq!(plain["splits"], json!({}), "{plain}");
    assert_eq!(
        plain["fields"],
        json!(["day", "id", "name", "score"]),
        "{plain}"
    );
    assert_eq!(plain["all"]["records"], 9, "{plain}");
    assert_eq!(plain["all"]["equal"], true, "{plain}");
    let _ = std::fs::remove_dir_all(&root);
}

/// The dataset page's schema.org node (web/linked.js' datasetJsonLd) of the metadata answer
/// `answer`, made by node (tests/browser/linked_jsonld.mjs).
fn site_json_ld(answer: &Value, api: &str) -> Value {
    use std::io::Write;
    let mut child =
        std::process::Command::new(std::env::var_os("NODE").unwrap_or_else(|| "node".into()))
            .arg(catalog_tests::repo_root().join("tests/browser/linked_jsonld.mjs"))
            .arg(api)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("run node (Node.js, which dev/setup needs for the site's npm files)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(answer.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the JSON-LD")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_site_json_ld_has_a_data_download_per_split_listing_its_files() {
    // GIVEN a version of 3 files in splits train (2) and test (1), published by catalog-admin,
    // and the local API
    let g = given().await;
    let env = g.stack.function_env();
    let root = std::env::temp_dir().join(format!("catalog-linked-site-{}", uuid::Uuid::new_v4()));
    croissant_client(&json!([{"op": "tree", "root": root, "files": [
        ["train/part-0.parquet", 0, 7],
        ["train/part-1.parquet", 10, 5],
        ["test/part-0.parquet", 20, 4],
    ]}]));
    publish_dir(&env, &root, "site-files");
    let (api, _guard) = start_local_api(&g.stack);
    let (status, _, body) =
        catalog_tests::http_request("GET", &format!("{api}/datasets/site-files"), &[]).await;
    assert_eq!(status, 200);
    let answer: Value = serde_json::from_slice(&body).unwrap();

    // WHEN the dataset page's JSON-LD is made of the metadata answer
    let node = site_json_ld(&answer, &api);

    // THEN it has one DataDownload per split, named by it, whose contentUrl lists exactly that
    // split's files (fetched with a read key), whose contentSize is their bytes
    let downloads = node["distribution"].as_array().unwrap();
    let names: Vec<&str> = downloads
        .iter()
        .map(|d| d["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["site-files-v1 test", "site-files-v1 train"],
        "{node}"
    );
    for (download, (split, files)) in downloads.iter().zip([("test", 1), ("train", 2)]) {
        assert_eq!(download["@type"], "DataDownload");
        assert_eq!(download["encodingFormat"], "application/vnd.apache.parquet");
        let url = download["contentUrl"].as_str().unwrap();
        assert_eq!(
            url,
            format!("{api}/datasets/site-files/data?version=1&split={split}")
        );
        let (status, _, body) =
            catalog_tests::http_request("GET", url, &[("x-api-key", READ_KEY)]).await;
        assert_eq!(status, 200, "{}", String::from_utf8_lossy(&body));
        let listing: Value = serde_json::from_slice(&body).unwrap();
        let listed = listing["files"].as_array().unwrap();
        assert_eq!(listed.len(), files, "{listing}");
        assert!(listed.iter().all(|f| f["split"] == split), "{listing}");
        let bytes: u64 = listed
            .iter()
            .map(|f| f["size_bytes"].as_u64().unwrap())
            .sum();
        assert_eq!(download["contentSize"], format!("{bytes} B"), "{split}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

#[tokio::test(flavor = "multi_thread")]
async fn dcat_describes_a_many_file_version_as_its_listing_and_a_distribution_per_split() {
    // GIVEN a version of 3 files in splits train (2) and test (1), published by catalog-admin,
    // beside the samples (one file each), and the local API
    let g = given().await;
    let env = g.stack.function_env();
    let root = std::env::temp_dir().join(format!("catalog-linked-dcat-{}", uuid::Uuid::new_v4()));
    croissant_client(&json!([{"op": "tree", "root": root, "files": [
        ["train/part-0.parquet", 0, 7],
        ["train/part-1.parquet", 10, 5],
        ["test/part-0.parquet", 20, 4],
    ]}]));
    publish_dir(&env, &root, "dcat-files");
    let (api, _guard) = start_local_api(&g.stack);
    let (status, _, body) =
        catalog_tests::http_request("GET", &format!("{api}/datasets/dcat-files"), &[]).await;
    assert_eq!(status, 200);
    let metadata: Value = serde_json::from_slice(&body).unwrap();

    // WHEN a harvester walks the DCAT catalog (tests/dcat_client.py: rdflib, pyshacl)
    let python = tool("PROTOCOLS_PYTHON", ".venv-protocols/bin/python");
    let out = std::process::Command::new(&python)
        .arg(catalog_tests::repo_root().join("tests/dcat_client.py"))
        .arg(format!("{api}/catalog?page_size=100"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let walked: Value = serde_json::from_slice(&out.stdout).unwrap();

    // THEN the page conforms to DCAT-AP 3 in both formats
    for page in walked["pages"].as_array().unwrap() {
        assert_eq!(page["conforms"], true, "{}", page["report"]);
        assert_eq!(page["isomorphic"], true);
    }
    let datasets = walked["datasets"].as_array().unwrap();
    let many = datasets
        .iter()
        .find(|d| d["iri"] == format!("{api}/datasets/dcat-files"))
        .expect("the many-file dataset");
    // AND its whole version is the data endpoint's listing (no download route: it serves one
    // file), with the version's bytes
    let data = format!("{api}/datasets/dcat-files/data");
    assert_eq!(many["access_url"], data);
    assert_eq!(many["download_url"], Value::Null);
    assert_eq!(many["byte_size"], metadata["size"]);
    // AND each split is a distribution of its own: its listing and its bytes
    let splits = metadata["files"]["splits"].as_array().unwrap();
    let mut want: Vec<Value> = vec![json!({
        "iri": format!("{api}/datasets/dcat-files#parquet"),
        "title": "Many files (Parquet, 3 files)",
        "byte_size": metadata["size"],
        "access_url": data,
        "download_url": null,
    })];
    for split in splits {
        let name = split["name"].as_str().unwrap();
        want.push(json!({
            "iri": format!("{api}/datasets/dcat-files#split-{name}"),
            "title": format!("Many files, split {name} (Parquet, {} files)", split["files"]),
            "byte_size": split["size"],
            "access_url": format!("{data}?split={name}"),
            "download_url": null,
        }));
    }
    want.sort_by_key(|d| d["iri"].as_str().unwrap().to_owned());
    assert_eq!(many["distributions"], json!(want));
    // AND a one-file sample keeps its one distribution with the download route
    let one = datasets
        .iter()
        .find(|d| d["iri"] != format!("{api}/datasets/dcat-files"))
        .unwrap();
    assert_eq!(one["distributions"].as_array().unwrap().len(), 1);
    assert!(one["download_url"].as_str().unwrap().ends_with("/download"));
    // AND the list endpoint shows the many-file dataset's files in brief, a one-file one none
    let (_, _, body) =
        catalog_tests::http_request("GET", &format!("{api}/datasets?page_size=100"), &[]).await;
    let listed: Value = serde_json::from_slice(&body).unwrap();
    for item in listed["items"].as_array().unwrap() {
        if item["slug"] == "dcat-files" {
            assert_eq!(item["files"], metadata["files"], "{item}");
        } else {
            assert!(item.get("files").is_none(), "{item}");
        }
    }
    let _ = std::fs::remove_dir_all(&root);
}
