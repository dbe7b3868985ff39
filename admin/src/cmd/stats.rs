//! `catalog-admin stats edges|file|merge`: a version's statistics computed per file and merged
//! (docs/scaling.md), the same code a per-file worker (a Lambda function under Step Functions'
//! Distributed Map, a shell loop, AWS Batch) runs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::{CliError, Context};
use catalog_stats::partial::{self, Edges, FilePartial, PartialError};
use catalog_stats::remote::{ReadCounts, RemoteObject};

/// Statistics computed per file and merged: how a version's statistics fan out past one
/// machine (docs/scaling.md). Three steps: `edges` over every file (footers only), `file` for
/// each file (anywhere, in parallel), `merge` of every file's partial in the version's order.
///
/// Example: catalog-admin stats edges data/*.parquet --out edges.json
#[derive(clap::Subcommand)]
pub enum Command {
    Edges(EdgesArgs),
    File(FileArgs),
    Merge(MergeArgs),
}

/// Phase 1: each column's minimum and maximum over every file, which fix the histograms' bins.
/// Read from the footers (a column's data only where a footer lacks exact bounds). FILES are
/// local paths or s3://bucket/key objects (not both), the version's files; s3://bucket/prefix/
/// (ending in /) stands for the .parquet objects under it that a version takes (none under a
/// name starting with . or _), in key order.
///
/// Example: catalog-admin stats edges data/*.parquet --out edges.json
#[derive(clap::Args)]
pub struct EdgesArgs {
    #[arg(required = true)]
    files: Vec<String>,
    /// Where to write the edges (JSON); printed otherwise.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Phase 2: one file's partial statistics (JSON, a few KiB to tens of KiB per column whatever
/// the file's size), its histograms counted into the bins of EDGES.
///
/// Example: catalog-admin stats file data/part-0007.parquet --edges edges.json --out partials/0007.json
#[derive(clap::Args)]
pub struct FileArgs {
    /// A local path or s3://bucket/key.
    file: String,
    /// What `catalog-admin stats edges` wrote over every file of the version.
    #[arg(long)]
    edges: PathBuf,
    /// Where to write the partial (JSON); printed otherwise.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Merges files' partials, given in the version's file order (sample values come from the
/// first files), into the version's column statistics, as publish writes them, with the
/// bounds of what is an estimate (`estimates`). s3://bucket/prefix/ (ending in /) stands for
/// the partials the per-file function wrote under it (`*.parquet.json`), in key order.
///
/// Example: catalog-admin stats merge partials/*.json --out stats.json
#[derive(clap::Args)]
pub struct MergeArgs {
    #[arg(required = true)]
    partials: Vec<String>,
    /// Where to write the statistics (JSON); printed otherwise.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub async fn run(command: Command, _ctx: &Context) -> Result<(), CliError> {
    match command {
        Command::Edges(args) => {
            let inputs = Inputs::of(&args.files).await?;
            let edges = blocking(move || inputs.edges()).await?;
            write(args.out.as_deref(), &edges)
        }
        Command::File(args) => {
            let edges: Edges = read_json(&args.edges, "edges")?;
            let inputs = Inputs::of(std::slice::from_ref(&args.file)).await?;
            if inputs.len() != 1 {
                return Err(CliError::Usage(format!(
                    "{}: stats file takes one file, not a prefix",
                    args.file
                )));
            }
            let partial = blocking(move || inputs.partial(&edges)).await?;
            // Compact: a fan-out writes thousands of them.
            let text = serde_json::to_string(&partial)
                .map_err(|e| CliError::Usage(format!("cannot write the JSON: {e}")))?;
            write_text(args.out.as_deref(), text)
        }
        Command::Merge(args) => {
            let partials = read_partials(&args.partials).await?;
            let merged = partial::merge(&partials).map_err(usage)?;
            write(args.out.as_deref(), &merged)
        }
    }
}

fn usage(e: PartialError) -> CliError {
    CliError::Usage(e.to_string())
}

/// The files, local or in S3.
enum Inputs {
    Local(Vec<PathBuf>),
    Remote(Vec<RemoteObject>),
}

impl Inputs {
    async fn of(names: &[String]) -> Result<Self, CliError> {
        let remote = names.iter().filter(|n| n.starts_with("s3://")).count();
        if remote == 0 {
            return Ok(Self::Local(names.iter().map(PathBuf::from).collect()));
        }
        if remote < names.len() {
            return Err(CliError::Usage(
                "give local paths or s3://bucket/key objects, not both".into(),
            ));
        }
        let s3 = s3_client().await;
        let counts = Arc::new(ReadCounts::default());
        let handle = tokio::runtime::Handle::current();
        let mut objects = Vec::with_capacity(names.len());
        let object =
            |bucket: &str, key: &str, size: Option<i64>, etag: Option<&str>| RemoteObject {
                s3: s3.clone(),
                bucket: bucket.to_owned(),
                key: key.to_owned(),
                size: u64::try_from(size.unwrap_or(0)).unwrap_or(0),
                etag: etag.map(str::to_owned),
                handle: handle.clone(),
                counts: counts.clone(),
            };
        for name in names {
            // A prefix: its Parquet objects, by key.
            if let Some((bucket, prefix)) = name
                .strip_prefix("s3://")
                .filter(|rest| rest.ends_with('/'))
                .and_then(|rest| rest.split_once('/'))
            {
                let mut pages = s3
                    .list_objects_v2()
                    .bucket(bucket)
                    .prefix(prefix)
                    .into_paginator()
                    .send();
                let mut found = Vec::new();
                while let Some(page) = pages.next().await {
                    let page = page.map_err(|e| {
                        CliError::Usage(format!(
                            "listing {name}: {}",
                            aws_sdk_s3::error::DisplayErrorContext(e)
                        ))
                    })?;
                    for o in page.contents() {
                        // The files `stage publish` would take (catalog::files' one rule).
                        if let Some(key) = o.key().filter(|k| {
                            k.strip_prefix(prefix)
                                .is_some_and(catalog::files::is_version_parquet)
                        }) {
                            found.push(object(bucket, key, o.size(), o.e_tag()));
                        }
                    }
                }
                if found.is_empty() {
                    return Err(CliError::Usage(format!("no .parquet objects under {name}")));
                }
                found.sort_by(|a, b| a.key.cmp(&b.key));
                objects.extend(found);
                continue;
            }
            let (bucket, key) = name
                .strip_prefix("s3://")
                .and_then(|rest| rest.split_once('/'))
                .filter(|(b, k)| !b.is_empty() && !k.is_empty())
                .ok_or_else(|| CliError::Usage(format!("{name}: not s3://bucket/key")))?;
            let head = s3
                .head_object()
                .bucket(bucket)
                .key(key)
                .send()
                .await
                .map_err(|e| {
                    CliError::Usage(format!(
                        "{name}: {}",
                        aws_sdk_s3::error::DisplayErrorContext(e)
                    ))
                })?;
            objects.push(object(bucket, key, head.content_length(), head.e_tag()));
        }
        Ok(Self::Remote(objects))
    }

    fn len(&self) -> usize {
        match self {
            Self::Local(paths) => paths.len(),
            Self::Remote(objects) => objects.len(),
        }
    }

    fn edges(&self) -> Result<Edges, PartialError> {
        match self {
            Self::Local(paths) => partial::edges(paths),
            Self::Remote(objects) => partial::edges(objects),
        }
    }

    fn partial(&self, edges: &Edges) -> Result<FilePartial, PartialError> {
        match self {
            Self::Local(paths) => partial::file_partial(&paths[0], edges),
            Self::Remote(objects) => {
                let mut partial = partial::file_partial(&objects[0], edges)?;
                partial.etag.clone_from(&objects[0].etag);
                Ok(partial)
            }
        }
    }
}

/// The S3 client of `s3://` names (`AWS_ENDPOINT_URL_S3` and `S3_FORCE_PATH_STYLE=true` for a
/// local server).
async fn s3_client() -> aws_sdk_s3::Client {
    let sdk = crate::load_sdk_config().await;
    let path_style =
        std::env::var("S3_FORCE_PATH_STYLE").is_ok_and(|v| matches!(v.trim(), "true" | "1"));
    aws_sdk_s3::Client::from_conf(catalog_aws::aws::s3_config(&sdk, path_style))
}

/// The partials named: local files, and for each `s3://bucket/prefix/` the `*.parquet.json`
/// objects under it (what the per-file function writes), in key order.
pub(crate) async fn read_partials(names: &[String]) -> Result<Vec<FilePartial>, CliError> {
    let mut partials = Vec::with_capacity(names.len());
    let mut client = None;
    for name in names {
        let Some(rest) = name.strip_prefix("s3://") else {
            partials.push(read_json(Path::new(name), "partial statistics")?);
            continue;
        };
        let (bucket, prefix) = rest
            .split_once('/')
            .filter(|(b, p)| !b.is_empty() && (p.is_empty() || p.ends_with('/')))
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "{name}: give s3://bucket/prefix/ (ending in /), the partials under it"
                ))
            })?;
        let s3 = match &client {
            Some(s3) => s3,
            None => client.insert(s3_client().await),
        };
        let failed = |e: String| CliError::Usage(format!("{name}: {e}"));
        // In key order (a sorted map).
        let keys: Vec<String> = crate::publish::upload::list_present(s3, bucket, prefix)
            .await
            .map_err(|e| failed(e.to_string()))?
            .into_keys()
            .filter(|k| k.ends_with(".parquet.json"))
            .collect();
        if keys.is_empty() {
            return Err(failed("no partials (*.parquet.json) under it".into()));
        }
        for key in keys {
            let object = s3
                .get_object()
                .bucket(bucket)
                .key(&key)
                .send()
                .await
                .map_err(|e| {
                    failed(format!(
                        "{key}: {}",
                        aws_sdk_s3::error::DisplayErrorContext(e)
                    ))
                })?;
            let bytes = object
                .body
                .collect()
                .await
                .map_err(|e| failed(format!("{key}: {e}")))?
                .into_bytes();
            partials.push(
                serde_json::from_slice(&bytes)
                    .map_err(|e| failed(format!("{key}: not partial statistics: {e}")))?,
            );
        }
    }
    Ok(partials)
}

/// Runs the statistics off the runtime's worker threads (the S3 reader blocks on the runtime).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PartialError> + Send + 'static,
) -> Result<T, CliError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| CliError::Usage(format!("the statistics failed: {e}")))?
        .map_err(usage)
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T, CliError> {
    let text = std::fs::read(path)
        .map_err(|e| CliError::Usage(format!("cannot read {}: {e}", path.display())))?;
    serde_json::from_slice(&text)
        .map_err(|e| CliError::Usage(format!("{}: not {what}: {e}", path.display())))
}

fn write(out: Option<&Path>, value: &impl Serialize) -> Result<(), CliError> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::Usage(format!("cannot write the JSON: {e}")))?;
    write_text(out, text)
}

fn write_text(out: Option<&Path>, text: String) -> Result<(), CliError> {
    match out {
        Some(path) => std::fs::write(path, text + "\n")
            .map_err(|e| CliError::Usage(format!("cannot write {}: {e}", path.display()))),
        None => {
            println!("{text}");
            Ok(())
        }
    }
}
