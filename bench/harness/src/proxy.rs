//! Loopback TCP endpoints that count the connections a function opens: a forwarding proxy in
//! front of an emulator, and a sink for endpoints that should never be called (instance
//! metadata). Counting connections, not requests, is enough to prove "no network call during
//! init": any call needs a connection first.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub struct Counting {
    pub addr: SocketAddr,
    accepted: Arc<Mutex<Vec<Instant>>>,
    task: JoinHandle<()>,
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Counting {
    /// Forwards every connection to `upstream`.
    pub async fn forward(upstream: SocketAddr) -> std::io::Result<Self> {
        Self::start(Some(upstream)).await
    }

    /// Accepts and closes every connection.
    pub async fn sink() -> std::io::Result<Self> {
        Self::start(None).await
    }

    async fn start(upstream: Option<SocketAddr>) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let record = accepted.clone();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                catalog::lock(&record).push(Instant::now());
                let Some(upstream) = upstream else {
                    continue;
                };
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(upstream).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Ok(Self {
            addr,
            accepted,
            task,
        })
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Connections accepted between `from` and `to`.
    pub fn connections_between(&self, from: Instant, to: Instant) -> usize {
        catalog::lock(&self.accepted)
            .iter()
            .filter(|t| **t >= from && **t < to)
            .count()
    }
}
