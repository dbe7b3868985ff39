//! Requests as the API receives them: API Gateway events built for the handlers, the production
//! router, plain HTTP on loopback (the emulators, the local API, presigned URLs), the local API
//! started against a [`Stack`], and what comes back (a JSON body, a Parquet file).

use std::process::Command;

use bytes::Bytes;
use catalog_aws::s3::S3Signer;
use catalog_http::testing::V2Event;
use catalog_search::listing::IndexedCatalog;
use chrono::Utc;

use crate::process::{built_binary, log_files, start_on_free_port, Guard};
use crate::stack::Stack;

/// Answers a request with the handler the deployed API routes it to (the production router,
/// as the local API uses it): list for `/datasets` and every unmatched route (the list
/// function's `$default` route), metadata, data or rows.
pub async fn answer(
    req: &lambda_http::Request,
    catalog: &IndexedCatalog,
    signer: &S3Signer,
    rows: &impl catalog::rows::RowsReader,
) -> lambda_http::Response<lambda_http::Body> {
    catalog_http::api::dispatch(req, catalog, signer, rows, Utc::now()).await
}

/// The client of the requests below: HTTP/1.1 on loopback, no proxy, and no redirect
/// followed (a test sees a 302 and its `Location` as a client gets them). reqwest sends
/// `Accept: */*` when a request names no `Accept`; the API reads that as no preference, as it
/// reads a missing header (`catalog_http::api::dcat::Format::negotiate`).
fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("an HTTP client")
}

/// A plain HTTP GET (the emulators speak HTTP on loopback): status and body.
pub async fn http_get(url: &str) -> (u16, Bytes) {
    let resp = client().get(url).send().await.expect("GET");
    let status = resp.status().as_u16();
    let body = resp.bytes().await.expect("body");
    (status, body)
}

/// Any HTTP request on loopback: status, headers and body.
pub async fn http_request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
) -> (u16, hyper::HeaderMap, Bytes) {
    http_send(method, url, headers, b"").await
}

/// Any HTTP request with a body, on loopback: status, headers and body.
pub async fn http_send(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> (u16, hyper::HeaderMap, Bytes) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("a valid method");
    let mut req = client().request(method, url);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let resp = req.body(body.to_vec()).send().await.expect("request");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let body = resp.bytes().await.expect("body");
    (status, headers, body)
}

/// Starts the local API (the functions' handlers behind one HTTP server, as `dev/run` does)
/// on a free port; returns its base URL (`.../api/v1`) and the process guard.
pub fn start_local_api(stack: &Stack) -> (String, Guard) {
    start_local_api_with(stack, None)
}

/// The local API with the account routes, behind the JWT authorizer of `pool`.
pub fn start_local_api_with(
    stack: &Stack,
    pool: Option<&catalog_dev::cognito::UserPool>,
) -> (String, Guard) {
    let accounts: Vec<(&str, String)> = pool
        .map(|pool| {
            vec![
                ("USER_POOL_ID", pool.pool_id.clone()),
                ("USER_POOL_CLIENT_ID", pool.client_id.clone()),
                (
                    "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
                    stack.dynamo_url.clone(),
                ),
            ]
        })
        .unwrap_or_default();
    let (child, port) = start_on_free_port("catalog-local-api", |port| {
        let (stdout, stderr) = log_files("catalog-local-api");
        let mut cmd = Command::new(built_binary("catalog-local-api"));
        cmd.envs(stack.function_env())
            .envs(accounts.clone())
            .env("LOCAL_API_ADDR", format!("127.0.0.1:{port}"))
            .stdout(stdout)
            .stderr(stderr);
        cmd
    });
    let api = Guard(child);
    (format!("http://127.0.0.1:{port}/api/v1"), api)
}

/// Row count, column names and the rows actually read from a Parquet file's bytes.
pub fn read_parquet(bytes: Bytes) -> (u64, Vec<String>, u64) {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(bytes).expect("a valid Parquet file");
    let meta = reader.metadata().file_metadata();
    let rows = meta.num_rows() as u64;
    let columns = meta
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_owned())
        .collect();
    let read = reader.get_row_iter(None).expect("row iterator").count() as u64;
    (rows, columns, read)
}

/// An API Gateway HTTP API (v2) event as Lambda delivers it.
pub fn v2_event(path_and_query: &str, headers: &[(&str, &str)]) -> serde_json::Value {
    V2Event::get(path_and_query)
        .headers(headers.iter().copied())
        .request_id("it")
        .json()
}

/// The same event, parsed as `lambda_http` parses it for a handler.
pub fn v2_request(path_and_query: &str, headers: &[(&str, &str)]) -> lambda_http::Request {
    lambda_http::request::from_str(&v2_event(path_and_query, headers).to_string())
        .expect("valid v2 event")
}

/// The JSON body of a handler's answer.
pub fn json_body(resp: &lambda_http::Response<lambda_http::Body>) -> serde_json::Value {
    serde_json::from_slice(resp.body().as_ref()).expect("JSON body")
}
