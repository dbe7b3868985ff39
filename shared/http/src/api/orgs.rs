//! The organisations' routes, behind the same JWT authorizer as the account keys
//! (docs/organisations.md):
//!
//! - `GET /api/v1/account/orgs`: the caller's organisations and roles;
//! - `GET /api/v1/account/invitations`: the invitations made for the caller's verified email;
//! - `POST /api/v1/account/invitations/{org}`: accepts one (201, the membership);
//!   `DELETE`: declines it (204);
//! - `GET /api/v1/orgs`: every organisation (operators); `POST /api/v1/orgs`
//!   `{"name": "acme", "display_name": "Acme Labs"}`: a new one, whose first admin is the
//!   caller (operators);
//! - `GET /api/v1/orgs/{org}`: the organisation, its members, and for its admins its
//!   invitations (its members and operators; anyone else gets the 404 of an unknown name);
//!   `PATCH` `{"display_name": "Acme Labs"}`: its settings (admins);
//! - `PUT /api/v1/orgs/{org}/members/{account}` `{"role": "editor"}`: a member's role (admins);
//!   `DELETE`: removes a member (admins; a member may remove themselves: leave);
//! - `POST /api/v1/orgs/{org}/invitations` `{"email": "...", "role": "member"}`: invites an
//!   address (admins; 201); `DELETE /api/v1/orgs/{org}/invitations/{id}`: withdraws one.
//!
//! An organisation's admins and the catalog's operators (the operators' Cognito group) manage
//! it; each request reads the caller's membership strongly consistent, so a change of role
//! applies from the next request.

use chrono::{DateTime, Utc};
use lambda_http::http::{Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use super::access::{bearer, AccessService};
use super::http::json_response;
use super::request::verified_claims;
use crate::error::{AccountError, Allowed, ApiError};
use catalog::grants::in_group;
use catalog::input::echo;
use catalog::keys::Owner;
use catalog::orgs::{display_name, email, Invitation, Membership, Org, OrgError, OrgName, Role};
use catalog::ports::{AccessStore, Directory, OrgStore};

/// The organisations' routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrgRoute {
    /// `/api/v1/account/orgs`
    Mine,
    /// `/api/v1/account/invitations`
    MyInvitations,
    /// `/api/v1/account/invitations/{org}`
    MyInvitation(String),
    /// `/api/v1/orgs`
    All,
    /// `/api/v1/orgs/{org}`
    One(String),
    /// `/api/v1/orgs/{org}/members/{account}`
    Member(String, String),
    /// `/api/v1/orgs/{org}/invitations`
    Invite(String),
    /// `/api/v1/orgs/{org}/invitations/{id}`
    Invited(String, String),
}

impl OrgRoute {
    pub fn parse(path: &str) -> Option<Self> {
        let parts: Vec<&str> = path.strip_prefix("/api/v1/")?.split('/').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let own = |s: &&str| (*s).to_owned();
        Some(match parts.as_slice() {
            ["account", "orgs"] => Self::Mine,
            ["account", "invitations"] => Self::MyInvitations,
            ["account", "invitations", org] => Self::MyInvitation(own(org)),
            ["orgs"] => Self::All,
            ["orgs", org] => Self::One(own(org)),
            ["orgs", org, "members", account] => Self::Member(own(org), own(account)),
            ["orgs", org, "invitations"] => Self::Invite(own(org)),
            ["orgs", org, "invitations", id] => Self::Invited(own(org), own(id)),
            _ => return None,
        })
    }

    fn allowed(&self) -> Allowed {
        match self {
            Self::All => Allowed::Orgs,
            Self::Mine | Self::MyInvitations => Allowed::ReadOnly,
            Self::One(_) => Allowed::OrgItem,
            Self::MyInvitation(_) => Allowed::MyInvitation,
            Self::Member(..) => Allowed::OrgMember,
            Self::Invite(_) => Allowed::OrgInvitations,
            Self::Invited(..) => Allowed::OrgInvitation,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewOrg {
    name: String,
    display_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Settings {
    display_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RoleChange {
    role: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewInvitation {
    email: String,
    #[serde(default)]
    role: Option<String>,
}

/// An organisation's page: the organisation, the caller's role (`None` for an operator who is
/// not a member), its members, and (for those who manage it) its invitations.
#[derive(Serialize)]
struct OrgPage {
    org: Org,
    role: Option<Role>,
    members: Vec<Membership>,
    #[serde(skip_serializing_if = "Option::is_none")]
    invitations: Option<Vec<Invitation>>,
}

/// Who the caller is towards one organisation.
struct Standing {
    operator: bool,
    role: Option<Role>,
}

impl Standing {
    fn manages(&self) -> bool {
        self.operator || self.role.is_some_and(Role::may_administer)
    }
}

fn body<T: serde::de::DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    serde_json::from_slice(req.body().as_ref())
        .map_err(|e| ApiError::BadRequest(format!("the body is not what this route takes: {e}")))
}

fn role(raw: &str) -> Result<Role, ApiError> {
    Role::parse(raw).ok_or_else(|| OrgError::Role(echo(raw)).into())
}

fn no_content() -> Response<Body> {
    let mut response = Response::new(Body::Empty);
    *response.status_mut() = StatusCode::NO_CONTENT;
    response
}

impl<S: AccessStore, D: Directory> AccessService<'_, S, D> {
    /// Answers an organisations' route.
    pub async fn orgs_answer(
        &self,
        req: &Request,
        orgs: &impl OrgStore,
        route: OrgRoute,
        caller: Owner,
        now: DateTime<Utc>,
    ) -> Result<Response<Body>, ApiError> {
        let method = req.method().clone();
        match (&route, &method) {
            (OrgRoute::Mine, &Method::GET) => {
                let memberships = orgs.memberships_of(&caller).await?;
                Ok(json_response(
                    StatusCode::OK,
                    &serde_json::json!({ "orgs": memberships }),
                ))
            }
            (OrgRoute::MyInvitations, &Method::GET) => {
                let address = self.verified_email(req).await?;
                let open: Vec<Invitation> = match address {
                    Some(address) => orgs
                        .invitations_for(&address)
                        .await?
                        .into_iter()
                        .filter(|i| i.email == address && i.is_open_at(now))
                        .collect(),
                    None => Vec::new(),
                };
                Ok(json_response(
                    StatusCode::OK,
                    &serde_json::json!({ "invitations": open }),
                ))
            }
            (OrgRoute::MyInvitation(raw), &Method::POST) => {
                let org = self.known_org(orgs, raw).await?;
                let (invitation, address) = self.my_invitation(req, orgs, &org, now).await?;
                let membership = Membership {
                    org: org.clone(),
                    account: caller.to_string(),
                    role: invitation.role,
                    email: Some(address),
                    added_at: now,
                    added_by: invitation.invited_by.clone(),
                };
                orgs.accept(&invitation, &membership).await?;
                tracing::info!(account = %caller, org = %org, role = membership.role.as_str(), "accepted an invitation");
                Ok(json_response(
                    StatusCode::CREATED,
                    &serde_json::json!({ "membership": membership }),
                ))
            }
            (OrgRoute::MyInvitation(raw), &Method::DELETE) => {
                let org = self.known_org(orgs, raw).await?;
                let (invitation, _) = self.my_invitation(req, orgs, &org, now).await?;
                orgs.drop_invitation(&org, &invitation.id).await?;
                tracing::info!(account = %caller, org = %org, "declined an invitation");
                Ok(no_content())
            }
            (OrgRoute::All, &Method::GET) => {
                self.operator_only(req, &caller).await?;
                let all = orgs.orgs().await?;
                Ok(json_response(
                    StatusCode::OK,
                    &serde_json::json!({ "orgs": all }),
                ))
            }
            (OrgRoute::All, &Method::POST) => {
                self.operator_only(req, &caller).await?;
                let asked: NewOrg = body(req)?;
                let name = OrgName::parse(&asked.name).map_err(OrgError::Name)?;
                let shown = display_name(asked.display_name.as_deref().unwrap_or(name.as_str()))?;
                let address = self.verified_email(req).await?;
                let by = address.clone().unwrap_or_else(|| caller.to_string());
                let org = Org {
                    name: name.clone(),
                    display_name: shown,
                    members: 1,
                    created_at: now,
                    created_by: by.clone(),
                };
                let admin = Membership {
                    org: name.clone(),
                    account: caller.to_string(),
                    role: Role::Admin,
                    email: address,
                    added_at: now,
                    added_by: by,
                };
                orgs.create_org(&org, &admin).await?;
                tracing::info!(operator = %caller, org = %name, "created an organisation");
                Ok(json_response(
                    StatusCode::CREATED,
                    &serde_json::json!({ "org": org }),
                ))
            }
            (OrgRoute::One(raw), &Method::GET) => {
                let (org, standing) = self.standing(req, orgs, raw, &caller).await?;
                if !standing.operator && standing.role.is_none() {
                    return Err(OrgError::NotFound(echo(raw)).into());
                }
                let record = orgs
                    .org(&org)
                    .await?
                    .ok_or_else(|| OrgError::NotFound(echo(raw)))?;
                let members = orgs.members(&org).await?;
                let invitations = if standing.manages() {
                    Some(
                        orgs.invitations(&org)
                            .await?
                            .into_iter()
                            .filter(|i| i.is_open_at(now))
                            .collect(),
                    )
                } else {
                    None
                };
                Ok(json_response(
                    StatusCode::OK,
                    &OrgPage {
                        org: record,
                        role: standing.role,
                        members,
                        invitations,
                    },
                ))
            }
            (OrgRoute::One(raw), &Method::PATCH) => {
                let (org, _) = self.managing(req, orgs, raw, &caller).await?;
                let shown = display_name(&body::<Settings>(req)?.display_name)?;
                let changed = orgs.set_display_name(&org, &shown).await?;
                tracing::info!(by = %caller, org = %org, "changed an organisation's settings");
                Ok(json_response(
                    StatusCode::OK,
                    &serde_json::json!({ "org": changed }),
                ))
            }
            (OrgRoute::Member(raw, account), &Method::PUT) => {
                let (org, _) = self.managing(req, orgs, raw, &caller).await?;
                let wanted = role(&body::<RoleChange>(req)?.role)?;
                let account = self.member_named(&org, account)?;
                let membership = orgs.set_role(&org, &account, wanted).await?;
                tracing::info!(by = %caller, org = %org, account = %account, role = wanted.as_str(), "changed a member's role");
                Ok(json_response(
                    StatusCode::OK,
                    &serde_json::json!({ "membership": membership }),
                ))
            }
            (OrgRoute::Member(raw, account), &Method::DELETE) => {
                let leaving = account.as_str() == caller.as_str();
                let org = if leaving {
                    let (org, standing) = self.standing(req, orgs, raw, &caller).await?;
                    if standing.role.is_none() {
                        return Err(OrgError::NotFound(echo(raw)).into());
                    }
                    org
                } else {
                    self.managing(req, orgs, raw, &caller).await?.0
                };
                let account = self.member_named(&org, account)?;
                let was = orgs.remove_member(&org, &account).await?;
                tracing::info!(by = %caller, org = %org, account = %account, role = was.role.as_str(), "removed a member");
                Ok(no_content())
            }
            (OrgRoute::Invite(raw), &Method::POST) => {
                let (org, _) = self.managing(req, orgs, raw, &caller).await?;
                let asked: NewInvitation = body(req)?;
                let address = email(&asked.email)?;
                let wanted = match asked.role.as_deref() {
                    Some(raw) => role(raw)?,
                    None => Role::Member,
                };
                let members = orgs.members(&org).await?;
                if members
                    .iter()
                    .any(|m| m.email.as_deref() == Some(address.as_str()))
                {
                    return Err(OrgError::AddressIsMember {
                        org,
                        email: address,
                    }
                    .into());
                }
                if members.len() as u64 >= catalog::orgs::Limits::MEMBERS_PER_ORG {
                    return Err(OrgError::TooManyMembers { org }.into());
                }
                let by = self
                    .verified_email(req)
                    .await?
                    .unwrap_or_else(|| caller.to_string());
                let invitation = Invitation::new(org.clone(), address, wanted, &by, now);
                orgs.invite(&invitation).await?;
                tracing::info!(by = %caller, org = %org, invitation = %invitation.id, role = wanted.as_str(), "invited an address");
                Ok(json_response(
                    StatusCode::CREATED,
                    &serde_json::json!({ "invitation": invitation }),
                ))
            }
            (OrgRoute::Invited(raw, id), &Method::DELETE) => {
                let (org, _) = self.managing(req, orgs, raw, &caller).await?;
                if !orgs.drop_invitation(&org, id).await? {
                    return Err(OrgError::NoInvitation { org }.into());
                }
                Ok(no_content())
            }
            _ => Err(ApiError::MethodNotAllowed {
                method: echo(method.as_str()),
                allowed: route.allowed(),
            }),
        }
    }

    /// The caller's verified email, as the user pool holds it (asked with their own token).
    async fn verified_email(&self, req: &Request) -> Result<Option<String>, ApiError> {
        Ok(match bearer(req) {
            Some(token) => self.directory.email(token).await?.map(|e| e.to_lowercase()),
            None => None,
        })
    }

    fn is_operator(&self, req: &Request) -> bool {
        match (self.operators, verified_claims(req)) {
            (Some(group), Some(claims)) => in_group(claims, group),
            _ => false,
        }
    }

    /// A member of the operators' group whose account is not disabled.
    async fn operator_only(&self, req: &Request, caller: &Owner) -> Result<(), ApiError> {
        if !self.is_operator(req) {
            return Err(OrgError::NotOperator.into());
        }
        if self.store.account_disabled(caller).await? {
            return Err(AccountError::Disabled.into());
        }
        Ok(())
    }

    /// The organisation a path names (a malformed name names none: its 404), and who the caller
    /// is to it (one strongly consistent GetItem of the membership).
    async fn standing(
        &self,
        req: &Request,
        _orgs: &impl OrgStore,
        raw: &str,
        caller: &Owner,
    ) -> Result<(OrgName, Standing), ApiError> {
        let org = OrgName::parse(raw).map_err(|_| OrgError::NotFound(echo(raw)))?;
        let role = self.store.role(&org, caller).await?;
        let standing = Standing {
            operator: self.is_operator(req),
            role,
        };
        if (standing.operator || standing.role.is_some())
            && self.store.account_disabled(caller).await?
        {
            return Err(AccountError::Disabled.into());
        }
        Ok((org, standing))
    }

    /// An organisation the caller manages: its admins and the operators; a member gets 403, and
    /// anyone else the 404 of an unknown name.
    async fn managing(
        &self,
        req: &Request,
        orgs: &impl OrgStore,
        raw: &str,
        caller: &Owner,
    ) -> Result<(OrgName, Standing), ApiError> {
        let (org, standing) = self.standing(req, orgs, raw, caller).await?;
        if standing.manages() {
            if standing.operator && orgs.org(&org).await?.is_none() {
                return Err(OrgError::NotFound(echo(raw)).into());
            }
            Ok((org, standing))
        } else if standing.role.is_some() {
            Err(OrgError::NotAdmin { org }.into())
        } else {
            Err(OrgError::NotFound(echo(raw)).into())
        }
    }

    /// An account named in a path, as a member of `org` (a malformed one is no member).
    fn member_named(&self, org: &OrgName, raw: &str) -> Result<Owner, ApiError> {
        Owner::parse(raw).ok_or_else(|| {
            OrgError::NotMember {
                org: org.clone(),
                account: echo(raw),
            }
            .into()
        })
    }

    /// An organisation named in a path that exists (its 404 otherwise).
    async fn known_org(&self, orgs: &impl OrgStore, raw: &str) -> Result<OrgName, ApiError> {
        let org = OrgName::parse(raw).map_err(|_| OrgError::NotFound(echo(raw)))?;
        orgs.org(&org)
            .await?
            .ok_or_else(|| OrgError::NotFound(echo(raw)))?;
        Ok(org)
    }

    /// The open invitation of `org` made for the caller's verified email, and that address.
    async fn my_invitation(
        &self,
        req: &Request,
        orgs: &impl OrgStore,
        org: &OrgName,
        now: DateTime<Utc>,
    ) -> Result<(Invitation, String), ApiError> {
        let missing = || ApiError::from(OrgError::NoInvitation { org: org.clone() });
        let address = self.verified_email(req).await?.ok_or_else(missing)?;
        let invitation = orgs
            .invitations_for(&address)
            .await?
            .into_iter()
            .find(|i| &i.org == org && i.email == address && i.is_open_at(now))
            .ok_or_else(missing)?;
        Ok((invitation, address))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_names_its_route_and_nothing_else_parses() {
        let cases = [
            ("/api/v1/account/orgs", Some(OrgRoute::Mine)),
            ("/api/v1/account/invitations", Some(OrgRoute::MyInvitations)),
            (
                "/api/v1/account/invitations/acme",
                Some(OrgRoute::MyInvitation("acme".into())),
            ),
            ("/api/v1/orgs", Some(OrgRoute::All)),
            ("/api/v1/orgs/acme", Some(OrgRoute::One("acme".into()))),
            (
                "/api/v1/orgs/acme/members/abc",
                Some(OrgRoute::Member("acme".into(), "abc".into())),
            ),
            (
                "/api/v1/orgs/acme/invitations",
                Some(OrgRoute::Invite("acme".into())),
            ),
            (
                "/api/v1/orgs/acme/invitations/0f",
                Some(OrgRoute::Invited("acme".into(), "0f".into())),
            ),
            ("/api/v1/orgs/", None),
            ("/api/v1/orgs/acme/members", None),
            ("/api/v1/orgs/acme/other", None),
            ("/api/v1/account/keys", None),
            ("/api/v1/orgs//members/x", None),
        ];
        for (path, expected) in cases {
            assert_eq!(OrgRoute::parse(path), expected, "{path}");
        }
    }
}
