//! AWS SDK configuration shared by every binary, loaded once per cold start.

use std::time::Duration;

use aws_config::retry::RetryConfig;
use aws_config::sts::AssumeRoleProvider;
use aws_config::timeout::TimeoutConfig;
use aws_config::{BehaviorVersion, SdkConfig};
use aws_credential_types::provider::SharedCredentialsProvider;

use crate::config::DataConfig;

/// Bounded retries and timeouts, so a request answers within the function's timeout even
/// when DynamoDB is slow or unreachable: at most 3 attempts of 1 s each, 3 s in all.
pub async fn load_sdk_config() -> SdkConfig {
    aws_config::defaults(BehaviorVersion::latest())
        .retry_config(RetryConfig::standard().with_max_attempts(3))
        .timeout_config(
            TimeoutConfig::builder()
                .connect_timeout(Duration::from_millis(500))
                .operation_attempt_timeout(Duration::from_secs(1))
                .operation_timeout(Duration::from_secs(3))
                .build(),
        )
        .load()
        .await
}

/// The S3 configuration used for signing.
pub fn s3_config(sdk: &SdkConfig, force_path_style: bool) -> aws_sdk_s3::Config {
    aws_sdk_s3::config::Builder::from(sdk)
        .force_path_style(force_path_style)
        .build()
}

/// The credentials that sign download URLs: an assumed signing role when one is configured
/// (its credentials carry their expiry, so the reported `expires_at` is exact), otherwise the
/// function's own. Building the provider makes no network call; STS is called on first use.
pub async fn signing_credentials(
    sdk: &SdkConfig,
    config: &DataConfig,
) -> Option<SharedCredentialsProvider> {
    match &config.signing_role_arn {
        Some(arn) => Some(SharedCredentialsProvider::new(
            AssumeRoleProvider::builder(arn)
                .session_name("catalog-data-signer")
                .session_length(config.signing_session)
                .configure(sdk)
                .build()
                .await,
        )),
        None => sdk.credentials_provider(),
    }
}
