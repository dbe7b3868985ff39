//! `GET|PUT /api/v1/account/preferences` `{"emails": true|false}`: whether the signed-in person
//! wants the emails about their access requests (docs/api.md). Behind the same JWT authorizer as
//! the account keys; the caller is the access token's `sub`. Nothing else is a preference yet.

use lambda_http::http::{Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::http::json_response;
use crate::error::{AccountError, Allowed, ApiError};
use catalog::accounts::{Field, FieldError};
use catalog::keys::Owner;
use catalog::notices::EmailPreferences;

/// The route's one path.
pub const PREFERENCES: &str = "/api/v1/account/preferences";

/// Whether `path` is the preferences route.
pub fn is_preferences(path: &str) -> bool {
    path == PREFERENCES
}

#[derive(Serialize)]
struct Preferences {
    emails: bool,
}

/// The body of a PUT: `{"emails": true|false}`, nothing else.
pub fn parse(body: &[u8]) -> Result<bool, FieldError> {
    let refused = |message: &str| FieldError {
        field: Field::Body,
        message: message.to_owned(),
    };
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|_| refused("the body must be a JSON object: {\"emails\": true|false}"))?;
    let object = value
        .as_object()
        .ok_or_else(|| refused("the body must be a JSON object: {\"emails\": true|false}"))?;
    if let Some(other) = object.keys().find(|k| k.as_str() != "emails") {
        return Err(refused(&format!(
            "unknown field '{}': the only preference is emails",
            catalog::input::echo(other)
        )));
    }
    object
        .get("emails")
        .and_then(serde_json::Value::as_bool)
        .ok_or_else(|| refused("emails must be true or false"))
}

/// Answers the route for `owner`.
pub async fn answer(
    req: &Request,
    store: &impl EmailPreferences,
    owner: &Owner,
) -> Result<Response<Body>, ApiError> {
    let method = req.method();
    let emails = if method == Method::GET {
        store.emails(owner).await?
    } else if method == Method::PUT {
        let wanted = parse(req.body().as_ref()).map_err(AccountError::InvalidField)?;
        store.set_emails(owner, wanted).await?;
        tracing::info!(owner = %owner, emails = wanted, "set email preference");
        wanted
    } else {
        return Err(ApiError::MethodNotAllowed {
            method: catalog::input::echo(method.as_str()),
            allowed: Allowed::Preferences,
        });
    };
    Ok(json_response(StatusCode::OK, &Preferences { emails }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_body_is_emails_true_or_false_and_nothing_else() {
        assert_eq!(parse(br#"{"emails": false}"#), Ok(false));
        assert_eq!(parse(br#"{"emails": true}"#), Ok(true));
        for (body, said) in [
            (&b"nope"[..], "JSON object"),
            (br#"[true]"#, "JSON object"),
            (br#"{"emails": "no"}"#, "true or false"),
            (br#"{}"#, "true or false"),
            (br#"{"emails": true, "sms": true}"#, "unknown field 'sms'"),
        ] {
            let e = parse(body).unwrap_err();
            assert_eq!(e.field, Field::Body);
            assert!(e.message.contains(said), "{}: {}", e.message, said);
        }
        assert!(is_preferences("/api/v1/account/preferences"));
        assert!(!is_preferences("/api/v1/account/preferences/x"));
    }
}
