//! Finding datasets (filters, words, sort) against the DynamoDB adapter on moto: every answer
//! equals what filtering and sorting the whole catalog gives, across pages; facet lists follow
//! re-publishing and keyless changes; single-facet listings keep the plain listing's cost
//! (counted on the wire); scans are cached until the catalog changes; `reindex` rebuilds; the
//! facet counts (`facets=true`) equal counting the whole catalog after every kind of change.

use std::sync::Arc;

use catalog::input::Slug;
use catalog::records::{ActiveVersion, Card, DatasetMeta};
use catalog_http::api;
use catalog_tests::{json_body, v2_request, Stack, Wire};
use catalog_writer::{DynamoWriter, NewVersion, Publication, Staged, WriteError};
use chrono::{Duration, Utc};
use serde_json::Value;
use tokio::sync::Barrier;

/// One dataset's descriptive fields in the test catalog.
struct Spec {
    slug: String,
    name: String,
    description: Option<String>,
    category: String,
    tags: Vec<String>,
    license: String,
}

fn spec(i: usize) -> Spec {
    let categories = ["Biology", "transport", "environment"];
    let licenses = ["CC-BY-4.0", "CC0-1.0"];
    let tag_pool = ["birds", "rivers", "hourly", "city", "archive"];
    Spec {
        slug: format!("ds-{i:02}"),
        name: format!("{} dataset {i}", ["Zebra", "alpha", "Mango", "beta"][i % 4]),
        description: (i % 3 != 0).then(|| format!("Measurements from station {i}, river basin")),
        category: categories[i % 3].to_owned(),
        tags: (0..1 + i % 3)
            .map(|k| tag_pool[(i + k) % 5].to_owned())
            .collect(),
        license: licenses[i % 2].to_owned(),
    }
}

fn meta(s: &Spec) -> DatasetMeta {
    DatasetMeta {
        readme: None,
        access: Default::default(),
        card: Card {
            access_level: Default::default(),
            name: s.name.clone(),
            description: s.description.clone(),
            category: s.category.clone(),
            tags: s.tags.clone(),
            license: s.license.clone(),
        },
        source: "tests".into(),
        insights: String::new(),
        discussions: Vec::new(),
    }
}

/// Publishes (or re-publishes) a version with these fields through the writer, as the CLI does.
async fn publish(writer: &DynamoWriter, s: &Spec, at: chrono::DateTime<Utc>) {
    try_publish(writer, s, at).await.unwrap();
}

/// [`publish`], returning what the writer reported (the version published).
async fn try_publish(
    writer: &DynamoWriter,
    s: &Spec,
    at: chrono::DateTime<Utc>,
) -> Result<u64, WriteError> {
    let meta = &meta(s);
    let slug = Slug::parse(&s.slug).unwrap();
    let publication = Publication {
        slug: &slug,
        meta,
        id: None,
        new_only: false,
        now: at,
    };
    writer
        .publish(publication, |reserved| async move {
            Ok::<_, WriteError>(Staged {
                version: version_record(&s.slug, reserved.version, at),
                meta: meta.clone(),
            })
        })
        .await
        .map(|reserved| reserved.version)
}

/// The record of a version whose object the test does not need (listing never reads it).
fn version_record(slug: &str, version: u64, at: chrono::DateTime<Utc>) -> NewVersion {
    NewVersion {
        active: ActiveVersion {
            version,
            s3_key: format!("datasets/{slug}/v{version}/x.parquet"),
            size: 100,
            row_count: 10,
            columns: vec!["c".into()],
            sha256: "0".repeat(64),
            published_at: at,
            files: None,
            ingested: None,
        },
        schema_json: "[]".into(),
    }
}

async fn list(catalog: &catalog_search::listing::IndexedCatalog, query: &str) -> (u16, Value) {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?{query}"), &[]),
        catalog,
        Utc::now(),
    )
    .await;
    (resp.status().as_u16(), json_body(&resp))
}

/// Every page of a listing, concatenated: (total, slugs in order).
async fn all_pages(
    catalog: &catalog_search::listing::IndexedCatalog,
    query: &str,
) -> (u64, Vec<String>) {
    let mut slugs = Vec::new();
    let mut total = 0;
    for page in 1.. {
        let (status, body) = list(catalog, &format!("{query}&page={page}&page_size=4")).await;
        assert_eq!(status, 200, "{query}: {body}");
        total = body["total"].as_u64().unwrap();
        let items = body["items"].as_array().unwrap();
        if items.is_empty() {
            break;
        }
        slugs.extend(items.iter().map(|i| i["slug"].as_str().unwrap().to_owned()));
    }
    assert_eq!(
        total,
        slugs.len() as u64,
        "{query}: total counts the matches"
    );
    (total, slugs)
}

type Order<'a> = dyn Fn(&Value, &Value) -> std::cmp::Ordering + 'a;

/// The expected answer: the plain listing (publication order, newest first), filtered and
/// sorted in the test.
fn expected(
    everything: &[Value],
    keep: impl Fn(&Value) -> bool,
    order: Option<&Order<'_>>,
) -> Vec<String> {
    let mut kept: Vec<&Value> = everything.iter().filter(|v| keep(v)).collect();
    if let Some(order) = order {
        kept.sort_by(|a, b| order(a, b));
    }
    kept.iter()
        .map(|v| v["slug"].as_str().unwrap().to_owned())
        .collect()
}

fn has_tag(v: &Value, tag: &str) -> bool {
    v["tags"]
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t.as_str().unwrap().eq_ignore_ascii_case(tag))
}

fn text(v: &Value) -> String {
    let mut t = format!(
        "{} {}",
        v["name"].as_str().unwrap(),
        v["description"].as_str().unwrap_or("")
    );
    for tag in v["tags"].as_array().unwrap() {
        t.push(' ');
        t.push_str(tag.as_str().unwrap());
    }
    t.to_lowercase()
}

/// Whether `word` (lowercase) starts a word of the dataset's name, description or a tag; a word
/// of one character must be one (docs/api.md, Finding datasets).
fn starts_a_word(v: &Value, word: &str) -> bool {
    let one_char = word.chars().count() == 1;
    text(v).split(|c: char| !c.is_alphanumeric()).any(|w| {
        if one_char {
            w == word
        } else {
            w.starts_with(word)
        }
    })
}

/// Deletes every item of the datasets table's partition `pk` (a catalog from before what it
/// holds).
async fn delete_partition(stack: &Stack, pk: &str) {
    let table = &stack.target.datasets_table;
    let items = catalog_aws::dynamo::requests::query_partition(&stack.dynamo, table, pk)
        .await
        .unwrap();
    for item in items {
        stack
            .dynamo
            .delete_item()
            .table_name(table)
            .key("pk", item["pk"].clone())
            .key("sk", item["sk"].clone())
            .send()
            .await
            .unwrap();
    }
}

/// Removes the attribute `mark` from the catalog counter (a catalog listed before it existed).
async fn remove_counter_mark(stack: &Stack, mark: &str) {
    stack
        .dynamo
        .update_item()
        .table_name(&stack.target.datasets_table)
        .set_key(Some(catalog_aws::dynamo::layout::counter_key(
            catalog_aws::dynamo::layout::COUNTER_PK,
        )))
        .update_expression("REMOVE #mark")
        .expression_attribute_names("#mark", mark)
        .send()
        .await
        .unwrap();
}

mod facet_counts;
mod filter_cost;
mod orders;
mod semantics;
mod text;
mod writers;
