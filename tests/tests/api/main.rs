//! The API as its clients meet it: every endpoint through the real handlers and adapters,
//! against DynamoDB (moto) and S3 (s3s-fs, which checks SigV4 signatures and expiry), with the
//! sample datasets seeded.
//!
//! - `listing`, `downloads`: the three endpoints, each download fetched and read back;
//! - `many_files`: a version of many files: the metadata's `files`, the data listing (pages,
//!   filters, bad parameters, access, cost), and `catalog-admin download` of every file;
//! - `access_rule`: who may read what (levels, grants, dataset-limited keys) as one matrix over
//!   the data and rows routes, its cost, and the operators' `access` commands; `access_orgs`:
//!   the same for an organisation's private and approval datasets, members and strangers;
//! - `row_values`: an `approval` dataset's statistics without its row values for the public,
//!   with them for whom the rule admits, and their cost;
//! - `sharing`: the Delta Sharing server with Delta Sharing's own Python connector, and its cost;
//!   `sharing_many`: over a table of 10,000 files (file skipping, `limitHint`, paging, the bound);
//! - `rows`: the rows API against pyarrow, what a page reads, hostile parameters, its gate,
//!   version pins while re-publishing; `rows_many`: over a version of many files (`split`,
//!   pages across files and manifest chunks, what a page costs at any offset);
//! - `storage_failures`, `transport_faults`: DynamoDB unreachable, throttling, failing, hanging;
//!   a malformed record;
//! - `finding` (`semantics`, `filter_cost`): filters, words and sort, and what they cost;
//! - `request_cost`: the round trips and items each request costs, counted on the wire;
//! - `over_http`: the local API over real HTTP (CORS, `If-None-Match`, request ids) and the
//!   template's routes;
//! - `captured_logs`: no secret in the local API's log, and `dev/check-logs`;
//! - `events`: every file in events/ through the compiled Lambda binaries;
//! - `contract`: openapi.yaml against the running local API (schemathesis);
//! - `clients`: the README's client recipes and `catalog-admin download`;
//! - `rule_table`: docs/development.md's rule table names tests and code that exist.

use std::time::Duration;

use catalog_aws::dynamo::DynamoCatalog;
use catalog_http::api;
use catalog_search::listing::{indexed, IndexedCatalog};
use catalog_tests::{
    http_get, json_body, manifest, read_parquet, v2_request, Stack, EVENTS_DATASET_ID,
};
use chrono::{TimeDelta, Utc};
use serde_json::Value;

const READ_KEY: &str = "dcat_integration_read_key_000000000000000000000000000000000000000";
const WRITE_KEY: &str = "dcat_integration_write_key_00000000000000000000000000000000000000";

struct Given {
    stack: Stack,
    catalog: IndexedCatalog,
    /// The rows function's reader.
    rows: catalog_preview::ParquetRows<catalog_preview::S3Source>,
}

/// GIVEN the emulators, the four sample datasets (one gated, one in an open keyless window, one
/// whose window closed, one gated and never keyless) and a read key and a write-only key.
async fn given() -> Given {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(READ_KEY, &["read"], now, None).await;
    stack.add_key(WRITE_KEY, &["write"], now, None).await;
    let catalog = stack.catalog();
    let rows = stack.rows();
    Given {
        stack,
        catalog,
        rows,
    }
}

impl Given {
    async fn list(&self, path: &str) -> lambda_http::Response<lambda_http::Body> {
        api::list(&v2_request(path, &[]), &self.catalog, Utc::now()).await
    }

    async fn metadata(&self, path: &str) -> lambda_http::Response<lambda_http::Body> {
        api::metadata(&v2_request(path, &[]), &self.catalog, Utc::now()).await
    }

    async fn data(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> lambda_http::Response<lambda_http::Body> {
        let signer = self.stack.signer(Duration::from_secs(900));
        api::data(
            &v2_request(path, headers),
            &self.catalog,
            &signer,
            Utc::now(),
        )
        .await
    }

    async fn download(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> lambda_http::Response<lambda_http::Body> {
        let signer = self.stack.signer(Duration::from_secs(900));
        api::download(
            &v2_request(path, headers),
            &self.catalog,
            &signer,
            Utc::now(),
        )
        .await
    }

    async fn rows_answer(
        &self,
        path: &str,
        headers: &[(&str, &str)],
    ) -> lambda_http::Response<lambda_http::Body> {
        api::rows(
            &v2_request(path, headers),
            &self.catalog,
            &self.rows,
            Utc::now(),
        )
        .await
    }
}

fn slugs(page: &Value) -> Vec<String> {
    page["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| i["slug"].as_str().expect("slug").to_owned())
        .collect()
}

const UNAVAILABLE: &str = "the catalog is temporarily unavailable, retry shortly";

mod access_orgs;
mod access_rule;
mod captured_logs;
mod clients;
mod contract;
mod downloads;
mod events;
mod finding;
mod linked;
mod linked_files;
mod listing;
mod many_files;
mod metrics;
mod over_http;
mod request_cost;
mod routes;
mod row_values;
mod rows;
mod rows_many;
mod rule_table;
mod sharing;
mod sharing_many;
mod split_stats;
mod storage_failures;
mod transport_faults;
