//! The routes behind the JWT authorizer: a signed-in user's own read keys here, access requests
//! and operators' decisions in [`super::access`].
//!
//! - `POST /api/v1/account/keys` `{"label": "...", "expires_in_days": 90}`: 201, the secret
//!   (this once) and the key's record.
//! - `GET /api/v1/account/keys`: the caller's keys, newest first.
//! - `DELETE /api/v1/account/keys/{id}`: 204; another account's or an unknown id is a 404.
//!
//! The caller is the `sub` of the access token API Gateway's JWT authorizer verified, read
//! from the claims it puts in the request context; nothing else in a request names an account.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::access::{AccessRoute, AccessService};
use super::http::{json_response, shell, Audience};
use super::preferences;
pub use super::request::verified_claims;
use super::request::{request_path, single_param};
use crate::error::{AccountError, Allowed, ApiError};
use catalog::accounts::{caller, seconds_to_next_day, KeyRequest, Replay, MAX_ACTIVE_KEYS};
use catalog::input::{echo, PageRequest};
use catalog::keys::{generate_key, is_key_id, KeyInfo, KeyStatus, Owner};
use catalog::notices::EmailPreferences;
use catalog::ports::{AccessStore, AccountKeyStore, Created, Directory, OrgStore};

/// The account routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountRoute {
    /// `/api/v1/account/keys`
    Keys,
    /// `/api/v1/account/keys/{id}`
    Key(String),
}

impl AccountRoute {
    pub const BASE: &'static str = "/api/v1/account/keys";

    pub fn parse(path: &str) -> Option<Self> {
        let rest = path.strip_prefix(Self::BASE)?;
        if rest.is_empty() {
            return Some(Self::Keys);
        }
        match rest.strip_prefix('/') {
            Some(id) if !id.is_empty() && !id.contains('/') => Some(Self::Key(id.to_owned())),
            _ => None,
        }
    }
}

/// A key in a response: its record and whether it works now.
#[derive(Serialize)]
struct KeyView<'a> {
    #[serde(flatten)]
    key: &'a KeyInfo,
    status: KeyStatus,
}

#[derive(Serialize)]
struct CreatedBody<'a> {
    /// The key itself: shown in this response only, stored nowhere.
    secret: &'a str,
    key: KeyView<'a>,
}

#[derive(Serialize)]
struct ListBody<'a> {
    keys: Vec<KeyView<'a>>,
    active: usize,
    max_active: usize,
    /// Every key of the account, revoked and expired ones included (until they leave the
    /// table, [`catalog::keys::RETENTION`] after they stopped working).
    total: usize,
    page: u64,
    page_size: u64,
}

/// Answers a route behind the JWT authorizer: an account's keys, its access requests, and the
/// operators' decisions (the accounts function, and the local API).
pub async fn account_routes<S: AccessStore + EmailPreferences + OrgStore, D: Directory>(
    req: &Request,
    keys: &impl AccountKeyStore,
    access: &AccessService<'_, S, D>,
    now: DateTime<Utc>,
) -> Response<Body> {
    let path = request_path(req);
    shell(req, Audience::Account, async {
        if let Some(route) = AccountRoute::parse(path) {
            let owner = the_caller(req)?;
            // A key outlives the token: only a person the user pool still knows gets one
            // (asked once the request is known to be a valid creation).
            let caller = owner.clone();
            let known = async move { access.still_known(req, &caller).await };
            keys_route(req, route, owner, keys, now, known).await
        } else if let Some(route) = AccessRoute::parse(path) {
            access.answer(req, route, the_caller(req)?, now).await
        } else if let Some(route) = super::orgs::OrgRoute::parse(path) {
            access
                .orgs_answer(req, access.store, route, the_caller(req)?, now)
                .await
        } else if preferences::is_preferences(path) {
            preferences::answer(req, access.store, &the_caller(req)?).await
        } else {
            Err(ApiError::RouteNotFound(echo(path)))
        }
    })
    .await
}

/// Answers a key route alone (the benchmarks measure it): without [`account_routes`]'s check
/// that the user pool still knows the caller before a key is created.
pub async fn account_keys(
    req: &Request,
    keys: &impl AccountKeyStore,
    now: DateTime<Utc>,
) -> Response<Body> {
    let path = request_path(req);
    shell(req, Audience::Account, async {
        let route = AccountRoute::parse(path).ok_or_else(|| ApiError::RouteNotFound(echo(path)))?;
        let known = std::future::ready(Ok(()));
        keys_route(req, route, the_caller(req)?, keys, now, known).await
    })
    .await
}

/// The caller, as API Gateway's authorizer verified it (it runs before anything else).
fn the_caller(req: &Request) -> Result<Owner, ApiError> {
    Ok(caller(verified_claims(req)).map_err(AccountError::Unauthenticated)?)
}

/// `known` says whether the caller may have a new key (awaited only for a valid creation).
async fn keys_route(
    req: &Request,
    route: AccountRoute,
    owner: Owner,
    store: &impl AccountKeyStore,
    now: DateTime<Utc>,
    known: impl std::future::Future<Output = Result<(), ApiError>>,
) -> Result<Response<Body>, ApiError> {
    let method = req.method();
    match route {
        AccountRoute::Keys if method == Method::POST => {
            // The body is read as JSON whatever its Content-Type says (curl's `-d` says form).
            let request =
                KeyRequest::parse(req.body().as_ref()).map_err(AccountError::InvalidField)?;
            let replay = match req.headers().get("idempotency-key") {
                None => None,
                Some(value) => Some(
                    Replay::new(value.to_str().unwrap_or("\u{0}"), &request)
                        .map_err(AccountError::InvalidField)?,
                ),
            };
            known.await?;
            let secret = generate_key();
            let key = request.key_for(&secret, owner.clone(), now);
            let created = match &replay {
                Some(replay) => store.create_key_once(&key, replay, now).await?,
                None => store.create_key(&key, now).await?,
            };
            let mut info = key.info();
            let mut replayed = false;
            match created {
                Created::Created => {}
                Created::Replayed(first) => {
                    tracing::info!(owner = %owner, key_id = %first.id, "re-issued a key for a retried creation");
                    info = *first;
                    replayed = true;
                }
                Created::IdempotencyConflict(why) => {
                    tracing::info!(owner = %owner, why = %why, "idempotency conflict");
                    return Err(AccountError::IdempotencyConflict(why).into());
                }
                Created::LimitReached => {
                    tracing::info!(owner = %owner, "key limit reached");
                    return Err(AccountError::KeyLimitReached.into());
                }
                Created::AccountDisabled => {
                    tracing::info!(owner = %owner, "a disabled account asked for a key");
                    return Err(AccountError::Disabled.into());
                }
                Created::DailyLimitReached => {
                    tracing::info!(owner = %owner, "daily key limit reached");
                    return Err(AccountError::DailyKeyLimit {
                        retry_after: seconds_to_next_day(now),
                    }
                    .into());
                }
            }
            if !replayed {
                tracing::info!(owner = %owner, key_id = %key.id, expires_at = ?key.expires_at, "created account key");
            }
            let mut response = json_response(
                StatusCode::CREATED,
                &CreatedBody {
                    secret: &secret,
                    key: KeyView {
                        key: &info,
                        status: info.status_at(now),
                    },
                },
            );
            if let Ok(location) =
                HeaderValue::try_from(format!("{}/{}", AccountRoute::BASE, info.id))
            {
                response.headers_mut().insert(header::LOCATION, location);
            }
            if replayed {
                response
                    .headers_mut()
                    .insert("idempotent-replayed", HeaderValue::from_static("true"));
            }
            Ok(response)
        }
        AccountRoute::Keys if method == Method::GET => {
            // Newest first, a page at a time (`page`, `page_size`, as the catalog's list).
            let page =
                PageRequest::parse(single_param(req, "page")?, single_param(req, "page_size")?)?;
            let keys = store.list_keys(&owner).await?;
            let active = keys
                .iter()
                .filter(|k| k.status_at(now) == KeyStatus::Active)
                .count();
            let skip = page
                .offset()
                .and_then(|o| usize::try_from(o).ok())
                .unwrap_or(usize::MAX);
            let views: Vec<KeyView> = keys
                .iter()
                .skip(skip)
                .take(page.page_size() as usize)
                .map(|key| KeyView {
                    key,
                    status: key.status_at(now),
                })
                .collect();
            tracing::info!(owner = %owner, total = keys.len(), listed = views.len(), active, "listed account keys");
            Ok(json_response(
                StatusCode::OK,
                &ListBody {
                    keys: views,
                    active,
                    max_active: MAX_ACTIVE_KEYS,
                    total: keys.len(),
                    page: page.page(),
                    page_size: page.page_size(),
                },
            ))
        }
        AccountRoute::Key(id) if method == Method::DELETE => {
            // An id of another shape cannot be a key; a key of another account is answered as
            // an unknown one, so that nobody learns it exists.
            if !is_key_id(&id) || !store.revoke_key(&owner, &id, now).await? {
                return Err(AccountError::KeyNotFound(echo(&id)).into());
            }
            tracing::info!(owner = %owner, key_id = %id, "revoked account key");
            let mut response = Response::new(Body::Empty);
            *response.status_mut() = StatusCode::NO_CONTENT;
            Ok(response)
        }
        route => Err(ApiError::MethodNotAllowed {
            method: echo(method.as_str()),
            allowed: match route {
                AccountRoute::Keys => Allowed::KeyCollection,
                AccountRoute::Key(_) => Allowed::Key,
            },
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn account_routes_are_exact_paths() {
        assert_eq!(
            AccountRoute::parse("/api/v1/account/keys"),
            Some(AccountRoute::Keys)
        );
        assert_eq!(
            AccountRoute::parse("/api/v1/account/keys/key_0123456789abcdef"),
            Some(AccountRoute::Key("key_0123456789abcdef".into()))
        );
        for path in [
            "/api/v1/account/keys/",
            "/api/v1/account/keys/a/b",
            "/api/v1/account/keysx",
            "/api/v1/account",
            "/prod/api/v1/account/keys",
        ] {
            assert_eq!(AccountRoute::parse(path), None, "{path}");
        }
    }
}
