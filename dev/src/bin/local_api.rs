//! Serves the API at http://127.0.0.1:3000/api/v1 (LOCAL_API_ADDR overrides the address) with
//! API Gateway's three routes, calling the same handler code as the Lambda functions. Configured
//! like the data function (DATASETS_TABLE, KEYS_TABLE, DATA_BUCKET, URL_TTL_SECONDS,
//! S3_FORCE_PATH_STYLE and the SDK's own variables). Also serves the OpenAPI document at
//! /api/v1/openapi.json.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use catalog::aws::DataClients;
use catalog::config::DataConfig;
use catalog::dynamo::DynamoCatalog;
use catalog::s3::S3Signer;
use catalog_dev::DevError;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use lambda_http::aws_lambda_events::apigw::ApiGatewayV2httpRequestContext;
use lambda_http::aws_lambda_events::query_map::QueryMap;
use lambda_http::request::RequestContext;
use lambda_http::RequestExt;
use tokio::net::TcpListener;

struct App {
    catalog: DynamoCatalog,
    signer: S3Signer,
    /// The API's OpenAPI document (openapi.yaml), served as JSON at /api/v1/openapi.json.
    openapi: Bytes,
}

const OPENAPI_PATH: &str = "/api/v1/openapi.json";

fn openapi_json() -> Result<Bytes, DevError> {
    let doc: serde_json::Value = serde_norway::from_str(include_str!("../../../openapi.yaml"))
        .map_err(|e| format!("openapi.yaml: {e}"))?;
    Ok(Bytes::from(doc.to_string()))
}

async fn serve(
    app: Arc<App>,
    req: hyper::Request<Incoming>,
) -> Result<hyper::Response<Full<Bytes>>, Infallible> {
    if req.uri().path() == OPENAPI_PATH && req.method() == hyper::Method::GET {
        let mut resp = hyper::Response::new(Full::new(app.openapi.clone()));
        resp.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("application/json"),
        );
        return Ok(resp);
    }
    let (parts, body) = req.into_parts();
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
    let response = catalog::api::dispatch(&req, &app.catalog, &app.signer, now).await;
    let (parts, body) = response.into_parts();
    let bytes = Bytes::copy_from_slice(body.as_ref());
    Ok(hyper::Response::from_parts(parts, Full::new(bytes)))
}

#[tokio::main]
async fn main() -> Result<(), DevError> {
    lambda_http::tracing::init_default_subscriber();
    let addr: SocketAddr = std::env::var("LOCAL_API_ADDR")
        .unwrap_or_else(|_| "127.0.0.1:3000".to_owned())
        .parse()?;
    let config = DataConfig::from_env()?;
    let sdk = catalog::aws::load_sdk_config().await;
    let DataClients { catalog, signer } = DataClients::from_config(&sdk, &config).await?;
    let app = Arc::new(App {
        openapi: openapi_json()?,
        signer,
        catalog,
    });
    let listener = TcpListener::bind(addr).await?;
    tracing::info!(%addr, "serving the catalog API at http://{addr}/api/v1");
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
