//! Publishing from the site (issue 40 §3), against moto and s3s-fs: a file goes up in a
//! multipart upload through presigned UploadPart URLs (plain HTTP PUTs, as a browser sends
//! them), and the publishing function's code (`catalog_publish_core::site::publish_upload`,
//! in-process) publishes it by the code `catalog-admin publish` runs; refusals leave no
//! version and no object.

use super::*;
use catalog::orgs::OrgName;
use catalog::uploads::{Part, Upload, UploadBucket, UploadState, UploadStore};
use catalog_aws::dynamo::uploads::DynamoUploads;
use catalog_aws::uploads::S3Uploads;
use catalog_publish_core::publish::Publisher;
use catalog_publish_core::site::{publish_upload, Outcome};
use sha2::{Digest, Sha256};

const PART: usize = 8 * 1024 * 1024;

struct Site<'s> {
    stack: &'s Stack,
    store: DynamoUploads,
    bucket: S3Uploads,
    http: reqwest::Client,
}

impl<'s> Site<'s> {
    fn new(stack: &'s Stack) -> Self {
        Site {
            stack,
            store: DynamoUploads::new(stack.dynamo.clone(), stack.target.keys_table.clone()),
            bucket: S3Uploads::new(stack.s3.clone(), stack.target.bucket.clone()),
            http: reqwest::Client::builder().no_proxy().build().unwrap(),
        }
    }

    /// Records an upload of `bytes` as `filename` and begins its multipart upload, as
    /// `POST /orgs/{org}/uploads` does.
    async fn begin(&self, dataset: &str, filename: &str, bytes: &[u8], sha256: &str) -> Upload {
        let now = Utc::now();
        let mut upload = Upload {
            id: uuid::Uuid::new_v4().simple().to_string(),
            org: OrgName::parse("acme").unwrap(),
            dataset: dataset.into(),
            filename: filename.into(),
            size: bytes.len() as u64,
            sha256: sha256.into(),
            by: "editor-sub".into(),
            created_at: now,
            updated_at: now,
            state: UploadState::Uploading,
            s3_upload_id: String::new(),
            part_size: PART as u64,
            version: None,
            reason: None,
        };
        upload.s3_upload_id = self.bucket.begin(&upload.key()).await.expect("begin");
        self.store.create_upload(&upload).await.expect("record");
        upload
    }

    /// PUTs part `number` (1-based) of `bytes` to its presigned URL, as a browser would: the
    /// ETag S3 answers.
    async fn put_part(&self, upload: &Upload, bytes: &[u8], number: u64) -> Part {
        let url = self
            .bucket
            .part_url(&upload.key(), &upload.s3_upload_id, number, 3600)
            .await
            .expect("part URL");
        let start = (number as usize - 1) * PART;
        let chunk = bytes[start..(start + PART).min(bytes.len())].to_vec();
        let resp = self.http.put(&url).body(chunk).send().await.expect("PUT");
        assert!(
            resp.status().is_success(),
            "PUT part {number}: {}",
            resp.status()
        );
        let etag = resp.headers()["etag"].to_str().unwrap().to_owned();
        Part { number, etag }
    }

    /// Every part, completed, then published as the function would: the outcome.
    async fn send_and_publish(&self, mut upload: Upload, bytes: &[u8]) -> (Upload, Outcome) {
        let mut parts = Vec::new();
        for number in 1..=upload.parts() {
            parts.push(self.put_part(&upload, bytes, number).await);
        }
        self.finish(&mut upload, &parts).await
    }

    async fn finish(&self, upload: &mut Upload, parts: &[Part]) -> (Upload, Outcome) {
        upload.state = UploadState::Publishing;
        assert!(self
            .store
            .move_upload(upload, UploadState::Uploading)
            .await
            .unwrap());
        self.bucket
            .complete(&upload.key(), &upload.s3_upload_id, parts)
            .await
            .expect("complete")
            .expect("S3 takes the parts");
        let publisher = Publisher {
            writer: self.stack.writer(),
            s3: self.stack.s3.clone(),
            bucket: self.stack.target.bucket.clone(),
        };
        let outcome = publish_upload(&publisher, &self.store, &upload.key(), None, Utc::now())
            .await
            .expect("publish_upload");
        let after = self
            .store
            .upload(&upload.org, &upload.id)
            .await
            .unwrap()
            .unwrap();
        (after, outcome)
    }

    async fn object_exists(&self, key: &str) -> bool {
        self.stack
            .s3
            .head_object()
            .bucket(&self.stack.target.bucket)
            .key(key)
            .send()
            .await
            .is_ok()
    }
}

fn sha(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// A Parquet file of about 20 MiB (three 8 MiB parts), written by pyarrow.
fn parquet_file(dir: &Path) -> Vec<u8> {
    let file = dir.join("big.parquet");
    let script = "import os, sys, pyarrow as pa, pyarrow.parquet as pq\n\
                  t = pa.table({'blob': [os.urandom(1 << 20) for _ in range(20)], 'n': list(range(20))})\n\
                  pq.write_table(t, sys.argv[1], compression='none')\n";
    let python = std::env::var_os("PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| catalog_tests::repo_root().join(".venv/bin/python"));
    assert!(Command::new(python)
        .args(["-c", script])
        .arg(&file)
        .status()
        .expect("python")
        .success());
    std::fs::read(&file).unwrap()
}

/// What the data route serves for `slug` with an operator's key: the bytes behind its URL.
async fn served(stack: &Stack, slug: &str) -> Option<Vec<u8>> {
    let key = create_key(stack);
    let resp = data(stack, slug, Some(&key)).await;
    if resp.status() != 200 {
        return None;
    }
    let body = json_body(&resp);
    let url = body["url"].as_str().expect("url");
    let got = reqwest::get(url).await.unwrap();
    assert_eq!(got.status(), 200);
    Some(got.bytes().await.unwrap().to_vec())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_parquet_file_uploaded_in_three_presigned_parts_is_published_and_served_byte_for_byte() {
    let stack = Stack::start().await;
    let site = Site::new(&stack);
    let dir = std::env::temp_dir().join(format!("catalog-site-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let bytes = parquet_file(&dir);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(bytes.len().div_ceil(PART), 3, "three parts");
    let upload = site
        .begin("sales", "sales.parquet", &bytes, &sha(&bytes))
        .await;
    assert_eq!(upload.parts(), 3);

    // Resuming: two parts sent, the upload read back lists them, then the third.
    let p1 = site.put_part(&upload, &bytes, 1).await;
    let p2 = site.put_part(&upload, &bytes, 2).await;
    let held = site
        .bucket
        .parts(&upload.key(), &upload.s3_upload_id)
        .await
        .unwrap();
    let numbers: Vec<u64> = held.iter().map(|p| p.number).collect();
    assert_eq!(numbers, [1, 2], "S3 holds the two parts sent");
    for (listed, sent) in held.iter().zip([&p1, &p2]) {
        // S3 lists each part's ETag; s3s-fs lists none.
        assert!(
            listed.etag.is_empty() || listed.etag == sent.etag,
            "{listed:?}"
        );
    }
    let p3 = site.put_part(&upload, &bytes, 3).await;
    let mut upload = upload;
    let (after, outcome) = site.finish(&mut upload, &[p1, p2, p3]).await;

    assert_eq!(
        outcome,
        Outcome::Published {
            slug: "acme~sales".into(),
            version: 1
        }
    );
    assert_eq!(after.state, UploadState::Published);
    assert_eq!(after.version, Some(1));
    assert!(
        !site.object_exists(&upload.key()).await,
        "the uploaded object is removed"
    );
    let got = served(&stack, "acme~sales").await.expect("served");
    assert_eq!(
        sha(&got),
        sha(&bytes),
        "the data route serves the file as uploaded"
    );
    let meta = stack
        .writer()
        .dataset_meta(&Slug::parse("acme~sales").unwrap())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        meta.card.name, "sales",
        "a new dataset is named by its name"
    );
    assert_eq!(meta.card.access_level.as_str(), "private");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_csv_uploaded_from_the_site_is_converted_and_published() {
    let stack = Stack::start().await;
    let site = Site::new(&stack);
    let csv = b"city,level\nyork,1.5\nleeds,2.25\n".to_vec();
    let upload = site.begin("levels", "levels.csv", &csv, &sha(&csv)).await;
    let (after, outcome) = site.send_and_publish(upload, &csv).await;
    assert_eq!(
        outcome,
        Outcome::Published {
            slug: "acme~levels".into(),
            version: 1
        }
    );
    assert_eq!(after.state, UploadState::Published);
    let key = create_key(&stack);
    let meta = json_body(
        &api::metadata(
            &v2_request("/api/v1/datasets/acme~levels", &[("x-api-key", &key)]),
            &stack.catalog(),
            Utc::now(),
        )
        .await,
    );
    assert_eq!(meta["row_count"], 2, "{meta}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_sha256_a_png_and_a_truncated_parquet_are_refused_with_nothing_recorded() {
    let stack = Stack::start().await;
    let site = Site::new(&stack);
    let good = std::fs::read(sample("river-levels")).unwrap();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(std::iter::repeat_n(7u8, 4096));
    let truncated = good[..good.len() / 2].to_vec();
    let cases: [(&str, &[u8], String, &str); 3] = [
        ("wrong-sha", &good, sha(b"something else"), "SHA-256"),
        ("png", &png, sha(&png), "neither Parquet nor CSV"),
        ("cut", &truncated, sha(&truncated), "truncated"),
    ];
    for (name, bytes, declared, says) in cases {
        let upload = site.begin(name, "x.parquet", bytes, &declared).await;
        let key = upload.key();
        let (after, outcome) = site.send_and_publish(upload, bytes).await;
        let Outcome::Failed { reason } = outcome else {
            panic!("{name}: {outcome:?}");
        };
        assert!(reason.contains(says), "{name}: {reason}");
        assert_eq!(after.state, UploadState::Failed, "{name}");
        assert_eq!(after.reason.as_deref(), Some(reason.as_str()));
        assert_eq!(after.version, None);
        assert!(
            !site.object_exists(&key).await,
            "{name}: the object is removed"
        );
        let slug = Slug::parse(&format!("acme~{name}")).unwrap();
        assert!(
            stack.writer().dataset_meta(&slug).await.unwrap().is_none(),
            "{name}: no dataset, no version"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_event_delivered_twice_at_once_publishes_one_version() {
    let stack = Stack::start().await;
    let site = Site::new(&stack);
    let csv = b"city,level\nyork,1.5\n".to_vec();
    let mut upload = site.begin("twice", "twice.csv", &csv, &sha(&csv)).await;
    let part = site.put_part(&upload, &csv, 1).await;
    upload.state = UploadState::Publishing;
    assert!(site
        .store
        .move_upload(&upload, UploadState::Uploading)
        .await
        .unwrap());
    site.bucket
        .complete(&upload.key(), &upload.s3_upload_id, &[part])
        .await
        .unwrap()
        .unwrap();
    let publisher = Publisher {
        writer: stack.writer(),
        s3: stack.s3.clone(),
        bucket: stack.target.bucket.clone(),
    };
    let key = upload.key();
    let (a, b) = tokio::join!(
        publish_upload(&publisher, &site.store, &key, None, Utc::now()),
        publish_upload(&publisher, &site.store, &key, None, Utc::now()),
    );
    let outcomes = [a.unwrap(), b.unwrap()];
    let published = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Published { version: 1, .. }))
        .count();
    let skipped = outcomes
        .iter()
        .filter(|o| matches!(o, Outcome::Skipped { .. }))
        .count();
    assert_eq!((published, skipped), (1, 1), "{outcomes:?}");
    let meta = stack
        .writer()
        .dataset_meta(&Slug::parse("acme~twice").unwrap())
        .await
        .unwrap();
    assert!(meta.is_some());
    let key = create_key(&stack);
    let versions = json_body(&data(&stack, "acme~twice", Some(&key)).await);
    assert_eq!(versions["version"], 1, "one version: {versions}");
}
