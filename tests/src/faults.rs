//! A fault-injecting proxy in front of the DynamoDB emulator: it forwards requests while
//! healthy, and otherwise answers DynamoDB's 500, throttles, hangs or drops the connection,
//! for every operation or only for one (matched on `X-Amz-Target`, and optionally on text in
//! the request body).
//!
//! It can also forward one request at a time ([`Proxy::serialize`]): DynamoDB applies each
//! request atomically and in isolation, but moto does not when requests arrive at once (a
//! failed TransactWriteItems restores a copy of the whole table taken when it started, undoing
//! whatever another request wrote meanwhile), so tests of concurrent writers go through it.
//!
//! The proxy's side that faces the SDK is hyper's server, kept hand-rolled: the faults are
//! answers a client library cannot make (an error page, a hang, a connection closed without an
//! answer). What it forwards goes through reqwest, as received (method, path, every header with
//! `Host` and `Content-Length`, the body); the answer comes back with its status and headers.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Healthy,
    InternalServerError,
    Throttling,
    Hang,
    DropConnection,
    /// A 502 whose body is an HTML error page, as a proxy or load balancer in the way sends.
    ErrorPage,
    /// The request reaches DynamoDB and is applied, but its answer is lost: the client gets a
    /// 500 (which the SDK retries) instead. Once: the proxy is healthy again afterwards, so
    /// the retry reaches DynamoDB and meets the write it already made.
    LoseResponseOnce,
}

pub struct Proxy {
    pub url: String,
    fault: Arc<Mutex<Fault>>,
    only: Arc<Mutex<Option<String>>>,
    body_contains: Arc<Mutex<Vec<String>>>,
    requests: Arc<AtomicUsize>,
    serialize: Arc<AtomicBool>,
}

impl Proxy {
    /// Injects `fault` into every operation.
    pub fn set(&self, fault: Fault) {
        *self.only.lock().unwrap() = None;
        self.body_contains.lock().unwrap().clear();
        *self.fault.lock().unwrap() = fault;
    }

    /// Injects `fault` into one operation (e.g. `TransactWriteItems`); the others pass.
    pub fn set_for(&self, operation: &str, fault: Fault) {
        self.set_for_requests(operation, &[], fault);
    }

    /// Injects `fault` into the requests of one operation whose body contains every one of
    /// `texts` (e.g. one UpdateItem on one item); the others pass.
    pub fn set_for_requests(&self, operation: &str, texts: &[&str], fault: Fault) {
        *self.only.lock().unwrap() = Some(operation.to_owned());
        *self.body_contains.lock().unwrap() = texts.iter().map(|t| (*t).to_owned()).collect();
        *self.fault.lock().unwrap() = fault;
    }

    /// Forwards one request at a time (each one atomic, as DynamoDB applies them), or as they
    /// come.
    pub fn serialize(&self, one_at_a_time: bool) {
        self.serialize.store(one_at_a_time, Ordering::SeqCst);
    }

    /// Requests received since the last call.
    pub fn take_requests(&self) -> usize {
        self.requests.swap(0, Ordering::SeqCst)
    }
}

fn dynamo_error(status: u16, kind: &str) -> hyper::Response<Full<Bytes>> {
    let body = format!(
        r#"{{"__type":"com.amazonaws.dynamodb.v20120810#{kind}","message":"injected fault"}}"#
    );
    hyper::Response::builder()
        .status(status)
        .header("content-type", "application/x-amz-json-1.0")
        .header("x-amzn-requestid", "fault")
        .body(Full::new(Bytes::from(body)))
        .unwrap()
}

/// Starts the proxy on a free loopback port, healthy, forwarding to `upstream`.
pub async fn start_proxy(upstream: String) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let fault = Arc::new(Mutex::new(Fault::Healthy));
    let only: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let body_contains: Arc<Mutex<Vec<String>>> = Arc::default();
    let requests = Arc::new(AtomicUsize::new(0));
    let serialize = Arc::new(AtomicBool::new(false));
    let one_at_a_time = Arc::new(tokio::sync::Mutex::new(()));
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .expect("an HTTP client");
    let shared = (
        fault.clone(),
        only.clone(),
        body_contains.clone(),
        requests.clone(),
        serialize.clone(),
        one_at_a_time,
    );
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (shared, client, upstream) = (shared.clone(), client.clone(), upstream.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let (fault, only, body_contains, requests, serialize, one_at_a_time) =
                        shared.clone();
                    let (client, upstream) = (client.clone(), upstream.clone());
                    async move {
                        let _turn = if serialize.load(Ordering::SeqCst) {
                            Some(one_at_a_time.lock_owned().await)
                        } else {
                            None
                        };
                        requests.fetch_add(1, Ordering::SeqCst);
                        let (parts, body) = req.into_parts();
                        let body = body
                            .collect()
                            .await
                            .map(|b| b.to_bytes())
                            .unwrap_or_default();
                        let target = parts
                            .headers
                            .get("x-amz-target")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_owned();
                        let applies = only
                            .lock()
                            .unwrap()
                            .as_deref()
                            .is_none_or(|op| target.ends_with(&format!(".{op}")))
                            && body_contains.lock().unwrap().iter().all(|t| {
                                t.is_empty() || body.windows(t.len()).any(|w| w == t.as_bytes())
                            });
                        let current = if applies {
                            *fault.lock().unwrap()
                        } else {
                            Fault::Healthy
                        };
                        match current {
                            Fault::InternalServerError => {
                                Ok(dynamo_error(500, "InternalServerError"))
                            }
                            Fault::Throttling => Ok(dynamo_error(400, "ThrottlingException")),
                            Fault::ErrorPage => Ok(hyper::Response::builder()
                                .status(502)
                                .header("content-type", "text/html")
                                .body(Full::new(Bytes::from_static(
                                    b"<html><body><h1>502 Bad Gateway</h1></body></html>",
                                )))
                                .unwrap()),
                            Fault::Hang => {
                                tokio::time::sleep(Duration::from_secs(30)).await;
                                Ok(dynamo_error(500, "InternalServerError"))
                            }
                            // An error from the service makes hyper close the connection
                            // without an answer.
                            Fault::DropConnection => Err("dropped".to_string()),
                            Fault::Healthy | Fault::LoseResponseOnce => {
                                let forward = client
                                    .request(
                                        parts.method.clone(),
                                        format!("{upstream}{}", parts.uri),
                                    )
                                    .headers(parts.headers.clone())
                                    .body(body);
                                match forward.send().await {
                                    Ok(resp) => {
                                        let status = resp.status();
                                        let headers = resp.headers().clone();
                                        let body = resp.bytes().await.unwrap_or_default();
                                        if current == Fault::LoseResponseOnce {
                                            *fault.lock().unwrap() = Fault::Healthy;
                                            return Ok(dynamo_error(500, "InternalServerError"));
                                        }
                                        let mut answer = hyper::Response::new(Full::new(body));
                                        *answer.status_mut() = status;
                                        *answer.headers_mut() = headers;
                                        Ok(answer)
                                    }
                                    Err(e) => Err(e.to_string()),
                                }
                            }
                        }
                    }
                });
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Proxy {
        url: format!("http://{addr}"),
        fault,
        only,
        body_contains,
        requests,
        serialize,
    }
}
