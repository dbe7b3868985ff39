//! The download log's source: every URL handed out (data, download, Delta Sharing) and every
//! rows page served writes one structured log event, marked `audit = "download"`, naming the
//! dataset, the version, the key's public id, the key's account (a Cognito `sub`; `-` for an
//! operator's key or none), the route, and for a download without a key the requester
//! ([`client_label`]: a digest of its address, so that keyless downloads count once per
//! requester and day). Nothing else is written on the request path: the
//! download counts and the operators' per-partner log are built from these events, off the
//! request path.
//!
//! [`Event::log`] writes one; [`Download::from_log_event`] reads one back from a function's log as Lambda keeps it (its
//! JSON log format: `{"level": …, "fields": {"message": …, "audit": "download", …}}`, with the
//! time in the log event, not the line).

use chrono::{DateTime, Utc};
use serde::Deserialize;

use crate::access::Allowed;

/// The value of the `audit` field that marks a download event (a CloudWatch Logs filter
/// pattern selects them: `{ $.fields.audit = "download" }`).
pub const MARK: &str = "download";

/// How the data was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Route {
    /// `GET /datasets/{slug}/data`: a presigned URL.
    Data,
    /// `GET /datasets/{slug}/download`: the same URL, as a redirect.
    Download,
    /// `GET /datasets/{slug}/rows`: a page of rows.
    Rows,
    /// Delta Sharing's query route: a presigned URL.
    Sharing,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Data => "data",
            Self::Download => "download",
            Self::Rows => "rows",
            Self::Sharing => "sharing",
        }
    }

    /// Whether it hands out the file (and so counts as a download): every route but rows.
    pub fn is_download(self) -> bool {
        self != Self::Rows
    }
}

/// One event of the download log, as a route writes it ([`Event::log`]): who read which version
/// of what, and how. The audit function reads it back ([`Download::from_log_event`]); both are
/// here, so that the fields written are the fields read.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    pub slug: &'a str,
    pub version: u64,
    /// The key's public id (`None` without a key).
    pub key_id: Option<&'a str>,
    /// The key's account, a Cognito `sub` (`None`: an operator's key, or no key).
    pub account: Option<&'a str>,
    pub allowed: Allowed,
    pub what: What,
}

/// What was handed out.
#[derive(Debug, Clone)]
pub enum What {
    /// A presigned URL from the data or download route; `client` is [`client_label`]'s.
    Url {
        route: Route,
        client: String,
        expires_at: DateTime<Utc>,
    },
    /// A page of presigned URLs, one per file, from the data route's listing of a version's
    /// files (or of a one-file version's one file): as [`What::Url`], plus how many files the
    /// page handed out.
    FileUrls {
        client: String,
        expires_at: DateTime<Utc>,
        files: u64,
    },
    /// Presigned URLs from Delta Sharing's query route; `pinned` when a version was asked for.
    /// `files`: how many the answer handed out (1 for a one-file table); `paths`: the first few
    /// of a many-file version's files (their paths as published; empty for a one-file table).
    SharingUrl {
        pinned: bool,
        expires_at: DateTime<Utc>,
        files: u64,
        paths: Vec<String>,
    },
    /// A page of rows (logged, not counted as a download); `split` as asked (`-` for the
    /// whole version).
    Rows {
        offset: u64,
        length: u64,
        split: Option<String>,
    },
}

impl Event<'_> {
    /// Writes the event: one INFO line marked `audit = "download"`.
    pub fn log(&self) {
        let key_id = self.key_id.unwrap_or("-");
        let account = self.account.unwrap_or("-");
        let allowed = self.allowed.as_str();
        match &self.what {
            What::Url {
                route,
                client,
                expires_at,
            } => tracing::info!(
                audit = MARK,
                slug = self.slug,
                version = self.version,
                key_id,
                account,
                keyless = self.allowed == Allowed::Keyless,
                allowed,
                client = client.as_str(),
                expires_at = %expires_at,
                route = route.as_str(),
                "issued download URL"
            ),
            What::FileUrls {
                client,
                expires_at,
                files,
            } => tracing::info!(
                audit = MARK,
                slug = self.slug,
                version = self.version,
                key_id,
                account,
                keyless = self.allowed == Allowed::Keyless,
                allowed,
                client = client.as_str(),
                expires_at = %expires_at,
                route = Route::Data.as_str(),
                files,
                "issued download URLs"
            ),
            What::SharingUrl {
                pinned,
                expires_at,
                files,
                paths,
            } => tracing::info!(
                audit = MARK,
                slug = self.slug,
                version = self.version,
                pinned,
                key_id,
                account,
                route = Route::Sharing.as_str(),
                allowed,
                expires_at = %expires_at,
                files,
                first_files = paths.join(", ").as_str(),
                "issued Delta Sharing file URL"
            ),
            What::Rows {
                offset,
                length,
                split,
            } => tracing::info!(
                audit = MARK,
                slug = self.slug,
                version = self.version,
                key_id,
                account,
                route = Route::Rows.as_str(),
                allowed,
                offset,
                length,
                split = split.as_deref().unwrap_or("-"),
                "served rows"
            ),
        }
    }
}

/// One download, as the log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Download {
    pub slug: String,
    pub version: u64,
    /// The key's public id (`None`: no key, in a keyless window).
    pub key_id: Option<String>,
    /// The key's account, a Cognito `sub` (`None`: an operator's key, or no key).
    pub account: Option<String>,
    pub route: Route,
    pub at: DateTime<Utc>,
    /// Without a key: who asked ([`client_label`]); `None` with a key, or when the event does
    /// not say (then each such download counts).
    pub client: Option<String>,
}

/// The requester of a download without a key, as its event names it: the first 64 bits of the
/// SHA-256 of its address (`-` when the address is unknown, or when a key was sent: the key
/// names the requester then). Not a secret: the API's access log keeps the address itself. It
/// only lets the daily counts take one download per requester and day.
pub fn client_label(address: Option<&str>, keyless: bool) -> String {
    use sha2::{Digest, Sha256};
    match address {
        Some(address) if keyless => {
            let digest = Sha256::digest(format!("dataset-catalog-client:{address}").as_bytes());
            hex::encode(&digest[..8])
        }
        _ => "-".to_owned(),
    }
}

impl Download {
    /// The download a log event records, if it is one: `message` is the line the function
    /// wrote, `timestamp_ms` the event's time (CloudWatch Logs' milliseconds since the epoch).
    pub fn from_log_event(message: &str, timestamp_ms: i64) -> Option<Self> {
        #[derive(Deserialize)]
        struct Line {
            fields: Fields,
        }
        #[derive(Deserialize)]
        struct Fields {
            audit: Option<String>,
            slug: String,
            version: u64,
            key_id: String,
            account: String,
            route: Route,
            #[serde(default)]
            client: Option<String>,
        }
        let line: Line = serde_json::from_str(message.trim()).ok()?;
        let f = line.fields;
        if f.audit.as_deref() != Some(MARK) {
            return None;
        }
        let named = |v: String| (v != "-").then_some(v);
        Some(Self {
            slug: f.slug,
            version: f.version,
            key_id: named(f.key_id),
            account: named(f.account),
            route: f.route,
            at: DateTime::from_timestamp_millis(timestamp_ms)?,
            client: f.client.and_then(named),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_download_event_reads_back_and_other_lines_do_not() {
        let line = r#"{"level":"INFO","fields":{"message":"issued download URL","audit":"download","slug":"river-levels","version":3,"key_id":"key_0123456789abcdef","account":"7d1e5b9c-1111-4a2b-9c3d-0123456789ab","route":"sharing","expires_at":"2026-11-26T10:15:00Z"}}"#;
        let got = Download::from_log_event(line, 1_795_692_687_847).unwrap();
        assert_eq!(
            got,
            Download {
                slug: "river-levels".into(),
                version: 3,
                key_id: Some("key_0123456789abcdef".into()),
                account: Some("7d1e5b9c-1111-4a2b-9c3d-0123456789ab".into()),
                route: Route::Sharing,
                at: DateTime::from_timestamp_millis(1_795_692_687_847).unwrap(),
                client: None,
            }
        );
        // Keyless: no key, no account.
        let keyless = line
            .replace("key_0123456789abcdef", "-")
            .replace("7d1e5b9c-1111-4a2b-9c3d-0123456789ab", "-");
        let got = Download::from_log_event(&keyless, 0).unwrap();
        assert_eq!((got.key_id, got.account, got.client), (None, None, None));
        // Keyless, with its requester named
        let named = keyless.replace(r#""route""#, r#""client":"0123456789abcdef","route""#);
        let got = Download::from_log_event(&named, 0).unwrap();
        assert_eq!(got.client.as_deref(), Some("0123456789abcdef"));
        // Not marked, not JSON, or another shape: not a download.
        let unmarked = line.replace(r#""audit":"download","#, "");
        for other in [
            unmarked.as_str(),
            "INFO issued download URL slug=x",
            r#"{"level":"WARN","fields":{"message":"x"}}"#,
        ] {
            assert_eq!(Download::from_log_event(other, 0), None, "{other}");
        }
    }

    #[test]
    fn a_keyless_requester_is_a_digest_of_its_address_and_nothing_with_a_key() {
        let a = client_label(Some("192.0.2.1"), true);
        assert_eq!(a.len(), 16);
        assert!(!a.contains("192"));
        assert_eq!(a, client_label(Some("192.0.2.1"), true));
        assert_ne!(a, client_label(Some("192.0.2.2"), true));
        assert_eq!(client_label(Some("192.0.2.1"), false), "-");
        assert_eq!(client_label(None, true), "-");
    }

    #[test]
    fn rows_pages_are_logged_but_not_counted_as_downloads() {
        assert!(Route::Data.is_download() && Route::Download.is_download());
        assert!(Route::Sharing.is_download());
        assert!(!Route::Rows.is_download());
    }

    /// Every kind of event, written by [`Event::log`] as Lambda's JSON log format keeps it, reads
    /// back as the download it records.
    #[test]
    fn every_event_written_reads_back_as_written() {
        use std::io::Write;
        use std::sync::{Arc, Mutex};

        #[derive(Clone, Default)]
        struct Lines(Arc<Mutex<Vec<u8>>>);
        impl Write for Lines {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                crate::lock(&self.0).extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let expires_at = DateTime::from_timestamp(1_795_692_900, 0).unwrap();
        let events = [
            (
                Some("key_0123456789abcdef"),
                Some("7d1e5b9c-1111-4a2b-9c3d-0123456789ab"),
                Allowed::Grant,
                What::Url {
                    route: Route::Data,
                    client: "-".into(),
                    expires_at,
                },
            ),
            (
                None,
                None,
                Allowed::Keyless,
                What::Url {
                    route: Route::Download,
                    client: client_label(Some("192.0.2.1"), true),
                    expires_at,
                },
            ),
            (
                Some("key_0123456789abcdef"),
                None,
                Allowed::Key,
                What::SharingUrl {
                    pinned: true,
                    expires_at,
                    files: 2,
                    paths: vec!["year=2024/a.parquet".into(), "year=2025/b.parquet".into()],
                },
            ),
            (
                Some("key_0123456789abcdef"),
                Some("7d1e5b9c-1111-4a2b-9c3d-0123456789ab"),
                Allowed::Grant,
                What::Rows {
                    offset: 100,
                    length: 50,
                    split: Some("train".into()),
                },
            ),
        ];
        for (key_id, account, allowed, what) in events {
            let lines = Lines::default();
            let writer = lines.clone();
            let subscriber = tracing_subscriber::fmt()
                .json()
                .without_time()
                .with_writer(move || writer.clone())
                .finish();
            let event = Event {
                slug: "river-levels",
                version: 3,
                key_id,
                account,
                allowed,
                what: what.clone(),
            };
            tracing::subscriber::with_default(subscriber, || event.log());
            let written = String::from_utf8(crate::lock(&lines.0).clone()).unwrap();
            let read = Download::from_log_event(&written, 1_795_692_687_847)
                .unwrap_or_else(|| panic!("not read back: {written}"));
            let (route, client) = match &what {
                What::Url { route, client, .. } => {
                    (*route, (client != "-").then(|| client.clone()))
                }
                What::FileUrls { client, .. } => {
                    (Route::Data, (client != "-").then(|| client.clone()))
                }
                What::SharingUrl { .. } => (Route::Sharing, None),
                What::Rows { .. } => (Route::Rows, None),
            };
            assert_eq!(
                read,
                Download {
                    slug: "river-levels".into(),
                    version: 3,
                    key_id: key_id.map(str::to_owned),
                    account: account.map(str::to_owned),
                    route,
                    at: DateTime::from_timestamp_millis(1_795_692_687_847).unwrap(),
                    client,
                },
                "{written}"
            );
            if let What::Rows {
                split: Some(split), ..
            } = &what
            {
                assert!(
                    written.contains(&format!("\"split\":\"{split}\"")),
                    "the rows event names its split: {written}"
                );
            }
        }
    }
}
