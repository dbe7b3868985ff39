//! The operators' CLI end to end: the compiled `catalog-admin` against the emulators, and the
//! API (the functions' handlers and adapters) reflecting each change on the next request.
//!
//! - `publishing`, `wide`: publish, re-publish, rollback, bad input, races, large and wide files;
//! - `failed_publishes`: a publish that fails on the way leaves the previous version serving;
//! - `ingest`: CSV and JSON Lines converted to Parquet, bad input, skipped rows recorded;
//! - `many_files`: a version of many files (splits, partitions), a cut-off publish resumed,
//!   and its bad input;
//! - `reindex`: the filter lists repaired, and a publish whose list rewrite fails;
//! - `staged`: files staged under `staging/` and published in place (server-side copies);
//! - `operations`: keys, keyless windows, listings, pinned versions, `--help`;
//! - `statistics`: `catalog-admin inspect` against a pandas/pyarrow reference.
//! - `stats_scale`: statistics per file (`stats edges`, `stats file`, from disk and S3) merged
//!   (`stats merge`) against `inspect` of one file of every row.
//! - `private`: private datasets in no public list, moved in and out by their level.
//! - `takedown`: unpublish, restore, delete a dataset, delete a version.
//! - `takedown_many`: the same of versions of many files, and sweeping unrecorded versions.
//! - `time_travel`: the versions Delta Sharing reads by number after rollbacks and failed publishes.
//! - `downloads`: the download log and counts, and `catalog-admin audit`.
//! - `card`: the dataset card (README): set, replaced, cleared, answered, refused by size.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use catalog::input::Slug;
use catalog::records::DatasetMeta;
use catalog_http::api;
use catalog_tests::{
    admin_command, http_get, json_body, repo_root, run_admin, samples_dir, tool, v2_request, Stack,
};
use catalog_writer::{NewVersion, Publication, Staged, WriteError};
use chrono::Utc;
use serde_json::Value;

/// Runs `catalog-admin` with the stack's configuration and extra environment.
/// What it printed is kept for the log scan (`catalog_tests::run_admin`).
fn admin(stack: &Stack, args: &[&str], env: &[(&str, &str)]) -> Output {
    run_admin(
        admin_command()
            .args(args)
            .envs(stack.function_env())
            .envs(env.iter().copied()),
    )
}

/// The descriptive flags a publish needs, for tests about something else.
const META: [&str; 8] = [
    "--name",
    "Staged",
    "--license",
    "CC0-1.0",
    "--source",
    "tests",
    "--category",
    "testing",
];

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "catalog-admin failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn sample(name: &str) -> PathBuf {
    samples_dir().join(format!("{name}.parquet"))
}

fn publish(stack: &Stack, file: &Path, slug: &str) -> Output {
    admin(
        stack,
        &[
            "publish",
            file.to_str().unwrap(),
            "--slug",
            slug,
            "--name",
            "Published through the CLI",
            "--license",
            "CC0-1.0",
            "--source",
            "tests",
            "--category",
            "testing",
            "--tag",
            "cli",
        ],
        &[],
    )
}

async fn metadata(stack: &Stack, slug: &str) -> lambda_http::Response<lambda_http::Body> {
    api::metadata(
        &v2_request(&format!("/api/v1/datasets/{slug}"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await
}

async fn data(
    stack: &Stack,
    slug: &str,
    key: Option<&str>,
) -> lambda_http::Response<lambda_http::Body> {
    let headers: Vec<(&str, &str)> = key.map(|k| ("x-api-key", k)).into_iter().collect();
    api::data(
        &v2_request(&format!("/api/v1/datasets/{slug}/data"), &headers),
        &stack.catalog(),
        &stack.signer(Duration::from_secs(900)),
        Utc::now(),
    )
    .await
}

async fn list(stack: &Stack) -> Value {
    json_body(
        &api::list(
            &v2_request("/api/v1/datasets", &[]),
            &stack.catalog(),
            Utc::now(),
        )
        .await,
    )
}

fn create_key(stack: &Stack) -> String {
    let out = ok(&admin(
        stack,
        &["keys", "create", "--scope", "read", "--label", "t"],
        &[],
    ));
    out.trim().to_owned()
}

fn inspect(file: &Path) -> Value {
    let out = run_admin(admin_command().args(["inspect", file.to_str().unwrap()]));
    serde_json::from_slice(&out.stdout).expect("inspect prints JSON")
}

mod card;
mod downloads;
mod failed_publishes;
mod ingest;
mod many_files;
mod operations;
mod private;
mod publishing;
mod reindex;
mod site_upload;
mod staged;
mod statistics;
mod stats_scale;
mod takedown;
mod takedown_many;
mod time_travel;
mod wide;
