//! The emulated AWS: DynamoDB and Cognito (moto's server mode, one process) and S3 (s3s-fs,
//! which verifies SigV4 signatures and expiry) on free loopback ports, with the tables and the
//! bucket created; the clients, reader, writer and signer the functions use, against them; the
//! sample datasets and keys seeded; everything stopped when dropped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use aws_config::{BehaviorVersion, Region, SdkConfig};
use aws_credential_types::provider::SharedCredentialsProvider;
use aws_credential_types::Credentials;
use catalog::keys::{KeyHash, Scope};
use catalog_aws::dynamo::DynamoCatalog;
use catalog_aws::s3::S3Signer;
use catalog_dev::{Manifest, SampleDataset, Target};
use catalog_search::listing::{indexed, IndexedCatalog};
use catalog_writer::DynamoWriter;
use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::process::{log_files, repo_root, start_on_free_port, tool, Guard};
use crate::wire::Wire;

pub const ACCESS_KEY: &str = "catalog-test-access-key";
pub const SECRET_KEY: &str = "catalog-test-secret-key";
pub const REGION: &str = "us-east-1";

/// The read key that the files in events/ carry.
pub const EVENTS_READ_KEY: &str =
    "dcat_example0000000000000000000000000000000000000000000000000000000";
/// The UUID that events/metadata-by-uuid.json names (given to `air-quality-hourly`).
pub const EVENTS_DATASET_ID: &str = "6f1c2a9e-3b7d-4c5e-9a8f-0d1e2f3a4b5c";

/// The sample datasets (generated once per target dir, or taken from SAMPLES_DIR).
pub fn samples_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SAMPLES_DIR") {
        return PathBuf::from(dir);
    }
    let dir = repo_root().join("target").join("catalog-samples");
    if dir.join("manifest.json").exists() {
        return dir;
    }
    let staging = repo_root()
        .join("target")
        .join(format!("catalog-samples-{}", Uuid::new_v4()));
    let status = Command::new(tool("PYTHON", ".venv/bin/python"))
        .arg(repo_root().join("dev/samples.py"))
        .arg("--out")
        .arg(&staging)
        .status()
        .expect("run dev/samples.py");
    assert!(status.success(), "dev/samples.py failed");
    // Another test process may have won the race; either copy is the same.
    if std::fs::rename(&staging, &dir).is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    dir
}

pub fn manifest() -> Manifest {
    catalog_dev::read_manifest(&samples_dir()).expect("manifest.json")
}

/// Emulated AWS on loopback.
pub struct Stack {
    pub sdk: SdkConfig,
    pub dynamo: aws_sdk_dynamodb::Client,
    pub s3: aws_sdk_s3::Client,
    pub target: Target,
    pub dynamo_url: String,
    pub s3_url: String,
    s3_root: PathBuf,
    /// The data bucket's CORS rule in front of s3s-fs, when started with it.
    s3_cors: Option<CorsFront>,
    _moto: Guard,
    _s3s: Guard,
}

/// The data bucket's CORS rule in front of s3s-fs ([`catalog_dev::s3_cors`], as `dev/run` runs
/// it), on a free loopback port, on a thread of its own (whatever the test's runtime does, the
/// browser's requests are answered); stopped when dropped.
struct CorsFront {
    url: String,
    proxy: std::sync::Arc<catalog_dev::s3_cors::S3Cors>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl CorsFront {
    fn start(upstream: &str) -> Self {
        let proxy = catalog_dev::s3_cors::S3Cors::new(upstream, None);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind the CORS front");
        listener.set_nonblocking(true).expect("non-blocking");
        let url = format!("http://{}", listener.local_addr().expect("address"));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving = proxy.clone();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the CORS front");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("the CORS front's socket");
                tokio::select! {
                    _ = serving.serve(listener) => {}
                    _ = stopped => {}
                }
            });
        });
        Self {
            url,
            proxy,
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

impl Drop for CorsFront {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.s3_root);
    }
}

pub fn credentials() -> Credentials {
    Credentials::new(ACCESS_KEY, SECRET_KEY, None, None, "catalog-tests")
}

impl Stack {
    /// Starts both servers and creates the tables and the bucket.
    pub async fn start() -> Self {
        Self::start_with(false).await
    }

    /// As [`Stack::start`], with the data bucket's CORS rule in front of s3s-fs (the console's
    /// browser test): `s3_url` is the front's, so presigned URLs point at it and everything
    /// else reaches s3s-fs through it unchanged. [`Stack::allow_site_origin`] names the site.
    pub async fn start_with_s3_cors() -> Self {
        Self::start_with(true).await
    }

    /// The site whose pages may read the data bucket (the CORS rule's one origin).
    pub fn allow_site_origin(&self, origin: &str) {
        self.s3_cors
            .as_ref()
            .expect("a stack started with start_with_s3_cors")
            .proxy
            .allow_origin(origin);
    }

    async fn start_with(s3_cors: bool) -> Self {
        let (moto, moto_port) = start_on_free_port("moto_server", |port| {
            let (out, err) = match std::env::var_os("CATALOG_MOTO_LOG") {
                Some(_) => log_files("moto"),
                None => (Stdio::null(), Stdio::null()),
            };
            // As `dev/run` runs it: one DynamoDB request at a time, transactions that back up
            // their items rather than whole tables (dev/moto_server.py says why).
            let mut cmd = Command::new(tool("PYTHON", ".venv/bin/python"));
            cmd.arg(repo_root().join("dev/moto_server.py"))
                .args(["-H", "127.0.0.1", "-p", &port.to_string()])
                .stdout(out)
                .stderr(err);
            cmd
        });
        let s3_root = std::env::temp_dir().join(format!("catalog-s3-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&s3_root).expect("s3 root");
        let (s3s, s3_port) = start_on_free_port("s3s-fs", |port| {
            let mut cmd = Command::new(tool("S3S_FS", ".tools/bin/s3s-fs"));
            cmd.args(["--host", "127.0.0.1", "--port", &port.to_string()])
                .args(["--access-key", ACCESS_KEY, "--secret-key", SECRET_KEY])
                .arg(&s3_root)
                .stdout(Stdio::null())
                .stderr(Stdio::null());
            cmd
        });

        let dynamo_url = format!("http://127.0.0.1:{moto_port}");
        let s3_url = format!("http://127.0.0.1:{s3_port}");
        let s3_cors = s3_cors.then(|| CorsFront::start(&s3_url));
        let s3_url = s3_cors.as_ref().map_or(s3_url, |front| front.url.clone());
        let sdk = aws_config::defaults(BehaviorVersion::latest())
            .http_client(catalog_aws::aws::http_client(
                catalog_aws::aws::RootCertificates::Platform,
            ))
            .region(Region::new(REGION))
            .credentials_provider(SharedCredentialsProvider::new(credentials()))
            .load()
            .await;
        let dynamo = aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&sdk)
                .endpoint_url(&dynamo_url)
                .build(),
        );
        let s3 = aws_sdk_s3::Client::from_conf(Self::s3_config_for(&sdk, &s3_url));
        let target = Target {
            datasets_table: "catalog-datasets".into(),
            keys_table: "catalog-keys".into(),
            bucket: "catalog-data".into(),
            downloads_table: "catalog-downloads".into(),
        };
        catalog_dev::ensure_resources(&dynamo, &s3, &target)
            .await
            .expect("create tables and bucket");
        Self {
            sdk,
            dynamo,
            s3,
            target,
            dynamo_url,
            s3_url,
            s3_root,
            s3_cors,
            _moto: Guard(moto),
            _s3s: Guard(s3s),
        }
    }

    fn s3_config_for(sdk: &SdkConfig, url: &str) -> aws_sdk_s3::Config {
        aws_sdk_s3::config::Builder::from(sdk)
            .endpoint_url(url)
            .force_path_style(true)
            .build()
    }

    /// The reader the functions use, against the emulator.
    pub fn catalog(&self) -> IndexedCatalog {
        indexed(DynamoCatalog::new(
            self.dynamo.clone(),
            &self.target.datasets_table,
            &self.target.keys_table,
        ))
    }

    pub fn writer(&self) -> DynamoWriter {
        DynamoWriter::new(
            self.dynamo.clone(),
            &self.target.datasets_table,
            &self.target.keys_table,
        )
    }

    /// Access requests and grants, as the accounts function and `catalog-admin access` keep
    /// them.
    pub fn access(&self) -> catalog_aws::dynamo::access::DynamoAccess {
        catalog_aws::dynamo::access::DynamoAccess::new(
            self.dynamo.clone(),
            &self.target.keys_table,
            &self.target.datasets_table,
        )
    }

    /// A DynamoDB client whose requests reach the emulator one at a time, through a proxy (the
    /// guard stops it): DynamoDB applies each conditional write atomically, moto's threads do
    /// not, so races are sent through this.
    pub async fn serialized_client(&self) -> (aws_sdk_dynamodb::Client, crate::faults::Proxy) {
        let proxy = crate::faults::start_proxy(self.dynamo_url.clone()).await;
        proxy.serialize(true);
        let client = aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&self.sdk)
                .endpoint_url(&proxy.url)
                .build(),
        );
        (client, proxy)
    }

    /// A DynamoDB client of the emulator that records every request it sends in `wire`.
    pub fn dynamo_client(&self, wire: &Wire) -> aws_sdk_dynamodb::Client {
        aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&self.sdk)
                .endpoint_url(&self.dynamo_url)
                .interceptor(wire.clone())
                .build(),
        )
    }

    /// The functions' reader and signer, against the emulators, with every request they send
    /// recorded by `dynamo` and `s3`.
    pub fn wired(&self, dynamo: &Wire, s3: &Wire) -> (IndexedCatalog, S3Signer) {
        let catalog = indexed(DynamoCatalog::new(
            self.dynamo_client(dynamo),
            &self.target.datasets_table,
            &self.target.keys_table,
        ));
        let signer = S3Signer::new(
            Self::s3_config_for(&self.sdk, &self.s3_url)
                .to_builder()
                .interceptor(s3.clone())
                .build(),
            SharedCredentialsProvider::new(credentials()),
            &self.target.bucket,
            Duration::from_secs(900),
        );
        (catalog, signer)
    }

    /// The rows function's reader, against the emulator.
    pub fn rows(&self) -> catalog_preview::ParquetRows<catalog_preview::S3Source> {
        self.rows_wired(&Wire::default())
    }

    /// The rows function's reader, with every S3 request it sends recorded in `s3`.
    pub fn rows_wired(&self, s3: &Wire) -> catalog_preview::ParquetRows<catalog_preview::S3Source> {
        let config = Self::s3_config_for(&self.sdk, &self.s3_url)
            .to_builder()
            .interceptor(s3.clone())
            .build();
        catalog_preview::ParquetRows::new(catalog_preview::S3Source::new(
            aws_sdk_s3::Client::from_conf(config),
            &self.target.bucket,
        ))
    }

    /// The rows function's reader with another memory budget.
    pub fn rows_with_budget(
        &self,
        budget: catalog_preview::plan::Budget,
    ) -> catalog_preview::ParquetRows<catalog_preview::S3Source> {
        catalog_preview::ParquetRows::with_budget(
            catalog_preview::S3Source::new(
                aws_sdk_s3::Client::from_conf(Self::s3_config_for(&self.sdk, &self.s3_url)),
                &self.target.bucket,
            ),
            budget,
        )
    }

    /// The signer the data function uses, against the emulator.
    pub fn signer(&self, ttl: Duration) -> S3Signer {
        S3Signer::new(
            Self::s3_config_for(&self.sdk, &self.s3_url),
            SharedCredentialsProvider::new(credentials()),
            &self.target.bucket,
            ttl,
        )
    }

    /// Publishes every sample dataset; returns their UUIDs by slug. `air-quality-hourly` gets
    /// the UUID the events name.
    pub async fn seed_samples(&self, now: DateTime<Utc>) -> HashMap<String, Uuid> {
        let dir = samples_dir();
        let mut ids = HashMap::new();
        for sample in manifest().datasets {
            let id = self.seed_one(&dir, &sample, now).await;
            ids.insert(sample.slug.to_string(), id);
        }
        ids
    }

    pub async fn seed_one(&self, dir: &Path, sample: &SampleDataset, now: DateTime<Utc>) -> Uuid {
        let id = (sample.slug.as_str() == "air-quality-hourly")
            .then(|| Uuid::parse_str(EVENTS_DATASET_ID).expect("uuid"));
        catalog_dev::seed_dataset(&self.dynamo, &self.s3, &self.target, dir, sample, now, id)
            .await
            .expect("seed dataset")
    }

    /// Stores a key with these scopes; returns its hash.
    pub async fn add_key(
        &self,
        secret: &str,
        scopes: &[&str],
        now: DateTime<Utc>,
        expires_at: Option<DateTime<Utc>>,
    ) -> KeyHash {
        catalog_dev::store_key(
            &self.dynamo,
            &self.target,
            secret,
            scopes.iter().map(|s| Scope::parse(s)).collect(),
            "test",
            now,
            expires_at,
        )
        .await
        .expect("store key");
        KeyHash::of(secret)
    }

    /// Cognito, on the same moto server as DynamoDB.
    pub fn cognito(&self) -> aws_sdk_cognitoidentityprovider::Client {
        aws_sdk_cognitoidentityprovider::Client::from_conf(
            aws_sdk_cognitoidentityprovider::config::Builder::from(&self.sdk)
                .endpoint_url(&self.dynamo_url)
                .build(),
        )
    }

    /// The accounts' user pool and web client, as dev/run creates them.
    pub async fn user_pool(&self) -> catalog_dev::cognito::UserPool {
        catalog_dev::cognito::ensure_user_pool(&self.cognito(), "catalog-accounts")
            .await
            .expect("create the user pool")
    }

    /// Environment for the Lambda binaries, pointing at this stack.
    pub fn function_env(&self) -> Vec<(String, String)> {
        [
            ("DATASETS_TABLE", self.target.datasets_table.as_str()),
            ("KEYS_TABLE", self.target.keys_table.as_str()),
            ("DATA_BUCKET", self.target.bucket.as_str()),
            ("DOWNLOADS_TABLE", self.target.downloads_table.as_str()),
            ("S3_FORCE_PATH_STYLE", "true"),
            ("AWS_ENDPOINT_URL_DYNAMODB", self.dynamo_url.as_str()),
            ("AWS_ENDPOINT_URL_S3", self.s3_url.as_str()),
            (
                "AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER",
                self.dynamo_url.as_str(),
            ),
            ("OPERATORS_GROUP", catalog_dev::cognito::OPERATORS_GROUP),
            ("AWS_REGION", REGION),
            ("AWS_ACCESS_KEY_ID", ACCESS_KEY),
            ("AWS_SECRET_ACCESS_KEY", SECRET_KEY),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }
}
