//! Presigned S3 GET URLs. Signing is local (no network call); the credentials that sign a URL
//! bound its life, so `expires_at` is the earlier of now + TTL and their expiry.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_credential_types::Credentials;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::Client;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use crate::error::StoreError;
use crate::ports::{SignedUrl, UrlSigner};

/// Credentials are fetched again when they would expire within this margin.
const REFRESH_MARGIN: TimeDelta = TimeDelta::minutes(5);

pub struct S3Signer {
    config: aws_sdk_s3::Config,
    provider: SharedCredentialsProvider,
    bucket: String,
    ttl: Duration,
    current: Mutex<Option<(Credentials, Client)>>,
}

impl S3Signer {
    /// `config` is the S3 client configuration (region, endpoint, addressing style) and
    /// `provider` the credentials to sign with.
    pub fn new(
        config: aws_sdk_s3::Config,
        provider: SharedCredentialsProvider,
        bucket: impl Into<String>,
        ttl: Duration,
    ) -> Self {
        Self {
            config,
            provider,
            bucket: bucket.into(),
            ttl,
            current: Mutex::new(None),
        }
    }

    /// A client bound to one set of credentials, reused until they near their expiry. With
    /// Lambda's environment credentials (no expiry known) that is once per cold start.
    async fn client(&self, now: DateTime<Utc>) -> Result<(Credentials, Client), StoreError> {
        if let Some((creds, client)) = self.lock().as_ref() {
            let fresh = creds
                .expiry()
                .is_none_or(|exp| DateTime::<Utc>::from(exp) - REFRESH_MARGIN > now);
            if fresh {
                return Ok((creds.clone(), client.clone()));
            }
        }
        let creds = self
            .provider
            .provide_credentials()
            .await
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let client = Client::from_conf(
            self.config
                .to_builder()
                .credentials_provider(creds.clone())
                .build(),
        );
        *self.lock() = Some((creds.clone(), client.clone()));
        Ok((creds, client))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Credentials, Client)>> {
        self.current
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl UrlSigner for S3Signer {
    async fn sign(&self, object_key: &str, now: DateTime<Utc>) -> Result<SignedUrl, StoreError> {
        let (creds, client) = self.client(now).await?;
        // SigV4 dates have whole seconds: sign from the start of this second so the reported
        // expiry is exact.
        let start = now
            .duration_trunc(TimeDelta::seconds(1))
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let presigning = PresigningConfig::builder()
            .start_time(SystemTime::from(start))
            .expires_in(self.ttl)
            .build()
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let request = client
            .get_object()
            .bucket(&self.bucket)
            .key(object_key)
            .presigned(presigning)
            .await
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let ttl = TimeDelta::from_std(self.ttl).map_err(|e| StoreError::Other(Box::new(e)))?;
        let mut expires_at = start + ttl;
        if let Some(exp) = creds.expiry() {
            expires_at = expires_at.min(DateTime::<Utc>::from(exp));
        }
        Ok(SignedUrl {
            url: request.uri().to_owned(),
            expires_at,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aws_sdk_s3::config::{BehaviorVersion, Region};

    fn signer(creds: Credentials, ttl: Duration) -> S3Signer {
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("eu-west-1"))
            .build();
        S3Signer::new(config, SharedCredentialsProvider::new(creds), "bucket", ttl)
    }

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[tokio::test]
    async fn url_expiry_is_now_plus_ttl_when_credentials_do_not_expire() {
        let creds = Credentials::new("AKID", "SECRET", None, None, "test");
        let signed = signer(creds, Duration::from_secs(900))
            .sign("datasets/x/v1/data.parquet", now())
            .await
            .unwrap();
        assert_eq!(signed.expires_at.to_rfc3339(), "2026-01-02T03:19:05+00:00");
        assert!(signed.url.contains("X-Amz-Expires=900"), "{}", signed.url);
        assert!(
            signed.url.contains("X-Amz-Date=20260102T030405Z"),
            "{}",
            signed.url
        );
        assert!(
            signed.url.contains("/datasets/x/v1/data.parquet"),
            "{}",
            signed.url
        );
        assert!(signed.url.contains("X-Amz-Signature="), "{}", signed.url);
    }

    #[tokio::test]
    async fn url_expiry_is_capped_by_the_signing_credentials_expiry() {
        let creds_expiry = now() + TimeDelta::minutes(7);
        let creds = Credentials::new(
            "ASIA",
            "SECRET",
            Some("TOKEN".into()),
            Some(SystemTime::from(creds_expiry)),
            "test",
        );
        let signed = signer(creds, Duration::from_secs(900))
            .sign("datasets/x/v1/data.parquet", now())
            .await
            .unwrap();
        assert_eq!(signed.expires_at, creds_expiry);
        assert!(
            signed.url.contains("X-Amz-Security-Token=TOKEN"),
            "{}",
            signed.url
        );
    }
}
