//! The user pool as a [`Directory`]: a person's email, asked with their own access token.
//!
//! Cognito's `GetUser` is authorised by the access token in its body and needs no SigV4
//! signature and no IAM permission, so it is one JSON POST over the functions' HTTPS stack
//! (hyper + rustls on ring, [`crate::aws`]) rather than the Cognito SDK, which would add
//! about 0.6 MB to the accounts function (docs/performance.md).

use std::time::Duration;

use aws_config::SdkConfig;
use aws_smithy_http_client::tls::{self, rustls_provider::CryptoMode};
use aws_smithy_http_client::Connector;
use aws_smithy_runtime_api::client::http::{HttpConnector, HttpConnectorSettings};
use aws_smithy_runtime_api::client::orchestrator::HttpRequest;
use aws_smithy_types::body::SdkBody;
use aws_smithy_types::byte_stream::ByteStream;
use serde::Deserialize;

use crate::aws::RootCertificates;
use catalog::error::{BoxError, StoreError};
use catalog::ports::{Directory, KnownUser};

/// At most this many attempts when Cognito is unreachable, slow, throttling or failing on its
/// side.
const ATTEMPTS: u32 = 3;
/// All attempts together, as the SDK's operation timeout was (`catalog_aws::aws::load_sdk_config`).
const DEADLINE: Duration = Duration::from_secs(3);

/// The connector is built on the first lookup, not during the function's init: only a key's
/// creation, an access request and an operator's decision need it, and the init stays within
/// its cold-start budget (docs/performance.md).
#[derive(Debug)]
pub struct CognitoDirectory {
    endpoint: String,
    connector: std::sync::OnceLock<Connector>,
}

impl CognitoDirectory {
    /// The endpoint the SDK would use: `AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER`, else
    /// `AWS_ENDPOINT_URL`, else the region's public endpoint.
    pub fn new(sdk: &SdkConfig) -> Self {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let endpoint = env("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER")
            .or_else(|| env("AWS_ENDPOINT_URL"))
            .unwrap_or_else(|| {
                let region = sdk.region().map_or("us-east-1", |r| r.as_ref());
                format!("https://cognito-idp.{region}.amazonaws.com/")
            });
        Self::with_endpoint(endpoint)
    }

    pub fn with_endpoint(endpoint: impl Into<String>) -> Self {
        Self {
            endpoint: endpoint.into(),
            connector: std::sync::OnceLock::new(),
        }
    }

    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn connector(&self) -> &Connector {
        self.connector.get_or_init(|| {
            let settings = HttpConnectorSettings::builder()
                .connect_timeout(Duration::from_millis(500))
                .read_timeout(Duration::from_secs(1))
                .build();
            let builder = Connector::builder()
                .connector_settings(settings)
                .tls_provider(tls::Provider::rustls(CryptoMode::Ring));
            match crate::aws::tls_context(RootCertificates::from_env()) {
                Some(context) => builder.tls_context(context).build(),
                None => builder.build(),
            }
        })
    }

    fn request(&self, access_token: &str) -> Result<HttpRequest, StoreError> {
        let body = serde_json::json!({ "AccessToken": access_token }).to_string();
        let mut req = HttpRequest::new(SdkBody::from(body));
        let bad = |e: BoxError| StoreError::Other(e);
        req.set_method("POST").map_err(|e| bad(e.into()))?;
        req.set_uri(self.endpoint.as_str())
            .map_err(|e| bad(e.into()))?;
        let headers = req.headers_mut();
        headers.insert("content-type", "application/x-amz-json-1.1");
        headers.insert("x-amz-target", "AWSCognitoIdentityProviderService.GetUser");
        Ok(req)
    }

    /// One attempt: the answer's status, error type (if any) and body.
    async fn attempt(&self, access_token: &str) -> Result<Answer, StoreError> {
        let response = self
            .connector()
            .call(self.request(access_token)?)
            .await
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?;
        let status = response.status().as_u16();
        let error_header = response
            .headers()
            .get("x-amzn-errortype")
            .map(str::to_owned);
        let body = ByteStream::new(response.into_body())
            .collect()
            .await
            .map_err(|e| StoreError::Unavailable(Box::new(e)))?
            .into_bytes();
        Ok(Answer {
            status,
            error_header,
            body: body.to_vec(),
        })
    }
}

impl Directory for CognitoDirectory {
    /// One GetUser, retried up to [`ATTEMPTS`] times when Cognito is unreachable, throttling or
    /// failing, all within [`DEADLINE`]. A token Cognito no longer accepts (its user deleted or
    /// disabled, or signed out everywhere) names nobody.
    async fn user(&self, access_token: &str) -> Result<Option<KnownUser>, StoreError> {
        let attempts = async {
            let mut attempt = 1;
            loop {
                let outcome = self.attempt(access_token).await.and_then(|a| a.user());
                match outcome {
                    Err(StoreError::Unavailable(e) | StoreError::Throttled(e))
                        if attempt < ATTEMPTS =>
                    {
                        tracing::warn!(attempt, error = %e, "Cognito GetUser failed; retrying");
                        tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt))).await;
                        attempt += 1;
                    }
                    outcome => return outcome,
                }
            }
        };
        tokio::time::timeout(DEADLINE, attempts)
            .await
            .unwrap_or_else(|elapsed| Err(StoreError::Unavailable(Box::new(elapsed))))
    }
}

/// What Cognito answered to one GetUser.
#[derive(Debug)]
struct Answer {
    status: u16,
    error_header: Option<String>,
    body: Vec<u8>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct User {
    #[serde(default)]
    user_attributes: Vec<Attribute>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Attribute {
    name: String,
    value: Option<String>,
}

#[derive(Deserialize)]
struct Fault {
    #[serde(rename = "__type")]
    kind: Option<String>,
    #[serde(alias = "Message")]
    message: Option<String>,
}

/// A Cognito error: its type and message.
#[derive(Debug, thiserror::Error)]
#[error("Cognito GetUser answered {status} {kind}: {message}")]
struct CognitoError {
    status: u16,
    kind: String,
    message: String,
}

impl Answer {
    /// The user of a 200 (with its email attribute); `None` for a token Cognito does not
    /// accept (`NotAuthorizedException`: revoked, signed out, user disabled or deleted;
    /// `UserNotFoundException`: user deleted); an error sorted as the SDK's are
    /// (`crate::dynamo::requests::classify`) otherwise.
    fn user(self) -> Result<Option<KnownUser>, StoreError> {
        if (200..300).contains(&self.status) {
            let user: User = serde_json::from_slice(&self.body).map_err(|e| {
                StoreError::Corrupt(format!("Cognito GetUser answered an unreadable user: {e}"))
            })?;
            let email = user
                .user_attributes
                .into_iter()
                .find(|a| a.name == "email")
                .and_then(|a| a.value);
            return Ok(Some(KnownUser { email }));
        }
        let fault: Option<Fault> = serde_json::from_slice(&self.body).ok();
        let kind = self
            .error_header
            .as_deref()
            .or_else(|| fault.as_ref().and_then(|f| f.kind.as_deref()))
            .map(error_type)
            .unwrap_or_default()
            .to_owned();
        let message = fault.and_then(|f| f.message).unwrap_or_default();
        let err = CognitoError {
            status: self.status,
            kind,
            message,
        };
        match err.kind.as_str() {
            "NotAuthorizedException" | "UserNotFoundException" => Ok(None),
            "TooManyRequestsException" | "LimitExceededException" | "ThrottlingException" => {
                Err(StoreError::Throttled(Box::new(err)))
            }
            _ if err.status >= 500 || err.kind == "InternalErrorException" => {
                Err(StoreError::Unavailable(Box::new(err)))
            }
            _ => Err(StoreError::Other(Box::new(err))),
        }
    }
}

/// The bare name of an AWS JSON error type: `aws.cognito#NotAuthorizedException:http://...`
/// is `NotAuthorizedException`.
fn error_type(raw: &str) -> &str {
    let name = raw.rsplit_once('#').map_or(raw, |(_, name)| name);
    name.split_once(':').map_or(name, |(name, _)| name).trim()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, header: Option<&str>, body: &str) -> Answer {
        Answer {
            status,
            error_header: header.map(str::to_owned),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn a_user_answer_gives_the_email_attribute() {
        let body = r#"{"Username":"u-1","UserAttributes":[
            {"Name":"sub","Value":"u-1"},{"Name":"email","Value":"ada@example.com"}]}"#;
        assert_eq!(
            answer(200, None, body).user().unwrap(),
            Some(KnownUser {
                email: Some("ada@example.com".into())
            })
        );
        let no_email = r#"{"Username":"u-1","UserAttributes":[{"Name":"sub","Value":"u-1"}]}"#;
        assert_eq!(
            answer(200, None, no_email).user().unwrap(),
            Some(KnownUser { email: None }),
            "a user without an email is still a user"
        );
    }

    #[test]
    fn a_token_cognito_refuses_names_nobody() {
        for (header, body) in [
            (
                None,
                r#"{"__type":"NotAuthorizedException","message":"Access Token has been revoked"}"#,
            ),
            (
                Some("UserNotFoundException:http://internal.amazon.com/coral/"),
                r#"{"message":"User does not exist."}"#,
            ),
            (
                None,
                r#"{"__type":"com.amazonaws.cognito#NotAuthorizedException","Message":"x"}"#,
            ),
        ] {
            assert_eq!(answer(400, header, body).user().unwrap(), None, "{body}");
        }
    }

    #[test]
    fn failures_are_sorted_as_the_sdks_are() {
        let throttled = answer(400, None, r#"{"__type":"TooManyRequestsException"}"#);
        assert!(matches!(throttled.user(), Err(StoreError::Throttled(_))));
        let down = answer(503, None, "<html>Service Unavailable</html>");
        assert!(matches!(down.user(), Err(StoreError::Unavailable(_))));
        let internal = answer(500, None, r#"{"__type":"InternalErrorException"}"#);
        assert!(matches!(internal.user(), Err(StoreError::Unavailable(_))));
        let refused = answer(
            400,
            None,
            r#"{"__type":"InvalidParameterException","message":"m"}"#,
        );
        match refused.user() {
            Err(StoreError::Other(e)) => {
                assert_eq!(
                    e.to_string(),
                    "Cognito GetUser answered 400 InvalidParameterException: m"
                );
            }
            other => panic!("{other:?}"),
        }
        let garbled = answer(200, None, "not json");
        assert!(matches!(garbled.user(), Err(StoreError::Corrupt(_))));
    }

    #[test]
    fn the_endpoint_is_the_regions_unless_one_is_named() {
        let sdk = SdkConfig::builder()
            .region(aws_config::Region::new("eu-west-1"))
            .build();
        // The environment of the test process names none (the stack's tests set it on the
        // processes they spawn, not on this one).
        if std::env::var_os("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER").is_none()
            && std::env::var_os("AWS_ENDPOINT_URL").is_none()
        {
            assert_eq!(
                CognitoDirectory::new(&sdk).endpoint(),
                "https://cognito-idp.eu-west-1.amazonaws.com/"
            );
        }
        assert_eq!(
            CognitoDirectory::with_endpoint("http://127.0.0.1:5000").endpoint(),
            "http://127.0.0.1:5000"
        );
    }

    #[test]
    fn the_request_is_a_getuser_call_carrying_only_the_token() {
        let directory = CognitoDirectory::with_endpoint("http://127.0.0.1:9/");
        let req = directory.request("tok\"en").unwrap();
        assert_eq!(req.method(), "POST");
        assert_eq!(req.uri(), "http://127.0.0.1:9/");
        assert_eq!(
            req.headers().get("x-amz-target"),
            Some("AWSCognitoIdentityProviderService.GetUser")
        );
        assert_eq!(
            req.headers().get("content-type"),
            Some("application/x-amz-json-1.1")
        );
        let body: serde_json::Value = serde_json::from_slice(req.body().bytes().unwrap()).unwrap();
        assert_eq!(body, serde_json::json!({"AccessToken": "tok\"en"}));
    }

    /// A loopback Cognito answering each request (one per connection) with the next of
    /// `answers` (status, body); it records the requests' bodies.
    fn scripted_cognito(
        answers: Vec<(u16, &'static str)>,
    ) -> (String, std::sync::mpsc::Receiver<String>) {
        use std::io::{BufRead, BufReader, Read, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/", listener.local_addr().unwrap());
        let (seen, requests) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for (status, body) in answers {
                let Ok((stream, _)) = listener.accept() else {
                    return;
                };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" || line.is_empty() {
                        break;
                    }
                }
                let mut request = vec![0; length];
                reader.read_exact(&mut request).unwrap();
                let _ = seen.send(String::from_utf8_lossy(&request).into_owned());
                let mut stream = stream;
                let _ = write!(
                    stream,
                    "HTTP/1.1 {status} X\r\ncontent-type: application/x-amz-json-1.1\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (url, requests)
    }

    #[tokio::test]
    async fn a_throttled_or_failing_getuser_is_tried_again() {
        let (url, requests) = scripted_cognito(vec![
            (
                400,
                r#"{"__type":"TooManyRequestsException","message":"slow down"}"#,
            ),
            (503, "unavailable"),
            (
                200,
                r#"{"Username":"u","UserAttributes":[{"Name":"email","Value":"ada@example.com"}]}"#,
            ),
        ]);
        let directory = CognitoDirectory::with_endpoint(url);
        assert_eq!(
            directory.email("the-token").await.unwrap().as_deref(),
            Some("ada@example.com")
        );
        let bodies: Vec<String> = requests.try_iter().collect();
        assert_eq!(bodies.len(), 3);
        assert!(bodies.iter().all(|b| b == r#"{"AccessToken":"the-token"}"#));
    }

    #[tokio::test]
    async fn a_refused_token_is_not_tried_again() {
        let (url, requests) = scripted_cognito(vec![
            (
                400,
                r#"{"__type":"NotAuthorizedException","message":"revoked"}"#,
            ),
            (
                200,
                r#"{"UserAttributes":[{"Name":"email","Value":"x@example.com"}]}"#,
            ),
        ]);
        let directory = CognitoDirectory::with_endpoint(url);
        assert_eq!(directory.email("old").await.unwrap(), None);
        assert_eq!(requests.try_iter().count(), 1);
    }

    #[tokio::test]
    async fn an_unreachable_cognito_is_unavailable_after_its_retries() {
        // A loopback port that was free a moment ago: nothing listens on it.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let directory = CognitoDirectory::with_endpoint(format!("http://127.0.0.1:{port}/"));
        assert!(matches!(
            directory.email("token").await,
            Err(StoreError::Unavailable(_))
        ));
    }
}
