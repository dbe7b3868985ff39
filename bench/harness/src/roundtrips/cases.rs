//! The API requests measured on the seeded catalog, through the functions' reader and signer:
//! one table row each, with the DynamoDB and S3 requests sent for it and its target.

use std::time::Instant;

use catalog_tests::{json_body, v2_request, Call, Stack, Wire, EVENTS_READ_KEY};
use uuid::Uuid;

use super::seed::{first_and_count, stack_id, EXPIRED, NO_READ, REVOKED};

/// Path and query, headers, the most DynamoDB requests and items read allowed, the status
/// expected.
type Case<'a> = (String, Vec<(&'a str, &'a str)>, usize, usize, u16);

/// The read key, as an `x-api-key` header.
const GATED: [(&str, &str); 1] = [("x-api-key", EVENTS_READ_KEY)];

/// A key no account has.
const INVALID: &str = "dcat_not_a_key";

/// The seeded catalog, as the cases name it.
struct Seeded {
    /// Datasets in all.
    datasets: u64,
    /// Bulk copies among them (`bulk-000001` …).
    bulk: u64,
    /// The bulk dataset in the middle, by slug and by UUID.
    middle: String,
    middle_id: String,
    /// The read key, as an `authorization` header's value.
    bearer: String,
}

/// Sends every case (see [`cases`]) and prints its row of the round-trips table;
/// fails if the plain listing's total is not `datasets`. Returns how many cases missed their
/// target.
pub(super) async fn measure(stack: &Stack, datasets: u64, bulk: u64) -> Result<usize, String> {
    let dynamo_wire = Wire::default();
    let s3_wire = Wire::default();
    let (catalog, signer) = stack.wired(&dynamo_wire, &s3_wire);
    let rows = stack.rows_wired(&s3_wire);
    let middle = format!("bulk-{:06}", bulk / 2);
    let seeded = Seeded {
        datasets,
        bulk,
        middle_id: stack_id(stack, &middle).await?,
        middle,
        bearer: format!("Bearer {EVENTS_READ_KEY}"),
    };

    println!();
    println!(
        "| request | key | status | DynamoDB requests | operations | items read | MB read | S3 requests | ms | target | met |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut misses = 0;
    for case in &cases(&seeded) {
        let (path, headers, ..) = case;
        let req = v2_request(path, headers);
        let started = Instant::now();
        let resp = catalog_tests::answer(&req, &catalog, &signer, &rows).await;
        let ms = started.elapsed().as_millis();
        if path == "/api/v1/datasets" {
            let total = json_body(&resp)["total"].as_u64();
            if total != Some(datasets) {
                return Err(format!("list total is {total:?}, not {datasets}"));
            }
        }
        let ops = dynamo_wire.take_calls();
        let s3 = s3_wire.take().len();
        if !row(case, resp.status().as_u16(), ms, &ops, s3) {
            misses += 1;
        }
    }
    Ok(misses)
}

/// The most a request with a bounded number of round trips may read, in bytes.
const MAX_BYTES: usize = 8_000_000;

/// Prints a case's row: the status, the DynamoDB operations and items read, the S3 requests
/// (`s3`) and the time taken, against the case's target. Returns whether it met the target.
fn row(case: &Case<'_>, status: u16, ms: u128, ops: &[Call], s3: usize) -> bool {
    let (path, headers, target, max_items, expected_status) = case;
    let items: usize = ops.iter().map(|c| c.items).sum();
    let bytes: usize = ops.iter().map(|c| c.bytes).sum();
    // A bounded request also reads at most 8 MB (the cold-cache bound).
    let bounded = *target == usize::MAX || bytes <= MAX_BYTES;
    let met = ops.len() <= *target
        && items <= *max_items
        && bounded
        && s3 == 0
        && status == *expected_status;
    let requests = match *target {
        usize::MAX => "any number of requests".to_owned(),
        t => format!("≤ {t} requests"),
    };
    let bytes_target = match *target {
        usize::MAX => String::new(),
        _ => format!(", ≤ {} MB", MAX_BYTES / 1_000_000),
    };
    println!(
        "| `GET {path}` | {} | {status} | {} | {} | {items} | {:.2} | {s3} | {ms} | {requests}, ≤ {max_items} items{bytes_target}, S3 0 | {} |",
        key(headers),
        ops.len(),
        operations(ops),
        bytes as f64 / 1e6,
        if met { "yes" } else { "NO" }
    );
    met
}

/// The key column: which key, if any, the request carries.
fn key(headers: &[(&str, &str)]) -> &'static str {
    match headers.first() {
        None => "none",
        Some((_, v)) if *v == INVALID => "invalid",
        Some((_, v)) if *v == REVOKED => "revoked",
        Some((_, v)) if *v == EXPIRED => "expired",
        Some((_, v)) if *v == NO_READ => "no read scope",
        Some(("authorization", _)) => "Bearer",
        Some(_) => "x-api-key",
    }
}

/// The operations column: the DynamoDB operations in order, a run of one written once with
/// its count (`Query ×3`).
fn operations(ops: &[Call]) -> String {
    let mut names: Vec<(String, usize)> = Vec::new();
    for c in ops {
        let name = c.operation.trim_start_matches("DynamoDB.").to_owned();
        match names.last_mut() {
            Some((last, count)) if *last == name => *count += 1,
            _ => names.push((name, 1)),
        }
    }
    names
        .iter()
        .map(|(name, count)| match count {
            1 => name.clone(),
            _ => format!("{name} ×{count}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cases, in the table's order: the plain listing (first, middle, last pages, a page of
/// 100, past the end); a dataset's metadata and data links, with and without keys; requests
/// that must fail; single-facet filters; and what the catalog answers by scanning.
#[rustfmt::skip]
fn cases(seeded: &Seeded) -> Vec<Case<'_>> {
    let Seeded { datasets, bulk, ref middle, ref middle_id, .. } = *seeded;
    let pages = datasets.div_ceil(20);
    let middle_page = pages / 2;
    let middle_page_100 = datasets.div_ceil(100) / 2;
    let bearer = [("authorization", seeded.bearer.as_str())];
    let bad = [("x-api-key", INVALID)];
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
    let chunks = datasets.div_ceil(catalog_search::order::BUILD_CHUNK as u64) as usize;
    vec![
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
        (format!("/api/v1/datasets/{middle}/data"), GATED.to_vec(), 2, 2, 200),
        (format!("/api/v1/datasets/{middle}/data"), GATED.to_vec(), 1, 2, 200),
        (format!("/api/v1/datasets/{middle_id}/data"), bearer.to_vec(), 1, 2, 200),
        (format!("/api/v1/datasets/{middle}/data"), vec![], 1, 1, 401),
        ("/api/v1/datasets/city-bikes/data".into(), vec![], 1, 1, 200),
        (format!("/api/v1/datasets/{middle}/data"), bad.to_vec(), 1, 2, 401),
        ("/api/v1/datasets/no-such-dataset/data".into(), GATED.to_vec(), 1, 2, 404),
        // Requests that must fail: bad parameters, a UUID no dataset has, a dataset whose first
        // publish never activated, keys revoked, expired or without the read scope, no such format
        ("/api/v1/datasets?page=0".into(), vec![], 0, 0, 400),
        ("/api/v1/datasets?page_size=abc".into(), vec![], 0, 0, 400),
        (format!("/api/v1/datasets/{unknown_id}"), vec![], 1, 1, 404),
        ("/api/v1/datasets/half-published".into(), vec![], 1, 1, 404),
        ("/api/v1/datasets/half-published/data".into(), GATED.to_vec(), 1, 2, 404),
        (format!("/api/v1/datasets/{middle}/data"), revoked.to_vec(), 1, 2, 401),
        (format!("/api/v1/datasets/{middle}/data"), expired.to_vec(), 1, 2, 401),
        (format!("/api/v1/datasets/{middle}/data"), no_read.to_vec(), 1, 2, 403),
        (format!("/api/v1/datasets/{middle}/data?format=csv"), GATED.to_vec(), 0, 0, 400),
        // Single-facet filters: the plain listing's bound at any page
        ("/api/v1/datasets?category=cat-07".into(), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?category=CAT-07&page={cat_last}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?tag=tag-07&page={tag_last}&sort=created:asc"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?tag=bulk&page={bulk_middle}"), vec![], 2, 21, 200),
        (format!("/api/v1/datasets?license=lic-2&page={lic_middle}&page_size=100"), vec![], 2, 101, 200),
        // A value no dataset has: an empty 200; the catalog counter says whether filters are indexed
        ("/api/v1/datasets?category=astronomy".into(), vec![], 2, 1, 200),
        // Several filters, words, or both: the counters and the text index's manifest; the
        // shards the filters and words need and the delta; the page's entries. Then the
        // revision check and the entries of a page not read yet.
        ("/api/v1/datasets?category=cat-07&license=lic-2".into(), vec![], 3, 60, 200),
        ("/api/v1/datasets?category=cat-07&license=lic-2&page=2".into(), vec![], 2, 25, 200),
        ("/api/v1/datasets?category=cat-07&q=bulk".into(), vec![], 3, 60, 200),
        (format!("/api/v1/datasets?q=dataset%20{}", bulk / 2), vec![], 3, 60, 200),
        (format!("/api/v1/datasets?q=dataset%20{}", bulk / 3), vec![], 3, 60, 200),
        (format!("/api/v1/datasets?q=dataset%20{}", bulk / 3), vec![], 1, 2, 200),
        (format!("/api/v1/datasets?q=bulk%20dataset&page={bulk_middle}"), vec![], 3, 60, 200),
        (format!("/api/v1/datasets?q=tag%2007&sort=created:asc&page={tag_last}"), vec![], 3, 60, 200),
        // Another order (name, updated, downloads): the counter and the two manifests; the
        // kept order's chunk (or two) holding the page; the page's entries. With a filter or
        // words, every chunk of positions beside the index's shards (4 bytes a dataset)
        (format!("/api/v1/datasets?sort=name&page={middle_page}"), vec![], 3, 3 + 2 + 20, 200),
        (format!("/api/v1/datasets?sort=updated:asc&page={middle_page_100}&page_size=100"), vec![], 3, 3 + 2 + 100, 200),
        (format!("/api/v1/datasets?sort=downloads&page={pages}"), vec![], 3, 3 + 2 + 20, 200),
        ("/api/v1/datasets?category=cat-07&sort=name".into(), vec![], 3, 4 + 40 + chunks + 20, 200),
        (format!("/api/v1/datasets?category=cat-07&sort=name:desc&page={cat_last}"), vec![], 2, 4 + 20, 200),
        (format!("/api/v1/datasets?q=bulk%20dataset&sort=updated&page={bulk_middle}"), vec![], 3, 3 + 40 + chunks + 20, 200),
    ]
}
