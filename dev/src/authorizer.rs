//! API Gateway's HTTP API JWT authorizer, as the local API runs it in front of the account
//! routes, so that the keys handler gets what it gets when deployed.
//!
//! As API Gateway documents it: the token is the `Authorization` header (a `Bearer ` prefix is
//! removed); its `kid` names a key of the issuer's JWKS; the signature is RS256; `iss` is the
//! configured issuer; `aud`, or `client_id` when there is no `aud`, is one of the configured
//! audiences; `exp` is in the future and `nbf`/`iat`, when present, are not. A refusal is
//! `401 {"message":"Unauthorized"}` with a `www-authenticate` challenge, as API Gateway sends.
//! The verified claims go in `requestContext.authorizer.jwt.claims`, every value a string.
//! Which token (access or ID) may call the API is the handler's rule, not the authorizer's.

use std::collections::HashMap;

use jsonwebtoken::{decode, decode_header, Algorithm, DecodingKey, Validation};
use lambda_http::http::HeaderMap;
use serde::Deserialize;

use crate::DevError;

/// The authorizer's configuration and the issuer's keys.
pub struct JwtAuthorizer {
    issuer: String,
    audiences: Vec<String>,
    keys: HashMap<String, DecodingKey>,
}

#[derive(Deserialize)]
struct Jwks {
    keys: Vec<Jwk>,
}

#[derive(Deserialize)]
struct Jwk {
    kid: String,
    kty: String,
    n: Option<String>,
    e: Option<String>,
}

/// Why a request was refused: the `error_description` of the challenge (`None`: no token).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Denied(pub Option<&'static str>);

impl Denied {
    /// The `www-authenticate` value API Gateway sends with its 401.
    pub fn challenge(&self) -> String {
        match self.0 {
            None => "Bearer".to_owned(),
            Some(description) => format!(
                "Bearer scope=\"\" error=\"invalid_token\" error_description=\"{description}\""
            ),
        }
    }

    /// API Gateway's body.
    pub const BODY: &'static str = r#"{"message":"Unauthorized"}"#;
}

impl JwtAuthorizer {
    /// From the issuer's JWKS document (its RSA keys; others are ignored).
    pub fn from_jwks(issuer: &str, audiences: &[String], jwks: &str) -> Result<Self, DevError> {
        let jwks: Jwks = serde_json::from_str(jwks)?;
        let mut keys = HashMap::new();
        for key in jwks.keys {
            if let ("RSA", Some(n), Some(e)) = (key.kty.as_str(), &key.n, &key.e) {
                keys.insert(key.kid, DecodingKey::from_rsa_components(n, e)?);
            }
        }
        if keys.is_empty() {
            return Err("the JWKS has no RSA key".into());
        }
        Ok(Self {
            issuer: issuer.to_owned(),
            audiences: audiences.to_vec(),
            keys,
        })
    }

    /// A Cognito user pool's authorizer: issuer `https://cognito-idp.<region>.amazonaws.com/<pool>`,
    /// JWKS fetched from `<endpoint>/<pool>/.well-known/jwks.json` (moto serves it there).
    pub async fn for_user_pool(
        endpoint: &str,
        region: &str,
        pool_id: &str,
        client_id: &str,
    ) -> Result<Self, DevError> {
        let url = format!(
            "{}/{pool_id}/.well-known/jwks.json",
            endpoint.trim_end_matches('/')
        );
        let jwks = http_get(&url).await?;
        Self::from_jwks(
            &format!("https://cognito-idp.{region}.amazonaws.com/{pool_id}"),
            &[client_id.to_owned()],
            &jwks,
        )
    }

    /// The verified claims of the request's token, or why there are none.
    pub fn authorize(
        &self,
        headers: &HeaderMap,
        now: i64,
    ) -> Result<HashMap<String, String>, Denied> {
        let value = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .ok_or(Denied(None))?;
        let token = match value.split_once(' ') {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("bearer") => rest.trim(),
            _ => value,
        };
        let invalid = Denied(Some("the token is invalid"));
        let header = decode_header(token).map_err(|_| invalid)?;
        if header.alg != Algorithm::RS256 {
            return Err(Denied(Some(
                "the token's signing algorithm is not supported",
            )));
        }
        let key = header
            .kid
            .as_ref()
            .and_then(|kid| self.keys.get(kid))
            .ok_or(Denied(Some(
                "the token's signing key is not in the issuer's JWKS",
            )))?;
        let mut validation = Validation::new(Algorithm::RS256);
        validation.leeway = 0;
        validation.validate_exp = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let data = decode::<HashMap<String, serde_json::Value>>(token, key, &validation)
            .map_err(|_| Denied(Some("the token's signature is invalid")))?;
        let claims = data.claims;
        let number = |name: &str| claims.get(name).and_then(serde_json::Value::as_i64);
        if claims.get("iss").and_then(|v| v.as_str()) != Some(self.issuer.as_str()) {
            return Err(Denied(Some("the token does not have a valid issuer")));
        }
        let audience = claims
            .get("aud")
            .or_else(|| claims.get("client_id"))
            .and_then(|v| v.as_str());
        if !audience.is_some_and(|a| self.audiences.iter().any(|x| x == a)) {
            return Err(Denied(Some("the token does not have a valid audience")));
        }
        match number("exp") {
            Some(exp) if exp > now => {}
            Some(_) => return Err(Denied(Some("the token has expired"))),
            None => return Err(Denied(Some("the token has no expiry"))),
        }
        if number("nbf").is_some_and(|nbf| nbf > now) || number("iat").is_some_and(|iat| iat > now)
        {
            return Err(Denied(Some("the token is not valid yet")));
        }
        Ok(claims
            .into_iter()
            .map(|(name, value)| (name, claim_text(value)))
            .collect())
    }
}

/// A claim as API Gateway passes it to the function: strings as they are, arrays as
/// `[a b]`, anything else as its JSON text.
fn claim_text(value: serde_json::Value) -> String {
    match value {
        serde_json::Value::String(s) => s,
        serde_json::Value::Array(items) => format!(
            "[{}]",
            items
                .into_iter()
                .map(claim_text)
                .collect::<Vec<_>>()
                .join(" ")
        ),
        other => other.to_string(),
    }
}

/// A GET over plain HTTP (the local emulator's JWKS), as text.
async fn http_get(url: &str) -> Result<String, DevError> {
    let client = reqwest::Client::builder().no_proxy().build()?;
    let response = client.get(url).send().await?;
    if !response.status().is_success() {
        return Err(format!("GET {url}: {}", response.status()).into());
    }
    Ok(response.text().await?)
}
