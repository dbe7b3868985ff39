//! The routes behind the JWT authorizer: `/api/v1/account/keys[/{id}]` (an account's own read
//! keys), `/api/v1/account/access[/{slug}]` (its access requests) and
//! `/api/v1/operator/access[/{slug}/{account}]` (operators' decisions). Composition root only:
//! the logic is in `catalog_http::api::account` and `catalog_http::api::access`. API Gateway's JWT
//! authorizer verifies the caller's token before this function runs.

use std::convert::Infallible;

use catalog_aws::cognito::CognitoDirectory;
use catalog_aws::config::KeysConfig;
use catalog_aws::dynamo::access::DynamoAccess;
use catalog_aws::dynamo::accounts::DynamoAccounts;
use catalog_aws::dynamo::uploads::DynamoUploads;
use catalog_aws::uploads::S3Uploads;
use catalog_http::api::access::AccessService;
use catalog_http::api::uploads::{is_upload_route, upload_routes, Uploads};
use lambda_http::{service_fn, Body, Error, Request, Response};

struct App {
    keys: DynamoAccounts,
    access: DynamoAccess,
    directory: CognitoDirectory,
    operators: Option<String>,
    /// Uploads from the site: their records (the keys table) and the data bucket's side.
    uploads: DynamoUploads,
    bucket: S3Uploads,
}

async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    let access = AccessService {
        store: &app.access,
        directory: &app.directory,
        operators: app.operators.as_deref(),
    };
    let now = chrono::Utc::now();
    if is_upload_route(catalog_http::api::request::request_path(&req)) {
        let uploads = Uploads {
            access: &access,
            store: &app.uploads,
            bucket: &app.bucket,
        };
        return Ok(upload_routes(&req, &uploads, now).await);
    }
    Ok(catalog_http::api::account::account_routes(&req, &app.keys, &access, now).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = KeysConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let dynamodb = aws_sdk_dynamodb::Client::new(&sdk);
    // The data bucket, for uploads from the site (its multipart uploads under uploads/).
    let bucket = std::env::var("DATA_BUCKET").map_err(|_| "DATA_BUCKET is not set")?;
    let app = App {
        uploads: DynamoUploads::new(dynamodb.clone(), &config.keys_table),
        bucket: S3Uploads::new(aws_sdk_s3::Client::new(&sdk), bucket),
        keys: DynamoAccounts::new(dynamodb.clone(), &config.keys_table),
        access: DynamoAccess::new(dynamodb, config.keys_table, config.datasets_table),
        directory: CognitoDirectory::new(&sdk),
        operators: config.operators_group,
    };
    catalog_http::lambda::run(service_fn(|req| handle(&app, req))).await
}
