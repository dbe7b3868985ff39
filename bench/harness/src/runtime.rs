//! The Lambda Runtime API on loopback, as Lambda serves it to a custom runtime (`provided.al2023`):
//! `GET /2018-06-01/runtime/invocation/next` long-polls for the next event, and the function
//! posts its answer to `.../invocation/{id}/response` (or `/error`, or `/runtime/init/error`).
//! Every call is reported with the instant it arrived, so the driver can time init (spawn to the
//! first `next`, what Lambda reports as Init Duration) and each invocation.
//!
//! This is a server (the function is the client), so it stays on hyper's server; its tests play
//! the function with reqwest.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, Mutex};
use tokio::task::JoinHandle;

/// What the function did, and when.
#[derive(Debug)]
pub enum Note {
    /// It asked for the next event.
    Next(Instant),
    /// It answered invocation `id` with `body`.
    Response { id: String, body: Bytes },
    /// It reported an error (init or invocation).
    Error { path: String, body: Bytes },
}

struct Shared {
    events: Mutex<mpsc::UnboundedReceiver<(String, Bytes)>>,
    notes: mpsc::UnboundedSender<Note>,
}

/// One Runtime API endpoint, serving one function process.
pub struct RuntimeApi {
    pub addr: SocketAddr,
    events: mpsc::UnboundedSender<(String, Bytes)>,
    notes: mpsc::UnboundedReceiver<Note>,
    server: JoinHandle<()>,
    seq: u64,
}

impl Drop for RuntimeApi {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl RuntimeApi {
    pub async fn start() -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let (events_tx, events_rx) = mpsc::unbounded_channel();
        let (notes_tx, notes_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            events: Mutex::new(events_rx),
            notes: notes_tx,
        });
        let server = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                let shared = shared.clone();
                connections.spawn(async move {
                    let service = service_fn(move |req| serve(shared.clone(), req));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(Self {
            addr,
            events: events_tx,
            notes: notes_rx,
            server,
            seq: 0,
        })
    }

    /// Queues an event; returns its request id.
    pub fn push(&mut self, event: Bytes) -> String {
        self.seq += 1;
        let id = format!("bench-{:08}", self.seq);
        let _ = self.events.send((id.clone(), event));
        id
    }

    /// The next thing the function did (None once the server is gone).
    pub async fn note(&mut self) -> Option<Note> {
        self.notes.recv().await
    }

    /// Waits for the function to ask for an event; returns when it did.
    pub async fn next_request(&mut self) -> Result<Instant, String> {
        loop {
            match self.note().await {
                Some(Note::Next(at)) => return Ok(at),
                Some(Note::Error { path, body }) => {
                    return Err(format!("{path}: {}", String::from_utf8_lossy(&body)))
                }
                Some(Note::Response { .. }) => continue,
                None => return Err("runtime API stopped".into()),
            }
        }
    }

    /// Sends one event and waits for its answer; returns the response document.
    pub async fn invoke(&mut self, event: Bytes) -> Result<serde_json::Value, String> {
        let id = self.push(event);
        loop {
            match self.note().await {
                Some(Note::Response { id: got, body }) if got == id => {
                    return serde_json::from_slice(&body).map_err(|e| e.to_string())
                }
                Some(Note::Error { path, body }) => {
                    return Err(format!("{path}: {}", String::from_utf8_lossy(&body)))
                }
                Some(_) => continue,
                None => return Err("runtime API stopped".into()),
            }
        }
    }
}

async fn serve(
    shared: Arc<Shared>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    if method == Method::GET && path == "/2018-06-01/runtime/invocation/next" {
        let _ = shared.notes.send(Note::Next(Instant::now()));
        let next = shared.events.lock().await.recv().await;
        let Some((id, body)) = next else {
            return Ok(status(StatusCode::GONE));
        };
        let deadline = chrono::Utc::now().timestamp_millis() + 10_000;
        return Ok(Response::builder()
            .status(StatusCode::OK)
            .header("content-type", "application/json")
            .header("lambda-runtime-aws-request-id", &id)
            .header("lambda-runtime-deadline-ms", deadline.to_string())
            .header(
                "lambda-runtime-invoked-function-arn",
                "arn:aws:lambda:us-east-1:123456789012:function:bench",
            )
            .header(
                "lambda-runtime-trace-id",
                "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0",
            )
            .body(Full::new(body))
            .unwrap_or_else(|_| status(StatusCode::INTERNAL_SERVER_ERROR)));
    }
    if method == Method::POST && path.starts_with("/2018-06-01/runtime/") {
        let body = req
            .into_body()
            .collect()
            .await
            .map(|b| b.to_bytes())
            .unwrap_or_default();
        let rest = &path["/2018-06-01/runtime/".len()..];
        let note = match rest
            .strip_prefix("invocation/")
            .and_then(|r| r.strip_suffix("/response"))
        {
            Some(id) => Note::Response {
                id: id.to_owned(),
                body,
            },
            None => Note::Error { path, body },
        };
        let _ = shared.notes.send(note);
        return Ok(status(StatusCode::ACCEPTED));
    }
    Ok(status(StatusCode::NOT_FOUND))
}

fn status(code: StatusCode) -> Response<Full<Bytes>> {
    let mut resp = Response::new(Full::new(Bytes::new()));
    *resp.status_mut() = code;
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> reqwest::Client {
        reqwest::Client::builder()
            .no_proxy()
            .build()
            .expect("an HTTP client")
    }

    /// A function as the Lambda runtime client behaves: asks for the next event, answers it
    /// with the header's request id.
    async fn fake_function(addr: SocketAddr) -> Result<(), String> {
        let client = client();
        let resp = client
            .get(format!("http://{addr}/2018-06-01/runtime/invocation/next"))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let id = resp
            .headers()
            .get("lambda-runtime-aws-request-id")
            .and_then(|v| v.to_str().ok())
            .ok_or("no request id")?
            .to_owned();
        let event = resp.bytes().await.map_err(|e| e.to_string())?;
        let answer = format!(
            r#"{{"statusCode":200,"body":{}}}"#,
            String::from_utf8_lossy(&event)
        );
        let status = client
            .post(format!(
                "http://{addr}/2018-06-01/runtime/invocation/{id}/response"
            ))
            .body(answer)
            .send()
            .await
            .map_err(|e| e.to_string())?
            .status();
        if status != StatusCode::ACCEPTED {
            return Err(format!("response answered {status}"));
        }
        Ok(())
    }

    #[tokio::test]
    async fn a_function_asks_for_an_event_and_its_answer_comes_back_to_the_driver() {
        let mut api = RuntimeApi::start().await.unwrap();
        let function = tokio::spawn(fake_function(api.addr));
        let asked = api.next_request().await.unwrap();
        assert!(asked <= Instant::now());
        let answer = api
            .invoke(Bytes::from_static(br#""event-1""#))
            .await
            .unwrap();
        assert_eq!(answer["statusCode"], 200);
        assert_eq!(answer["body"], "event-1");
        function.await.unwrap().unwrap();
    }

    #[tokio::test]
    async fn an_init_error_is_reported_to_the_driver() {
        let mut api = RuntimeApi::start().await.unwrap();
        client()
            .post(format!("http://{}/2018-06-01/runtime/init/error", api.addr))
            .body("missing DATASETS_TABLE")
            .send()
            .await
            .unwrap();
        let err = api.next_request().await.unwrap_err();
        assert!(
            err.contains("init/error") && err.contains("DATASETS_TABLE"),
            "{err}"
        );
    }
}
