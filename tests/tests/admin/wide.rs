//! Wide tables: DynamoDB's 400 KB item limit and Lambda's 6 MB response, checked at publish.

use super::*;

/// A Parquet file of `columns` ordinary columns (int64, float64, string), written by pyarrow.
fn wide_file(dir: &Path, columns: usize) -> PathBuf {
    let path = dir.join(format!("wide-{columns}.parquet"));
    let status = Command::new(tool("PYTHON", ".venv/bin/python"))
        .arg(repo_root().join("tests/wide_parquet.py"))
        .args([&columns.to_string(), "50"])
        .arg(&path)
        .status()
        .expect("run tests/wide_parquet.py");
    assert!(status.success());
    path
}

async fn dataset_item(stack: &Stack, slug: &str) -> Option<catalog_aws::dynamo::layout::Item> {
    use aws_sdk_dynamodb::types::AttributeValue;
    stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S(format!("DS#{slug}")))
        .key("sk", AttributeValue::S("DATASET".into()))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
}

async fn objects(stack: &Stack) -> i32 {
    stack
        .s3
        .list_objects_v2()
        .bucket(&stack.target.bucket)
        .send()
        .await
        .unwrap()
        .key_count()
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread")]
async fn two_thousand_columns_publish_and_serve_and_wider_files_are_refused_before_any_write() {
    let stack = Stack::start().await;
    let dir = std::env::temp_dir().join(format!("catalog-wide-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    ok(&publish(&stack, &sample("city-bikes"), "wide"));

    // GIVEN a file of 2,000 columns of ordinary statistics
    let file = wide_file(&dir, 2_000);
    // WHEN it is published over version 1
    let started = std::time::Instant::now();
    let out = ok(&publish(&stack, &file, "wide"));
    let publish_time = started.elapsed();
    assert!(
        out.contains("version 2") && out.contains("2000 columns"),
        "{out}"
    );
    // AND its histograms, which would take the record past DynamoDB's limit, are left out
    assert!(out.contains("histograms left out"), "{out}");

    // THEN the metadata endpoint serves every column's statistics, in one answer
    let resp = metadata(&stack, "wide").await;
    assert_eq!(resp.status(), 200);
    let answer_bytes = resp.body().len();
    let body = json_body(&resp);
    let schema = body["schema"].as_array().unwrap();
    assert_eq!(schema.len(), 2_000);
    assert_eq!(body["column_count"], 2_000);
    assert_eq!(schema[1999]["name"], "measure_1999");
    assert!(schema[1]["mean"].is_number(), "{}", schema[1]);
    assert!(schema.iter().all(|c| c.get("histogram").is_none()));
    assert!(schema[1]["top_counts"].is_array(), "{}", schema[1]);
    assert_eq!(schema[2]["dtype"], "string");
    // AND the data endpoint's descriptor names them, and the file downloads whole
    let key = create_key(&stack);
    let resp = data(&stack, "wide", Some(&key)).await;
    assert_eq!(resp.status(), 200);
    let descriptor = json_body(&resp);
    assert_eq!(descriptor["columns"].as_array().unwrap().len(), 2_000);
    let (status, bytes) = catalog_tests::http_get(descriptor["url"].as_str().unwrap()).await;
    assert_eq!(status, 200);
    let (rows, columns, _) = catalog_tests::read_parquet(bytes);
    assert_eq!((rows, columns.len()), (50, 2_000));
    // AND the schema is stored compressed, the item well under DynamoDB's limit
    let item = dataset_item(&stack, "wide").await.unwrap();
    assert!(matches!(
        item.get("schema_z"),
        Some(aws_sdk_dynamodb::types::AttributeValue::B(_))
    ));
    let item_bytes = catalog_aws::dynamo::codec::item_size(&item);
    assert!(
        item_bytes < catalog_aws::dynamo::codec::ITEM_LIMIT_BYTES,
        "{item_bytes}"
    );
    println!(
        "figures: 2000 columns published in {publish_time:.1?}; dataset item {item_bytes} bytes; \
         metadata answer {answer_bytes} bytes"
    );

    // GIVEN files too wide to store (6,000 columns: the record) or to serve (16,000: the answer)
    for (columns, why) in [(6_000, "400 KB item limit"), (16_000, "a Lambda response")] {
        let file = wide_file(&dir, columns);
        let before = objects(&stack).await;
        // WHEN they are published, over an existing dataset and as a new one
        for slug in ["wide", "too-wide"] {
            let out = publish(&stack, &file, slug);
            // THEN each is refused, saying why, with nothing written
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{columns}: {stderr}");
            assert!(stderr.contains("cannot be published"), "{stderr}");
            assert!(stderr.contains(why), "{columns}: {stderr}");
        }
        assert_eq!(objects(&stack).await, before, "no object uploaded");
        assert!(
            dataset_item(&stack, "too-wide").await.is_none(),
            "no dataset"
        );
        let stored = dataset_item(&stack, "wide").await.unwrap();
        assert_eq!(
            stored.get("latest_version"),
            Some(&aws_sdk_dynamodb::types::AttributeValue::N("2".into())),
            "no version number used"
        );
        assert_eq!(json_body(&metadata(&stack, "wide").await)["version"], 2);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
