//! The local stack's download pipeline: the local API writes its log as the functions do in
//! Lambda (JSON lines, the same fields), and each line also goes, as a CloudWatch Logs
//! subscription would take it, through the same reader (`catalog_writer::ingest::downloads`)
//! into the local download log (`DOWNLOADS_TABLE`). Then `catalog-admin audit` shows the
//! downloads and `catalog-admin count-downloads` runs the daily count, as on AWS.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use catalog_writer::downloads::DownloadLog;
use catalog_writer::ingest::{downloads, LogEvent};
use lambda_http::tracing::subscriber::fmt::MakeWriter;
use lambda_http::tracing::subscriber::layer::SubscriberExt;
use lambda_http::tracing::subscriber::util::SubscriberInitExt;
use lambda_http::tracing::subscriber::{fmt, EnvFilter};
use tokio::sync::mpsc::{unbounded_channel, UnboundedSender};

/// Logs as `init_default_subscriber` does (text on stdout), and, with `log`, records every
/// download event in it as it is written (kept `retention_days`). Call within the runtime.
pub fn init(log: Option<DownloadLog>, retention_days: u32) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let text = fmt::layer().with_target(false).without_time();
    let Some(log) = log else {
        lambda_http::tracing::subscriber::registry()
            .with(filter)
            .with(text)
            .init();
        return;
    };
    let (lines, mut received) = unbounded_channel::<String>();
    let json = fmt::layer()
        .json()
        .with_target(false)
        .without_time()
        .with_writer(Lines(lines));
    lambda_http::tracing::subscriber::registry()
        .with(filter)
        .with(text)
        .with(json)
        .init();
    static NEXT: AtomicU64 = AtomicU64::new(0);
    tokio::spawn(async move {
        while let Some(line) = received.recv().await {
            let event = LogEvent {
                id: format!(
                    "local-{}-{}",
                    std::process::id(),
                    NEXT.fetch_add(1, Ordering::Relaxed)
                ),
                timestamp: chrono::Utc::now().timestamp_millis(),
                message: line,
            };
            let found = downloads(std::slice::from_ref(&event));
            if !found.is_empty() {
                if let Err(e) = log.record(&found, retention_days).await {
                    eprintln!("the local download log could not record a download: {e}");
                }
            }
        }
    });
}

/// Each log line, sent whole to the recorder.
#[derive(Clone)]
struct Lines(UnboundedSender<String>);

/// One event's line, sent when the formatter is done with it.
struct Line {
    buffer: Vec<u8>,
    to: UnboundedSender<String>,
}

impl<'a> MakeWriter<'a> for Lines {
    type Writer = Line;

    fn make_writer(&'a self) -> Line {
        Line {
            buffer: Vec::new(),
            to: self.0.clone(),
        }
    }
}

impl Write for Line {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.buffer.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for Line {
    fn drop(&mut self) {
        let line = String::from_utf8_lossy(&self.buffer).trim().to_owned();
        if !line.is_empty() {
            // The recorder is gone only when the process ends.
            let _ = self.to.send(line);
        }
    }
}
