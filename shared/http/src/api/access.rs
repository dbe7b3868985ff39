//! The access routes, behind the same JWT authorizer as the account keys:
//!
//! - `POST /api/v1/account/access` `{"dataset": "...", "answers": {...}, "accept_terms": true}`:
//!   201 and the record (`pending`, or `granted` when the dataset approves automatically);
//! - `GET /api/v1/account/access`: the caller's records, every dataset, newest first;
//! - `DELETE /api/v1/account/access/{slug}`: withdraws the caller's pending request (204);
//! - `GET /api/v1/operator/access?status=pending&dataset=slug&org=acme&page=1&page_size=20`:
//!   records in one status (default `pending`), of one dataset, of one organisation's datasets,
//!   or all, newest first, a page at a time, for those who decide them;
//! - `POST /api/v1/operator/access/{slug}/{account}` `{"decision": "approve"|"reject"|"revoke",
//!   "expires_at": ..., "reason": ..., "rev": n}`: a decider's decision.
//!
//! The caller is the access token's `sub`. The deciders of a dataset's requests are the
//! operators (callers whose `cognito:groups` claim names the configured group), who decide
//! every dataset's, and an organisation's admins, who decide its datasets' (their membership
//! read strongly consistent on each request: a removal applies at once). An admin's list must
//! name their organisation (`org`, or a `dataset` of it) and shows only its records. Nobody
//! else sees another account's record.

use lambda_http::http::{header, HeaderValue, Method, StatusCode};
use lambda_http::{Body, Request, RequestExt, Response};
use serde::Serialize;

use super::http::json_response;
use super::request::{single_param, verified_claims};
use crate::error::{AccountError, Allowed, ApiError, GrantError, Named};
use catalog::accounts::{Field, FieldError};
use catalog::grants::{in_group, AccessAsk, AccessStatus, DecisionRequest};
use catalog::input::{echo, DatasetRef, PageRequest};
use catalog::keys::Owner;
use catalog::orgs::OrgName;
use catalog::policy::{AccessLevel, Approval};
use catalog::ports::{AccessStore, Asked, DatasetAccess, Decided, Directory};
use catalog::slug::Slug;
use chrono::{DateTime, Utc};

/// The access routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccessRoute {
    /// `/api/v1/account/access`
    Mine,
    /// `/api/v1/account/access/{slug}`
    MineFor(String),
    /// `/api/v1/operator/access`
    Operator,
    /// `/api/v1/operator/access/{slug}/{account}`
    OperatorFor(String, String),
}

impl AccessRoute {
    pub const ACCOUNT: &'static str = "/api/v1/account/access";
    pub const OPERATOR: &'static str = "/api/v1/operator/access";

    pub fn parse(path: &str) -> Option<Self> {
        let segments = |base: &str| -> Option<Vec<String>> {
            let rest = path.strip_prefix(base)?;
            if rest.is_empty() {
                return Some(Vec::new());
            }
            let parts: Vec<String> = rest
                .strip_prefix('/')?
                .split('/')
                .map(str::to_owned)
                .collect();
            parts.iter().all(|p| !p.is_empty()).then_some(parts)
        };
        if let Some(parts) = segments(Self::ACCOUNT) {
            return match parts.as_slice() {
                [] => Some(Self::Mine),
                [slug] => Some(Self::MineFor(slug.clone())),
                _ => None,
            };
        }
        match segments(Self::OPERATOR)?.as_slice() {
            [] => Some(Self::Operator),
            [slug, account] => Some(Self::OperatorFor(slug.clone(), account.clone())),
            _ => None,
        }
    }

    fn allowed(&self) -> Allowed {
        match self {
            Self::Mine => Allowed::AccessCollection,
            Self::MineFor(_) => Allowed::AccessItem,
            Self::Operator => Allowed::OperatorCollection,
            Self::OperatorFor(..) => Allowed::OperatorItem,
        }
    }
}

/// What the access routes need besides the request.
pub struct AccessService<'a, S, D> {
    pub store: &'a S,
    pub directory: &'a D,
    /// The Cognito group whose members may use the operators' routes (`None`: nobody may).
    pub operators: Option<&'a str>,
}

#[derive(Serialize)]
struct One<T> {
    access: T,
}

#[derive(Serialize)]
struct Many<T> {
    access: Vec<T>,
}

/// A page of records (`page`, `page_size` as the catalog's list and the keys' list page), so
/// that no answer grows with the number of requests past Lambda's 6 MB.
#[derive(Serialize)]
struct OperatorList<T> {
    status: &'static str,
    dataset: Option<String>,
    access: Vec<T>,
    /// Records in this status (and dataset), all pages.
    total: usize,
    page: u64,
    page_size: u64,
}

/// The bearer token the authorizer verified (the request still carries it).
pub(super) fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let token = value
        .strip_prefix("Bearer ")
        .or_else(|| value.strip_prefix("bearer "))
        .unwrap_or(value);
    Some(token.trim()).filter(|t| !t.is_empty())
}

fn query<'r>(req: &'r Request, name: &str) -> Option<&'r str> {
    req.query_string_parameters_ref()
        .and_then(|q| q.first(name))
}

impl<S: AccessStore, D: Directory> AccessService<'_, S, D> {
    /// Answers an access route (the caller already named by the path's route).
    pub async fn answer(
        &self,
        req: &Request,
        route: AccessRoute,
        owner: Owner,
        now: DateTime<Utc>,
    ) -> Result<Response<Body>, ApiError> {
        let method = req.method();
        match route {
            AccessRoute::Mine if method == Method::POST => self.ask(req, &owner, now).await,
            AccessRoute::Mine if method == Method::GET => {
                let records = self.store.access_of(&owner).await?;
                tracing::info!(owner = %owner, records = records.len(), "listed own access");
                let views = records.iter().map(|r| r.own_view(now)).collect();
                Ok(json_response(StatusCode::OK, &Many { access: views }))
            }
            AccessRoute::MineFor(raw) if method == Method::DELETE => {
                let dataset = self
                    .dataset_or(&raw, GrantError::RequestNotFound(echo(&raw)).into())
                    .await?;
                if !self.store.withdraw(&owner, &dataset.id, now).await? {
                    return Err(GrantError::RequestNotFound(echo(&raw)).into());
                }
                tracing::info!(owner = %owner, dataset = %dataset.slug, "withdrew access request");
                let mut response = Response::new(Body::Empty);
                *response.status_mut() = StatusCode::NO_CONTENT;
                Ok(response)
            }
            AccessRoute::Operator if method == Method::GET => {
                let status = match query(req, "status") {
                    None => AccessStatus::Pending,
                    Some(raw) => AccessStatus::parse(raw).ok_or_else(|| {
                        AccountError::InvalidField(FieldError {
                            field: Field::Status,
                            message: format!(
                                "status must be pending, granted, rejected, revoked or withdrawn, got '{}'",
                                echo(raw)
                            ),
                        })
                    })?,
                };
                let org = match query(req, "org") {
                    None => None,
                    Some(raw) => Some(OrgName::parse(raw).map_err(|e| {
                        AccountError::InvalidField(FieldError {
                            field: Field::Org,
                            message: format!("org '{}': {e}", echo(raw)),
                        })
                    })?),
                };
                let dataset = match query(req, "dataset") {
                    None => None,
                    Some(raw) => Some(
                        self.dataset_or(raw, ApiError::DatasetNotFound(Named::Given(echo(raw))))
                            .await?,
                    ),
                };
                // The organisation whose records are asked for: the one named, or the dataset's.
                let scope = org.or_else(|| dataset.as_ref().and_then(|d| d.slug.org()));
                if let (Some(scope), Some(d)) = (&scope, &dataset) {
                    if d.slug.org().as_ref() != Some(scope) {
                        return Err(AccountError::InvalidField(FieldError {
                            field: Field::Org,
                            message: format!(
                                "dataset '{}' is not a dataset of organisation '{scope}'",
                                d.slug
                            ),
                        })
                        .into());
                    }
                }
                self.decider(req, &owner, scope.as_ref()).await?;
                let page = PageRequest::parse(
                    single_param(req, "page")?,
                    single_param(req, "page_size")?,
                )?;
                let mut records = self
                    .store
                    .access_by_status(status, dataset.as_ref().map(|d| &d.id))
                    .await?;
                if let Some(scope) = &scope {
                    records.retain(|r| {
                        Slug::parse(&r.slug).is_ok_and(|s| s.org().as_ref() == Some(scope))
                    });
                }
                let skip = page
                    .offset()
                    .and_then(|o| usize::try_from(o).ok())
                    .unwrap_or(usize::MAX);
                let access: Vec<_> = records
                    .iter()
                    .skip(skip)
                    .take(page.page_size() as usize)
                    .map(|r| r.operator_view(now))
                    .collect();
                tracing::info!(operator = %owner, status = status.as_str(), records = records.len(), listed = access.len(), "listed access records");
                Ok(json_response(
                    StatusCode::OK,
                    &OperatorList {
                        status: status.as_str(),
                        dataset: dataset.map(|d| d.slug.to_string()),
                        access,
                        total: records.len(),
                        page: page.page(),
                        page_size: page.page_size(),
                    },
                ))
            }
            AccessRoute::OperatorFor(raw, account) if method == Method::POST => {
                // Who decides is known from the path's slug alone: refused before anything is
                // said of the dataset.
                let org = Slug::parse(&raw).ok().and_then(|s| s.org());
                self.decider(req, &owner, org.as_ref()).await?;
                // What the path names comes first (a 404), then the body (a 400).
                let not_found = || GrantError::RecordNotFound {
                    slug: echo(&raw),
                    grantee: echo(&account),
                };
                let dataset = self
                    .dataset_or(&raw, ApiError::DatasetNotFound(Named::Given(echo(&raw))))
                    .await?;
                let grantee = Owner::parse(&account).ok_or_else(not_found)?;
                let request = DecisionRequest::parse(req.body().as_ref(), now)
                    .map_err(AccountError::InvalidField)?;
                let by = match bearer(req) {
                    Some(token) => self.directory.email(token).await?,
                    None => None,
                }
                .unwrap_or_else(|| owner.to_string());
                let decided = self
                    .store
                    .decide(
                        &dataset.id,
                        &grantee,
                        &request.decision,
                        request.rev,
                        &by,
                        now,
                    )
                    .await?;
                match decided {
                    Decided::Done(record) => {
                        tracing::info!(operator = %owner, grantee = %grantee, dataset = %dataset.slug, decision = request.decision.verb(), rev = record.rev, "access decided");
                        Ok(json_response(
                            StatusCode::OK,
                            &One {
                                access: record.operator_view(now),
                            },
                        ))
                    }
                    Decided::Conflict(record) => {
                        Err(GrantError::conflict(&request, &record, now).into())
                    }
                    Decided::NotFound => Err(not_found().into()),
                }
            }
            route => Err(ApiError::MethodNotAllowed {
                method: echo(method.as_str()),
                allowed: route.allowed(),
            }),
        }
    }

    /// `POST /account/access`.
    async fn ask(
        &self,
        req: &Request,
        owner: &Owner,
        now: DateTime<Utc>,
    ) -> Result<Response<Body>, ApiError> {
        // Read as JSON whatever the Content-Type says, as the key routes do.
        let ask = AccessAsk::parse(req.body().as_ref()).map_err(AccountError::InvalidField)?;
        let slug = ask.dataset.to_string();
        let dataset = self
            .store
            .dataset_access(&ask.dataset)
            .await?
            .ok_or_else(|| {
                ApiError::DatasetNotFound(Named::Dataset(DatasetRef::Slug(ask.dataset.clone())))
            })?;
        // A private dataset is no dataset to whoever asks for it: its members read it without
        // asking, and nobody else may learn that it exists.
        if dataset.level == AccessLevel::Private {
            return Err(ApiError::DatasetNotFound(Named::Dataset(DatasetRef::Slug(
                ask.dataset,
            ))));
        }
        if dataset.level != AccessLevel::Approval {
            return Err(GrantError::RequestNotNeeded(ask.dataset).into());
        }
        let answers = ask
            .answers_for(&dataset.policy)
            .map_err(AccountError::InvalidField)?;
        let email = match bearer(req) {
            Some(token) => self.directory.email(token).await?,
            None => None,
        };
        let automatic = dataset.policy.approval == Approval::Automatic;
        let record = ask.record(
            dataset.id,
            owner,
            email,
            answers,
            automatic,
            dataset.policy.terms.is_some(),
            now,
        );
        match self.store.ask(&record, now).await? {
            Asked::Recorded => {
                tracing::info!(owner = %owner, dataset = %slug, status = record.status.as_str(), "access requested");
                let mut response = json_response(
                    StatusCode::CREATED,
                    &One {
                        access: record.own_view(now),
                    },
                );
                if let Ok(location) =
                    HeaderValue::try_from(format!("{}/{slug}", AccessRoute::ACCOUNT))
                {
                    response.headers_mut().insert(header::LOCATION, location);
                }
                Ok(response)
            }
            Asked::AlreadyPending => Err(GrantError::RequestPending(ask.dataset).into()),
            Asked::AlreadyGranted => Err(GrantError::AlreadyGranted(ask.dataset).into()),
            Asked::Revoked => Err(GrantError::AccessRevoked(ask.dataset).into()),
            Asked::AccountDisabled => Err(AccountError::Disabled.into()),
        }
    }

    /// The dataset a path or parameter names, or `missing` (a malformed slug names none).
    async fn dataset_or(&self, raw: &str, missing: ApiError) -> Result<DatasetAccess, ApiError> {
        let Ok(slug) = Slug::parse(raw) else {
            return Err(missing);
        };
        self.store.dataset_access(&slug).await?.ok_or(missing)
    }

    /// Who decides `org`'s datasets' requests (`None`: every dataset's): a member of the
    /// operators' group (the token's verified `cognito:groups`), or an admin of `org` (one
    /// strongly consistent GetItem of the membership), whose account is not disabled:
    /// `accounts disable` applies from the next request, not when the token (valid up to 15
    /// minutes) expires. One GetItem more, on the operators' routes only.
    async fn decider(
        &self,
        req: &Request,
        owner: &Owner,
        org: Option<&OrgName>,
    ) -> Result<(), ApiError> {
        let operator = match (self.operators, verified_claims(req)) {
            (Some(group), Some(claims)) => in_group(claims, group),
            _ => false,
        };
        let member = operator
            || match org {
                Some(org) => self
                    .store
                    .role(org, owner)
                    .await?
                    .is_some_and(|r| r.may_administer()),
                None => false,
            };
        if !member {
            tracing::info!(caller = %owner, "refused an operators' route");
            return Err(AccountError::NotAnOperator.into());
        }
        if self.store.account_disabled(owner).await? {
            tracing::info!(operator = %owner, "refused a disabled operator");
            return Err(AccountError::Disabled.into());
        }
        Ok(())
    }

    /// Whether the user pool still knows the caller: one GetUser with their own token. A user
    /// deleted from the pool (by an operator, or by themselves with Cognito's `DeleteUser`)
    /// keeps a valid-looking token until it expires; the pool refuses it. A refused token of a
    /// disabled account is that account's 403 (one GetItem, on that path only); any other is
    /// 401 `account_unknown`.
    pub async fn still_known(&self, req: &Request, owner: &Owner) -> Result<(), ApiError> {
        let known = match bearer(req) {
            Some(token) => self.directory.user(token).await?.is_some(),
            None => false,
        };
        if known {
            return Ok(());
        }
        if self.store.account_disabled(owner).await? {
            tracing::info!(owner = %owner, "a disabled account asked for a key");
            return Err(AccountError::Disabled.into());
        }
        tracing::info!(owner = %owner, "the user pool no longer knows this account");
        Err(AccountError::Unknown.into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn access_routes_are_exact_paths() {
        assert_eq!(
            AccessRoute::parse("/api/v1/account/access"),
            Some(AccessRoute::Mine)
        );
        assert_eq!(
            AccessRoute::parse("/api/v1/account/access/trials"),
            Some(AccessRoute::MineFor("trials".into()))
        );
        assert_eq!(
            AccessRoute::parse("/api/v1/operator/access"),
            Some(AccessRoute::Operator)
        );
        assert_eq!(
            AccessRoute::parse("/api/v1/operator/access/trials/abc-1"),
            Some(AccessRoute::OperatorFor("trials".into(), "abc-1".into()))
        );
        for path in [
            "/api/v1/account/access/",
            "/api/v1/account/access/a/b",
            "/api/v1/account/accessx",
            "/api/v1/operator/access/trials",
            "/api/v1/operator/access/a/b/c",
            "/api/v1/operator/access//b",
            "/api/v1/operator",
        ] {
            assert_eq!(AccessRoute::parse(path), None, "{path}");
        }
    }
}
