//! The catalog the cases run on: the writer's sample datasets, bulk copies of one of them up to
//! the size asked for, the facet and catalog counters, and what the cases that must fail need.

use std::collections::HashMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use catalog::records::DatasetSummary;
use catalog_aws::dynamo::codec::prelude::*;
use catalog_aws::dynamo::layout::name::{
    CATEGORY, ID, LICENSE, NAME, PK, SEQ, SK, SLUG, TAGS, TOTAL,
};
use catalog_aws::dynamo::layout::{
    alias_pk, dataset_pk, list_sk, COUNTER_PK, COUNTER_SK, DATASET_SK, LIST_PK,
};
use catalog_search::index::TextDoc;
use catalog_tests::Stack;
use chrono::{DateTime, Utc};
use uuid::Uuid;

type Item = HashMap<String, AttributeValue>;

/// A gated dataset (never keyless): the bulk copies need a key, like most of a real catalog.
const TEMPLATE: &str = "air-quality-hourly";

/// A key that must fail: revoked.
pub(super) const REVOKED: &str = "dcat_bench_revoked_000000000000000000000000000000000000000000000";
/// A key that must fail: expired.
pub(super) const EXPIRED: &str = "dcat_bench_expired_000000000000000000000000000000000000000000000";
/// A key that must fail on the data route: it has no read scope.
pub(super) const NO_READ: &str = "dcat_bench_noread_0000000000000000000000000000000000000000000000";

/// The facets of bulk dataset `i`: (facet key, modulus, class) where the facet's members are
/// the `i` with `i % modulus == class` (modulus 1: all of them).
fn bulk_facets(i: u64) -> [(String, u64, u64); 4] {
    [
        (format!("category#cat-{:02}", i % 20), 20, i % 20),
        (format!("tag#tag-{:02}", i % 50), 50, i % 50),
        ("tag#bulk".to_owned(), 1, 0),
        (format!("license#lic-{}", i % 5), 5, i % 5),
    ]
}

/// The first member (1-based) of a facet class, and how many members it has among 1..=bulk.
pub(super) fn first_and_count(modulus: u64, class: u64, bulk: u64) -> (u64, u64) {
    let first = if class == 0 { modulus } else { class };
    let count = if first > bulk {
        0
    } else {
        (bulk - first) / modulus + 1
    };
    (first, count)
}

/// Fills the catalog the writer published (`published`: its sample datasets' UUIDs) up to
/// `datasets` with bulk copies of the template, and sets the facet and catalog counters to
/// match. Prints the `Seeded` line, with the time the bulk took. Returns the number of bulk
/// datasets.
pub(super) async fn catalog(
    stack: &Stack,
    published: &HashMap<String, Uuid>,
    datasets: u64,
) -> Result<u64, String> {
    let (templates, counter) = templates(stack, published[TEMPLATE]).await?;
    let seeded = templates.seeded;
    if datasets < seeded {
        return Err(format!("at least {seeded} datasets"));
    }
    let bulk = datasets - seeded;
    let table = &stack.target.datasets_table;
    // The writer's datasets as listed, read before the bulk copies join them.
    let mut docs = Vec::with_capacity(datasets as usize);
    let mut listed = Vec::with_capacity(datasets as usize);
    for entry in catalog_aws::dynamo::requests::query_partition(&stack.dynamo, table, LIST_PK)
        .await
        .map_err(|e| e.to_string())?
    {
        let mut summary = DatasetSummary::from_item(&entry).map_err(|e| e.to_string())?;
        summary.seq =
            catalog_aws::dynamo::layout::position_of(&entry).map_err(|e| e.to_string())?;
        docs.push(TextDoc::of(summary.seq, &summary.card));
        listed.push(summary);
    }
    let started = Instant::now();
    let written = batch_write(&stack.dynamo, table, &templates, bulk).await?;
    write_counters(stack, counter, datasets, bulk).await?;
    println!(
        "Seeded {datasets} datasets ({seeded} published by the writer, {bulk} bulk copies: {written} items) in {:.1} s.",
        started.elapsed().as_secs_f64()
    );
    // The text index of the whole catalog, as `reindex` builds it: the writer's datasets as
    // listed, and the bulk copies' text as written above.
    let started = Instant::now();
    let template = DatasetSummary::from_item(&templates.entry).map_err(|e| e.to_string())?;
    for i in 1..=bulk {
        let mut card = template.card.clone();
        card.name = bulk_name(i);
        card.tags = bulk_tags(i);
        card.category = bulk_category(i);
        card.license = bulk_license(i);
        docs.push(TextDoc::of(seeded + i, &card));
        let mut summary = template.clone();
        summary.slug =
            catalog::input::Slug::parse(&format!("bulk-{i:06}")).map_err(|e| e.to_string())?;
        summary.card = card;
        summary.seq = seeded + i;
        listed.push(summary);
    }
    let built = stack
        .writer()
        .rebuild_text(&docs)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "Text index: {} datasets in {} shards ({:.1} MB), built and stored in {:.1} s.",
        built.datasets,
        built.shards,
        built.bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    // The kept orders (name, updated, downloads), as `reindex` builds them.
    let started = Instant::now();
    let orders = stack
        .writer()
        .rebuild_orders(&listed)
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "Kept orders: {} datasets in {} chunks (three orders), built and stored in {:.1} s.",
        orders.datasets,
        orders.chunks,
        started.elapsed().as_secs_f64()
    );
    Ok(bulk)
}

/// Bulk dataset `i`'s name.
fn bulk_name(i: u64) -> String {
    format!("Bulk dataset {i}")
}

/// Bulk dataset `i`'s category and license (their facets are in [`bulk_facets`]).
fn bulk_category(i: u64) -> String {
    format!("cat-{:02}", i % 20)
}

fn bulk_license(i: u64) -> String {
    format!("lic-{}", i % 5)
}

/// Bulk dataset `i`'s tags.
fn bulk_tags(i: u64) -> Vec<String> {
    vec![format!("tag-{:02}", i % 50), "bulk".into()]
}

/// The writer's items for the template dataset (its UUID is `id`), and the catalog counter,
/// whose total is the number of datasets the writer published.
async fn templates(stack: &Stack, id: Uuid) -> Result<(Templates, Item), String> {
    let items = scan(&stack.dynamo, &stack.target.datasets_table).await?;
    let find = |pk: &str, sk: &str| {
        items
            .iter()
            .find(|i| s(i, PK) == pk && s(i, SK) == sk)
            .cloned()
            .ok_or_else(|| format!("no item {pk}/{sk}: did the writer's layout change?"))
    };
    let dataset = find(&dataset_pk(TEMPLATE), DATASET_SK)?;
    let alias = find(&alias_pk(&id), DATASET_SK)?;
    let seq: u64 = n(&dataset, SEQ)?;
    let entry = find(LIST_PK, &list_sk(seq))?;
    let version = items
        .iter()
        .find(|i| s(i, PK) == dataset_pk(TEMPLATE) && s(i, SK).starts_with("V#"))
        .cloned()
        .ok_or("no version item")?;
    let counter = find(COUNTER_PK, COUNTER_SK)?;
    let seeded: u64 = n(&counter, TOTAL)?;
    let templates = Templates {
        dataset,
        alias,
        version,
        entry,
        seeded,
    };
    Ok((templates, counter))
}

/// Writes the counter of each facet the bulk datasets are in, then the catalog counter
/// (`counter`, as the writer left it) with its total set to `datasets`.
async fn write_counters(
    stack: &Stack,
    mut counter: Item,
    datasets: u64,
    bulk: u64,
) -> Result<(), String> {
    let table = &stack.target.datasets_table;
    let mut facet_totals: HashMap<String, u64> = HashMap::new();
    for i in 1..=bulk.min(100) {
        for (key, modulus, class) in bulk_facets(i) {
            facet_totals.insert(key, first_and_count(modulus, class, bulk).1);
        }
    }
    for (key, total) in &facet_totals {
        stack
            .dynamo
            .put_item()
            .table_name(table)
            .item(PK, AttributeValue::S(format!("{COUNTER_PK}#{key}")))
            .item(SK, AttributeValue::S(COUNTER_SK.into()))
            .item(TOTAL, AttributeValue::N(total.to_string()))
            .send()
            .await
            .map_err(|e| format!("facet counter: {e:?}"))?;
    }
    counter.insert(TOTAL.into(), AttributeValue::N(datasets.to_string()));
    stack
        .dynamo
        .put_item()
        .table_name(table)
        .set_item(Some(counter))
        .send()
        .await
        .map_err(|e| format!("counter: {e:?}"))?;
    Ok(())
}

/// What the cases that must fail ask for: the keys [`REVOKED`], [`EXPIRED`] and [`NO_READ`],
/// and `half-published`, a dataset whose first publish never activated.
pub(super) async fn must_fail(stack: &Stack, now: DateTime<Utc>) -> Result<(), String> {
    let hour = chrono::TimeDelta::hours(1);
    stack.add_key(REVOKED, &["read"], now - hour, None).await;
    stack
        .writer()
        .revoke_key(&catalog::keys::KeyHash::of(REVOKED), now)
        .await
        .map_err(|e| e.to_string())?;
    stack
        .add_key(EXPIRED, &["read"], now - hour * 2, Some(now - hour))
        .await;
    stack.add_key(NO_READ, &["write"], now, None).await;
    let unpublished = catalog::records::DatasetMeta {
        readme: None,
        access: Default::default(),
        card: catalog::records::Card {
            access_level: Default::default(),
            name: "Reserved, never activated".into(),
            description: None,
            category: "bench".into(),
            tags: vec![],
            license: "CC0-1.0".into(),
        },
        source: "bench".into(),
        insights: String::new(),
        discussions: Vec::new(),
    };
    let half_published =
        catalog::input::Slug::parse("half-published").map_err(|e| e.to_string())?;
    // A publish whose upload fails after its reservation: the dataset exists, unlisted, with no
    // active version.
    let publication = catalog_writer::Publication {
        slug: &half_published,
        meta: &unpublished,
        id: None,
        new_only: false,
        now,
    };
    let stopped = stack
        .writer()
        .publish(publication, |_| async {
            Err::<catalog_writer::Staged, _>(catalog_writer::WriteError::Store(
                catalog::error::StoreError::Unavailable("the bench's upload fails".into()),
            ))
        })
        .await;
    if stopped.is_ok() {
        return Err("the half-published dataset was published".into());
    }
    Ok(())
}

/// The UUID of the dataset `slug`, read from its item.
pub(super) async fn stack_id(stack: &Stack, slug: &str) -> Result<String, String> {
    let item = stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .key(PK, AttributeValue::S(dataset_pk(slug)))
        .key(SK, AttributeValue::S(DATASET_SK.into()))
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?
        .item
        .ok_or_else(|| format!("{slug} not seeded"))?;
    Ok(s(&item, ID))
}

fn s(item: &Item, name: &str) -> String {
    match item.get(name) {
        Some(AttributeValue::S(v)) => v.clone(),
        _ => String::new(),
    }
}

fn n(item: &Item, name: &str) -> Result<u64, String> {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v.parse().map_err(|e| format!("{name}: {e}")),
        _ => Err(format!("no number {name}")),
    }
}

fn set(item: &mut Item, name: &str, value: &str) {
    item.insert(name.to_owned(), AttributeValue::S(value.to_owned()));
}

async fn scan(client: &aws_sdk_dynamodb::Client, table: &str) -> Result<Vec<Item>, String> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .set_exclusive_start_key(start)
            .send()
            .await
            .map_err(|e| format!("scan: {e:?}"))?;
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => return Ok(items),
        }
    }
}

/// A published dataset's items, copied for each bulk dataset.
struct Templates {
    dataset: Item,
    alias: Item,
    version: Item,
    entry: Item,
    seeded: u64,
}

impl Templates {
    /// The items of bulk dataset `i` (1-based), under its own slug, UUID and position: dataset,
    /// alias, version, list entry and its four facet list entries.
    fn items(&self, i: u64, bulk: u64) -> Vec<Item> {
        let slug = format!("bulk-{i:06}");
        let id = Uuid::new_v4();
        let seq = self.seeded + i;
        let name = bulk_name(i);
        let mut d = self.dataset.clone();
        set(&mut d, PK, &dataset_pk(&slug));
        d.insert(SEQ.into(), AttributeValue::N(seq.to_string()));
        let mut a = self.alias.clone();
        set(&mut a, PK, &alias_pk(&id));
        a.insert(SEQ.into(), AttributeValue::N(seq.to_string()));
        let mut v = self.version.clone();
        set(&mut v, PK, &dataset_pk(&slug));
        let mut e = self.entry.clone();
        set(&mut e, SK, &list_sk(seq));
        let facets = bulk_facets(i);
        let tags = AttributeValue::L(bulk_tags(i).into_iter().map(AttributeValue::S).collect());
        for item in [&mut d, &mut a, &mut e] {
            set(item, SLUG, &slug);
            set(item, ID, &id.to_string());
            set(item, NAME, &name);
            set(item, CATEGORY, &bulk_category(i));
            set(item, LICENSE, &bulk_license(i));
            item.insert(TAGS.into(), tags.clone());
        }
        let mut items = vec![d, a, v];
        for (key, modulus, class) in facets {
            let (first, _) = first_and_count(modulus, class, bulk);
            let position = (i - first) / modulus + 1;
            let mut f = e.clone();
            set(&mut f, PK, &format!("{LIST_PK}#{key}"));
            set(&mut f, SK, &list_sk(position));
            f.insert(SEQ.into(), AttributeValue::N(seq.to_string()));
            items.push(f);
        }
        items.push(e);
        items
    }
}

/// One BatchWriteItem of these requests, sent again with what it left unprocessed (10 tries).
pub(crate) async fn write_batch(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    batch: Vec<WriteRequest>,
) -> Result<(), String> {
    let mut pending = batch;
    for _ in 0..10 {
        let out = client
            .batch_write_item()
            .request_items(table, pending)
            .send()
            .await
            .map_err(|e| format!("batch write: {e:?}"))?;
        pending = out
            .unprocessed_items
            .and_then(|mut u| u.remove(table))
            .unwrap_or_default();
        if pending.is_empty() {
            return Ok(());
        }
    }
    Err("unprocessed items after 10 tries".to_string())
}

/// Writes the bulk datasets with BatchWriteItem (3 datasets, 24 items, per call), several calls
/// at once, retrying unprocessed items. Items are made batch by batch, so memory stays flat.
/// Returns the number of items written.
async fn batch_write(
    client: &aws_sdk_dynamodb::Client,
    table: &str,
    templates: &Templates,
    bulk: u64,
) -> Result<usize, String> {
    const PER_BATCH: u64 = 3;
    const CONCURRENCY: usize = 8;
    let mut next = 1;
    let mut written = 0;
    let mut tasks = tokio::task::JoinSet::new();
    loop {
        while tasks.len() < CONCURRENCY && next <= bulk {
            let last = (next + PER_BATCH - 1).min(bulk);
            let mut batch = Vec::new();
            for i in next..=last {
                for item in templates.items(i, bulk) {
                    batch.push(
                        WriteRequest::builder()
                            .put_request(
                                PutRequest::builder()
                                    .set_item(Some(item))
                                    .build()
                                    .map_err(|e| e.to_string())?,
                            )
                            .build(),
                    );
                }
            }
            next = last + 1;
            written += batch.len();
            let client = client.clone();
            let table = table.to_owned();
            tasks.spawn(async move { write_batch(&client, &table, batch).await });
        }
        match tasks.join_next().await {
            Some(result) => result.map_err(|e| e.to_string())??,
            None => return Ok(written),
        }
    }
}
