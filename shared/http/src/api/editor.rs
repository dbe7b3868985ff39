//! An organisation's datasets as its members and editors reach them from the site, behind the
//! JWT authorizer (the editor function; docs/organisations.md):
//!
//! - `GET /api/v1/orgs/{org}/datasets`: its datasets, private ones included (its members and
//!   the operators);
//! - `PUT /api/v1/orgs/{org}/datasets/{name}` `{"name": …, "description": …, "category": …,
//!   "tags": […], "license": …, "source": …, "readme": …}`: a new description, each field
//!   absent kept (its editors and admins, and the operators);
//! - `GET /api/v1/orgs/{org}/datasets/{name}/versions`: the history, each version's rows and
//!   columns with their types (its members);
//! - `GET /api/v1/orgs/{org}/datasets/{name}/diff?from=1&to=2`: what changed between two
//!   versions (its members);
//! - `POST /api/v1/orgs/{org}/datasets/{name}/versions/{n}/activate`: makes version `n` the
//!   active one, a rollback (its editors and admins, and the operators).
//!
//! A stranger to the organisation gets the 404 of a name that names nothing; a member asking
//! for what editors do, 403 `not_an_editor`. The caller's role is read strongly consistent on
//! each request.

use chrono::{DateTime, Utc};
use lambda_http::http::{Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde_json::json;

use super::http::{json_response, shell, Audience};
use super::request::{request_path, single_param, verified_claims};
use crate::error::{AccountError, Allowed, ApiError};
use catalog::accounts::caller;
use catalog::edits::{EditFailure, MetaEdit};
use catalog::grants::in_group;
use catalog::input::echo;
use catalog::keys::Owner;
use catalog::orgs::{OrgError, OrgName, Role};
use catalog::ports::{AccessStore, DatasetEditor};
use catalog::slug::Slug;
use catalog::versions::diff;

/// The editor's routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditorRoute {
    /// `/api/v1/orgs/{org}/datasets`
    Datasets(String),
    /// `/api/v1/orgs/{org}/datasets/{name}`
    Dataset(String, String),
    /// `/api/v1/orgs/{org}/datasets/{name}/versions`
    Versions(String, String),
    /// `/api/v1/orgs/{org}/datasets/{name}/diff`
    Diff(String, String),
    /// `/api/v1/orgs/{org}/datasets/{name}/versions/{n}/activate`
    Activate(String, String, String),
}

impl EditorRoute {
    pub fn parse(path: &str) -> Option<Self> {
        let parts: Vec<&str> = path.strip_prefix("/api/v1/orgs/")?.split('/').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let own = |s: &&str| (*s).to_owned();
        Some(match parts.as_slice() {
            [org, "datasets"] => Self::Datasets(own(org)),
            [org, "datasets", name] => Self::Dataset(own(org), own(name)),
            [org, "datasets", name, "versions"] => Self::Versions(own(org), own(name)),
            [org, "datasets", name, "diff"] => Self::Diff(own(org), own(name)),
            [org, "datasets", name, "versions", n, "activate"] => {
                Self::Activate(own(org), own(name), own(n))
            }
            _ => return None,
        })
    }

    fn allowed(&self) -> Allowed {
        match self {
            Self::Datasets(_) | Self::Versions(..) | Self::Diff(..) => Allowed::ReadOnly,
            Self::Dataset(..) => Allowed::EditorDataset,
            Self::Activate(..) => Allowed::EditorActivate,
        }
    }
}

/// What the editor's routes need besides the request.
pub struct EditorService<'a, E, A> {
    pub editor: &'a E,
    /// The caller's membership (and whether the account is disabled).
    pub access: &'a A,
    /// The Cognito group whose members are the catalog's operators (`None`: nobody is).
    pub operators: Option<&'a str>,
}

/// Who the caller is to the organisation.
struct Standing {
    operator: bool,
    role: Option<Role>,
}

impl<E: DatasetEditor, A: AccessStore> EditorService<'_, E, A> {
    /// Answers an editor's route (the editor function, and the local API).
    pub async fn answer(&self, req: &Request, now: DateTime<Utc>) -> Response<Body> {
        let path = request_path(req);
        shell(req, Audience::Account, async {
            let route =
                EditorRoute::parse(path).ok_or_else(|| ApiError::RouteNotFound(echo(path)))?;
            let owner = caller(verified_claims(req)).map_err(AccountError::Unauthenticated)?;
            self.route(req, route, owner, now).await
        })
        .await
    }

    async fn route(
        &self,
        req: &Request,
        route: EditorRoute,
        owner: Owner,
        now: DateTime<Utc>,
    ) -> Result<Response<Body>, ApiError> {
        let method = req.method().clone();
        match (&route, &method) {
            (EditorRoute::Datasets(org), &Method::GET) => {
                let org = self.member(req, org, &owner).await?.0;
                let datasets = self.editor.org_datasets(&org).await?;
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "datasets": datasets }),
                ))
            }
            (EditorRoute::Versions(org, name), &Method::GET) => {
                let (org, _) = self.member(req, org, &owner).await?;
                let slug = self.slug(&org, name)?;
                let history = self.editor.history(&slug).await?;
                if history.is_empty() {
                    return Err(ApiError::DatasetNotFound(crate::error::Named::Given(echo(
                        slug.as_str(),
                    ))));
                }
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "dataset": slug, "versions": history }),
                ))
            }
            (EditorRoute::Diff(org, name), &Method::GET) => {
                let (org, _) = self.member(req, org, &owner).await?;
                let slug = self.slug(&org, name)?;
                let number = |param: &str| -> Result<u64, ApiError> {
                    let raw = single_param(req, param)?.ok_or_else(|| {
                        ApiError::BadRequest(format!("'{param}' (a version number) is required"))
                    })?;
                    raw.parse::<u64>().map_err(|_| {
                        ApiError::BadRequest(format!(
                            "'{param}' must be a version number, got '{}'",
                            echo(raw)
                        ))
                    })
                };
                let (from, to) = (number("from")?, number("to")?);
                let history = self.editor.history(&slug).await?;
                let find = |n: u64| {
                    history.iter().find(|v| v.version == n).ok_or_else(|| {
                        ApiError::from(EditFailure::NoSuchVersion {
                            slug: slug.to_string(),
                            version: n,
                        })
                    })
                };
                let changes = diff(find(from)?, find(to)?);
                Ok(json_response(StatusCode::OK, &changes))
            }
            (EditorRoute::Dataset(org, name), &Method::PUT) => {
                let (org, _) = self.editor_of(req, org, &owner).await?;
                let slug = self.slug(&org, name)?;
                let edit = MetaEdit::parse(req.body().as_ref())
                    .map_err(|e| ApiError::Edit("invalid_edit", e.to_string()))?;
                let stored = self.editor.meta(&slug).await?.ok_or_else(|| {
                    ApiError::DatasetNotFound(crate::error::Named::Given(echo(slug.as_str())))
                })?;
                let meta = edit
                    .apply(&stored)
                    .map_err(|e| ApiError::Edit("invalid_edit", e.to_string()))?;
                self.editor
                    .describe(&slug, &meta, now)
                    .await
                    .map_err(ApiError::from)?;
                tracing::info!(editor = %owner, dataset = %slug, "described a dataset");
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "dataset": slug, "meta": meta }),
                ))
            }
            (EditorRoute::Activate(org, name, raw), &Method::POST) => {
                let (org, _) = self.editor_of(req, org, &owner).await?;
                let slug = self.slug(&org, name)?;
                let version = raw.parse::<u64>().map_err(|_| {
                    ApiError::from(EditFailure::NoSuchVersion {
                        slug: slug.to_string(),
                        version: 0,
                    })
                })?;
                self.editor
                    .activate(&slug, version, now)
                    .await
                    .map_err(ApiError::from)?;
                tracing::info!(editor = %owner, dataset = %slug, version, "activated a version");
                Ok(json_response(
                    StatusCode::OK,
                    &json!({ "dataset": slug, "active": version }),
                ))
            }
            _ => Err(ApiError::MethodNotAllowed {
                method: echo(method.as_str()),
                allowed: route.allowed(),
            }),
        }
    }

    /// The slug of `name` in `org` (a malformed name names no dataset: its 404).
    fn slug(&self, org: &OrgName, name: &str) -> Result<Slug, ApiError> {
        Slug::within(org, name).map_err(|_| {
            ApiError::DatasetNotFound(crate::error::Named::Given(echo(&format!("{org}~{name}"))))
        })
    }

    /// The organisation, to one of its members or an operator (anyone else: the 404 of a name
    /// that names nothing); a disabled account is refused.
    async fn member(
        &self,
        req: &Request,
        raw: &str,
        owner: &Owner,
    ) -> Result<(OrgName, Standing), ApiError> {
        let org = OrgName::parse(raw).map_err(|_| OrgError::NotFound(echo(raw)))?;
        let standing = Standing {
            operator: match (self.operators, verified_claims(req)) {
                (Some(group), Some(claims)) => in_group(claims, group),
                _ => false,
            },
            role: self.access.role(&org, owner).await?,
        };
        if !standing.operator && standing.role.is_none() {
            return Err(OrgError::NotFound(echo(raw)).into());
        }
        if self.access.account_disabled(owner).await? {
            return Err(AccountError::Disabled.into());
        }
        Ok((org, standing))
    }

    /// The organisation, to one of its editors or admins or an operator; a member gets 403
    /// `not_an_editor`.
    async fn editor_of(
        &self,
        req: &Request,
        raw: &str,
        owner: &Owner,
    ) -> Result<(OrgName, Standing), ApiError> {
        let (org, standing) = self.member(req, raw, owner).await?;
        if standing.operator || standing.role.is_some_and(Role::may_publish) {
            Ok((org, standing))
        } else {
            Err(ApiError::Edit(
                "not_an_editor",
                format!("only the editors and admins of '{org}' (and the catalog's operators) may do this"),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_names_its_route_and_nothing_else_parses() {
        let own = |s: &str| s.to_owned();
        let cases = [
            (
                "/api/v1/orgs/acme/datasets",
                Some(EditorRoute::Datasets(own("acme"))),
            ),
            (
                "/api/v1/orgs/acme/datasets/ledger",
                Some(EditorRoute::Dataset(own("acme"), own("ledger"))),
            ),
            (
                "/api/v1/orgs/acme/datasets/ledger/versions",
                Some(EditorRoute::Versions(own("acme"), own("ledger"))),
            ),
            (
                "/api/v1/orgs/acme/datasets/ledger/diff",
                Some(EditorRoute::Diff(own("acme"), own("ledger"))),
            ),
            (
                "/api/v1/orgs/acme/datasets/ledger/versions/2/activate",
                Some(EditorRoute::Activate(own("acme"), own("ledger"), own("2"))),
            ),
            ("/api/v1/orgs/acme", None),
            ("/api/v1/orgs/acme/members/x", None),
            ("/api/v1/orgs/acme/datasets/ledger/versions/2", None),
            ("/api/v1/orgs/acme/datasets//versions", None),
        ];
        for (path, expected) in cases {
            assert_eq!(EditorRoute::parse(path), expected, "{path}");
        }
    }
}
