//! The command line: one module per subcommand, each with its arguments (their doc comments are
//! its `--help`) and its `run`. What they share is here: the top-level [`Cli`], the
//! [`Context`] a command runs in, and [`CliError`] with its exit codes.
// The doc comments of the arguments are `--help` text for a terminal: `<slug>` and bare URLs
// are meant literally there.
#![allow(rustdoc::bare_urls, rustdoc::invalid_html_tags)]

pub mod access;
pub mod accounts;
pub mod audit;
pub mod convert;
pub mod datasets;
pub mod download;
pub mod inspect;
pub mod keyless;
pub mod keys;
pub mod meta;
pub mod orgs;
pub mod publish;
pub mod stage;
pub mod stats;
pub mod versions;

use aws_config::SdkConfig;
use catalog::input::Slug;
use catalog_aws::config::{AdminConfig, ConfigError};
use catalog_aws::dynamo::DatasetsTable;
use catalog_writer::{DynamoWriter, WriteError};
use chrono::{DateTime, Utc};
use clap::{Parser, Subcommand};

use crate::publish::PublishError;

/// Operate a dataset catalog: publish Parquet datasets, manage API keys and keyless windows.
///
/// Example: catalog-admin publish air.parquet --slug air-quality --metadata air.yaml
///
/// Works on the tables and bucket named by DATASETS_TABLE, KEYS_TABLE and DATA_BUCKET, with the
/// AWS SDK's usual configuration (AWS_PROFILE, AWS_REGION, credentials, and
/// AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_S3 for local emulators; S3_FORCE_PATH_STYLE=true
/// for path-style S3).
#[derive(Parser)]
#[command(name = "catalog-admin", version)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    Publish(publish::Args),
    Convert(convert::Args),
    Inspect(inspect::Args),
    #[command(subcommand)]
    Keys(keys::Command),
    #[command(subcommand)]
    Keyless(keyless::Command),
    #[command(subcommand)]
    Accounts(accounts::Command),
    #[command(subcommand)]
    Access(access::Command),
    #[command(subcommand)]
    Datasets(datasets::Command),
    #[command(subcommand)]
    Orgs(orgs::Command),
    #[command(subcommand)]
    Versions(versions::Command),
    #[command(subcommand)]
    Meta(meta::Command),
    Download(download::Args),
    #[command(subcommand)]
    Stage(stage::Command),
    #[command(subcommand)]
    Stats(stats::Command),
    Audit(audit::Args),
    CountDownloads(audit::CountArgs),
}

/// Runs one command.
pub async fn run(cli: Cli) -> Result<(), CliError> {
    let ctx = Context { now: Utc::now() };
    match cli.command {
        Command::Publish(args) => publish::run(args, &ctx).await,
        Command::Convert(args) => convert::run(args).await,
        Command::Inspect(args) => inspect::run(args, &ctx).await,
        Command::Keys(command) => keys::run(command, &ctx).await,
        Command::Keyless(command) => keyless::run(command, &ctx).await,
        Command::Accounts(command) => accounts::run(command, &ctx).await,
        Command::Access(command) => access::run(command, &ctx).await,
        Command::Datasets(command) => datasets::run(command, &ctx).await,
        Command::Orgs(command) => orgs::run(command, &ctx).await,
        Command::Versions(command) => versions::run(command, &ctx).await,
        Command::Meta(command) => meta::run(command, &ctx).await,
        Command::Download(args) => download::run(args, &ctx).await,
        Command::Stage(command) => stage::run(command, &ctx).await,
        Command::Stats(command) => stats::run(command, &ctx).await,
        Command::Audit(args) => audit::run(args, &ctx).await,
        Command::CountDownloads(args) => audit::count(args, &ctx).await,
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error(transparent)]
    Write(#[from] WriteError),
    #[error(transparent)]
    Store(#[from] catalog::error::StoreError),
    #[error(transparent)]
    Download(#[from] crate::download::DownloadError),
    #[error("Cognito refused the request")]
    Cognito(#[source] catalog::error::BoxError),
    /// The records are deleted, but not every file: the message names them.
    #[error("{0}")]
    Objects(String),
}

impl From<crate::remove::FilesLeft> for CliError {
    fn from(left: crate::remove::FilesLeft) -> Self {
        CliError::Objects(left.0)
    }
}

impl CliError {
    /// The line printed on stderr: the error, then each of its causes that it does not already
    /// quote.
    pub fn report(&self) -> String {
        let mut message = format!("error: {self}");
        let mut cause = std::error::Error::source(self);
        while let Some(c) = cause {
            let text = c.to_string();
            if !message.contains(&text) {
                message.push_str(&format!(": {text}"));
            }
            cause = c.source();
        }
        message
    }

    /// 2 when the operator asked for something wrong (bad arguments or environment, a dataset,
    /// version or key that does not exist, a file that cannot be published), 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        let fixable = |w: &WriteError| {
            matches!(
                w,
                WriteError::NoSuchDataset(_)
                    | WriteError::NoSuchVersion(..)
                    | WriteError::NoSuchKey(_)
                    | WriteError::TooLarge(_)
                    | WriteError::Unpublished(_)
                    | WriteError::Invalid(_)
            )
        };
        match self {
            CliError::Usage(_)
            | CliError::Config(_)
            | CliError::Publish(PublishError::BadInput(_) | PublishError::BadFile(_))
            | CliError::Download(crate::download::DownloadError::Usage(_)) => 2,
            CliError::Write(w) if fixable(w) => 2,
            // Publishing to an unpublished dataset: restore it first; or what the writer
            // refuses as given (a catalog dataset published `private`, say).
            CliError::Publish(PublishError::Write(
                WriteError::Unpublished(_) | WriteError::Invalid(_),
            )) => 2,
            _ => 1,
        }
    }
}

/// Who an operator's decision is recorded as: `CATALOG_OPERATOR`, else the login name.
pub(crate) fn operator() -> String {
    ["CATALOG_OPERATOR", "USER", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|s| !s.trim().is_empty()))
        .unwrap_or_else(|| "catalog-admin".to_owned())
}

/// A slug given on the command line.
pub(crate) fn slug(raw: &str) -> Result<Slug, CliError> {
    Slug::parse(raw).map_err(|e| CliError::Usage(format!("invalid slug '{raw}': {e}")))
}

/// What a command runs with: the time it started, and the tables and bucket when it needs them.
pub struct Context {
    pub now: DateTime<Utc>,
}

impl Context {
    /// The tables and the bucket (from the environment) and the SDK's configuration. Only the
    /// commands that use them ask, so `inspect` and `download` need neither.
    pub async fn aws(&self) -> Result<Aws, CliError> {
        let config = AdminConfig::from_env()?;
        let sdk = crate::load_sdk_config().await;
        Ok(Aws {
            dynamo: aws_sdk_dynamodb::Client::new(&sdk),
            sdk,
            config,
        })
    }
}

/// The catalog's tables and bucket, as configured.
pub struct Aws {
    pub config: AdminConfig,
    pub sdk: SdkConfig,
    pub dynamo: aws_sdk_dynamodb::Client,
}

impl Aws {
    pub fn writer(&self) -> DynamoWriter {
        DynamoWriter::new(
            self.dynamo.clone(),
            &self.config.datasets_table,
            &self.config.keys_table,
        )
    }

    /// Access requests and grants, as the accounts function keeps them.
    pub fn access(&self) -> catalog_aws::dynamo::access::DynamoAccess {
        catalog_aws::dynamo::access::DynamoAccess::new(
            self.dynamo.clone(),
            &self.config.keys_table,
            &self.config.datasets_table,
        )
    }

    /// The reader the list and metadata functions use.
    pub fn catalog(&self) -> DatasetsTable {
        DatasetsTable::new(self.dynamo.clone(), &self.config.datasets_table)
    }

    /// Cognito, for the commands on accounts (AWS_ENDPOINT_URL_COGNITO_IDENTITY_PROVIDER points
    /// it at a local emulator).
    pub fn cognito(&self) -> aws_sdk_cognitoidentityprovider::Client {
        aws_sdk_cognitoidentityprovider::Client::new(&self.sdk)
    }

    pub fn s3(&self) -> aws_sdk_s3::Client {
        aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(
            &self.sdk,
            self.config.s3_force_path_style,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use catalog::error::StoreError;
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent_and_every_command_has_an_example() {
        Cli::command().debug_assert();
        fn walk(command: &mut clap::Command, path: &str) {
            let help = command.render_long_help().to_string();
            let example = help.lines().find(|l| l.starts_with("Example: "));
            assert!(
                example.is_some_and(|l| l.contains("catalog-admin ")),
                "{path}: {help}"
            );
            for sub in command
                .get_subcommands_mut()
                .filter(|sub| sub.get_name() != "help")
            {
                let path = format!("{path} {}", sub.get_name());
                walk(sub, &path);
            }
        }
        walk(&mut Cli::command(), "catalog-admin");
    }

    #[test]
    fn what_the_operator_can_fix_exits_2_the_rest_1() {
        let store = || StoreError::Other("boom".into());
        for (e, code) in [
            (CliError::Usage("bad".into()), 2),
            (ConfigError::Missing("DATA_BUCKET").into(), 2),
            (WriteError::NoSuchDataset("a".into()).into(), 2),
            (WriteError::NoSuchVersion("a".into(), 3).into(), 2),
            (WriteError::NoSuchKey("k".into()).into(), 2),
            (PublishError::BadInput("no rows".into()).into(), 2),
            (WriteError::Conflict("a".into()).into(), 1),
            (WriteError::Store(store()).into(), 1),
            (PublishError::Upload("503".into()).into(), 1),
            (
                PublishError::Write(WriteError::NoSuchDataset("a".into())).into(),
                1,
            ),
            (
                PublishError::Write(WriteError::Unpublished("a".into())).into(),
                2,
            ),
            (store().into(), 1),
            (
                crate::download::DownloadError::Usage("plain http".into()).into(),
                2,
            ),
        ] {
            assert_eq!(e.exit_code(), code, "{e:?}");
        }
    }

    #[test]
    fn the_report_adds_only_causes_not_already_quoted() {
        assert_eq!(
            CliError::from(ConfigError::Missing("DATA_BUCKET")).report(),
            "error: environment variable DATA_BUCKET is required"
        );
        let unavailable = StoreError::Unavailable("connection refused".into());
        assert_eq!(
            CliError::from(WriteError::Store(unavailable)).report(),
            "error: backend temporarily unavailable: connection refused"
        );
        assert_eq!(
            CliError::from(WriteError::NoSuchKey("key_1".into())).report(),
            "error: no API key with id 'key_1'"
        );
    }
}
