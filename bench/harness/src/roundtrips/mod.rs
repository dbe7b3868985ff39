//! DynamoDB and S3 requests per API request, on a catalog of 100,000 datasets, counted on the
//! wire by an SDK interceptor on the real clients talking to moto and s3s-fs.
//!
//! Seeding: the sample datasets are published through the lib crate's writer (the operators'
//! path). Their items are then the templates for the bulk: each bulk dataset gets copies of a
//! published dataset's items (dataset, alias, version, list entry) under its own slug, UUID and
//! list position, written with BatchWriteItem, and the catalog counter is set to the total. So
//! every item has exactly the shape the writer makes, and there are really 100,000 of each.
//!
//! For the filters, bulk dataset `i` is in category `cat-{i % 20}`, has tags `tag-{i % 50}`
//! and `bulk` (every bulk dataset: a 100,000-entry facet list) and license `lic-{i % 5}`; its
//! facet list entries and the facet counters are written the same way, at the positions the
//! writer would give them.

use std::collections::HashMap;
use std::time::Instant;

use aws_sdk_dynamodb::types::{AttributeValue, PutRequest, WriteRequest};
use catalog_tests::{json_body, v2_request, Stack, Wire, EVENTS_READ_KEY};
use chrono::Utc;
use uuid::Uuid;

type Item = HashMap<String, AttributeValue>;

/// A gated dataset (never keyless): the bulk copies need a key, like most of a real catalog.
const TEMPLATE: &str = "air-quality-hourly";

/// Path and query, headers, the most DynamoDB requests and items read allowed, the status
/// expected.
type Case<'a> = (String, Vec<(&'a str, &'a str)>, usize, usize, u16);

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
fn first_and_count(modulus: u64, class: u64, bulk: u64) -> (u64, u64) {
    let first = if class == 0 { modulus } else { class };
    let count = if first > bulk {
        0
    } else {
        (bulk - first) / modulus + 1
    };
    (first, count)
}

pub async fn run(datasets: u64) -> Result<(), String> {
    let stack = Stack::start().await;
    let now = Utc::now();
    let published = stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let table = stack.target.datasets_table.clone();

    // The writer's items for the template dataset, and the catalog counter.
    let items = scan(&stack.dynamo, &table).await?;
    let find = |pk: &str, sk: &str| {
        items
            .iter()
            .find(|i| s(i, "pk") == pk && s(i, "sk") == sk)
            .cloned()
            .ok_or_else(|| format!("no item {pk}/{sk}: did the writer's layout change?"))
    };
    let dataset = find(&format!("DS#{TEMPLATE}"), "DATASET")?;
    let id = published[TEMPLATE];
    let alias = find(&format!("ID#{id}"), "DATASET")?;
    let seq: u64 = n(&dataset, "seq")?;
    let entry = find("LIST", &format!("SEQ#{seq:012}"))?;
    let version = items
        .iter()
        .find(|i| s(i, "pk") == format!("DS#{TEMPLATE}") && s(i, "sk").starts_with("V#"))
        .cloned()
        .ok_or("no version item")?;
    let mut counter = find("CATALOG", "COUNTER")?;
    let seeded: u64 = n(&counter, "total")?;
    if datasets < seeded {
        return Err(format!("at least {seeded} datasets"));
    }

    let bulk = datasets - seeded;
    let started = Instant::now();
    let templates = Templates {
        dataset,
        alias,
        version,
        entry,
        seeded,
    };
    let written = batch_write(&stack.dynamo, &table, &templates, bulk).await?;
    // The facet counters.
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
            .table_name(&table)
            .item("pk", AttributeValue::S(format!("CATALOG#{key}")))
            .item("sk", AttributeValue::S("COUNTER".into()))
            .item("total", AttributeValue::N(total.to_string()))
            .send()
            .await
            .map_err(|e| format!("facet counter: {e:?}"))?;
    }
    counter.insert("total".into(), AttributeValue::N(datasets.to_string()));
    stack
        .dynamo
        .put_item()
        .table_name(&table)
        .set_item(Some(counter))
        .send()
        .await
        .map_err(|e| format!("counter: {e:?}"))?;
    println!(
        "Seeded {datasets} datasets ({seeded} published by the writer, {bulk} bulk copies: {written} items) in {:.1} s.",
        started.elapsed().as_secs_f64()
    );

    // The other cases: keys that must fail, and a dataset whose first publish never activated.
    const REVOKED: &str = "dcat_bench_revoked_000000000000000000000000000000000000000000000";
    const EXPIRED: &str = "dcat_bench_expired_000000000000000000000000000000000000000000000";
    const NO_READ: &str = "dcat_bench_noread_0000000000000000000000000000000000000000000000";
    let hour = chrono::TimeDelta::hours(1);
    stack.add_key(REVOKED, &["read"], now - hour, None).await;
    stack
        .writer()
        .revoke_key(&catalog::domain::KeyHash::of(REVOKED), now)
        .await
        .map_err(|e| e.to_string())?;
    stack
        .add_key(EXPIRED, &["read"], now - hour * 2, Some(now - hour))
        .await;
    stack.add_key(NO_READ, &["write"], now, None).await;
    let unpublished = catalog::model::DatasetMeta {
        card: catalog::model::Card {
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
        catalog::domain::Slug::parse("half-published").map_err(|e| e.to_string())?;
    stack
        .writer()
        .reserve_version(&half_published, &unpublished, None, false, now)
        .await
        .map_err(|e| e.to_string())?;

    // The functions' reader and signer, with every request they send recorded.
    let dynamo_wire = Wire::default();
    let s3_wire = Wire::default();
    let (catalog, signer) = stack.wired(&dynamo_wire, &s3_wire);

    let pages = datasets.div_ceil(20);
    let middle_page = pages / 2;
    let middle = format!("bulk-{:06}", bulk / 2);
    let middle_id = stack_id(&stack, &table, &middle).await?;
    let bearer = format!("Bearer {EVENTS_READ_KEY}");
    let middle_page_100 = datasets.div_ceil(100) / 2;
    let gated = [("x-api-key", EVENTS_READ_KEY)];
    let bearer = [("authorization", bearer.as_str())];
    let bad = [("x-api-key", "dcat_not_a_key")];
    let revoked = [("x-api-key", REVOKED)];
    let expired = [("x-api-key", EXPIRED)];
    let no_read = [("x-api-key", NO_READ)];
    let unknown_id = Uuid::new_v4();
    let facet_pages =
        |modulus: u64, page_size: u64| first_and_count(modulus, 7, bulk).1.div_ceil(page_size);
    let cat_last = facet_pages(20, 20);
    let tag_last = facet_pages(50, 20);
    let lic_middle = facet_pages(5, 100) / 2;
    let bulk_middle = bulk.div_ceil(20) / 2;
    let cat_total = first_and_count(20, 7, bulk).1 as usize;
    #[rustfmt::skip]
    let cases: Vec<Case> = vec![
        ("/api/v1/datasets".into(), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?page={middle_page}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?page={pages}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?page={middle_page_100}&page_size=100"), vec![], 2, 101, 200),
        (format!("/api/v1/datasets?page={}", pages + 1), vec![], 2, 1, 200),
        (format!("/api/v1/datasets/{middle}"), vec![], 1, 1, 200),
        (format!("/api/v1/datasets/{middle_id}"), vec![], 1, 1, 200),
        ("/api/v1/datasets/no-such-dataset".into(), vec![], 1, 1, 404),
        // A key's first use in the hour also writes its last_used_at (one UpdateItem); every
        // other use within the hour is the one BatchGetItem.
        (format!("/api/v1/datasets/{middle}/data"), gated.to_vec(), 2, 2, 200),
        (format!("/api/v1/datasets/{middle}/data"), gated.to_vec(), 1, 2, 200),
        (format!("/api/v1/datasets/{middle_id}/data"), bearer.to_vec(), 1, 2, 200),
        (format!("/api/v1/datasets/{middle}/data"), vec![], 1, 1, 401),
        ("/api/v1/datasets/city-bikes/data".into(), vec![], 1, 1, 200),
        (format!("/api/v1/datasets/{middle}/data"), bad.to_vec(), 1, 2, 401),
        ("/api/v1/datasets/no-such-dataset/data".into(), gated.to_vec(), 1, 2, 404),
        ("/api/v1/datasets?page=0".into(), vec![], 0, 0, 400),
        ("/api/v1/datasets?page_size=abc".into(), vec![], 0, 0, 400),
        (format!("/api/v1/datasets/{unknown_id}"), vec![], 1, 1, 404),
        ("/api/v1/datasets/half-published".into(), vec![], 1, 1, 404),
        ("/api/v1/datasets/half-published/data".into(), gated.to_vec(), 1, 2, 404),
        (format!("/api/v1/datasets/{middle}/data"), revoked.to_vec(), 1, 2, 401),
        (format!("/api/v1/datasets/{middle}/data"), expired.to_vec(), 1, 2, 401),
        (format!("/api/v1/datasets/{middle}/data"), no_read.to_vec(), 1, 2, 403),
        (format!("/api/v1/datasets/{middle}/data?format=csv"), gated.to_vec(), 0, 0, 400),
        // Single-facet filters: the plain listing's bound at any page
        ("/api/v1/datasets?category=cat-07".into(), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?category=CAT-07&page={cat_last}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?tag=tag-07&page={tag_last}&sort=created:asc"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?tag=bulk&page={bulk_middle}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?license=lic-2&page={lic_middle}&page_size=100"), vec![], 2, 101, 200),
        // A value no dataset has: an empty 200; the catalog counter says whether filters are indexed
        ("/api/v1/datasets?category=astronomy".into(), vec![], 2, 1, 200),
        // Scans: the first reads the smallest candidate list, the repeat only the counters
        ("/api/v1/datasets?category=cat-07&license=lic-2".into(), vec![], usize::MAX, cat_total + 3, 200),
        ("/api/v1/datasets?category=cat-07&license=lic-2&page=2".into(), vec![], 1, 3, 200),
        ("/api/v1/datasets?category=cat-07&q=bulk".into(), vec![], 1, 2, 200),
        (format!("/api/v1/datasets?q=dataset%20{}", bulk / 2), vec![], usize::MAX, datasets as usize + 1, 200),
        (format!("/api/v1/datasets?q=dataset%20{}", bulk / 3), vec![], 1, 1, 200),
        ("/api/v1/datasets?sort=name&page=3".into(), vec![], 1, 1, 200),
        ("/api/v1/datasets?sort=updated:asc&page_size=100".into(), vec![], 1, 1, 200),
    ];

    println!();
    println!(
        "| request | key | status | DynamoDB requests | operations | items read | S3 requests | ms | target | met |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    let mut misses = 0;
    for (path, headers, target, max_items, expected_status) in &cases {
        let req = v2_request(path, headers);
        let started = Instant::now();
        let resp = catalog_tests::answer(&req, &catalog, &signer).await;
        let ms = started.elapsed().as_millis();
        let status = resp.status().as_u16();
        if path == "/api/v1/datasets" {
            let total = json_body(&resp)["total"].as_u64();
            if total != Some(datasets) {
                return Err(format!("list total is {total:?}, not {datasets}"));
            }
        }
        let ops = dynamo_wire.take_calls();
        let items: usize = ops.iter().map(|c| c.items).sum();
        let s3 = s3_wire.take();
        let met = ops.len() <= *target
            && items <= *max_items
            && s3.is_empty()
            && status == *expected_status;
        if !met {
            misses += 1;
        }
        let key = match headers.first() {
            None => "none",
            Some((_, v)) if *v == "dcat_not_a_key" => "invalid",
            Some((_, v)) if *v == REVOKED => "revoked",
            Some((_, v)) if *v == EXPIRED => "expired",
            Some((_, v)) if *v == NO_READ => "no read scope",
            Some(("authorization", _)) => "Bearer",
            Some(_) => "x-api-key",
        };
        let mut names: Vec<(String, usize)> = Vec::new();
        for c in &ops {
            let name = c.operation.trim_start_matches("DynamoDB.").to_owned();
            match names.last_mut() {
                Some((last, count)) if *last == name => *count += 1,
                _ => names.push((name, 1)),
            }
        }
        let operations = names
            .iter()
            .map(|(name, count)| match count {
                1 => name.clone(),
                _ => format!("{name} ×{count}"),
            })
            .collect::<Vec<_>>()
            .join(", ");
        let requests = match *target {
            usize::MAX => "any number of requests".to_owned(),
            t => format!("≤ {t} requests"),
        };
        println!(
            "| `GET {path}` | {key} | {status} | {} | {operations} | {items} | {} | {ms} | {requests}, ≤ {max_items} items, S3 0 | {} |",
            ops.len(),
            s3.len(),
            if met { "yes" } else { "NO" }
        );
    }
    println!();
    misses += accounts(&stack).await?;
    if misses > 0 {
        return Err(format!(
            "{misses} request(s) missed their round-trip target"
        ));
    }
    println!("Every request met its target at {datasets} datasets.");
    Ok(())
}

/// The account routes' DynamoDB requests, through the keys function's handler and store.
async fn accounts(stack: &Stack) -> Result<usize, String> {
    use catalog::testing::V2Event;
    let wire = Wire::default();
    let accounts = catalog::dynamo::accounts::DynamoAccounts::new(
        stack.dynamo_client(&wire),
        &stack.target.keys_table,
    );
    let sub = "5d7c9e1a-2b3c-4d5e-8f9a-0b1c2d3e4f5a";
    let call = |method: &str, path: &str, body: Option<&str>| {
        let mut event = V2Event::new(method, path).claims([("sub", sub), ("token_use", "access")]);
        if let Some(body) = body {
            event = event.body(body);
        }
        event.request()
    };
    let now = Utc::now();
    println!("Account routes (the keys function), one account holding a few keys:");
    println!();
    println!("| request | status | DynamoDB requests | operations | target | met |");
    println!("|---|---|---|---|---|---|");
    let mut misses = 0;
    let mut report = |what: &str, status: u16, expected: u16, target: usize| {
        let ops = wire.take_calls();
        let names: Vec<String> = ops
            .iter()
            .map(|c| c.operation.trim_start_matches("DynamoDB.").to_owned())
            .collect();
        let met = ops.len() <= target && status == expected;
        if !met {
            misses += 1;
        }
        println!(
            "| {what} | {status} | {} | {} | ≤ {target} | {} |",
            ops.len(),
            names.join(", "),
            if met { "yes" } else { "NO" }
        );
    };
    let mut id = String::new();
    for n in 0..3 {
        let resp = catalog::api::account::account_keys(
            &call(
                "POST",
                "/api/v1/account/keys",
                Some(&format!(r#"{{"label": "k{n}"}}"#)),
            ),
            &accounts,
            now,
        )
        .await;
        let status = resp.status().as_u16();
        id = json_body(&resp)["key"]["id"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        report("`POST /api/v1/account/keys`", status, 201, 1);
    }
    let resp = catalog::api::account::account_keys(
        &call("GET", "/api/v1/account/keys", None),
        &accounts,
        now,
    )
    .await;
    report(
        "`GET /api/v1/account/keys` (3 keys)",
        resp.status().as_u16(),
        200,
        1,
    );
    let path = format!("/api/v1/account/keys/{id}");
    let resp =
        catalog::api::account::account_keys(&call("DELETE", &path, None), &accounts, now).await;
    report(
        "`DELETE /api/v1/account/keys/{id}`",
        resp.status().as_u16(),
        204,
        2,
    );
    let resp =
        catalog::api::account::account_keys(&call("DELETE", &path, None), &accounts, now).await;
    report(
        "`DELETE` again (idempotent)",
        resp.status().as_u16(),
        204,
        2,
    );
    println!();
    println!(
        "Revoking finds the key's hash (the table's key) through the owner index, then marks it"
    );
    println!(
        "and frees its slot in one transaction: two round trips (docs/data-model.md, Cost per request, says why)."
    );
    println!();
    Ok(misses)
}

async fn stack_id(stack: &Stack, table: &str, slug: &str) -> Result<String, String> {
    let item = stack
        .dynamo
        .get_item()
        .table_name(table)
        .key("pk", AttributeValue::S(format!("DS#{slug}")))
        .key("sk", AttributeValue::S("DATASET".into()))
        .send()
        .await
        .map_err(|e| format!("{e:?}"))?
        .item
        .ok_or_else(|| format!("{slug} not seeded"))?;
    Ok(s(&item, "id"))
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
        let id = Uuid::new_v4().to_string();
        let seq = self.seeded + i;
        let name = format!("Bulk dataset {i}");
        let mut d = self.dataset.clone();
        set(&mut d, "pk", &format!("DS#{slug}"));
        set(&mut d, "slug", &slug);
        set(&mut d, "id", &id);
        set(&mut d, "name", &name);
        d.insert("seq".into(), AttributeValue::N(seq.to_string()));
        let mut a = self.alias.clone();
        set(&mut a, "pk", &format!("ID#{id}"));
        set(&mut a, "slug", &slug);
        set(&mut a, "id", &id);
        set(&mut a, "name", &name);
        a.insert("seq".into(), AttributeValue::N(seq.to_string()));
        let mut v = self.version.clone();
        set(&mut v, "pk", &format!("DS#{slug}"));
        let mut e = self.entry.clone();
        set(&mut e, "sk", &format!("SEQ#{seq:012}"));
        set(&mut e, "slug", &slug);
        set(&mut e, "id", &id);
        set(&mut e, "name", &name);
        let facets = bulk_facets(i);
        let tags = AttributeValue::L(vec![
            AttributeValue::S(format!("tag-{:02}", i % 50)),
            AttributeValue::S("bulk".into()),
        ]);
        for item in [&mut d, &mut a, &mut e] {
            set(item, "category", &format!("cat-{:02}", i % 20));
            set(item, "license", &format!("lic-{}", i % 5));
            item.insert("tags".into(), tags.clone());
        }
        let mut items = vec![d, a, v];
        for (key, modulus, class) in facets {
            let (first, _) = first_and_count(modulus, class, bulk);
            let position = (i - first) / modulus + 1;
            let mut f = e.clone();
            set(&mut f, "pk", &format!("LIST#{key}"));
            set(&mut f, "sk", &format!("SEQ#{position:012}"));
            f.insert("seq".into(), AttributeValue::N(seq.to_string()));
            items.push(f);
        }
        items.push(e);
        items
    }
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
            tasks.spawn(async move {
                let mut pending = batch;
                for _ in 0..10 {
                    let out = client
                        .batch_write_item()
                        .request_items(&table, pending)
                        .send()
                        .await
                        .map_err(|e| format!("batch write: {e:?}"))?;
                    pending = out
                        .unprocessed_items
                        .and_then(|mut u| u.remove(&table))
                        .unwrap_or_default();
                    if pending.is_empty() {
                        return Ok(());
                    }
                }
                Err("unprocessed items after 10 tries".to_string())
            });
        }
        match tasks.join_next().await {
            Some(result) => result.map_err(|e| e.to_string())??,
            None => return Ok(written),
        }
    }
}
