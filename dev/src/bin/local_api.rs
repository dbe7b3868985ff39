//! Serves the API at http://127.0.0.1:3000/api/v1 (LOCAL_API_ADDR overrides the address) with
//! API Gateway's routes, calling the same handler code as the Lambda functions (the rows route
//! with the rows function's reader). Configured like
//! the data function (DATASETS_TABLE, KEYS_TABLE, DATA_BUCKET, URL_TTL_SECONDS,
//! S3_FORCE_PATH_STYLE and the SDK's own variables). Also serves the OpenAPI documents at
//! /api/v1/openapi.json and (the Delta Sharing routes) /api/v1/openapi-delta-sharing.json.
//!
//! The web site (`web/`, or SITE_DIR) is served at `/`, on the same origin, with the security
//! headers CloudFront adds when deployed ([`catalog_dev::site`]); the dataset page's policy lets
//! its SQL console read AWS_ENDPOINT_URL_S3's origin, where the presigned URLs point.
//!
//! With USER_POOL_ID and USER_POOL_CLIENT_ID (and AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER,
//! where the pool's JWKS is), the account routes are served too, behind the same checks as
//! API Gateway's JWT authorizer ([`catalog_dev::authorizer`]): the keys, access requests and,
//! for members of OPERATORS_GROUP (default `operators`), operators' decisions.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use catalog_aws::aws::DataClients;
use catalog_aws::cognito::CognitoDirectory;
use catalog_aws::config::DataConfig;
use catalog_aws::dynamo::access::DynamoAccess;
use catalog_aws::dynamo::accounts::DynamoAccounts;
use catalog_aws::s3::S3Signer;
use catalog_dev::authorizer::{Denied, JwtAuthorizer};
use catalog_dev::site::Site;
use catalog_dev::DevError;
use catalog_http::api::access::AccessService;
use catalog_http::api::account::account_routes;
use catalog_http::api::uploads::{is_upload_route, upload_routes, Uploads};
use catalog_http::routes::is_signed_in;
use catalog_preview::{ParquetRows, S3Source};
use catalog_search::listing::{indexed, IndexedCatalog};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use lambda_http::aws_lambda_events::apigw::{
    ApiGatewayRequestAuthorizer, ApiGatewayRequestAuthorizerJwtDescription,
    ApiGatewayV2httpRequestContext,
};
use lambda_http::aws_lambda_events::query_map::QueryMap;
use lambda_http::request::RequestContext;
use lambda_http::RequestExt;
use tokio::net::TcpListener;

/// The routes behind the JWT authorizer, as the accounts function serves them.
struct Accounts {
    authorizer: JwtAuthorizer,
    keys: DynamoAccounts,
    access: DynamoAccess,
    directory: CognitoDirectory,
    operators: Option<String>,
    /// Uploads from the site: their records and the bucket's multipart uploads (the keys
    /// function's, as deployed).
    uploads: catalog_aws::dynamo::uploads::DynamoUploads,
    bucket: catalog_aws::uploads::S3Uploads,
    /// With `LOCAL_PUBLISH_UPLOADS=1` (dev/run sets it): a completed upload is published here,
    /// in the background, as the publishing function publishes it on S3's event in the stack.
    publisher: Option<std::sync::Arc<catalog_publish_core::publish::Publisher>>,
    /// The editor function's writer (an organisation's datasets for its editors).
    writer: catalog_writer::DynamoWriter,
}

struct App {
    catalog: IndexedCatalog,
    signer: S3Signer,
    /// The rows function's reader, on the same bucket.
    rows: ParquetRows<S3Source>,
    /// The API's OpenAPI document (openapi.yaml), served as JSON at /api/v1/openapi.json.
    openapi: Bytes,
    /// openapi-delta-sharing.yaml, at /api/v1/openapi-delta-sharing.json.
    sharing_openapi: Bytes,
    /// The account routes, when a user pool is configured.
    accounts: Option<Accounts>,
    /// The web site, at `/`.
    site: Site,
}

const OPENAPI_PATH: &str = "/api/v1/openapi.json";
/// The Delta Sharing routes' own document (openapi-delta-sharing.yaml).
const SHARING_OPENAPI_PATH: &str = "/api/v1/openapi-delta-sharing.json";

fn openapi_json(yaml: &str, name: &str) -> Result<Bytes, DevError> {
    let doc: serde_json::Value =
        serde_norway::from_str(yaml).map_err(|e| format!("{name}: {e}"))?;
    Ok(Bytes::from(doc.to_string()))
}

async fn serve(
    app: Arc<App>,
    req: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    let document = match req.uri().path() {
        OPENAPI_PATH => Some(&app.openapi),
        SHARING_OPENAPI_PATH => Some(&app.sharing_openapi),
        _ => None,
    };
    if let (Some(document), &hyper::Method::GET) = (document, req.method()) {
        let mut resp = hyper::Response::new(Full::new(document.clone()));
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        return Ok(resp);
    }
    let gzip = req
        .headers()
        .get(hyper::header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("gzip"));
    if matches!(*req.method(), hyper::Method::GET | hyper::Method::HEAD) {
        if let Some(page) = app.site.answer(req.uri().path(), gzip) {
            let (parts, body) = page.into_parts();
            return Ok(hyper::Response::from_parts(parts, Full::new(body)));
        }
    }
    let (mut parts, body) = req.into_parts();
    // As the site's CloudFront distribution does: the API learns the origin the site and the
    // API share, for the links in its linked-data documents.
    if let Some(host) = parts.headers.get(hyper::header::HOST).cloned() {
        parts.headers.insert("x-forwarded-host", host);
    }
    parts.headers.insert(
        "x-forwarded-proto",
        hyper::header::HeaderValue::from_static("http"),
    );
    let bytes = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let query: QueryMap = parts
        .uri
        .query()
        .and_then(|q| q.parse().ok())
        .unwrap_or_default();
    // Every request gets its own id, as API Gateway gives one, so that logs can be followed.
    let mut context = ApiGatewayV2httpRequestContext::default();
    context.request_id = Some(uuid::Uuid::new_v4().to_string());
    let req = lambda_http::Request::from_parts(parts, lambda_http::Body::from(bytes.to_vec()))
        .with_query_string_parameters(query)
        .with_request_context(RequestContext::ApiGatewayV2(context));
    let now = chrono::Utc::now();
    // Routed as the deployed API routes it (each function's route, the list function for the
    // rest, like the `$default` route in template.yaml).
    let response = match (&app.accounts, is_signed_in(req.uri().path())) {
        // API Gateway answers CORS preflights itself, before the authorizer.
        (Some(_), true) if req.method() == lambda_http::http::Method::OPTIONS => {
            catalog_http::api::preflight_answer()
        }
        (Some(accounts), true) => {
            match accounts
                .authorizer
                .authorize(req.headers(), now.timestamp())
            {
                Ok(claims) => {
                    let req = with_claims(req, claims);
                    let editor = catalog_http::routes::find(req.uri().path()).is_some_and(|m| {
                        m.route.endpoint == catalog_http::routes::Endpoint::Editor
                    });
                    if editor {
                        let service = catalog_http::api::editor::EditorService {
                            editor: &accounts.writer,
                            access: &accounts.access,
                            operators: accounts.operators.as_deref(),
                        };
                        let response = service.answer(&req, now).await;
                        let (parts, body) = response.into_parts();
                        let bytes = Bytes::copy_from_slice(body.as_ref());
                        return Ok(hyper::Response::from_parts(parts, Full::new(bytes)));
                    }
                    let access = AccessService {
                        store: &accounts.access,
                        directory: &accounts.directory,
                        operators: accounts.operators.as_deref(),
                    };
                    if is_upload_route(req.uri().path()) {
                        let uploads = Uploads {
                            access: &access,
                            store: &accounts.uploads,
                            bucket: &accounts.bucket,
                        };
                        let response = upload_routes(&req, &uploads, now).await;
                        if let Some(publisher) = &accounts.publisher {
                            publish_when_completed(publisher, &accounts.uploads, &req, &response);
                        }
                        response
                    } else {
                        account_routes(&req, &accounts.keys, &access, now).await
                    }
                }
                Err(denied) => unauthorized(denied),
            }
        }
        _ => catalog_http::api::dispatch(&req, &app.catalog, &app.signer, &app.rows, now).await,
    };
    let (parts, body) = response.into_parts();
    let bytes = Bytes::copy_from_slice(body.as_ref());
    Ok(hyper::Response::from_parts(parts, Full::new(bytes)))
}

/// The request as API Gateway passes it on once its authorizer accepted the token.
fn with_claims(
    req: lambda_http::Request,
    claims: std::collections::HashMap<String, String>,
) -> lambda_http::Request {
    let mut context = match req.request_context_ref() {
        Some(RequestContext::ApiGatewayV2(context)) => context.clone(),
        _ => ApiGatewayV2httpRequestContext::default(),
    };
    let mut jwt = ApiGatewayRequestAuthorizerJwtDescription::default();
    jwt.claims = claims;
    let mut authorizer = ApiGatewayRequestAuthorizer::default();
    authorizer.jwt = Some(jwt);
    context.authorizer = Some(authorizer);
    req.with_request_context(RequestContext::ApiGatewayV2(context))
}

/// After a completion answered 202, publishes the upload in the background, as S3's event
/// starts the publishing function in the stack (`catalog_publish_core::site::publish_upload`).
fn publish_when_completed(
    publisher: &std::sync::Arc<catalog_publish_core::publish::Publisher>,
    uploads: &catalog_aws::dynamo::uploads::DynamoUploads,
    req: &lambda_http::Request,
    response: &lambda_http::Response<lambda_http::Body>,
) {
    if req.method() != lambda_http::http::Method::POST
        || !req.uri().path().ends_with("/complete")
        || response.status() != lambda_http::http::StatusCode::ACCEPTED
    {
        return;
    }
    let Ok(body) = serde_json::from_slice::<serde_json::Value>(response.body().as_ref()) else {
        return;
    };
    let upload = &body["upload"];
    let (Some(org), Some(id), Some(filename)) = (
        upload["org"].as_str(),
        upload["id"].as_str(),
        upload["filename"].as_str(),
    ) else {
        return;
    };
    let key = format!("{}{org}/{id}/{filename}", catalog::uploads::PREFIX);
    let (publisher, uploads) = (publisher.clone(), uploads.clone());
    tokio::spawn(async move {
        match catalog_publish_core::site::publish_upload(
            &publisher,
            &uploads,
            &key,
            None,
            chrono::Utc::now(),
        )
        .await
        {
            Ok(outcome) => eprintln!("published from the site: {key}: {outcome:?}"),
            Err(e) => eprintln!("publishing {key} failed: {e}"),
        }
    });
}

/// API Gateway's answer when its JWT authorizer refuses a request.
fn unauthorized(denied: Denied) -> lambda_http::Response<lambda_http::Body> {
    let mut response = lambda_http::Response::new(lambda_http::Body::from(Denied::BODY));
    *response.status_mut() = lambda_http::http::StatusCode::UNAUTHORIZED;
    let headers = response.headers_mut();
    headers.insert(
        lambda_http::http::header::CONTENT_TYPE,
        lambda_http::http::HeaderValue::from_static("application/json"),
    );
    if let Ok(challenge) = lambda_http::http::HeaderValue::try_from(denied.challenge()) {
        headers.insert(lambda_http::http::header::WWW_AUTHENTICATE, challenge);
    }
    response
}

/// The authorizer and the accounts' stores, when USER_POOL_ID and USER_POOL_CLIENT_ID are set
/// (OPERATORS_GROUP names the operators' group, as in the template).
async fn accounts(
    sdk: &aws_config::SdkConfig,
    config: &DataConfig,
) -> Result<Option<Accounts>, DevError> {
    let (Ok(pool), Ok(client)) = (
        std::env::var("USER_POOL_ID"),
        std::env::var("USER_POOL_CLIENT_ID"),
    ) else {
        return Ok(None);
    };
    let endpoint = std::env::var("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER")
        .map_err(|_| "USER_POOL_ID is set: AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER must name the local Cognito")?;
    let region = sdk
        .region()
        .map_or("us-east-1".to_owned(), |r| r.to_string());
    let authorizer = JwtAuthorizer::for_user_pool(&endpoint, &region, &pool, &client).await?;
    let dynamodb = aws_sdk_dynamodb::Client::new(sdk);
    Ok(Some(Accounts {
        authorizer,
        uploads: catalog_aws::dynamo::uploads::DynamoUploads::new(
            dynamodb.clone(),
            &config.keys_table,
        ),
        bucket: catalog_aws::uploads::S3Uploads::new(
            aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
                sdk,
                config.s3_force_path_style,
            )),
            &config.bucket,
        ),
        publisher: (std::env::var("LOCAL_PUBLISH_UPLOADS").as_deref() == Ok("1")).then(|| {
            std::sync::Arc::new(catalog_publish_core::publish::Publisher {
                writer: catalog_writer::DynamoWriter::new(
                    dynamodb.clone(),
                    &config.datasets_table,
                    &config.keys_table,
                ),
                s3: aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
                    sdk,
                    config.s3_force_path_style,
                )),
                bucket: config.bucket.clone(),
            })
        }),
        keys: DynamoAccounts::new(dynamodb.clone(), &config.keys_table),
        writer: catalog_writer::DynamoWriter::new(
            dynamodb.clone(),
            &config.datasets_table,
            &config.keys_table,
        ),
        access: DynamoAccess::new(dynamodb, &config.keys_table, &config.datasets_table),
        directory: CognitoDirectory::new(sdk),
        // As the template's default when unset.
        operators: Some(
            std::env::var("OPERATORS_GROUP")
                .ok()
                .filter(|g| !g.trim().is_empty())
                .unwrap_or_else(|| catalog_dev::cognito::OPERATORS_GROUP.to_owned()),
        ),
    }))
}

#[tokio::main]
async fn main() -> Result<(), DevError> {
    // With DOWNLOADS_TABLE, downloads are recorded as the stack's pipeline records them.
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let download_log = std::env::var("DOWNLOADS_TABLE")
        .ok()
        .filter(|t| !t.trim().is_empty())
        .map(|table| {
            catalog_writer::downloads::DownloadLog::new(aws_sdk_dynamodb::Client::new(&sdk), table)
        });
    catalog_dev::download_log::init(download_log, 90);
    let addr: SocketAddr = std::env::var("LOCAL_API_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3000".to_owned())
        .parse()?;
    let config = DataConfig::from_env()?;
    let DataClients { catalog, signer } = DataClients::from_config(&sdk, &config).await?;
    let site_dir = std::env::var_os("SITE_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../web"));
    let cognito_endpoint = std::env::var("AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER")
        .unwrap_or_else(|_| "https://cognito-idp.us-east-1.amazonaws.com/".to_owned());
    let client_id = std::env::var("USER_POOL_CLIENT_ID").unwrap_or_default();
    let mut site = Site::new(
        &site_dir,
        &format!("{}/", cognito_endpoint.trim_end_matches('/')),
        &client_id,
        &catalog_dev::site::SiteAccounts::from_env(),
    );
    // Where presigned URLs point (path-style, on the local S3 endpoint): the SQL console reads
    // them, so the dataset page's policy names that origin.
    if let Some(origin) = std::env::var("AWS_ENDPOINT_URL_S3")
        .ok()
        .and_then(|url| catalog_dev::s3_cors::origin_of(&url))
    {
        site = site.with_data_origin(&origin);
    }
    let app = Arc::new(App {
        site,
        accounts: accounts(&sdk, &config).await?,
        openapi: openapi_json(include_str!("../../../openapi.yaml"), "openapi.yaml")?,
        sharing_openapi: openapi_json(
            include_str!("../../../openapi-delta-sharing.yaml"),
            "openapi-delta-sharing.yaml",
        )?,
        rows: ParquetRows::new(S3Source::from_sdk(
            &sdk,
            &config.bucket,
            config.s3_force_path_style,
        )),
        signer,
        catalog: indexed(catalog),
    });
    let listener = TcpListener::bind(addr).await?;
    tracing::info!(%addr, "serving the catalog at http://{addr}/ and its API at http://{addr}/api/v1");
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| serve(app.clone(), req));
            if let Err(e) = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await
            {
                tracing::debug!(error = %e, "connection closed with an error");
            }
        });
    }
}
