//! The routes of an organisation's datasets behind the JWT authorizer:
//! `/api/v1/orgs/{org}/datasets[/{name}[/versions[/{n}/activate]|/diff]]`, for its members
//! (the list, the history, a diff) and its editors (a new description, a rollback).
//! Composition root only: the logic is in `catalog_http::api::editor`, the writes in
//! `catalog_writer` (one activation each).

use std::convert::Infallible;

use catalog_aws::config::EditorConfig;
use catalog_aws::dynamo::access::DynamoAccess;
use catalog_http::api::editor::EditorService;
use catalog_writer::DynamoWriter;
use lambda_http::{service_fn, Body, Error, Request, Response};

struct App {
    writer: DynamoWriter,
    access: DynamoAccess,
    operators: Option<String>,
}

async fn handle(app: &App, req: Request) -> Result<Response<Body>, Infallible> {
    let service = EditorService {
        editor: &app.writer,
        access: &app.access,
        operators: app.operators.as_deref(),
    };
    Ok(service.answer(&req, chrono::Utc::now()).await)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let config = EditorConfig::from_env()?;
    let sdk = catalog_aws::aws::load_sdk_config().await;
    let dynamodb = aws_sdk_dynamodb::Client::new(&sdk);
    let app = App {
        writer: DynamoWriter::new(dynamodb.clone(), &config.datasets_table, &config.keys_table),
        access: DynamoAccess::new(dynamodb, &config.keys_table, &config.datasets_table),
        operators: config.operators_group,
    };
    catalog_http::lambda::run(service_fn(|req| handle(&app, req))).await
}
