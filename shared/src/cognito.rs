//! The user pool as a [`Directory`]: a person's email, asked with their own access token
//! (Cognito's GetUser needs no IAM permission). Only the accounts function links it.

use aws_sdk_cognitoidentityprovider::Client;

use crate::dynamo::requests::classify;
use crate::error::StoreError;
use crate::ports::Directory;

/// Built from the SDK configuration on its first use, not during the function's init: only
/// an access request needs it, and the init stays within its cold-start budget
/// (docs/performance.md).
#[derive(Debug)]
pub struct CognitoDirectory {
    sdk: aws_config::SdkConfig,
    client: std::sync::OnceLock<Client>,
}

impl CognitoDirectory {
    pub fn new(sdk: &aws_config::SdkConfig) -> Self {
        Self {
            sdk: sdk.clone(),
            client: std::sync::OnceLock::new(),
        }
    }

    fn client(&self) -> &Client {
        self.client.get_or_init(|| Client::new(&self.sdk))
    }
}

impl Directory for CognitoDirectory {
    /// One GetUser. A token Cognito no longer accepts (signed out everywhere) names nobody.
    async fn email(&self, access_token: &str) -> Result<Option<String>, StoreError> {
        match self
            .client()
            .get_user()
            .access_token(access_token)
            .send()
            .await
        {
            Ok(user) => Ok(user
                .user_attributes()
                .iter()
                .find(|a| a.name() == "email")
                .and_then(|a| a.value())
                .map(str::to_owned)),
            Err(e)
                if e.as_service_error().is_some_and(|e| {
                    e.is_not_authorized_exception() || e.is_user_not_found_exception()
                }) =>
            {
                Ok(None)
            }
            Err(e) => Err(classify(e)),
        }
    }
}
