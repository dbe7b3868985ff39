//! The bucket's layout ([`object_key`]) and presigned S3 GET URLs. Signing is local (no network
//! call); the credentials that sign a URL bound its life, so `expires_at` is the earlier of
//! now + TTL and their expiry.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::provider::{ProvideCredentials, SharedCredentialsProvider};
use aws_credential_types::Credentials;
use aws_sdk_s3::presigning::PresigningConfig;
use aws_sdk_s3::Client;
use chrono::{DateTime, DurationRound, TimeDelta, Utc};

use catalog::error::StoreError;
use catalog::input::Slug;
use catalog::ports::{SignedUrl, UrlSigner};

/// The object key of a dataset version: immutable, versioned, under the `datasets/` prefix the
/// data function may read.
pub fn object_key(slug: &Slug, version: u64, sha256: &str) -> String {
    format!("datasets/{slug}/v{version}/{sha256}.parquet")
}

/// The `x-amz-checksum-sha256` of a file whose SHA-256 is `sha256_hex`: given with an upload,
/// S3 refuses a body that does not hash to what was published, and the SDK sends the body as it
/// is (no `aws-chunked` trailer to compute a checksum of its own). `None` if it is not 64 hex
/// digits.
pub fn checksum_sha256(sha256_hex: &str) -> Option<String> {
    let digest = hex::decode(sha256_hex).ok().filter(|d| d.len() == 32)?;
    Some(aws_smithy_types::base64::encode(digest))
}

/// Credentials are fetched again once they would expire before a new URL's full life (plus
/// this margin) is over, but never more often than once per this interval.
const REFRESH_MARGIN: TimeDelta = TimeDelta::seconds(crate::config::SIGNING_MARGIN_SECONDS as i64);

pub struct S3Signer {
    config: aws_sdk_s3::Config,
    provider: SharedCredentialsProvider,
    bucket: String,
    ttl: Duration,
    current: Mutex<Option<Signing>>,
}

/// Credentials in use, when they were fetched, and a client bound to them.
#[derive(Clone)]
struct Signing {
    credentials: Credentials,
    fetched_at: DateTime<Utc>,
    client: Client,
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

    /// A client bound to one set of credentials, reused while they outlive a new URL. With
    /// credentials that have no known expiry (Lambda's environment) that is once per cold start.
    async fn signing(&self, now: DateTime<Utc>) -> Result<Signing, StoreError> {
        let ttl = TimeDelta::from_std(self.ttl).map_err(|e| StoreError::Other(Box::new(e)))?;
        if let Some(current) = self.lock().as_ref() {
            let outlives_url = current
                .credentials
                .expiry()
                .is_none_or(|exp| DateTime::<Utc>::from(exp) - ttl - REFRESH_MARGIN > now);
            let just_fetched = now - current.fetched_at < REFRESH_MARGIN;
            if outlives_url || just_fetched {
                return Ok(current.clone());
            }
        }
        let credentials = self.provider.provide_credentials().await.map_err(|e| {
            tracing::error!(error = %e, "could not fetch or renew the URL-signing credentials");
            catalog::metrics::record(catalog::metrics::Metric::SigningUnavailable);
            StoreError::Unavailable(Box::new(e))
        })?;
        let signing = Signing {
            client: Client::from_conf(
                self.config
                    .to_builder()
                    .credentials_provider(credentials.clone())
                    .build(),
            ),
            credentials,
            fetched_at: now,
        };
        *self.lock() = Some(signing.clone());
        Ok(signing)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Signing>> {
        catalog::lock(&self.current)
    }
}

impl UrlSigner for S3Signer {
    async fn sign(
        &self,
        object_key: &str,
        filename: &str,
        now: DateTime<Utc>,
    ) -> Result<SignedUrl, StoreError> {
        let Signing {
            credentials,
            client,
            ..
        } = self.signing(now).await?;
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
            .response_content_disposition(attachment(filename))
            .presigned(presigning)
            .await
            .map_err(|e| StoreError::Other(Box::new(e)))?;
        let ttl = TimeDelta::from_std(self.ttl).map_err(|e| StoreError::Other(Box::new(e)))?;
        let mut expires_at = start + ttl;
        if let Some(exp) = credentials.expiry() {
            expires_at = expires_at.min(DateTime::<Utc>::from(exp));
        }
        Ok(SignedUrl {
            url: request.uri().to_owned(),
            expires_at,
        })
    }
}

/// `Content-Disposition` for a download saved as `filename`: the name quoted, with anything but
/// letters, digits, `.`, `-` and `_` replaced (a slug and a version never need it).
fn attachment(filename: &str) -> String {
    let safe: String = filename
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("attachment; filename=\"{safe}\"")
}

#[cfg(test)]
mod tests {

    #[test]
    fn the_upload_checksum_is_the_base64_of_the_published_digest() {
        // SHA-256 of the empty string.
        let hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(
            checksum_sha256(hex).as_deref(),
            Some("47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=")
        );
        assert_eq!(checksum_sha256("abc"), None);
        assert_eq!(checksum_sha256(&"zz".repeat(32)), None);
    }

    use super::*;
    use aws_sdk_s3::config::{BehaviorVersion, Region};

    fn signer(creds: Credentials, ttl: Duration) -> S3Signer {
        signer_with(creds, ttl)
    }

    /// A signer for the bucket `bucket`, its credentials from `provider`.
    fn signer_with(
        provider: impl aws_credential_types::provider::ProvideCredentials + 'static,
        ttl: Duration,
    ) -> S3Signer {
        let config = aws_sdk_s3::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("eu-west-1"))
            .build();
        S3Signer::new(
            config,
            SharedCredentialsProvider::new(provider),
            "bucket",
            ttl,
        )
    }

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-02T03:04:05.678Z")
            .unwrap()
            .with_timezone(&Utc)
    }

    #[test]
    fn a_version_lives_under_its_slug_version_and_digest() {
        let slug = Slug::parse("air-quality").unwrap();
        assert_eq!(
            object_key(&slug, 12, "ab01"),
            "datasets/air-quality/v12/ab01.parquet"
        );
    }

    #[tokio::test]
    async fn url_expiry_is_now_plus_ttl_when_credentials_do_not_expire() {
        let creds = Credentials::new("AKID", "SECRET", None, None, "test");
        let signed = signer(creds, Duration::from_secs(900))
            .sign("datasets/x/v1/data.parquet", "x-v1.parquet", now())
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
        // A browser saves it under the dataset's name, not the object's digest.
        assert!(
            signed.url.contains(
                "response-content-disposition=attachment%3B%20filename%3D%22x-v1.parquet%22"
            ),
            "{}",
            signed.url
        );
    }

    #[test]
    fn the_saved_name_is_quoted_and_holds_nothing_a_header_could_break_on() {
        assert_eq!(
            attachment("river-levels-v3.parquet"),
            "attachment; filename=\"river-levels-v3.parquet\""
        );
        assert_eq!(
            attachment("a\"b;c\r\n.parquet"),
            "attachment; filename=\"a_b_c__.parquet\""
        );
    }

    /// Hands out credentials that expire 20 minutes after each call, counting the calls.
    #[derive(Debug)]
    struct Counting {
        calls: std::sync::Arc<std::sync::atomic::AtomicU32>,
        base: DateTime<Utc>,
    }

    impl aws_credential_types::provider::ProvideCredentials for Counting {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            let n = self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let at = self.base + TimeDelta::minutes(20) + TimeDelta::minutes(10 * i64::from(n));
            aws_credential_types::provider::future::ProvideCredentials::ready(Ok(Credentials::new(
                "ASIA",
                "S",
                Some("T".into()),
                Some(SystemTime::from(at)),
                "c",
            )))
        }
    }

    #[tokio::test]
    async fn signer_fetches_new_credentials_only_when_they_would_not_outlive_a_new_url() {
        let counter = std::sync::Arc::new(std::sync::atomic::AtomicU32::new(0));
        let provider = Counting {
            calls: counter.clone(),
            base: now(),
        };
        let signer = signer_with(provider, Duration::from_secs(900));
        let calls = || counter.load(std::sync::atomic::Ordering::SeqCst);
        // First credentials expire at now+20m: a URL signed now gets its full 15 minutes.
        let first = signer.sign("k", "x-v1.parquet", now()).await.unwrap();
        assert_eq!(
            first.expires_at,
            now().duration_trunc(TimeDelta::seconds(1)).unwrap() + TimeDelta::minutes(15)
        );
        assert_eq!(calls(), 1);
        // 3 minutes later they still outlive a 15-minute URL (+1 minute margin): reused.
        signer
            .sign("k", "x-v1.parquet", now() + TimeDelta::minutes(3))
            .await
            .unwrap();
        assert_eq!(calls(), 1);
        // 5 minutes later they would not: fetched again (the next expire at now+30m).
        let later = signer
            .sign("k", "x-v1.parquet", now() + TimeDelta::minutes(5))
            .await
            .unwrap();
        assert_eq!(calls(), 2);
        assert_eq!(
            later.expires_at,
            (now() + TimeDelta::minutes(20))
                .duration_trunc(TimeDelta::seconds(1))
                .unwrap()
        );
    }

    /// Fails as an `AssumeRole` refused by STS would.
    #[derive(Debug)]
    struct Refused;

    impl aws_credential_types::provider::ProvideCredentials for Refused {
        fn provide_credentials<'a>(
            &'a self,
        ) -> aws_credential_types::provider::future::ProvideCredentials<'a>
        where
            Self: 'a,
        {
            aws_credential_types::provider::future::ProvideCredentials::ready(Err(
                aws_credential_types::provider::error::CredentialsError::provider_error(
                    "AccessDenied",
                ),
            ))
        }
    }

    #[tokio::test]
    async fn credentials_that_cannot_be_fetched_are_a_503_and_counted() {
        use catalog::metrics::{capture::metrics_of, Metric};
        let signer = signer_with(Refused, Duration::from_secs(900));
        let (signed, got) = metrics_of(signer.sign("k", "x-v1.parquet", now())).await;
        assert!(
            matches!(signed, Err(StoreError::Unavailable(_))),
            "{signed:?}"
        );
        assert_eq!(got, [Metric::SigningUnavailable]);
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
            .sign("datasets/x/v1/data.parquet", "x-v1.parquet", now())
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
