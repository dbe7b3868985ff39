use super::*;

#[test]
fn a_staged_prefix_is_under_staging_in_the_catalogs_bucket() {
    let parsed = StagedPrefix::parse("s3://data/staging/sales", "data").unwrap();
    assert_eq!(parsed.prefix, "staging/sales/");
    assert_eq!(parsed.url(), "s3://data/staging/sales/");
    assert_eq!(
        StagedPrefix::parse("staging/sales/", "data").unwrap(),
        parsed
    );
    for (raw, says) in [
        (
            "s3://other/staging/sales",
            "from the catalog's bucket, data, not other",
        ),
        (
            "s3://data/datasets/sales",
            "give a prefix under s3://data/staging/",
        ),
        ("staging/", "give a prefix under"),
        ("staging/../datasets/x", "give a prefix under"),
    ] {
        let refused = StagedPrefix::parse(raw, "data").unwrap_err().to_string();
        assert!(refused.contains(says), "{raw}: {refused}");
    }
}

#[test]
fn csv_and_json_lines_are_told_apart_from_parquet() {
    for name in ["a.csv", "b/c.TSV", "d.jsonl.gz", "e.ndjson.zst", "f.json"] {
        assert!(convertible(name), "{name}");
    }
    for name in ["a.parquet", "README.md", "csv/a.parquet", "a.csv.parquet"] {
        assert!(!convertible(name), "{name}");
    }
}

#[test]
fn copy_sources_percent_encode_the_key_but_its_slashes() {
    assert_eq!(
        copy::copy_source("data", "staging/s/year=2024/a b+é.parquet"),
        "data/staging/s/year%3D2024/a%20b%2B%C3%A9.parquet"
    );
}

#[test]
fn copy_options_keep_to_s3s_limits() {
    assert!(CopyOptions::new(COPY_MAX, COPY_PART_MIN).is_ok());
    assert!(CopyOptions::new(COPY_MAX + 1, COPY_PART_MIN).is_err());
    assert!(CopyOptions::new(1 << 20, COPY_PART_MIN - 1).is_err());
}

#[test]
fn a_full_object_checksum_or_the_stage_uploads_metadata_give_the_sha256() {
    use aws_sdk_s3::operation::head_object::HeadObjectOutput;
    let sha = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    let full = catalog_aws::s3::checksum_sha256(sha).unwrap();
    let head = HeadObjectOutput::builder().checksum_sha256(&full).build();
    assert_eq!(reported_sha256(&head).as_deref(), Some(sha));
    // A composite checksum (a multipart upload's) is not the object's SHA-256.
    let composite = HeadObjectOutput::builder()
        .checksum_sha256(format!("{full}-3"))
        .build();
    assert_eq!(reported_sha256(&composite), None);
    let with_metadata = HeadObjectOutput::builder()
        .checksum_sha256(format!("{full}-3"))
        .metadata(SHA256_METADATA, sha.to_uppercase())
        .build();
    assert_eq!(reported_sha256(&with_metadata).as_deref(), Some(sha));
    let bad_metadata = HeadObjectOutput::builder()
        .metadata(SHA256_METADATA, "not a digest")
        .build();
    assert_eq!(reported_sha256(&bad_metadata), None);
}
