//! AWS SDK configuration shared by every binary, loaded once per cold start, and the data
//! endpoint's clients wired from it.

use std::time::Duration;

use aws_config::environment::EnvironmentVariableCredentialsProvider;
use aws_config::retry::RetryConfig;
use aws_config::sts::AssumeRoleProvider;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::provider::{future, ProvideCredentials, SharedCredentialsProvider};
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use aws_smithy_runtime_api::client::http::SharedHttpClient;

use crate::config::DataConfig;
use crate::dynamo::DynamoCatalog;
use crate::s3::S3Signer;

/// The Amazon Trust Services roots, which every AWS service endpoint chains to.
pub const AWS_ROOT_CERTIFICATES: &str = include_str!("aws_roots.pem");

/// Which root certificates the HTTPS client trusts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootCertificates {
    /// Only the Amazon Trust Services roots, compiled in: nothing to read from disk at start-up.
    Aws,
    /// The platform's trust store (`SSL_CERT_FILE`, `SSL_CERT_DIR`, or the system's).
    Platform,
}

impl RootCertificates {
    /// The functions talk only to AWS endpoints, so they trust the Amazon roots, unless
    /// `SSL_CERT_FILE` or `SSL_CERT_DIR` names a trust store (a TLS-inspecting proxy, say).
    /// Reading the platform's store costs 3-5 ms of every cold start here (`bench/run`).
    pub fn from_env() -> Self {
        let named = |v: &str| std::env::var_os(v).is_some_and(|p| !p.is_empty());
        if named("SSL_CERT_FILE") || named("SSL_CERT_DIR") {
            Self::Platform
        } else {
            Self::Aws
        }
    }
}

/// The one HTTPS client stack of every binary: hyper + rustls on ring. Connections are pooled
/// for the life of the process.
pub fn http_client(roots: RootCertificates) -> SharedHttpClient {
    let builder = aws_smithy_http_client::Builder::new()
        .tls_provider(tls::Provider::rustls(CryptoMode::Ring));
    match tls_context(roots) {
        Some(context) => builder.tls_context(context).build_https(),
        None => builder.build_https(),
    }
}

/// The TLS context trusting `roots`: `None` for the platform's store (the client's default).
pub fn tls_context(roots: RootCertificates) -> Option<tls::TlsContext> {
    match roots {
        RootCertificates::Platform => None,
        RootCertificates::Aws => {
            let store =
                tls::TrustStore::empty().with_pem_certificate(AWS_ROOT_CERTIFICATES.as_bytes());
            // The compiled-in certificates are checked by a unit test; the error is never met.
            tls::TlsContext::builder()
                .with_trust_store(store)
                .build()
                .ok()
        }
    }
}

/// How long a function's AWS requests may take, and how often they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Patience {
    pub attempts: u32,
    pub connect: Duration,
    pub attempt: Duration,
    /// All attempts of one request together, if bounded.
    pub total: Option<Duration>,
}

impl Patience {
    /// The API functions': a request answers within the function's timeout even when DynamoDB
    /// or S3 is slow or unreachable: at most 3 attempts of 1 s each, 3 s in all.
    pub const REQUEST: Self = Self {
        attempts: 3,
        connect: Duration::from_millis(500),
        attempt: Duration::from_secs(1),
        total: Some(Duration::from_secs(3)),
    };
    /// Off the request path (the per-file statistics function, up to 15 minutes on one file):
    /// one slow ranged GET among thousands must not fail the file; 5 attempts of up to 60 s.
    pub const BATCH: Self = Self {
        attempts: 5,
        connect: Duration::from_secs(5),
        attempt: Duration::from_secs(60),
        total: None,
    };
}

/// [`load_sdk_config_with`] the API functions' [`Patience::REQUEST`].
pub async fn load_sdk_config() -> SdkConfig {
    load_sdk_config_with(Patience::REQUEST).await
}

/// The SDK's configuration, with bounded retries and timeouts ([`Patience`]).
///
/// Lambda puts the region and the function's credentials in the environment. When both are
/// there they are given to the loader directly, which is what the default chains would pick
/// first anyway, and skips building those chains: about 0.4 ms of every cold start
/// (`bench/run`, start-up costs). Elsewhere (a laptop with profiles) the default chains apply.
pub async fn load_sdk_config_with(patience: Patience) -> SdkConfig {
    let mut timeouts = TimeoutConfig::builder()
        .connect_timeout(patience.connect)
        .operation_attempt_timeout(patience.attempt);
    if let Some(total) = patience.total {
        timeouts = timeouts.operation_timeout(total);
    }
    let mut loader = aws_config::defaults(BehaviorVersion::latest())
        .http_client(http_client(RootCertificates::from_env()))
        .retry_config(RetryConfig::standard().with_max_attempts(patience.attempts))
        .timeout_config(timeouts.build());
    let region = std::env::var("AWS_REGION").ok().filter(|r| !r.is_empty());
    let env_credentials = std::env::var_os("AWS_ACCESS_KEY_ID").is_some_and(|v| !v.is_empty());
    if let (Some(region), true) = (region, env_credentials) {
        loader = loader
            .region(Region::new(region))
            .credentials_provider(EnvironmentVariableCredentialsProvider::new());
    }
    loader.load().await
}

/// The S3 configuration used for signing.
pub fn s3_config(sdk: &SdkConfig, force_path_style: bool) -> aws_sdk_s3::Config {
    aws_sdk_s3::config::Builder::from(sdk)
        .force_path_style(force_path_style)
        .build()
}

/// The credentials that sign download URLs: an assumed signing role when one is configured
/// (its credentials carry their expiry, so the reported `expires_at` is exact), otherwise the
/// function's own. Nothing happens at init: the STS client is built, and STS called, on the
/// first signature (building a client costs a TLS set-up, about 0.3 ms of init otherwise).
pub async fn signing_credentials(
    sdk: &SdkConfig,
    config: &DataConfig,
) -> Option<SharedCredentialsProvider> {
    match &config.signing_role_arn {
        Some(arn) => Some(SharedCredentialsProvider::new(LazyAssumeRole {
            sdk: sdk.clone(),
            role_arn: arn.clone(),
            session_length: config.signing_session,
            provider: tokio::sync::OnceCell::new(),
        })),
        None => sdk.credentials_provider(),
    }
}

/// The data endpoint's clients, wired from its configuration: the reader of both tables and the
/// URL signer. Built once per cold start, with no network call: the signing credentials are
/// resolved on the first signature.
pub struct DataClients {
    pub catalog: DynamoCatalog,
    pub signer: S3Signer,
}

/// The SDK configuration has no credentials provider, so nothing could sign a URL.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("no AWS credentials provider configured")]
pub struct NoCredentials;

impl DataClients {
    pub async fn from_config(sdk: &SdkConfig, config: &DataConfig) -> Result<Self, NoCredentials> {
        let credentials = signing_credentials(sdk, config)
            .await
            .ok_or(NoCredentials)?;
        Ok(Self {
            catalog: DynamoCatalog::new(
                aws_sdk_dynamodb::Client::new(sdk),
                &config.datasets_table,
                &config.keys_table,
            ),
            signer: S3Signer::new(
                s3_config(sdk, config.s3_force_path_style),
                credentials,
                &config.bucket,
                config.url_ttl,
            ),
        })
    }
}

/// An `AssumeRoleProvider` built on first use.
#[derive(Debug)]
struct LazyAssumeRole {
    sdk: SdkConfig,
    role_arn: String,
    session_length: Duration,
    provider: tokio::sync::OnceCell<AssumeRoleProvider>,
}

impl ProvideCredentials for LazyAssumeRole {
    fn provide_credentials<'a>(&'a self) -> future::ProvideCredentials<'a>
    where
        Self: 'a,
    {
        future::ProvideCredentials::new(async move {
            let provider = self
                .provider
                .get_or_init(|| async {
                    AssumeRoleProvider::builder(&self.role_arn)
                        .session_name("catalog-data-signer")
                        .session_length(self.session_length)
                        .configure(&self.sdk)
                        .build()
                        .await
                })
                .await;
            provider.provide_credentials().await
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls_pki_types::pem::PemObject;
    use rustls_pki_types::CertificateDer;
    use sha2::{Digest, Sha256};

    fn data_config(path_style: bool) -> DataConfig {
        DataConfig {
            datasets_table: "d".into(),
            keys_table: "k".into(),
            bucket: "catalog-data".into(),
            url_ttl: Duration::from_secs(600),
            s3_force_path_style: path_style,
            signing_role_arn: None,
            signing_session: Duration::from_secs(3600),
        }
    }

    fn sdk(credentials: bool) -> SdkConfig {
        let sdk = SdkConfig::builder()
            .behavior_version(BehaviorVersion::latest())
            .region(Region::new("eu-west-1"));
        if credentials {
            sdk.credentials_provider(SharedCredentialsProvider::new(
                aws_credential_types::Credentials::new("AKID", "SECRET", None, None, "test"),
            ))
            .build()
        } else {
            sdk.build()
        }
    }

    #[tokio::test]
    async fn data_clients_sign_for_the_configured_bucket_addressing_and_ttl() {
        use catalog::ports::UrlSigner;
        let now = chrono::Utc::now();
        for (path_style, prefix) in [
            (
                true,
                "https://s3.eu-west-1.amazonaws.com/catalog-data/datasets/x/v1/a.parquet?",
            ),
            (
                false,
                "https://catalog-data.s3.eu-west-1.amazonaws.com/datasets/x/v1/a.parquet?",
            ),
        ] {
            let clients = DataClients::from_config(&sdk(true), &data_config(path_style))
                .await
                .expect("credentials");
            let signed = clients
                .signer
                .sign("datasets/x/v1/a.parquet", "x-v1.parquet", now)
                .await
                .unwrap();
            assert!(signed.url.starts_with(prefix), "{}", signed.url);
            assert!(signed.url.contains("X-Amz-Expires=600"), "{}", signed.url);
        }
    }

    #[tokio::test]
    async fn data_clients_need_credentials_to_sign_with() {
        assert!(matches!(
            DataClients::from_config(&sdk(false), &data_config(false)).await,
            Err(NoCredentials)
        ));
    }

    #[test]
    fn the_compiled_in_roots_are_the_five_amazon_trust_services_roots() {
        let fingerprints: Vec<String> =
            CertificateDer::pem_slice_iter(AWS_ROOT_CERTIFICATES.as_bytes())
                .map(|c| hex::encode_upper(Sha256::digest(c.expect("a PEM certificate"))))
                .collect();
        assert_eq!(
            fingerprints,
            [
                "8ECDE6884F3D87B1125BA31AC3FCB13D7016DE7F57CC904FE1CB97C6AE98196E", // Amazon Root CA 1
                "1BA5B2AA8C65401A82960118F80BEC4F62304D83CEC4713A19C39C011EA46DB4", // Amazon Root CA 2
                "18CE6CFE7BF14E60B2E347B8DFE868CB31D02EBB3ADA271569F50343B46DB3A4", // Amazon Root CA 3
                "E35D28419ED02025CFA69038CD623962458DA5C695FBDEA3C22B0BFB25897092", // Amazon Root CA 4
                "568D6905A2C88708A4B3025190EDCFEDB1974A606A13C6E5290FCB2AE63EDAB5", // Starfield Services G2
            ]
        );
    }
}
