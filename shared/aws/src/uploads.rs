//! The bucket's side of an upload from the site ([`S3Uploads`], `catalog::uploads::UploadBucket`):
//! S3's multipart upload of `uploads/{org}/{id}/{filename}`, its parts' presigned UploadPart
//! URLs (signed locally with the function's own credentials, valid
//! `catalog::uploads::Limits::PART_URL_SECONDS` or until those credentials expire, whichever
//! is first), ListParts, CompleteMultipartUpload and AbortMultipartUpload.

use std::time::Duration;

use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::types::{CompletedMultipartUpload, CompletedPart};
use aws_sdk_s3::Client;

use crate::dynamo::requests::classify;
use catalog::error::StoreError;
use catalog::uploads::{Part, UploadBucket};

/// The data bucket's uploads.
#[derive(Clone)]
pub struct S3Uploads {
    client: Client,
    bucket: String,
}

impl S3Uploads {
    pub fn new(client: Client, bucket: impl Into<String>) -> Self {
        Self {
            client,
            bucket: bucket.into(),
        }
    }
}

fn other(e: impl std::error::Error + Send + Sync + 'static) -> StoreError {
    StoreError::Other(Box::new(e))
}

impl UploadBucket for S3Uploads {
    async fn begin(&self, key: &str) -> Result<String, StoreError> {
        let made = self
            .client
            .create_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .send()
            .await
            .map_err(classify)?;
        made.upload_id
            .ok_or_else(|| StoreError::Corrupt("CreateMultipartUpload gave no upload id".into()))
    }

    async fn part_url(
        &self,
        key: &str,
        upload_id: &str,
        number: u64,
        seconds: u64,
    ) -> Result<String, StoreError> {
        let presigning =
            PresigningConfig::expires_in(Duration::from_secs(seconds)).map_err(other)?;
        let request = self
            .client
            .upload_part()
            .bucket(&self.bucket)
            .key(key)
            .upload_id(upload_id)
            .part_number(i32::try_from(number).map_err(other)?)
            .presigned(presigning)
            .await
            .map_err(other)?;
        Ok(request.uri().to_owned())
    }

    async fn parts(&self, key: &str, upload_id: &str) -> Result<Vec<Part>, StoreError> {
        let mut parts = Vec::new();
        let mut marker: Option<String> = None;
        loop {
            let page = self
                .client
                .list_parts()
                .bucket(&self.bucket)
                .key(key)
                .upload_id(upload_id)
                .set_part_number_marker(marker.clone())
                .send()
                .await
                .map_err(classify)?;
            // S3 names each part's ETag; s3s-fs (the local stack) names none, and its parts
            // are listed with an empty one.
            for p in page.parts() {
                if let Some(number) = p.part_number {
                    parts.push(Part {
                        number: number.max(0) as u64,
                        etag: p.e_tag().unwrap_or_default().to_owned(),
                    });
                }
            }
            match (page.is_truncated, page.next_part_number_marker) {
                (Some(true), Some(next)) if Some(&next) != marker.as_ref() => marker = Some(next),
                _ => break,
            }
        }
        parts.sort_by_key(|p| p.number);
        Ok(parts)
    }

    async fn complete(
        &self,
        key: &str,
        upload_id: &str,
        parts: &[Part],
    ) -> Result<Result<(), String>, StoreError> {
        let completed = CompletedMultipartUpload::builder()
            .set_parts(Some(
                parts
                    .iter()
                    .map(|p| {
                        CompletedPart::builder()
                            .part_number(p.number as i32)
                            .e_tag(&p.etag)
                            .build()
                    })
                    .collect(),
            ))
            .build();
        let sent = self
            .client
            .complete_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .upload_id(upload_id)
            .multipart_upload(completed)
            .send()
            .await;
        match sent {
            Ok(_) => Ok(Ok(())),
            Err(e) => {
                let refused = e.as_service_error().and_then(|s| {
                    use aws_sdk_s3::error::ProvideErrorMetadata;
                    match s.code() {
                        Some("NoSuchUpload") => {
                            Some("S3 holds no such upload (aborted or expired)".to_owned())
                        }
                        Some(
                            code @ ("InvalidPart" | "InvalidPartOrder" | "EntityTooSmall"
                            | "MalformedXML"),
                        ) => Some(format!(
                            "S3 refused the parts ({code}): {}",
                            s.message().unwrap_or("no message")
                        )),
                        _ => None,
                    }
                });
                match refused {
                    Some(why) => Ok(Err(why)),
                    None => Err(classify(e)),
                }
            }
        }
    }

    async fn abort(&self, key: &str, upload_id: &str) -> Result<(), StoreError> {
        self.client
            .abort_multipart_upload()
            .bucket(&self.bucket)
            .key(key)
            .upload_id(upload_id)
            .send()
            .await
            .map_err(classify)?;
        Ok(())
    }
}
