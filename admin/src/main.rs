//! `catalog-admin`: the operators' command line. See `catalog-admin --help`.

use std::path::PathBuf;
use std::process::ExitCode;

use catalog::config::ConfigError;
use catalog::domain::{Scope, Slug};
use catalog::dynamo::DynamoCatalog;
use catalog::ports::{CatalogPager, DatasetReader};
use catalog_admin::publish::{Discussion, MetaInput, Publisher};
use catalog_admin::{human_bytes, parse_when};
use catalog_writer::{generate_key, DynamoWriter, NewKey};
use chrono::Utc;
use clap::{Parser, Subcommand};

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
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Publish a Parquet file as the next version of a dataset, computing its column statistics.
    ///
    /// Example: catalog-admin publish air.parquet --slug air-quality --name "Air quality"
    ///   --license CC-BY-4.0 --source "City of X" --category environment --tag air --tag hourly
    Publish(PublishArgs),
    /// Print a Parquet file's column statistics as JSON, without publishing anything.
    ///
    /// Example: catalog-admin inspect air.parquet
    Inspect { file: PathBuf },
    /// Create, list and revoke API keys.
    ///
    /// Example: catalog-admin keys create --scope read --label notebook
    #[command(subcommand)]
    Keys(KeysCommand),
    /// Open or close a dataset's keyless window.
    ///
    /// Example: catalog-admin keyless set city-bikes --until +7d
    #[command(subcommand)]
    Keyless(KeylessCommand),
    /// List datasets or show one.
    ///
    /// Example: catalog-admin datasets show air-quality
    #[command(subcommand)]
    Datasets(DatasetsCommand),
    /// List a dataset's versions or activate one (rollback).
    ///
    /// Example: catalog-admin versions activate air-quality 2
    #[command(subcommand)]
    Versions(VersionsCommand),
    /// Download a dataset's Parquet file through the public API, as any client would, and
    /// verify its SHA-256 before keeping it. The key, if the dataset needs one, is read from
    /// CATALOG_API_KEY (never from a flag, which would show in the process list and history).
    ///
    /// Example: CATALOG_API_KEY=dcat_... catalog-admin download air-quality --api-url
    ///   https://abc123.execute-api.eu-west-1.amazonaws.com/api/v1
    Download {
        slug: String,
        /// The API's base URL, ending in /api/v1 (default: CATALOG_API_URL).
        #[arg(long, env = "CATALOG_API_URL")]
        api_url: String,
        /// Pin this version: fail rather than fetch another one.
        #[arg(long)]
        version: Option<u64>,
        /// Where to write it (default: <slug>-v<version>.parquet).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct PublishArgs {
    /// The Parquet file.
    file: PathBuf,
    /// The dataset's slug: lowercase letters, digits and hyphens.
    #[arg(long)]
    slug: String,
    /// Descriptive fields from a YAML (.yaml/.yml) or JSON file: name, description, license,
    /// source, category, tags, insights, discussions ([{id, title, slug, path}]). Flags override
    /// it. On re-publish, anything not given keeps its stored value.
    #[arg(long, value_name = "FILE")]
    metadata: Option<PathBuf>,
    /// Refuse to publish if the slug already exists (guards against overwriting another dataset).
    #[arg(long)]
    new: bool,
    /// Display name (required for a new dataset).
    #[arg(long)]
    name: Option<String>,
    /// Free-text description, at most 4096 bytes.
    #[arg(long)]
    description: Option<String>,
    /// License identifier, e.g. CC-BY-4.0 (required for a new dataset).
    #[arg(long)]
    license: Option<String>,
    /// Who produced the data (required for a new dataset).
    #[arg(long)]
    source: Option<String>,
    /// Category, e.g. environment (required for a new dataset).
    #[arg(long)]
    category: Option<String>,
    /// A tag (repeat for several).
    #[arg(long = "tag")]
    tags: Vec<String>,
    /// A short note on what the data shows.
    #[arg(long)]
    insights: Option<String>,
}

#[derive(Subcommand)]
enum KeysCommand {
    /// Create a key and print it once (only its hash is stored).
    ///
    /// Example: catalog-admin keys create --scope read --label "team notebook" --expires +90d
    Create {
        /// Scope of the key (repeatable); `read` allows downloads.
        #[arg(long = "scope", required = true)]
        scopes: Vec<String>,
        #[arg(long, default_value = "")]
        label: String,
        /// Expiry: RFC 3339 time or +<n><s|m|h|d>.
        #[arg(long)]
        expires: Option<String>,
    },
    /// List keys: id, prefix, label, scopes, created, expiry, revoked. Never the secret.
    ///
    /// Example: catalog-admin keys list
    List,
    /// Revoke a key by id; the next request with it is refused.
    ///
    /// Example: catalog-admin keys revoke key_3f9a0c1b2d4e5f60
    Revoke { id: String },
}

#[derive(Subcommand)]
enum KeylessCommand {
    /// Let anyone download the dataset, without a key, until a time.
    ///
    /// Example: catalog-admin keyless set city-bikes --until +7d
    Set {
        slug: String,
        /// RFC 3339 time or +<n><s|m|h|d>.
        #[arg(long)]
        until: String,
    },
    /// Close the keyless window now.
    ///
    /// Example: catalog-admin keyless clear city-bikes
    Clear { slug: String },
}

#[derive(Subcommand)]
enum DatasetsCommand {
    /// List the catalog as the API does (newest first).
    ///
    /// Example: catalog-admin datasets list --page 2
    List {
        #[arg(long, default_value_t = 1)]
        page: u64,
        #[arg(long, default_value_t = 100)]
        page_size: u64,
    },
    /// Show a dataset's metadata and schema as JSON.
    ///
    /// Example: catalog-admin datasets show air-quality
    Show { slug: String },
    /// Rebuild the per-category, per-tag and per-license lists behind the API's filters from
    /// the catalog list. Run it once after upgrading from a version without filters, or after
    /// a publish that was interrupted while it moved a dataset between categories or tags.
    ///
    /// Example: catalog-admin datasets reindex
    Reindex,
}

#[derive(Subcommand)]
enum VersionsCommand {
    /// List a dataset's versions, marking the active one.
    ///
    /// Example: catalog-admin versions list air-quality
    List { slug: String },
    /// Make an earlier (or later) version the active one.
    ///
    /// Example: catalog-admin versions activate air-quality 3
    Activate { slug: String, version: u64 },
}

#[derive(Debug, thiserror::Error)]
enum CliError {
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Publish(#[from] catalog_admin::publish::PublishError),
    #[error(transparent)]
    Write(#[from] catalog_writer::WriteError),
    #[error(transparent)]
    Store(#[from] catalog::error::StoreError),
    #[error(transparent)]
    Download(#[from] catalog_admin::download::DownloadError),
}

fn slug(raw: &str) -> Result<Slug, CliError> {
    Slug::parse(raw).map_err(|e| CliError::Usage(format!("invalid slug '{raw}': {e}")))
}

struct Env {
    datasets_table: String,
    keys_table: String,
    bucket: Option<String>,
    force_path_style: bool,
}

fn env() -> Result<Env, CliError> {
    let var = |name: &'static str| {
        std::env::var(name)
            .ok()
            .filter(|v| !v.is_empty())
            .ok_or(ConfigError::Missing(name))
    };
    Ok(Env {
        datasets_table: var("DATASETS_TABLE")?,
        keys_table: var("KEYS_TABLE")?,
        bucket: var("DATA_BUCKET").ok(),
        force_path_style: std::env::var("S3_FORCE_PATH_STYLE").is_ok_and(|v| v == "true"),
    })
}

async fn run(cli: Cli) -> Result<(), CliError> {
    let now = Utc::now();
    if let Command::Inspect { file } = &cli.command {
        let (stats, size, sha256) = catalog_admin::publish::inspect(file).await?;
        let out = serde_json::json!({
            "row_count": stats.row_count, "column_count": stats.columns.len(), "size": size,
            "sha256": sha256, "schema": stats.columns,
        });
        println!("{}", serde_json::to_string_pretty(&out).unwrap_or_default());
        return Ok(());
    }
    if let Command::Download {
        slug: raw,
        api_url,
        version,
        output,
    } = &cli.command
    {
        let slug = slug(raw)?;
        let key = std::env::var("CATALOG_API_KEY")
            .ok()
            .filter(|k| !k.is_empty());
        let progress = std::io::IsTerminal::is_terminal(&std::io::stderr());
        let done = catalog_admin::download::download(
            api_url,
            slug.as_str(),
            *version,
            key.as_deref(),
            output.as_deref(),
            progress,
        )
        .await?;
        println!(
            "downloaded {} version {} ({}) to {}: sha256 {} verified",
            done.descriptor.slug,
            done.descriptor.version,
            catalog_admin::human_bytes(done.descriptor.size_bytes),
            done.path.display(),
            done.descriptor.sha256
        );
        return Ok(());
    }
    let env = env()?;
    let sdk = catalog_admin::load_sdk_config().await;
    let dynamo = aws_sdk_dynamodb::Client::new(&sdk);
    let writer = DynamoWriter::new(dynamo.clone(), &env.datasets_table, &env.keys_table);
    match cli.command {
        Command::Inspect { .. } | Command::Download { .. } => Ok(()),
        Command::Publish(args) => {
            let slug = slug(&args.slug)?;
            let bucket = env.bucket.ok_or(ConfigError::Missing("DATA_BUCKET"))?;
            let from_file = match &args.metadata {
                Some(path) => MetaInput::from_file(path)?,
                None => MetaInput::default(),
            };
            let flags = MetaInput {
                name: args.name,
                description: args.description,
                license: args.license,
                source: args.source,
                category: args.category,
                tags: (!args.tags.is_empty()).then_some(args.tags),
                insights: args.insights,
                discussions: None::<Vec<Discussion>>,
            };
            let publisher = Publisher {
                writer,
                s3: aws_sdk_s3::Client::from_conf(catalog::aws::s3_config(
                    &sdk,
                    env.force_path_style,
                )),
                bucket,
            };
            let p = publisher
                .publish(&args.file, &slug, flags.over(from_file), args.new, now)
                .await?;
            let approximate = p.stats.columns.iter().filter(|c| c.approximate).count();
            println!(
                "published {} version {} ({} rows, {} columns, {}, sha256 {}){}",
                p.slug,
                p.version,
                p.stats.row_count,
                p.stats.columns.len(),
                human_bytes(p.size),
                p.sha256,
                if approximate > 0 {
                    format!("; {approximate} column(s) with approximate statistics")
                } else {
                    String::new()
                }
            );
            Ok(())
        }
        Command::Keys(KeysCommand::Create {
            scopes,
            label,
            expires,
        }) => {
            let expires_at = expires
                .map(|e| parse_when(&e, now).map_err(CliError::Usage))
                .transpose()?;
            if expires_at.is_some_and(|t| t <= now) {
                return Err(CliError::Usage("--expires must be in the future".into()));
            }
            if let Some(bad) = scopes.iter().find(|s| s.as_str() != "read") {
                return Err(CliError::Usage(format!(
                    "unknown scope '{bad}': the only scope is 'read'"
                )));
            }
            let secret = generate_key();
            let key = NewKey::for_secret(
                &secret,
                scopes.iter().map(|s| Scope::parse(s)).collect(),
                &label,
                now,
                expires_at,
            );
            let id = key.id.clone();
            writer.put_key(&key).await?;
            eprintln!("created {id}; the key is shown once, store it now:");
            println!("{secret}");
            Ok(())
        }
        Command::Keys(KeysCommand::List) => {
            println!(
                "{:<22} {:<10} {:<6} {:<21} {:<21} {:<21} label",
                "id", "prefix", "scopes", "created", "expires", "revoked"
            );
            let t = |t: Option<chrono::DateTime<Utc>>| {
                t.map_or("-".to_owned(), |t| catalog::model::format_time(&t))
            };
            for k in writer.list_keys().await? {
                println!(
                    "{:<22} {:<10} {:<6} {:<21} {:<21} {:<21} {}",
                    k.id,
                    k.prefix,
                    k.scopes.join(","),
                    catalog::model::format_time(&k.created_at),
                    t(k.expires_at),
                    t(k.revoked_at),
                    k.label
                );
            }
            Ok(())
        }
        Command::Keys(KeysCommand::Revoke { id }) => {
            writer.revoke_key_by_id(&id, now).await?;
            println!("revoked {id}");
            Ok(())
        }
        Command::Keyless(KeylessCommand::Set { slug: raw, until }) => {
            let slug = slug(&raw)?;
            let until = parse_when(&until, now).map_err(CliError::Usage)?;
            writer.set_keyless(&slug, Some(until), now).await?;
            println!(
                "{slug} is keyless until {}{}",
                catalog::model::format_time(&until),
                if until <= now {
                    " (already past: the window is closed)"
                } else {
                    ""
                }
            );
            Ok(())
        }
        Command::Keyless(KeylessCommand::Clear { slug: raw }) => {
            let slug = slug(&raw)?;
            writer.set_keyless(&slug, None, now).await?;
            println!("{slug} requires a key");
            Ok(())
        }
        Command::Datasets(DatasetsCommand::List { page, page_size }) => {
            if page == 0 || page_size == 0 {
                return Err(CliError::Usage("page and page size start at 1".into()));
            }
            let catalog = DynamoCatalog::new(dynamo, &env.datasets_table);
            let offset = (page - 1).checked_mul(page_size);
            let query = catalog::query::ListQuery::default();
            let result = catalog.page(&query, offset, page_size).await?;
            println!("{} datasets", result.total);
            for d in result.items {
                let keyless = catalog::model::is_keyless(d.keyless_until, now);
                println!(
                    "{:<32} {:>12} rows {:>4} cols {:>10}  {}{}",
                    d.slug,
                    d.row_count,
                    d.column_count,
                    human_bytes(d.size),
                    d.name,
                    if keyless { "  [keyless]" } else { "" }
                );
            }
            Ok(())
        }
        Command::Datasets(DatasetsCommand::Reindex) => {
            let (facets, written) = writer.reindex().await?;
            println!("reindexed {facets} filter lists ({written} entries written or removed)");
            Ok(())
        }
        Command::Datasets(DatasetsCommand::Show { slug: raw }) => {
            let slug = slug(&raw)?;
            let catalog = DynamoCatalog::new(dynamo, &env.datasets_table);
            let request = lambda_free_show(&catalog, &slug, now).await?;
            println!("{request}");
            Ok(())
        }
        Command::Versions(VersionsCommand::List { slug: raw }) => {
            let slug = slug(&raw)?;
            for v in writer.list_versions(&slug).await? {
                let a = &v.version;
                println!(
                    "{} v{:<5} {:>12} rows {:>10}  {}  sha256 {}",
                    if v.active { "*" } else { " " },
                    a.version,
                    a.row_count,
                    human_bytes(a.size),
                    catalog::model::format_time(&a.published_at),
                    a.sha256
                );
            }
            Ok(())
        }
        Command::Versions(VersionsCommand::Activate { slug: raw, version }) => {
            let slug = slug(&raw)?;
            let current = writer
                .list_versions(&slug)
                .await?
                .into_iter()
                .find(|v| v.active)
                .map(|v| v.version.version);
            writer
                .activate(&slug, version, current.into(), None, now)
                .await?;
            println!("{slug}: version {version} is active");
            Ok(())
        }
    }
}

/// The dataset as the metadata endpoint shows it.
async fn lambda_free_show(
    catalog: &DynamoCatalog,
    slug: &Slug,
    now: chrono::DateTime<Utc>,
) -> Result<String, CliError> {
    let record = catalog
        .get_dataset(&catalog::domain::DatasetRef::Slug(slug.clone()))
        .await?
        .ok_or_else(|| CliError::Usage(format!("no dataset '{slug}'")))?;
    let active = record.active.as_ref();
    let out = serde_json::json!({
        "slug": record.slug, "id": record.id, "name": record.name,
        "description": record.description, "license": record.license, "source": record.source,
        "category": record.category, "tags": record.tags,
        "active_version": active.map(|a| a.version),
        "size": active.map(|a| a.size), "row_count": active.map(|a| a.row_count),
        "column_count": active.map(|a| a.columns.len()), "insights": record.insights,
        "keyless": catalog::model::is_keyless(record.keyless_until, now),
        "keyless_until": record.keyless_until.map(|t| catalog::model::format_time(&t)),
        "schema": record.schema, "discussions": record.discussions,
        "created_at": catalog::model::format_time(&record.created_at),
        "updated_at": catalog::model::format_time(&record.updated_at),
    });
    Ok(serde_json::to_string_pretty(&out).unwrap_or_default())
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let mut message = format!("error: {e}");
            let mut cause = std::error::Error::source(&e);
            while let Some(c) = cause {
                // Many errors already quote their cause: add only what is new.
                let text = c.to_string();
                if !message.contains(&text) {
                    message.push_str(&format!(": {text}"));
                }
                cause = c.source();
            }
            eprintln!("{message}");
            match e {
                CliError::Usage(_)
                | CliError::Config(_)
                | CliError::Write(
                    catalog_writer::WriteError::NoSuchDataset(_)
                    | catalog_writer::WriteError::NoSuchVersion(..)
                    | catalog_writer::WriteError::NoSuchKey(_),
                ) => ExitCode::from(2),
                CliError::Publish(catalog_admin::publish::PublishError::BadInput(_))
                | CliError::Publish(catalog_admin::publish::PublishError::BadFile(_)) => {
                    ExitCode::from(2)
                }
                _ => ExitCode::FAILURE,
            }
        }
    }
}
