//! Cognito's pre-sign-up and custom-message trigger: accepts an email (at sign-up, and as the
//! new address of an email change) only in lowercase and, with `ALLOWED_DOMAINS` (SignUpMode
//! `domains`), only at one of those domains; with `SIGN_UP_MODE=domains` and no domain, no
//! sign-up (logged as an error at cold start and at each refusal). Composition root only: the rule is `catalog::signup`. Not an
//! HTTP function: Cognito invokes it with its own event and reads the event back (accepted) or
//! an error (refused; the person sees its message).

use catalog::signup::{email_of, judge, AllowedDomains, SignUpRefused};
use catalog_aws::config::SignUpConfig;
use lambda_http::lambda_runtime::{self, service_fn, Error, LambdaEvent};
use serde_json::Value;

async fn handle(
    domains: Option<&AllowedDomains>,
    event: LambdaEvent<Value>,
) -> Result<Value, Error> {
    let payload = event.payload;
    // The domain alone is logged, never the address.
    let domain = email_of(&payload)
        .and_then(|e| e.rsplit_once('@'))
        .map(|(_, d)| d.to_lowercase())
        .unwrap_or_default();
    let source = payload["triggerSource"].as_str().unwrap_or("").to_owned();
    match judge(payload, domains) {
        Ok(accepted) => {
            tracing::info!(%domain, trigger = %source, "sign-up accepted");
            Ok(accepted)
        }
        Err(refused @ SignUpRefused::NoDomainListed) => {
            tracing::error!(%domain, trigger = %source, reason = %refused, "sign-up refused: SignUpMode is domains and SignUpDomains lists none");
            Err(refused.into())
        }
        Err(refused) => {
            tracing::info!(%domain, trigger = %source, reason = %refused, "sign-up refused");
            Err(refused.into())
        }
    }
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = SignUpConfig::from_env()?;
    let domains = config.allowed_domains;
    if domains.as_ref().is_some_and(AllowedDomains::is_empty) {
        tracing::error!(
            "SignUpMode is domains but SignUpDomains lists no domain: every sign-up is refused \
             until it does (operators' invitations are still accepted)"
        );
    }
    lambda_runtime::run(service_fn(|event| handle(domains.as_ref(), event))).await
}
