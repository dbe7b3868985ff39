//! The metadata in open vocabularies, read by the tools that speak them, against the local API
//! over moto and s3s-fs: Croissant documents validated and loaded by MLCommons' `mlcroissant`
//! (tests/croissant_client.py), records compared with pyarrow's reading of the same file.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

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
    let mut child = Command::new(&python)
        .arg(catalog_tests::repo_root().join("tests/croissant_client.py"))
        .env("CROISSANT_CACHE", &cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} ({e}): run dev/setup", python.display()));
    child
        .stdin
        .take()
        .unwrap()
        .write_all(ops.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().expect("mlcroissant");
    let _ = std::fs::remove_dir_all(&cache);
    assert!(
        out.status.success(),
        "mlcroissant failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("the client's JSON")
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
        let out = run_admin(admin_command().envs(env.iter().cloned()).args([
            "keyless",
            "set",
            slug,
            "--until",
            &format!("+{hours}h"),
        ]));
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
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
