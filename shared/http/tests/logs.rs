//! What the handlers log: enough to debug (request id, cause), never a secret.
//!
//! A test binary of its own, not a module of `rules`, on purpose: its tests capture the logs with
//! a subscriber installed for their thread (`set_default`), and tracing caches, per call site and
//! for the whole process, whether any subscriber wants its events. A test of another module
//! running on another thread of the same process (`cargo test` runs a binary's tests on threads)
//! that reaches a call site first, with no subscriber, caches it as unwanted, and the event is
//! then lost here too. In this binary, every test installs its subscriber before it calls a
//! handler.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use catalog::input::Slug;

use catalog::keys::{KeyHash, KeyRecord, Scope};
use catalog::records::{ActiveVersion, Card, DatasetMeta, DatasetRecord};
use catalog_http::testing::V2Event;
use catalog_memory::{FakeSigner, MemoryCatalog};
use chrono::{Duration, Utc};

const KEY: &str = "dcat_logtest_key_0123456789abcdef0123456789";

#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Captured {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

fn request(path: &str, headers: &[(&str, &str)]) -> lambda_http::Request {
    V2Event::get(path)
        .headers(headers.iter().copied())
        .request_id("gw-req-42")
        .request()
}

fn catalog() -> MemoryCatalog {
    let c = MemoryCatalog::default();
    c.insert_dataset(DatasetRecord {
        id: uuid::Uuid::new_v4(),
        slug: Slug::parse("d").unwrap(),
        meta: DatasetMeta {
            readme: None,
            access: Default::default(),
            card: Card {
                access_level: Default::default(),
                name: "D".into(),
                description: None,
                category: "c".into(),
                tags: vec![],
                license: "l".into(),
            },
            source: "s".into(),
            insights: String::new(),
            discussions: vec![],
        },
        schema: serde_json::value::RawValue::from_string("[]".into()).unwrap(),
        keyless_until: None,
        created_at: Utc::now(),
        updated_at: Utc::now(),
        unpublished_at: None,
        downloads: 0,
        active: Some(ActiveVersion {
            version: 1,
            s3_key: "datasets/d/v1/x.parquet".into(),
            size: 1,
            row_count: 1,
            columns: vec!["a".into()],
            sha256: "0".repeat(64),
            published_at: Utc::now(),
            files: None,
            ingested: None,
        }),
    });
    c.insert_key(
        KeyHash::of(KEY),
        KeyRecord {
            owner: None,
            datasets: None,
            id: "key_public_id".into(),
            scopes: vec![Scope::Read],
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
    );
    c
}

#[tokio::test]
async fn logs_never_contain_the_key_its_hash_or_the_signed_url() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let c = catalog();
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    let bearer = format!("Bearer {KEY}");
    let wrong = format!("{KEY}x");
    for headers in [
        [("x-api-key", KEY)],
        [("authorization", bearer.as_str())],
        [("x-api-key", wrong.as_str())],
    ] {
        let resp = catalog_http::api::data(
            &request("/api/v1/datasets/d/data", &headers),
            &c,
            &signer,
            Utc::now(),
        )
        .await;
        assert!(resp.status().as_u16() == 200 || resp.status().as_u16() == 401);
    }
    let logs = out.text();
    assert!(
        logs.contains("issued download URL"),
        "the success was logged: {logs}"
    );
    assert!(
        logs.contains("key_public_id"),
        "the key's public id is logged: {logs}"
    );
    assert!(!logs.contains(KEY), "key in logs: {logs}");
    assert!(
        !logs.contains(KeyHash::of(KEY).as_str()),
        "key hash in logs"
    );
    assert!(
        !logs.contains("sig=fake") && !logs.contains("signed.invalid"),
        "URL in logs"
    );
}

#[tokio::test]
async fn server_errors_are_logged_with_request_id_and_cause_but_answered_generically() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let c = catalog();
    c.corrupt.store(true, Ordering::SeqCst);
    let resp =
        catalog_http::api::metadata(&request("/api/v1/datasets/d", &[]), &c, Utc::now()).await;
    assert_eq!(resp.status(), 500);
    let body = String::from_utf8_lossy(resp.body().as_ref()).into_owned();
    assert!(!body.contains("secret-internal-detail"), "{body}");
    let logs = out.text();
    assert!(logs.contains("gw-req-42"), "request id logged: {logs}");
    assert!(
        logs.contains("secret-internal-detail"),
        "cause logged: {logs}"
    );
}

/// The download log is built from the functions' own log lines: a URL handed out to an
/// account's key writes one event that reads back (as the log pipeline reads it, from Lambda's
/// JSON log format) as that download: dataset, version, key id, account, route.
#[tokio::test]
async fn a_url_handed_out_writes_one_download_event_naming_the_key_and_its_account() {
    const ACCOUNT_KEY: &str = "dcat_logtest_account_0123456789abcdef01234";
    const SUB: &str = "7d1e5b9c-1111-4a2b-9c3d-0123456789ab";
    let out = Captured::default();
    let writer = out.clone();
    // As lambda_runtime's init_default_subscriber does under AWS_LAMBDA_LOG_FORMAT=JSON.
    let subscriber = tracing_subscriber::fmt()
        .with_target(false)
        .without_time()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let c = catalog();
    c.insert_key(
        KeyHash::of(ACCOUNT_KEY),
        KeyRecord {
            owner: catalog::keys::Owner::parse(SUB),
            datasets: None,
            id: "key_account_id".into(),
            scopes: vec![Scope::Read],
            expires_at: None,
            revoked_at: None,
            last_used_at: None,
        },
    );
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    for (path, key) in [
        ("/api/v1/datasets/d/data", ACCOUNT_KEY),
        ("/api/v1/datasets/d/download", KEY),
    ] {
        let req = request(path, &[("x-api-key", key)]);
        let resp = match path.ends_with("/data") {
            true => catalog_http::api::data(&req, &c, &signer, Utc::now()).await,
            false => catalog_http::api::download(&req, &c, &signer, Utc::now()).await,
        };
        assert!(resp.status().is_success() || resp.status().is_redirection());
    }
    let logs = out.text();
    let downloads: Vec<catalog::audit::Download> = logs
        .lines()
        .filter_map(|line| catalog::audit::Download::from_log_event(line, 1_795_692_687_847))
        .collect();
    use catalog::audit::{Download, Route};
    let at = chrono::DateTime::from_timestamp_millis(1_795_692_687_847).unwrap();
    let download = |key_id: &str, account: Option<&str>, route| Download {
        slug: "d".into(),
        version: 1,
        key_id: Some(key_id.into()),
        account: account.map(str::to_owned),
        route,
        at,
        client: None,
    };
    assert_eq!(
        downloads,
        [
            download("key_account_id", Some(SUB), Route::Data),
            download("key_public_id", None, Route::Download),
        ],
        "{logs}"
    );
}

/// A URL handed out without a key names its requester by a digest of its address (so that the
/// daily counts take one download per requester and day); with a key, by the key alone.
#[tokio::test]
async fn a_keyless_download_event_names_its_requester_by_a_digest_of_its_address() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_target(false)
        .without_time()
        .json()
        .with_writer(move || writer.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);
    let c = catalog();
    let mut open = DatasetRecord {
        slug: Slug::parse("open").unwrap(),
        id: uuid::Uuid::new_v4(),
        keyless_until: Some(Utc::now() + Duration::hours(1)),
        ..catalog_record(&c, "d").await
    };
    open.active.as_mut().unwrap().s3_key = "datasets/open/v1/x.parquet".into();
    c.insert_dataset(open);
    let signer = FakeSigner {
        ttl: Duration::minutes(15),
    };
    for (address, key) in [
        ("192.0.2.10", None),
        ("192.0.2.10", None),
        ("2001:db8::7", None),
        ("192.0.2.10", Some(KEY)),
    ] {
        let headers: Vec<(&str, &str)> = key.iter().map(|k| ("x-api-key", *k)).collect();
        let req = V2Event::get("/api/v1/datasets/open/data")
            .headers(headers)
            .source_ip(address)
            .request();
        let resp = catalog_http::api::data(&req, &c, &signer, Utc::now()).await;
        assert_eq!(resp.status(), 200);
    }
    let logs = out.text();
    let clients: Vec<Option<String>> = logs
        .lines()
        .filter_map(|line| catalog::audit::Download::from_log_event(line, 0))
        .map(|d| d.client)
        .collect();
    assert_eq!(clients.len(), 4, "{logs}");
    let (first, again, other, keyed) = (&clients[0], &clients[1], &clients[2], &clients[3]);
    assert!(first.as_ref().is_some_and(|c| c.len() == 16), "{logs}");
    assert_eq!(first, again, "the same address, the same requester");
    assert!(
        other.is_some() && other != first,
        "another address, another requester"
    );
    assert_eq!(keyed, &None, "with a key, the key names the requester");
    assert!(
        !logs.contains("192.0.2.10") && !logs.contains("2001:db8::7"),
        "{logs}"
    );
}

/// The dataset `slug` of `c`, as stored.
async fn catalog_record(c: &MemoryCatalog, slug: &str) -> DatasetRecord {
    use catalog::ports::DatasetReader;
    let dataset = catalog::input::DatasetRef::parse(slug).unwrap();
    c.get_dataset(&dataset).await.unwrap().unwrap()
}
