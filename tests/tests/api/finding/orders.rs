//! Sorting by name, update or downloads from the kept orders in the datasets table: every
//! page is a sort of the whole catalog, the orders follow every kind of change (a download
//! count, a keyless window, a rename, a take-down), a catalog from before them sorts from a
//! scan until `reindex` builds them, no item is left behind, and what a sorted page costs on
//! the wire.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog::records::DatasetSummary;
use catalog_aws::dynamo::codec::prelude::*;
use catalog_aws::dynamo::layout::name::ORDERS_INDEXED;
use catalog_aws::dynamo::layout::LIST_PK;
use catalog_search::order::{Chunk, Key, Sorted};
use catalog_search::orders::{at_keys, at_sk, OrderManifest, ORDER_PK};

/// The `ORDER` partition's items, by sort key.
async fn order_items(
    stack: &Stack,
) -> std::collections::BTreeMap<String, catalog_aws::dynamo::layout::Item> {
    catalog_aws::dynamo::requests::query_partition(
        &stack.dynamo,
        &stack.target.datasets_table,
        ORDER_PK,
    )
    .await
    .unwrap()
    .into_iter()
    .map(|item| (item["sk"].as_s().unwrap().clone(), item))
    .collect()
}

/// Checks the stored orders against the catalog list: each order holds every listed dataset,
/// in the order a sort of the whole list by its key gives; each dataset's `at#` item records
/// its keys; and the partition holds nothing else (no chunk a manifest does not name).
pub(super) async fn assert_orders_match_the_list(stack: &Stack) {
    let listed: Vec<DatasetSummary> = catalog_aws::dynamo::requests::query_partition(
        &stack.dynamo,
        &stack.target.datasets_table,
        LIST_PK,
    )
    .await
    .unwrap()
    .iter()
    .map(|entry| {
        let mut s = DatasetSummary::from_item(entry).unwrap();
        s.seq = catalog_aws::dynamo::layout::position_of(entry).unwrap();
        s
    })
    .collect();
    let items = order_items(stack).await;
    let mut named: Vec<String> = Vec::new();
    for sort in Sorted::ALL {
        let manifest = OrderManifest::from_item(&items[sort.as_str()]).unwrap();
        named.push(sort.as_str().into());
        let mut stored: Vec<u64> = Vec::new();
        for chunk in &manifest.chunks {
            let found: Vec<_> = items.values().cloned().collect();
            let keys = chunk.keys.join_in(ORDER_PK, &found).unwrap().unwrap();
            let in_keys: Vec<u64> = Chunk::from_keys_bytes(&keys).unwrap().seqs().collect();
            // The positions a listing reads, packed, are the keys' positions
            let seqs = chunk.seqs.join_in(ORDER_PK, &found).unwrap().unwrap();
            assert!(chunk.bits > 0, "positions are packed");
            let len = chunk.bounds.len as usize;
            assert_eq!(
                seqs.len(),
                catalog_search::order::packed_len(len, chunk.bits)
            );
            let positions = catalog_search::order::seqs_from(&seqs, len, chunk.bits).unwrap();
            assert_eq!(
                positions.into_iter().map(u64::from).collect::<Vec<_>>(),
                in_keys
            );
            stored.extend(in_keys);
            for blob in [&chunk.keys, &chunk.seqs] {
                named.extend(
                    blob.keys_in(ORDER_PK)
                        .iter()
                        .map(|k| k["sk"].as_s().unwrap().clone()),
                );
            }
        }
        let mut expected: Vec<(Key, u64)> = listed.iter().map(|s| (sort.key(s), s.seq)).collect();
        expected.sort();
        let expected: Vec<u64> = expected.into_iter().map(|(_, seq)| seq).collect();
        assert_eq!(stored, expected, "{}", sort.as_str());
        assert_eq!(manifest.datasets, listed.len() as u64);
    }
    for s in &listed {
        let keys = at_keys(&items[&at_sk(s.seq)]).unwrap();
        let wanted: Vec<Key> = Sorted::ALL.iter().map(|sort| sort.key(s)).collect();
        assert_eq!(keys, wanted, "{}", s.slug);
        named.push(at_sk(s.seq));
    }
    named.sort();
    let stored: Vec<String> = items.keys().cloned().collect();
    assert_eq!(
        stored, named,
        "nothing but what the manifests name and the listed datasets"
    );
}

/// The plain listing's every entry, newest first.
async fn everything(catalog: &catalog_search::listing::IndexedCatalog) -> Vec<Value> {
    let (_, body) = list(catalog, "page_size=100").await;
    body["items"].as_array().unwrap().clone()
}

/// The documented orders, computed in the test from the plain listing (newest first, which a
/// stable sort keeps for ties in `updated` and `downloads`).
fn sorted(everything: &[Value], sort: &str) -> Vec<String> {
    let (field, descending) = match sort.split_once(':') {
        Some((f, d)) => (f, d == "desc"),
        None => (sort, sort != "name"),
    };
    let mut all: Vec<&Value> = everything.iter().collect();
    // Ascending with ties oldest first: reverse the newest-first listing, then sort stably.
    all.reverse();
    match field {
        "name" => all.sort_by_key(|v| {
            (
                v["name"].as_str().unwrap().to_lowercase(),
                v["slug"].as_str().unwrap().to_owned(),
            )
        }),
        "updated" => all.sort_by_key(|v| {
            chrono::DateTime::parse_from_rfc3339(v["updated_at"].as_str().unwrap()).unwrap()
        }),
        "downloads" => all.sort_by_key(|v| v["downloads"].as_u64().unwrap()),
        _ => unreachable!("{sort}"),
    }
    if descending {
        all.reverse();
    }
    all.iter()
        .map(|v| v["slug"].as_str().unwrap().to_owned())
        .collect()
}

const SORTS: [&str; 6] = [
    "name",
    "name:desc",
    "updated",
    "updated:asc",
    "downloads",
    "downloads:asc",
];

pub(super) async fn assert_every_sort(
    catalog: &catalog_search::listing::IndexedCatalog,
    why: &str,
) {
    let all = everything(catalog).await;
    for sort in SORTS {
        assert_eq!(
            all_pages(catalog, &format!("sort={sort}")).await.1,
            sorted(&all, sort),
            "{why}: sort={sort}"
        );
    }
}

#[tokio::test]
async fn sorted_pages_read_the_kept_order_and_follow_downloads_keyless_windows_and_renames() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let start = Utc::now() - Duration::hours(2);
    for i in 0..12 {
        publish(&writer, &spec(i), start + Duration::seconds(i as i64)).await;
    }
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    let ops = |calls: &[catalog_tests::wire::Call]| -> Vec<String> {
        calls.iter().map(|c| c.operation.clone()).collect()
    };
    assert_every_sort(&catalog, "as published").await;
    assert_orders_match_the_list(&stack).await;

    // Cold (a fresh instance): the counter with the two manifests; the one chunk of positions
    // holding the page; the page's entries
    let (fresh, _) = stack.wired(&wire, &Wire::default());
    wire.take_calls();
    let (status, body) = list(&fresh, "sort=name&page=2&page_size=3").await;
    assert_eq!(status, 200, "{body}");
    let cold = wire.take_calls();
    assert_eq!(ops(&cold), ["DynamoDB.BatchGetItem"; 3]);
    assert_eq!(
        cold[0].items, 3,
        "the counter, the text index's and the order's manifests"
    );
    assert_eq!(cold[1].items, 1, "one chunk of positions");
    assert_eq!(cold[2].items, 3, "the page's entries");
    assert_eq!(body["total"], 12);
    // Warm: the revision check only; another page, its entries too
    list(&fresh, "sort=name&page=2&page_size=3").await;
    assert_eq!(ops(&wire.take_calls()), ["DynamoDB.BatchGetItem"]);
    list(&fresh, "sort=name:desc&page=4&page_size=3").await;
    assert_eq!(ops(&wire.take_calls()), ["DynamoDB.BatchGetItem"; 2]);

    // WHEN download counts arrive (two tie) THEN sort=downloads follows, ties by publication
    let at = start + Duration::minutes(30);
    for (slug, count) in [("ds-03", 50), ("ds-07", 50), ("ds-01", 7), ("ds-10", 900)] {
        writer
            .set_downloads(&Slug::parse(slug).unwrap(), count, at)
            .await
            .unwrap();
    }
    let top: Vec<String> = all_pages(&catalog, "sort=downloads").await.1;
    assert_eq!(&top[..4], ["ds-10", "ds-07", "ds-03", "ds-01"]);
    // AND a keyless window moves its dataset to the newest update
    writer
        .set_keyless(
            &Slug::parse("ds-02").unwrap(),
            Some(at + Duration::hours(1)),
            at + Duration::minutes(1),
        )
        .await
        .unwrap();
    assert_eq!(all_pages(&catalog, "sort=updated").await.1[0], "ds-02");
    // AND a new version with another name moves it by name (and by update)
    let mut renamed = spec(5);
    renamed.name = "Aardvark counts".into();
    publish(&writer, &renamed, at + Duration::minutes(2)).await;
    assert_eq!(all_pages(&catalog, "sort=name").await.1[0], "ds-05");
    assert_eq!(all_pages(&catalog, "sort=updated").await.1[0], "ds-05");
    assert_every_sort(&catalog, "after the changes").await;
    assert_orders_match_the_list(&stack).await;

    // AND with a filter or words, the same order over the matches
    let all = everything(&catalog).await;
    let birds: Vec<String> = sorted(&all, "downloads")
        .into_iter()
        .filter(|slug| {
            let v = all.iter().find(|v| v["slug"] == *slug).unwrap();
            has_tag(v, "birds")
        })
        .collect();
    assert_eq!(
        all_pages(&catalog, "tag=birds&sort=downloads").await.1,
        birds
    );
    let stations: Vec<String> = sorted(&all, "name")
        .into_iter()
        .filter(|slug| {
            let v = all.iter().find(|v| v["slug"] == *slug).unwrap();
            starts_a_word(v, "station")
        })
        .collect();
    assert!(stations.len() > 3, "{stations:?}");
    assert_eq!(all_pages(&catalog, "q=station&sort=name").await.1, stations);
}

#[tokio::test]
async fn a_catalog_without_kept_orders_sorts_from_a_scan_until_reindex_builds_them() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let start = Utc::now() - Duration::hours(2);
    for i in 0..9 {
        publish(&writer, &spec(i), start + Duration::seconds(i as i64)).await;
    }
    // GIVEN a catalog listed before the orders existed: no ORDER items, no mark
    delete_partition(&stack, ORDER_PK).await;
    remove_counter_mark(&stack, ORDERS_INDEXED).await;
    let table = &stack.target.datasets_table;
    // THEN every sort answers the same, from a scan of the list
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    assert_every_sort(&catalog, "without orders").await;
    let (fresh, _) = stack.wired(&wire, &Wire::default());
    wire.take_calls();
    list(&fresh, "sort=name").await;
    let ops: Vec<String> = wire.take_calls().into_iter().map(|c| c.operation).collect();
    assert_eq!(ops, ["DynamoDB.BatchGetItem", "DynamoDB.Query"]);
    // AND a change does not start partial orders
    writer
        .set_downloads(&Slug::parse("ds-04").unwrap(), 3, Utc::now())
        .await
        .unwrap();
    assert!(order_items(&stack).await.is_empty());
    assert_every_sort(&catalog, "a change without orders").await;

    // GIVEN what an interrupted writer left: a chunk no manifest names, a stray `at#` item
    let stray_chunk = catalog_aws::dynamo::layout::key_of(ORDER_PK, "N000000000001-deadbeef.0.s#0");
    let stray_at = catalog_aws::dynamo::layout::key_of(ORDER_PK, &at_sk(77));
    for mut item in [stray_chunk, stray_at] {
        item.insert("keys".into(), AttributeValue::S("[]".into()));
        stack
            .dynamo
            .put_item()
            .table_name(table)
            .set_item(Some(item))
            .send()
            .await
            .unwrap();
    }
    // WHEN reindex runs THEN it builds the orders, sweeps the strays, and sorted pages read them
    let done = writer.reindex().await.unwrap();
    assert_eq!(done.orders.datasets, 9);
    assert_eq!(done.orders.chunks, 3, "one chunk per order");
    assert_eq!(done.orders.swept, 2);
    assert_orders_match_the_list(&stack).await;
    let (fresh, _) = stack.wired(&wire, &Wire::default());
    wire.take_calls();
    list(&fresh, "sort=name").await;
    let ops: Vec<String> = wire.take_calls().into_iter().map(|c| c.operation).collect();
    assert_eq!(ops, ["DynamoDB.BatchGetItem"; 3]);
    assert_every_sort(&fresh, "after reindex").await;

    // WHEN a dataset is unpublished (positions renumbered, reindex run) THEN the orders hold
    // the others, and nothing is left at the last position
    writer
        .unpublish(&Slug::parse("ds-02").unwrap(), Utc::now())
        .await
        .unwrap();
    assert_orders_match_the_list(&stack).await;
    assert!(!order_items(&stack).await.contains_key(&at_sk(9)));
    let after = stack.catalog();
    assert_every_sort(&after, "after an unpublish").await;
    assert!(!all_pages(&after, "sort=name")
        .await
        .1
        .contains(&"ds-02".to_owned()));
}
