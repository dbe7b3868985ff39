//! A fault-injecting proxy in front of the DynamoDB emulator: it forwards requests while
//! healthy, and otherwise answers DynamoDB's 500, throttles, hangs or drops the connection,
//! for every operation or only for one (matched on `X-Amz-Target`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::server::conn::http1;
use hyper_util::client::legacy::Client;
use hyper_util::rt::{TokioExecutor, TokioIo};

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fault {
    Healthy,
    InternalServerError,
    Throttling,
    Hang,
    DropConnection,
}

pub struct Proxy {
    pub url: String,
    fault: Arc<Mutex<Fault>>,
    only: Arc<Mutex<Option<String>>>,
    requests: Arc<AtomicUsize>,
}

impl Proxy {
    /// Injects `fault` into every operation.
    pub fn set(&self, fault: Fault) {
        *self.only.lock().unwrap() = None;
        *self.fault.lock().unwrap() = fault;
    }

    /// Injects `fault` into one operation (e.g. `TransactWriteItems`); the others pass.
    pub fn set_for(&self, operation: &str, fault: Fault) {
        *self.only.lock().unwrap() = Some(operation.to_owned());
        *self.fault.lock().unwrap() = fault;
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
    let requests = Arc::new(AtomicUsize::new(0));
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let (f, o, r) = (fault.clone(), only.clone(), requests.clone());
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let (fault, only, requests, client, upstream) = (
                f.clone(),
                o.clone(),
                r.clone(),
                client.clone(),
                upstream.clone(),
            );
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: hyper::Request<Incoming>| {
                    let (fault, only, requests, client, upstream) = (
                        fault.clone(),
                        only.clone(),
                        requests.clone(),
                        client.clone(),
                        upstream.clone(),
                    );
                    async move {
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
                            .is_none_or(|op| target.ends_with(&format!(".{op}")));
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
                            Fault::Hang => {
                                tokio::time::sleep(Duration::from_secs(30)).await;
                                Ok(dynamo_error(500, "InternalServerError"))
                            }
                            // An error from the service makes hyper close the connection
                            // without an answer.
                            Fault::DropConnection => Err("dropped".to_string()),
                            Fault::Healthy => {
                                let mut forward = hyper::Request::builder()
                                    .method(parts.method.clone())
                                    .uri(format!("{upstream}{}", parts.uri));
                                for (k, v) in &parts.headers {
                                    forward = forward.header(k, v);
                                }
                                let forward = forward.body(Full::new(body)).unwrap();
                                match client.request(forward).await {
                                    Ok(resp) => {
                                        let (parts, body) = resp.into_parts();
                                        let body = body
                                            .collect()
                                            .await
                                            .map(|b| b.to_bytes())
                                            .unwrap_or_default();
                                        Ok(hyper::Response::from_parts(parts, Full::new(body)))
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
        requests,
    }
}
