//! Finding datasets (filters, words, sort) against the DynamoDB adapter on moto: every answer
//! equals what filtering and sorting the whole catalog gives, across pages; facet lists follow
//! re-publishing and keyless changes; single-facet listings keep the plain listing's cost
//! (counted on the wire); scans are cached until the catalog changes; `reindex` rebuilds.

use catalog::api;
use catalog::domain::Slug;
use catalog::model::ActiveVersion;
use catalog::model::{Card, DatasetMeta};
use catalog_tests::{json_body, v2_request, Stack, Wire};
use catalog_writer::{DynamoWriter, Expected, NewVersion};
use chrono::{Duration, Utc};
use serde_json::Value;

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
        card: Card {
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
    let meta = meta(s);
    let slug = Slug::parse(&s.slug).unwrap();
    let reserved = writer
        .reserve_version(&slug, &meta, None, false, at)
        .await
        .unwrap();
    let version = NewVersion {
        active: ActiveVersion {
            version: reserved.version,
            s3_key: format!("datasets/{}/v{}/x.parquet", s.slug, reserved.version),
            size: 100,
            row_count: 10,
            columns: vec!["c".into()],
            sha256: "0".repeat(64),
            published_at: at,
        },
        schema_json: "[]".into(),
    };
    writer.put_version(&slug, &version).await.unwrap();
    writer
        .activate(
            &slug,
            reserved.version,
            Expected::from(reserved.previous),
            Some(&meta),
            at,
        )
        .await
        .unwrap();
}

async fn list(catalog: &catalog::dynamo::DynamoCatalog, query: &str) -> (u16, Value) {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?{query}"), &[]),
        catalog,
        Utc::now(),
    )
    .await;
    (resp.status().as_u16(), json_body(&resp))
}

/// Every page of a listing, concatenated: (total, slugs in order).
async fn all_pages(catalog: &catalog::dynamo::DynamoCatalog, query: &str) -> (u64, Vec<String>) {
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

#[tokio::test]
async fn every_filter_and_sort_answers_what_filtering_the_whole_catalog_gives() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let start = Utc::now() - Duration::hours(1);
    for i in 0..14 {
        publish(&writer, &spec(i), start + Duration::seconds(i as i64)).await;
    }
    // Re-publish two older datasets later: their updated_at moves, their place does not.
    publish(&writer, &spec(3), start + Duration::minutes(10)).await;
    publish(&writer, &spec(8), start + Duration::minutes(5)).await;

    let catalog = stack.catalog();
    let (_, everything) = list(&catalog, "page_size=100").await;
    let everything = everything["items"].as_array().unwrap().clone();
    assert_eq!(everything.len(), 14);
    let slugs = |q: &str| {
        let catalog = catalog.clone();
        let q = q.to_owned();
        async move { all_pages(&catalog, &q).await.1 }
    };

    // Single facets (case-insensitive), in publication order, both directions
    let cat = |v: &Value| {
        v["category"]
            .as_str()
            .unwrap()
            .eq_ignore_ascii_case("biology")
    };
    assert_eq!(
        slugs("category=BIOLOGY").await,
        expected(&everything, cat, None)
    );
    let mut oldest_first = expected(&everything, cat, None);
    oldest_first.reverse();
    assert_eq!(
        slugs("category=biology&sort=created:asc").await,
        oldest_first
    );
    assert_eq!(
        slugs("tag=rivers").await,
        expected(&everything, |v| has_tag(v, "rivers"), None)
    );
    assert_eq!(
        slugs("license=cc0-1.0").await,
        expected(&everything, |v| v["license"] == "CC0-1.0", None)
    );

    // Combined facets and repeated tags: all must match
    assert_eq!(
        slugs("category=transport&license=CC-BY-4.0").await,
        expected(
            &everything,
            |v| v["category"] == "transport" && v["license"] == "CC-BY-4.0",
            None
        )
    );
    assert_eq!(
        slugs("tag=birds&tag=rivers").await,
        expected(
            &everything,
            |v| has_tag(v, "birds") && has_tag(v, "rivers"),
            None
        )
    );

    // Words: each must occur in the name, description or tags, case-insensitively
    assert_eq!(
        slugs("q=RIVER%20station").await,
        expected(
            &everything,
            |v| text(v).contains("river") && text(v).contains("station"),
            None
        )
    );
    assert_eq!(
        slugs("q=zebra&category=environment").await,
        expected(
            &everything,
            |v| text(v).contains("zebra") && v["category"] == "environment",
            None
        )
    );

    // Sorts
    let by_name = |a: &Value, b: &Value| {
        let key = |v: &Value| {
            (
                v["name"].as_str().unwrap().to_lowercase(),
                v["slug"].as_str().unwrap().to_owned(),
            )
        };
        key(a).cmp(&key(b))
    };
    assert_eq!(
        slugs("sort=name").await,
        expected(&everything, |_| true, Some(&by_name))
    );
    let by_name_desc = |a: &Value, b: &Value| by_name(b, a);
    assert_eq!(
        slugs("sort=name:desc&tag=city").await,
        expected(&everything, |v| has_tag(v, "city"), Some(&by_name_desc))
    );
    let updated = slugs("sort=updated").await;
    assert_eq!(
        &updated[..2],
        ["ds-03", "ds-08"],
        "re-published last come first"
    );
    let mut updated_asc = slugs("sort=updated:asc").await;
    updated_asc.reverse();
    assert_eq!(updated_asc, updated);

    // Errors: unknown values and bad parameters are 400 with code bad_request
    for q in [
        "category=astronomy",
        "tag=birds&tag=nonexistent",
        "license=proprietary",
        "sort=size",
        "sort=name:up",
        "category=biology&category=transport",
        "category=",
    ] {
        let (status, body) = list(&catalog, q).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert_eq!(body["code"], "bad_request", "{q}");
    }
    let (_, body) = list(&catalog, "category=astronomy").await;
    assert_eq!(
        body["error"],
        "no dataset has ever had category 'astronomy'"
    );
    // No match is not an error
    let (status, body) = list(&catalog, "q=nothing-matches-this").await;
    assert_eq!((status, body["total"].as_u64()), (200, Some(0)));
}

#[tokio::test]
async fn facet_lists_follow_republishing_and_keyless_changes_and_reindex_rebuilds_them() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..9 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let catalog = stack.catalog();
    let biology = |c| async move { all_pages(c, "category=biology").await.1 };
    assert_eq!(biology(&catalog).await, ["ds-06", "ds-03", "ds-00"]);

    // WHEN ds-03 moves from biology to transport and gains a tag
    let mut moved = spec(3);
    moved.category = "Transport".into();
    moved.tags.push("Moved".into());
    publish(&writer, &moved, now + Duration::minutes(1)).await;
    // THEN it leaves biology, joins transport at its publication place, and the tag lists
    assert_eq!(biology(&catalog).await, ["ds-06", "ds-00"]);
    assert_eq!(
        all_pages(&catalog, "category=transport").await.1,
        ["ds-07", "ds-04", "ds-03", "ds-01"]
    );
    assert_eq!(all_pages(&catalog, "tag=moved").await.1, ["ds-03"]);
    assert_facet_lists_consistent(&stack).await;
    let (_, page) = list(&catalog, "category=transport").await;
    let entry = &page["items"][2];
    assert_eq!(
        entry["category"], "Transport",
        "facet entries show the new fields"
    );

    // WHEN a keyless window opens THEN facet listings show it too
    let slug = Slug::parse("ds-06").unwrap();
    writer
        .set_keyless(&slug, Some(Utc::now() + Duration::hours(1)), Utc::now())
        .await
        .unwrap();
    for q in ["category=biology", "license=cc-by-4.0", "tag=rivers"] {
        let (_, page) = list(&catalog, q).await;
        let item = page["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["slug"] == "ds-06")
            .unwrap_or_else(|| panic!("{q}: {page}"));
        assert_eq!(item["keyless"], true, "{q}");
    }

    assert_facet_lists_consistent(&stack).await;

    // A new dataset with the most tags publish allows joins 34 facet lists in one transaction
    let mut many = spec(20);
    many.tags = (0..32).map(|t| format!("t{t:02}")).collect();
    publish(&writer, &many, Utc::now()).await;
    for t in ["t00", "t17", "t31"] {
        assert_eq!(all_pages(&catalog, &format!("tag={t}")).await.1, ["ds-20"]);
    }
    assert_facet_lists_consistent(&stack).await;

    // WHEN the facet lists are lost (an upgrade from a version without them)
    let before: Vec<(String, Vec<String>)> = {
        let mut v = Vec::new();
        for q in [
            "category=biology",
            "category=transport",
            "tag=birds",
            "license=cc-by-4.0",
        ] {
            v.push((q.to_owned(), all_pages(&catalog, q).await.1));
        }
        v
    };
    delete_facet_items(&stack).await;
    let (status, _) = list(&catalog, "category=biology").await;
    assert_eq!(status, 400, "without its list, a facet is unknown");
    // THEN reindex rebuilds them as they were
    let (facets, written) = writer.reindex().await.unwrap();
    assert!(facets >= 8 && written > 0, "{facets} {written}");
    for (q, slugs) in before {
        assert_eq!(all_pages(&catalog, &q).await.1, slugs, "{q}");
    }
    assert_facet_lists_consistent(&stack).await;
}

/// The facet lists as stored: every list holds exactly the listed datasets with that value
/// (from the catalog list, the source of truth), at positions 1..=total in publication order,
/// its counter says total, and no rebuild mark is left behind.
async fn assert_facet_lists_consistent(stack: &Stack) {
    use aws_sdk_dynamodb::types::AttributeValue;
    use std::collections::BTreeMap;
    let table = &stack.target.datasets_table;
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = stack
            .dynamo
            .scan()
            .table_name(table)
            .set_exclusive_start_key(start)
            .send()
            .await
            .unwrap();
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => break,
        }
    }
    let text = |item: &std::collections::HashMap<String, AttributeValue>, name: &str| match item
        .get(name)
    {
        Some(AttributeValue::S(v)) => v.clone(),
        Some(AttributeValue::N(v)) => v.clone(),
        _ => String::new(),
    };
    let position = |sk: &str| sk.trim_start_matches("SEQ#").parse::<u64>().unwrap();
    // Expected: facet key -> [(LIST position, slug)] in publication order
    let mut expected: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    let mut lists: BTreeMap<String, Vec<(u64, u64, String)>> = BTreeMap::new();
    let mut counters: BTreeMap<String, (u64, bool)> = BTreeMap::new();
    for item in &items {
        let pk = text(item, "pk");
        if pk == "LIST" {
            let tags: Vec<String> = match item.get("tags") {
                Some(AttributeValue::L(l)) => l.iter().map(|t| t.as_s().unwrap().clone()).collect(),
                _ => vec![],
            };
            for facet in
                catalog::query::Facet::of(&text(item, "category"), &tags, &text(item, "license"))
            {
                expected
                    .entry(facet.key())
                    .or_default()
                    .push((position(&text(item, "sk")), text(item, "slug")));
            }
        } else if let Some(key) = pk.strip_prefix("LIST#") {
            lists.entry(key.to_owned()).or_default().push((
                position(&text(item, "sk")),
                text(item, "seq").parse().unwrap(),
                text(item, "slug"),
            ));
        } else if let Some(key) = pk.strip_prefix("CATALOG#") {
            counters.insert(
                key.to_owned(),
                (
                    text(item, "total").parse().unwrap(),
                    item.contains_key("rebuild_until"),
                ),
            );
        }
    }
    for (key, mut want) in expected {
        want.sort();
        let mut have = lists.remove(&key).unwrap_or_default();
        have.sort();
        let positions: Vec<u64> = have.iter().map(|(p, _, _)| *p).collect();
        let wanted_positions: Vec<u64> = (1..=want.len() as u64).collect();
        assert_eq!(positions, wanted_positions, "{key}: positions 1..=total");
        let members: Vec<(u64, String)> =
            have.into_iter().map(|(_, seq, slug)| (seq, slug)).collect();
        assert_eq!(members, want, "{key}: members in publication order");
        assert_eq!(
            counters.get(&key),
            Some(&(want.len() as u64, false)),
            "{key}: counter"
        );
    }
    assert!(
        lists.values().all(Vec::is_empty),
        "stray facet lists: {lists:?}"
    );
}

/// Deletes every facet list entry and facet counter, leaving the catalog list.
async fn delete_facet_items(stack: &Stack) {
    use aws_sdk_dynamodb::types::AttributeValue;
    let table = &stack.target.datasets_table;
    let out = stack.dynamo.scan().table_name(table).send().await.unwrap();
    for item in out.items.unwrap_or_default() {
        let pk = match item.get("pk") {
            Some(AttributeValue::S(pk)) => pk.clone(),
            _ => continue,
        };
        if pk.starts_with("LIST#") || pk.starts_with("CATALOG#") {
            stack
                .dynamo
                .delete_item()
                .table_name(table)
                .key("pk", AttributeValue::S(pk))
                .key("sk", item["sk"].clone())
                .send()
                .await
                .unwrap();
        }
    }
}

#[tokio::test]
async fn single_facets_cost_two_round_trips_at_any_page_and_scans_are_cached_per_revision() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..30 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    wire.take_calls();

    // Single facet, default or ascending order, first, middle and last page
    for q in [
        "category=biology",
        "tag=rivers",
        "license=CC0-1.0",
        "category=environment&sort=created:asc",
    ] {
        let total = list(&catalog, &format!("{q}&page_size=3")).await.1["total"]
            .as_u64()
            .unwrap();
        let last = total.div_ceil(3);
        for page in [1, last.div_ceil(2), last] {
            wire.take_calls();
            let (status, body) = list(&catalog, &format!("{q}&page={page}&page_size=3")).await;
            assert_eq!(status, 200);
            let calls = wire.take_calls();
            let ops: Vec<&str> = calls.iter().map(|c| c.operation.as_str()).collect();
            assert_eq!(
                ops,
                ["DynamoDB.GetItem", "DynamoDB.Query"],
                "{q} page {page}"
            );
            let read: usize = calls.iter().map(|c| c.items).sum();
            assert!(read <= 3 + 1, "{q} page {page}: {read} items read");
            assert!(!body["items"].as_array().unwrap().is_empty());
        }
    }

    // A scan: the first request reads the candidate list, the next ones only the counters
    let q = "category=biology&tag=birds&q=station";
    wire.take_calls();
    let (_, first) = list(&catalog, q).await;
    let cold = wire.take_calls();
    assert_eq!(cold[0].operation, "DynamoDB.BatchGetItem");
    assert!(cold[1..].iter().all(|c| c.operation == "DynamoDB.Query"));
    let read: usize = cold.iter().map(|c| c.items).sum();
    assert!(
        read <= 3 + 10 + 1,
        "the smallest candidate list (biology, 10 datasets) and 3 counters: {read}"
    );
    let (_, second) = list(&catalog, &format!("{q}&page=1")).await;
    let warm = wire.take_calls();
    let ops: Vec<&str> = warm.iter().map(|c| c.operation.as_str()).collect();
    assert_eq!(
        ops,
        ["DynamoDB.BatchGetItem"],
        "cached while the catalog is unchanged"
    );
    assert_eq!(first, second);

    // WHEN the catalog changes THEN the next scan reads the list again, and sees the change
    let mut changed = spec(0);
    changed.description = Some("station relocated".into());
    changed.tags = vec!["birds".into()];
    publish(&writer, &changed, Utc::now()).await;
    let (_, after) = list(&catalog, q).await;
    let ops: Vec<String> = wire.take_calls().into_iter().map(|c| c.operation).collect();
    assert!(ops.len() >= 2 && ops[1] == "DynamoDB.Query", "{ops:?}");
    let slugs: Vec<&str> = after["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap())
        .collect();
    assert!(slugs.contains(&"ds-00"), "{slugs:?}");
    wire.take_calls();

    // WHEN a keyless window opens on a dataset in the cached list THEN the scan reads it again
    let (_, cached) = list(&catalog, q).await;
    assert_eq!(wire.take_calls().len(), 1, "cached");
    writer
        .set_keyless(
            &Slug::parse("ds-00").unwrap(),
            Some(Utc::now() + Duration::hours(1)),
            Utc::now(),
        )
        .await
        .unwrap();
    let (_, reread) = list(&catalog, q).await;
    let ops: Vec<String> = wire.take_calls().into_iter().map(|c| c.operation).collect();
    assert!(ops.len() >= 2 && ops[1] == "DynamoDB.Query", "{ops:?}");
    let keyless = |page: &Value| {
        page["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["slug"] == "ds-00")
            .map(|i| i["keyless"].clone())
    };
    assert_eq!(keyless(&cached), Some(Value::Bool(false)));
    assert_eq!(keyless(&reread), Some(Value::Bool(true)));
}

/// Every DynamoDB operation the list function sends, over every kind of listing, is allowed by
/// its role in template.yaml (moto checks no permissions, so this is where a missing one shows).
#[tokio::test]
async fn the_list_functions_role_allows_every_operation_it_sends() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    for i in 0..6 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    for q in [
        "",
        "page=2&page_size=2",
        "category=biology",
        "tag=birds&sort=created:asc",
        "category=biology&license=CC0-1.0",
        "q=station",
        "sort=name",
        "sort=updated:asc&tag=city",
        "category=astronomy",
    ] {
        list(&catalog, q).await;
    }
    let mut sent: Vec<String> = wire
        .take_calls()
        .into_iter()
        .map(|c| c.operation.replace("DynamoDB.", "dynamodb:"))
        .collect();
    sent.sort();
    sent.dedup();
    assert_eq!(
        sent,
        [
            "dynamodb:BatchGetItem",
            "dynamodb:GetItem",
            "dynamodb:Query"
        ]
    );

    let text = std::fs::read_to_string(catalog_tests::repo_root().join("template.yaml")).unwrap();
    let template: serde_norway::Value = serde_norway::from_str(&text).unwrap();
    let mut allowed = Vec::new();
    for policy in template["Resources"]["CatalogListFunction"]["Properties"]["Policies"]
        .as_sequence()
        .unwrap()
    {
        for statement in policy["Statement"].as_sequence().into_iter().flatten() {
            for action in statement["Action"].as_sequence().into_iter().flatten() {
                allowed.push(action.as_str().unwrap().to_owned());
            }
        }
    }
    for op in &sent {
        assert!(
            allowed.contains(op),
            "{op} is not in the list function's policy: {allowed:?}"
        );
    }
}

/// A facet list that lost a dataset's entry (an interrupted rewrite) gets it back, with its
/// current summary, the next time that dataset changes.
#[tokio::test]
async fn the_next_change_to_a_dataset_puts_back_its_missing_facet_entry() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let stack = Stack::start().await;
    let writer = stack.writer();
    for i in 0..6 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // GIVEN ds-03's entry is missing from the biology list (and the list has a gap)
    let table = &stack.target.datasets_table;
    let out = stack
        .dynamo
        .query()
        .table_name(table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S("LIST#category#biology".into()))
        .send()
        .await
        .unwrap();
    let entry = out
        .items
        .unwrap_or_default()
        .into_iter()
        .find(|i| i.get("slug") == Some(&AttributeValue::S("ds-03".into())))
        .unwrap();
    stack
        .dynamo
        .delete_item()
        .table_name(table)
        .key("pk", entry["pk"].clone())
        .key("sk", entry["sk"].clone())
        .send()
        .await
        .unwrap();
    let catalog = stack.catalog();
    let (_, page) = list(&catalog, "category=biology").await;
    assert_eq!(page["total"], 2, "the counter still says 2");
    assert_eq!(
        page["items"].as_array().unwrap().len(),
        1,
        "one entry is gone"
    );

    // WHEN its keyless window opens
    writer
        .set_keyless(
            &Slug::parse("ds-03").unwrap(),
            Some(Utc::now() + Duration::hours(1)),
            Utc::now(),
        )
        .await
        .unwrap();
    // THEN it is back in place, showing the open window, and every list is exact again
    assert_eq!(
        all_pages(&catalog, "category=biology").await.1,
        ["ds-03", "ds-00"]
    );
    let (_, page) = list(&catalog, "category=biology").await;
    assert_eq!(page["items"][0]["keyless"], true);
    assert_facet_lists_consistent(&stack).await;
}
