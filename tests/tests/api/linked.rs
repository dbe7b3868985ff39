//! The metadata in open vocabularies, read by the tools that speak them, against the local API
//! over moto and s3s-fs: Croissant documents validated and loaded by MLCommons' `mlcroissant`
//! (tests/croissant_client.py), records compared with pyarrow's reading of the same file.

use std::path::{Path, PathBuf};
use std::process::Command;

use catalog_tests::{
    admin_command, publish_showcase, run_admin, samples_dir, start_local_api, tool,
};
use serde_json::json;

use super::*;

/// Runs tests/croissant_client.py over `ops`, with a fresh Croissant cache; one result per
/// operation.
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

fn publish(env: &[(String, String)], file: &Path, slug: &str, keyless_hours: Option<i64>) {
    let out = run_admin(admin_command().envs(env.iter().cloned()).args([
        "publish",
        &file.to_string_lossy(),
        "--slug",
        slug,
        "--name",
        "Every kind of column",
        "--description",
        "One column of each type Croissant describes, and two it cannot.",
        "--license",
        "CC0-1.0",
        "--source",
        "https://tests.example.org/mixed",
        "--category",
        "testing",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(hours) = keyless_hours {
        catalog_tests::set_keyless(env, slug, &hours.to_string());
    }
}

struct Published {
    slug: String,
    file: PathBuf,
    keyless: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn mlcroissant_validates_every_dataset_and_reads_records_equal_to_pyarrow() {
    // GIVEN the samples, the showcase catalog and a file with a column of every kind (keyless),
    // published through catalog-admin, and a read key
    let g = given().await;
    let env = g.stack.function_env();
    let dir = std::env::temp_dir().join(format!("catalog-linked-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let mixed = dir.join("mixed.parquet");
    croissant_client(&json!([{"op": "mixed", "out": mixed}]));
    publish(&env, &mixed, "every-kind", Some(24));
    let mut published: Vec<Published> = manifest()
        .datasets
        .into_iter()
        .map(|d| Published {
            slug: d.slug.to_string(),
            file: samples_dir().join(&d.file),
            keyless: d.keyless_offset_hours.is_some_and(|h| h > 0),
        })
        .collect();
    for s in publish_showcase(&env, &dir.join("showcase")) {
        published.push(Published {
            slug: s.slug,
            file: s.file,
            keyless: s.keyless,
        });
    }
    published.push(Published {
        slug: "every-kind".to_owned(),
        file: mixed.clone(),
        keyless: true,
    });
    assert!(published.len() > 20, "the showcase is published");
    let (api, _guard) = start_local_api(&g.stack);

    // WHEN mlcroissant loads each dataset's Croissant document and, where it can be read
    // without a key, every record of it
    let ops: Vec<Value> = published
        .iter()
        .map(|p| {
            json!({"op": "validate", "url": format!("{api}/datasets/{}/croissant", p.slug),
                   "parquet": p.keyless.then_some(&p.file), "record_set": p.slug})
        })
        .collect();
    let results = croissant_client(&Value::Array(ops));

    // THEN every document validates with no error and no warning, and every keyless dataset's
    // records equal pyarrow's reading of its file
    let mut read = 0;
    for (p, result) in published.iter().zip(&results) {
        assert_eq!(result["errors"], json!([]), "{}: {result}", p.slug);
        assert_eq!(result["warnings"], json!([]), "{}: {result}", p.slug);
        if p.keyless {
            assert_eq!(result["equal"], true, "{}: {result}", p.slug);
            read += 1;
        }
    }
    assert!(read >= 3, "keyless datasets were read: {read}");
    let every_kind = results.last().unwrap();
    assert_eq!(every_kind["records"], 50, "{every_kind}");
    let fields: Vec<&str> = every_kind["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    assert!(
        !fields.contains(&"tags_by_name") && !fields.contains(&"took"),
        "a map and a duration are left out: {fields:?}"
    );
    assert_eq!(
        fields.len(),
        13,
        "every other column is a field: {fields:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_croissant_client_reads_gated_data_with_a_key_as_basic_password_and_not_without() {
    // GIVEN the samples (air-quality-hourly is gated) and the local API
    let g = given().await;
    let (api, _guard) = start_local_api(&g.stack);
    let url = format!("{api}/datasets/air-quality-hourly/croissant");
    let file = samples_dir().join("air-quality-hourly.parquet");
    // WHEN mlcroissant reads its records with no key, a wrong key, and the read key
    let results = croissant_client(&json!([
        {"op": "validate", "url": url, "parquet": file, "record_set": "air-quality-hourly"},
        {"op": "validate", "url": url, "parquet": file, "record_set": "air-quality-hourly",
         "key": "dcat_not_a_key_we_issued_000000000000000000000000000000000000000000"},
        {"op": "validate", "url": url, "parquet": file, "record_set": "air-quality-hourly",
         "key": READ_KEY},
    ]));
    // THEN the document is public, the file is refused without a valid key, and with the key
    // the records equal pyarrow's
    for result in &results {
        assert_eq!(result["errors"], json!([]), "{result}");
    }
    for refused in &results[..2] {
        let why = refused["read_error"].as_str().unwrap_or_default();
        assert!(why.contains("401"), "{refused}");
    }
    assert_eq!(results[2]["equal"], true, "{}", results[2]);
}

/// Runs `script` with the Python at `$var` (default `default`) on `args`; its JSON output.
fn python_json(var: &str, default: &str, script: &str, args: &[&str]) -> Value {
    let python = tool(var, default);
    let out = Command::new(&python)
        .arg(catalog_tests::repo_root().join(script))
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{} ({e}): run dev/setup", python.display()));
    assert!(
        out.status.success(),
        "{script} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the script's JSON")
}

#[tokio::test(flavor = "multi_thread")]
async fn the_dcat_catalog_validates_against_dcat_ap_3_in_both_formats_and_ckan_harvests_it() {
    // GIVEN the samples and the showcase catalog, and what the list endpoint says of them
    let g = given().await;
    let dir = std::env::temp_dir().join(format!("catalog-dcat-{}", uuid::Uuid::new_v4()));
    let showcase = publish_showcase(&g.stack.function_env(), &dir);
    let listed = json_body(&g.list("/api/v1/datasets?page_size=100").await);
    let items = listed["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 4 + showcase.len());
    let (api, _guard) = start_local_api(&g.stack);

    // WHEN a harvester walks the catalog 10 datasets a page, each page fetched in Turtle and in
    // JSON-LD, parsed by rdflib and validated by pyshacl against the DCAT-AP 3.0.1 shapes
    let walked = python_json(
        "PROTOCOLS_PYTHON",
        ".venv-protocols/bin/python",
        "tests/dcat_client.py",
        &[&format!("{api}/catalog?page_size=10")],
    );
    let pages = walked["pages"].as_array().unwrap();
    // THEN every page conforms, both formats hold the same graph, and the pages chain from the
    // first to the last with the total
    let expected_pages = items.len().div_ceil(10);
    assert_eq!(pages.len(), expected_pages, "{walked}");
    for (i, page) in pages.iter().enumerate() {
        assert_eq!(page["conforms"], true, "page {}: {}", i + 1, page["report"]);
        assert_eq!(
            page["isomorphic"],
            true,
            "page {}: Turtle and JSON-LD differ",
            i + 1
        );
        assert_eq!(
            page["content_types"],
            json!(["text/turtle; charset=utf-8", "application/ld+json"])
        );
        assert_eq!(page["total"], items.len(), "{page}");
        assert_eq!(
            page["view"],
            format!("{api}/catalog?page={}&page_size=10", i + 1)
        );
        assert_eq!(page["first"], format!("{api}/catalog?page=1&page_size=10"));
        assert_eq!(
            page["last"],
            format!("{api}/catalog?page={expected_pages}&page_size=10")
        );
        let previous = (i > 0).then(|| format!("{api}/catalog?page={i}&page_size=10"));
        assert_eq!(page["previous"], json!(previous));
    }
    // AND the datasets are the list's, each with its metadata, access rights and distribution
    let mut found: Vec<Value> = walked["datasets"].as_array().unwrap().clone();
    assert_eq!(found.len(), items.len());
    found.sort_by_key(|d| d["identifier"].as_str().unwrap().to_owned());
    let mut expected = items.clone();
    expected.sort_by_key(|d| d["id"].as_str().unwrap().to_owned());
    for (d, item) in found.iter().zip(&expected) {
        let slug = item["slug"].as_str().unwrap();
        assert_eq!(d["identifier"], item["id"]);
        assert_eq!(d["iri"], format!("{api}/datasets/{slug}"));
        assert_eq!(d["title"], item["name"]);
        assert_eq!(d["byte_size"], item["size"]);
        let mut keywords: Vec<Value> = item["tags"].as_array().unwrap().clone();
        keywords.push(item["category"].clone());
        keywords.sort_by_key(|k| k.as_str().unwrap().to_owned());
        keywords.dedup();
        assert_eq!(d["keywords"], json!(keywords), "{slug}");
        let rights = if item["keyless"] == true {
            "PUBLIC"
        } else {
            "RESTRICTED"
        };
        assert_eq!(
            d["access_rights"],
            format!("http://publications.europa.eu/resource/authority/access-right/{rights}"),
            "{slug}"
        );
        assert_eq!(
            d["license"],
            format!(
                "https://spdx.org/licenses/{}",
                item["license"].as_str().unwrap()
            )
        );
        assert_eq!(
            d["media_type"],
            "https://www.iana.org/assignments/media-types/application/vnd.apache.parquet"
        );
        assert_eq!(d["access_url"], format!("{api}/datasets/{slug}/data"));
        assert_eq!(d["download_url"], format!("{api}/datasets/{slug}/download"));
        let origin = api.trim_end_matches("/api/v1");
        assert_eq!(
            d["landing_page"],
            format!("{origin}/dataset.html?slug={slug}")
        );
    }
    assert!(
        found
            .iter()
            .any(|d| d["access_rights"].as_str().unwrap().ends_with("PUBLIC")),
        "a keyless dataset is public"
    );

    // WHEN CKAN's harvester parser (ckanext-dcat, DCAT-AP 3 profile) harvests the catalog in
    // each format, following its pages
    for format in ["turtle", "json-ld"] {
        let harvested = python_json(
            "CKAN_PYTHON",
            ".venv-ckan/bin/python",
            "tests/ckan_harvest.py",
            &[&format!("{api}/catalog?page_size=10"), format],
        );
        // THEN it reads every page and every dataset, with its tags and its Parquet resource
        assert_eq!(harvested["pages"], expected_pages, "{format}");
        let mut got: Vec<Value> = harvested["datasets"].as_array().unwrap().clone();
        assert_eq!(got.len(), items.len(), "{format}");
        got.sort_by_key(|d| d["identifier"].as_str().unwrap().to_owned());
        for (d, item) in got.iter().zip(&expected) {
            let slug = item["slug"].as_str().unwrap();
            assert_eq!(d["title"], item["name"], "{format}");
            assert_eq!(d["uri"], format!("{api}/datasets/{slug}"), "{format}");
            let resource = &d["resources"][0];
            assert_eq!(resource["size"], item["size"], "{format} {slug}");
            assert_eq!(
                resource["url"],
                format!("{api}/datasets/{slug}/download"),
                "{format}"
            );
            assert_eq!(
                resource["access_url"],
                format!("{api}/datasets/{slug}/data"),
                "{format}"
            );
            // The license document's label: the dataset's SPDX identifier
            assert_eq!(resource["license"], item["license"], "{format}");
            let tags: Vec<&str> = d["tags"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect();
            for tag in item["tags"].as_array().unwrap() {
                assert!(
                    tags.contains(&tag.as_str().unwrap()),
                    "{format} {slug}: {tags:?}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
