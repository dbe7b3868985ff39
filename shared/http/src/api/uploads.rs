//! Publishing from the site: the upload routes (docs/api.md, "Uploads"), behind the JWT
//! authorizer, for an organisation's editors and admins and the catalog's operators.
//!
//! - `POST /api/v1/orgs/{org}/uploads` `{"dataset", "filename", "size", "sha256"}`: begins a
//!   multipart upload of `uploads/{org}/{id}/{filename}` (201: the upload, its part size and
//!   the first parts' presigned UploadPart URLs);
//! - `GET /api/v1/orgs/{org}/uploads/{id}`: where it stands; while `uploading`, the parts S3
//!   holds (ListParts) and URLs for the next parts it lacks (to resume);
//! - `POST /api/v1/orgs/{org}/uploads/{id}/complete` `{"parts": [{"number", "etag"}]}`:
//!   `publishing` first, then CompleteMultipartUpload (202); the object's creation starts the
//!   publishing function (EventBridge);
//! - `DELETE /api/v1/orgs/{org}/uploads/{id}`: aborts it while uploading (204; the parts and
//!   the record gone).
//!
//! Who: the organisation's editors and admins (one strongly consistent read of the caller's
//! membership) and operators; a member gets 403 `not_an_editor`, anyone else the 404 of an
//! unknown organisation.

use chrono::{DateTime, Utc};
use lambda_http::http::{Method, StatusCode};
use lambda_http::{Body, Request, Response};
use serde::{Deserialize, Serialize};

use super::access::AccessService;
use super::http::{json_response, shell, Audience};
use super::request::request_path;
use super::request::verified_claims;
use crate::error::{AccountError, Allowed, ApiError};
use catalog::accounts::caller;
use catalog::grants::in_group;
use catalog::input::echo;
use catalog::keys::Owner;
use catalog::orgs::{OrgError, OrgName};
use catalog::ports::{AccessStore, Directory, OrgStore};
use catalog::uploads::{
    is_upload_id, part_size_for, Limits, NewUpload, Part, Upload, UploadBucket, UploadError,
    UploadState, UploadStore,
};

/// How many part URLs one answer carries (the browser asks again for more).
pub const URLS_PER_ANSWER: u64 = 100;

/// The upload routes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadRoute {
    /// `/api/v1/orgs/{org}/uploads`
    New(String),
    /// `/api/v1/orgs/{org}/uploads/{id}`
    One(String, String),
    /// `/api/v1/orgs/{org}/uploads/{id}/complete`
    Complete(String, String),
}

impl UploadRoute {
    pub fn parse(path: &str) -> Option<Self> {
        let parts: Vec<&str> = path.strip_prefix("/api/v1/orgs/")?.split('/').collect();
        if parts.iter().any(|p| p.is_empty()) {
            return None;
        }
        let own = |s: &&str| (*s).to_owned();
        Some(match parts.as_slice() {
            [org, "uploads"] => Self::New(own(org)),
            [org, "uploads", id] => Self::One(own(org), own(id)),
            [org, "uploads", id, "complete"] => Self::Complete(own(org), own(id)),
            _ => return None,
        })
    }

    fn org(&self) -> &str {
        match self {
            Self::New(org) | Self::One(org, _) | Self::Complete(org, _) => org,
        }
    }

    fn allowed(&self) -> Allowed {
        match self {
            Self::New(_) | Self::Complete(..) => Allowed::Uploads,
            Self::One(..) => Allowed::Upload,
        }
    }
}

/// Whether `path` is one of the upload routes (the keys function answers them with
/// [`upload_routes`], the other signed-in routes with `account::account_routes`).
pub fn is_upload_route(path: &str) -> bool {
    UploadRoute::parse(path).is_some()
}

/// Answers an upload route, in the signed-in routes' shell.
pub async fn upload_routes<S, D, U, B>(
    req: &Request,
    uploads: &Uploads<'_, S, D, U, B>,
    now: DateTime<Utc>,
) -> Response<Body>
where
    S: AccessStore + OrgStore,
    D: Directory,
    U: UploadStore,
    B: UploadBucket,
{
    let path = request_path(req);
    shell(req, Audience::Account, async {
        let route = UploadRoute::parse(path).ok_or_else(|| ApiError::RouteNotFound(echo(path)))?;
        let owner = caller(verified_claims(req)).map_err(AccountError::Unauthenticated)?;
        uploads.answer(req, route, owner, now).await
    })
    .await
}

/// A part's presigned URL.
#[derive(Debug, Serialize)]
pub struct PartUrl {
    pub number: u64,
    pub url: String,
}

/// What the routes answer about an upload.
#[derive(Debug, Serialize)]
struct Answer {
    upload: Upload,
    parts: u64,
    max_size: u64,
    /// The parts S3 holds (while uploading).
    #[serde(skip_serializing_if = "Option::is_none")]
    held: Option<Vec<Part>>,
    /// URLs for the next parts not held (while uploading), valid `url_seconds`.
    #[serde(skip_serializing_if = "Option::is_none")]
    urls: Option<Vec<PartUrl>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    url_seconds: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Completion {
    parts: Vec<Part>,
}

fn body<T: serde::de::DeserializeOwned>(req: &Request) -> Result<T, ApiError> {
    serde_json::from_slice(req.body().as_ref()).map_err(|e| {
        UploadError::Invalid(format!("the body is not what this route takes: {e}")).into()
    })
}

/// The upload routes' dependencies: the access service (memberships, operators), the upload
/// records and the bucket.
pub struct Uploads<'a, S, D, U, B> {
    pub access: &'a AccessService<'a, S, D>,
    pub store: &'a U,
    pub bucket: &'a B,
}

impl<S: AccessStore + OrgStore, D: Directory, U: UploadStore, B: UploadBucket>
    Uploads<'_, S, D, U, B>
{
    /// Answers an upload route for `caller`.
    pub async fn answer(
        &self,
        req: &Request,
        route: UploadRoute,
        caller: Owner,
        now: DateTime<Utc>,
    ) -> Result<Response<Body>, ApiError> {
        let org = self.editing(req, route.org(), &caller).await?;
        let method = req.method().clone();
        match (&route, &method) {
            (UploadRoute::New(_), &Method::POST) => {
                let asked: NewUpload = body(req)?;
                asked.check(&org)?;
                let mut upload = Upload {
                    id: uuid::Uuid::new_v4().simple().to_string(),
                    org: org.clone(),
                    dataset: asked.dataset,
                    filename: asked.filename,
                    size: asked.size,
                    sha256: asked.sha256,
                    by: caller.to_string(),
                    created_at: now,
                    updated_at: now,
                    state: UploadState::Uploading,
                    s3_upload_id: String::new(),
                    part_size: part_size_for(asked.size),
                    version: None,
                    reason: None,
                };
                upload.s3_upload_id = self.bucket.begin(&upload.key()).await?;
                self.store.create_upload(&upload).await?;
                tracing::info!(by = %caller, org = %org, upload = %upload.id, size = upload.size, "began an upload");
                let answer = self.answer_for(upload, Vec::new()).await?;
                Ok(json_response(StatusCode::CREATED, &answer))
            }
            (UploadRoute::One(_, id), &Method::GET) => {
                let upload = self.known(&org, id).await?;
                let held = if upload.state == UploadState::Uploading {
                    self.bucket
                        .parts(&upload.key(), &upload.s3_upload_id)
                        .await?
                } else {
                    Vec::new()
                };
                let answer = self.answer_for(upload, held).await?;
                Ok(json_response(StatusCode::OK, &answer))
            }
            (UploadRoute::Complete(_, id), &Method::POST) => {
                let mut upload = self.uploading(&org, id, now).await?;
                let Completion { parts } = body(req)?;
                let numbers: Vec<u64> = parts.iter().map(|p| p.number).collect();
                let expected: Vec<u64> = (1..=upload.parts()).collect();
                if numbers != expected {
                    return Err(UploadError::Invalid(format!(
                        "parts: every part 1 to {} once, in order, each with the ETag S3 answered",
                        upload.parts()
                    ))
                    .into());
                }
                upload.state = UploadState::Publishing;
                upload.updated_at = now;
                if !self
                    .store
                    .move_upload(&upload, UploadState::Uploading)
                    .await?
                {
                    return Err(self.not_uploading(&org, id).await);
                }
                let completed = self
                    .bucket
                    .complete(&upload.key(), &upload.s3_upload_id, &parts)
                    .await;
                let refused = match completed {
                    Ok(Ok(())) => None,
                    Ok(Err(why)) => Some(why),
                    Err(e) => Some(format!("S3 could not complete the upload: {e}")),
                };
                if let Some(why) = refused {
                    // Back to uploading: the parts are still there, the browser may send
                    // the right ones.
                    upload.state = UploadState::Uploading;
                    self.store
                        .move_upload(&upload, UploadState::Publishing)
                        .await?;
                    return Err(UploadError::Invalid(why).into());
                }
                tracing::info!(by = %caller, org = %org, upload = %upload.id, "completed an upload");
                Ok(json_response(
                    StatusCode::ACCEPTED,
                    &serde_json::json!({ "upload": upload }),
                ))
            }
            (UploadRoute::One(_, id), &Method::DELETE) => {
                let upload = self.known(&org, id).await?;
                if upload.state != UploadState::Uploading {
                    return Err(self.not_uploading(&org, id).await);
                }
                // Gone once aborted: its record too (a later GET is the 404 of an unknown id).
                if !self
                    .store
                    .delete_upload(&upload, UploadState::Uploading)
                    .await?
                {
                    return Err(self.not_uploading(&org, id).await);
                }
                tracing::info!(by = %caller, org = %org, upload = %upload.id, "aborted an upload");
                self.bucket
                    .abort(&upload.key(), &upload.s3_upload_id)
                    .await?;
                let mut response = Response::new(Body::Empty);
                *response.status_mut() = StatusCode::NO_CONTENT;
                Ok(response)
            }
            _ => Err(ApiError::MethodNotAllowed {
                method: echo(method.as_str()),
                allowed: route.allowed(),
            }),
        }
    }

    /// The answer about `upload`: while uploading, `held` and URLs for the next parts not held.
    async fn answer_for(&self, upload: Upload, held: Vec<Part>) -> Result<Answer, ApiError> {
        let parts = upload.parts();
        if upload.state != UploadState::Uploading {
            return Ok(Answer {
                upload,
                parts,
                max_size: Limits::MAX_SIZE,
                held: None,
                urls: None,
                url_seconds: None,
            });
        }
        let mut urls = Vec::new();
        for number in (1..=parts).filter(|n| !held.iter().any(|p| p.number == *n)) {
            if urls.len() as u64 == URLS_PER_ANSWER {
                break;
            }
            let url = self
                .bucket
                .part_url(
                    &upload.key(),
                    &upload.s3_upload_id,
                    number,
                    Limits::PART_URL_SECONDS,
                )
                .await?;
            urls.push(PartUrl { number, url });
        }
        Ok(Answer {
            upload,
            parts,
            max_size: Limits::MAX_SIZE,
            held: Some(held),
            urls: Some(urls),
            url_seconds: Some(Limits::PART_URL_SECONDS),
        })
    }

    async fn known(&self, org: &OrgName, id: &str) -> Result<Upload, ApiError> {
        if !is_upload_id(id) {
            return Err(UploadError::NotFound(echo(id)).into());
        }
        self.store
            .upload(org, id)
            .await?
            .ok_or_else(|| UploadError::NotFound(echo(id)).into())
    }

    async fn uploading(
        &self,
        org: &OrgName,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<Upload, ApiError> {
        let upload = self.known(org, id).await?;
        if upload.state != UploadState::Uploading {
            return Err(self.not_uploading(org, id).await);
        }
        if upload.abandoned_at(now) {
            return Err(UploadError::Abandoned.into());
        }
        Ok(upload)
    }

    async fn not_uploading(&self, org: &OrgName, id: &str) -> ApiError {
        match self.known(org, id).await {
            Ok(u) => UploadError::NotUploading {
                state: u.state.as_str(),
                what: u.reason.unwrap_or_else(|| "see its state".into()),
            }
            .into(),
            Err(e) => e,
        }
    }

    /// The organisation, if the caller may publish into it: its editors and admins and the
    /// operators; a member 403, anyone else the 404 of an unknown organisation.
    async fn editing(&self, req: &Request, raw: &str, caller: &Owner) -> Result<OrgName, ApiError> {
        let org = OrgName::parse(raw).map_err(|_| OrgError::NotFound(echo(raw)))?;
        let store = self.access.store;
        let role = store.role(&org, caller).await?;
        let operator = match (self.access.operators, verified_claims(req)) {
            (Some(group), Some(claims)) => in_group(claims, group),
            _ => false,
        };
        if !operator && role.is_none() {
            return Err(OrgError::NotFound(echo(raw)).into());
        }
        if store.account_disabled(caller).await? {
            return Err(AccountError::Disabled.into());
        }
        if operator {
            if store.org(&org).await?.is_none() {
                return Err(OrgError::NotFound(echo(raw)).into());
            }
        } else if !role.is_some_and(|r| r.may_publish()) {
            return Err(UploadError::NotEditor { org }.into());
        }
        Ok(org)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_names_its_route_and_nothing_else_parses() {
        let id = "0123456789abcdef0123456789abcdef";
        let cases = [
            (
                "/api/v1/orgs/acme/uploads".to_owned(),
                Some(UploadRoute::New("acme".into())),
            ),
            (
                format!("/api/v1/orgs/acme/uploads/{id}"),
                Some(UploadRoute::One("acme".into(), id.into())),
            ),
            (
                format!("/api/v1/orgs/acme/uploads/{id}/complete"),
                Some(UploadRoute::Complete("acme".into(), id.into())),
            ),
            ("/api/v1/orgs/acme/uploads/".to_owned(), None),
            ("/api/v1/orgs/acme".to_owned(), None),
            (format!("/api/v1/orgs/acme/uploads/{id}/other"), None),
            ("/api/v1/orgs//uploads".to_owned(), None),
        ];
        for (path, expected) in cases {
            assert_eq!(UploadRoute::parse(&path), expected, "{path}");
        }
    }
}
