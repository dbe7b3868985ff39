//! `q` and several filters from the text index kept in the datasets table: ranking, every kind
//! of change (edits, take-downs, restores, concurrent publishes, facet changes), a catalog from
//! before the index (or before it held filters) until `reindex` builds it, no blob left
//! behind, and what a listing with words or filters costs on the wire.

use super::*;
use aws_sdk_dynamodb::types::AttributeValue;
use catalog_search::listing::FETCH_MATCHES;
use catalog_search::text::{Blob, Manifest, TEXT_PK};

fn named(slug: &str, name: &str, description: Option<&str>, tags: &[&str]) -> Spec {
    Spec {
        slug: slug.into(),
        name: name.into(),
        description: description.map(Into::into),
        category: "weather".into(),
        tags: tags.iter().map(|t| (*t).into()).collect(),
        license: "CC0-1.0".into(),
    }
}

use catalog_search::listing::with_read_budget;

async fn slugs(catalog: &catalog_search::listing::IndexedCatalog, q: &str) -> Vec<String> {
    all_pages(catalog, q).await.1
}

/// The text partition's sort keys, and the ones its manifest names (with the manifest's own).
pub(super) async fn text_items(stack: &Stack) -> (Vec<String>, Vec<String>) {
    let out = stack
        .dynamo
        .query()
        .table_name(&stack.target.datasets_table)
        .key_condition_expression("pk = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(TEXT_PK.into()))
        .send()
        .await
        .unwrap();
    let items = out.items.unwrap_or_default();
    let mut stored: Vec<String> = items
        .iter()
        .map(|i| i["sk"].as_s().unwrap().clone())
        .collect();
    stored.sort();
    let manifest = items
        .iter()
        .find(|i| i["sk"].as_s().unwrap() == "LAYOUT")
        .map(|i| Manifest::from_item(i).unwrap());
    let mut named: Vec<String> = manifest
        .iter()
        .flat_map(|m| m.blobs().flat_map(Blob::keys).collect::<Vec<_>>())
        .map(|k| k["sk"].as_s().unwrap().clone())
        .collect();
    if manifest.is_some() {
        named.push("LAYOUT".into());
    }
    named.sort();
    (stored, named)
}

#[tokio::test]
async fn q_ranks_name_then_tags_then_description_and_follows_edits_takedowns_and_restores() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    let specs = [
        named("in-name", "Rainfall totals", None, &["monthly"]),
        named("in-tags", "Monthly figures", None, &["rainfall"]),
        named(
            "in-text",
            "Station log",
            Some("Daily rainfall, by station"),
            &[],
        ),
        named("prefix", "Rainforest cover", None, &[]),
    ];
    for (i, s) in specs.iter().enumerate() {
        publish(&writer, s, now + Duration::seconds(i as i64)).await;
    }
    let catalog = stack.catalog();
    // A whole word counts most in the name, then the tags, then the description
    assert_eq!(
        slugs(&catalog, "q=rainfall").await,
        ["in-name", "in-tags", "in-text"]
    );
    // Starting a word counts by field too; ties (two names starting with "rain") newest first
    assert_eq!(
        slugs(&catalog, "q=RAIN").await,
        ["prefix", "in-name", "in-tags", "in-text"]
    );
    assert_eq!(
        slugs(&catalog, "q=rain&sort=name").await,
        ["in-tags", "in-name", "prefix", "in-text"],
        "an explicit sort orders the matches"
    );
    assert_eq!(slugs(&catalog, "q=rain%20station").await, ["in-text"]);
    assert!(slugs(&catalog, "q=ainfall").await.is_empty());

    // WHEN a dataset's tags change THEN its old words no longer find it, its new ones do
    let mut edited = named("in-tags", "Monthly figures", None, &["snow"]);
    publish(&writer, &edited, now + Duration::seconds(10)).await;
    assert_eq!(slugs(&catalog, "q=rainfall").await, ["in-name", "in-text"]);
    assert_eq!(slugs(&catalog, "q=snow").await, ["in-tags"]);
    // a new version with the same text changes nothing
    publish(&writer, &edited, now + Duration::seconds(11)).await;
    assert_eq!(slugs(&catalog, "q=snow").await, ["in-tags"]);

    // WHEN a dataset is unpublished (positions renumbered) THEN q no longer finds it, and the
    // others are still found where they now are
    let in_name = Slug::parse("in-name").unwrap();
    writer.unpublish(&in_name, Utc::now()).await.unwrap();
    assert_eq!(slugs(&catalog, "q=rainfall").await, ["in-text"]);
    assert_eq!(slugs(&catalog, "q=rain").await, ["prefix", "in-text"]);
    assert_eq!(slugs(&catalog, "q=snow").await, ["in-tags"]);
    // AND restored, it is found again (published last now)
    writer.restore(&in_name, Utc::now()).await.unwrap();
    assert_eq!(
        slugs(&catalog, "q=rain").await,
        ["in-name", "prefix", "in-text"]
    );
    // AND an edit after all that is found too
    edited.name = "Monthly snowfall figures".into();
    publish(&writer, &edited, now + Duration::seconds(20)).await;
    assert_eq!(slugs(&catalog, "q=snowfall").await, ["in-tags"]);

    // Every blob stored is one the manifest names: what each change replaced was deleted
    let (stored, named) = text_items(&stack).await;
    assert_eq!(stored, named);
}

/// A writer whose requests reach moto one at a time, as DynamoDB applies them (moto does not
/// isolate requests that arrive at once: see `catalog_tests::faults`), and the proxy doing it.
pub(super) async fn serialized_writer(
    stack: &Stack,
) -> (DynamoWriter, catalog_tests::faults::Proxy) {
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.serialize(true);
    let writer = DynamoWriter::new(
        aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
                .endpoint_url(&proxy.url)
                .build(),
        ),
        &stack.target.datasets_table,
        &stack.target.keys_table,
    );
    (writer, proxy)
}

#[tokio::test]
async fn datasets_published_at_the_same_moment_are_all_found() {
    let stack = Stack::start().await;
    let (writer, _proxy) = serialized_writer(&stack).await;
    publish(&writer, &spec(0), Utc::now()).await;
    // Four at once, as many as activations themselves are tested for
    // (`first_publishes_at_the_same_moment_are_all_listed`)
    let barrier = Arc::new(Barrier::new(4));
    let mut tasks = Vec::new();
    for i in 1..=4 {
        let writer = writer.clone();
        let barrier = barrier.clone();
        tasks.push(tokio::spawn(async move {
            let s = named(
                &format!("same-{i}"),
                &format!("Simultaneous {i}"),
                None,
                &[],
            );
            barrier.wait().await;
            publish(&writer, &s, Utc::now()).await;
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let catalog = stack.catalog();
    let mut found = slugs(&catalog, "q=simultaneous&sort=created:asc").await;
    found.sort();
    let expected: Vec<String> = (1..=4).map(|i| format!("same-{i}")).collect();
    assert_eq!(found, expected, "every writer's change is in the index");
    let (stored, named) = text_items(&stack).await;
    assert_eq!(
        stored, named,
        "the writers that lost a race deleted what they wrote"
    );
}

#[tokio::test]
async fn a_catalog_without_its_text_index_answers_q_unranked_until_reindex_builds_it() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..9 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let catalog = stack.catalog();
    let ranked = slugs(&catalog, "q=river%20station").await;
    let by_date = slugs(&catalog, "q=river%20station&sort=created").await;
    assert_ne!(
        ranked, by_date,
        "the catalog's ranking differs from publication order"
    );

    // GIVEN a catalog from before the index: no text items, no mark on the counter
    delete_partition(&stack, TEXT_PK).await;
    remove_counter_mark(&stack, catalog_aws::dynamo::layout::name::TEXT_INDEXED).await;
    // THEN q still matches the same datasets, unranked (newest first), from a fresh instance
    let fresh = stack.catalog();
    assert_eq!(slugs(&fresh, "q=river%20station").await, by_date);
    // AND a publish does not start a partial index
    publish(&writer, &spec(9), now + Duration::seconds(30)).await;
    assert_eq!(text_items(&stack).await.0, Vec::<String>::new());
    let by_date = slugs(&fresh, "q=river%20station&sort=created").await;
    assert_eq!(slugs(&fresh, "q=river%20station").await, by_date);

    // WHEN reindex runs THEN the index is built, ranked answers come back, and changes follow
    let done = writer.reindex().await.unwrap();
    assert_eq!(done.text.datasets, 10);
    assert!(done.text.shards >= 1 && done.text.bytes > 0);
    let ranked = slugs(&fresh, "q=river%20station").await;
    assert_ne!(ranked, by_date);
    let mut sorted = ranked.clone();
    sorted.sort();
    let mut expected = by_date.clone();
    expected.sort();
    assert_eq!(sorted, expected, "the same matches");
    publish(
        &writer,
        &named("late", "River station survey", None, &[]),
        Utc::now(),
    )
    .await;
    assert_eq!(slugs(&fresh, "q=river%20station").await[0], "late");
}

#[tokio::test]
async fn reindex_sweeps_what_interrupted_writers_left_and_keeps_the_rest() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    for i in 0..5 {
        publish(&writer, &spec(i), Utc::now()).await;
    }
    // GIVEN a blob no manifest names (a writer stopped before moving the manifest)
    let table = &stack.target.datasets_table;
    stack
        .dynamo
        .put_item()
        .table_name(table)
        .item("pk", AttributeValue::S(TEXT_PK.into()))
        .item("sk", AttributeValue::S("S000000000001.9#0".into()))
        .item("bytes", AttributeValue::B(vec![1, 2, 3].into()))
        .send()
        .await
        .unwrap();
    let (stored, named) = text_items(&stack).await;
    assert_eq!(stored.len(), named.len() + 1);
    let catalog = stack.catalog();
    let before = slugs(&catalog, "q=station").await;
    // WHEN reindex runs THEN only what the new manifest names is left, and answers are the same
    let done = writer.reindex().await.unwrap();
    assert!(done.text.swept >= 1, "{:?}", done.text);
    let (stored, named) = text_items(&stack).await;
    assert_eq!(stored, named);
    assert_eq!(slugs(&catalog, "q=station").await, before);
}

#[tokio::test]
async fn q_costs_three_reads_cold_and_the_revision_check_warm() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..30 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    let ops = |calls: &[catalog_tests::wire::Call]| -> Vec<String> {
        calls.iter().map(|c| c.operation.clone()).collect()
    };
    let batch3 = ["DynamoDB.BatchGetItem"; 3];
    wire.take_calls();

    // Cold: the counter and the manifest; the shard and the delta; the page's entries
    let (status, first) = list(&catalog, "q=station&page_size=5").await;
    assert_eq!(status, 200);
    let cold = wire.take_calls();
    assert_eq!(ops(&cold), batch3);
    assert_eq!(cold[0].items, 2, "the catalog counter and the manifest");
    assert_eq!(cold[2].items, 5, "the page's entries, no more");
    assert_eq!(first["items"].as_array().unwrap().len(), 5);
    assert_eq!(first["total"], 20, "every dataset with a description");
    // Warm: the revision check alone
    let (_, again) = list(&catalog, "q=station&page_size=5").await;
    assert_eq!(ops(&wire.take_calls()), ["DynamoDB.BatchGetItem"]);
    assert_eq!(again, first);
    // Another page: its entries only; other words: the shard is kept
    list(&catalog, "q=station&page=2&page_size=5").await;
    let next = wire.take_calls();
    assert_eq!(ops(&next), ["DynamoDB.BatchGetItem"; 2]);
    assert_eq!(next[1].items, 5);
    // With a filter and few matches: every match's entry in one read, then kept
    let (_, filtered) = list(&catalog, "q=station&category=transport").await;
    assert!(wire.take_calls().len() <= 2);
    assert!(filtered["total"].as_u64().unwrap() > 0);
    let (_, again) = list(&catalog, "q=station&category=transport").await;
    assert_eq!(ops(&wire.take_calls()), ["DynamoDB.BatchGetItem"]);
    assert_eq!(again, filtered);

    // WHEN the catalog changes THEN the next listing reads the new delta (and the shard the
    // change folded into), not the whole index, and sees the change
    publish(
        &writer,
        &named("new", "Station survey", None, &[]),
        Utc::now(),
    )
    .await;
    let (_, after) = list(&catalog, "q=station&page_size=5").await;
    let calls = wire.take_calls();
    assert_eq!(ops(&calls), batch3);
    assert!(
        calls[1].items <= 2,
        "the delta and one shard: {}",
        calls[1].items
    );
    assert_eq!(after["items"][0]["slug"], "new", "a name counts most");
    assert_eq!(after["total"], 21);
}

/// Writers racing for the manifest of an index of several shards: each loser deletes only the
/// blobs it wrote, never one the winner's manifest still names.
#[tokio::test]
async fn racing_writers_keep_every_blob_the_manifest_names() {
    let stack = Stack::start().await;
    let (writer, _proxy) = serialized_writer(&stack).await;
    let specs: Vec<Spec> = (0..4)
        .map(|i| named(&format!("racer-{i}"), &format!("Racer {i}"), None, &[]))
        .collect();
    for s in &specs {
        publish(&writer, s, Utc::now()).await;
    }
    // An index of several shards: the four datasets, and enough other words (at positions no
    // listing reaches) to pass 256 KB
    let mut docs: Vec<catalog_search::index::TextDoc> = specs
        .iter()
        .enumerate()
        .map(|(i, s)| catalog_search::index::TextDoc {
            seq: i as u64 + 1,
            name: s.name.clone(),
            description: None,
            tags: Vec::new(),
            facets: Vec::new(),
        })
        .collect();
    docs.extend((5..30_000u64).map(|seq| catalog_search::index::TextDoc {
        seq,
        name: format!("w{:x} v{:x}", seq * 7919, seq * 104_729),
        description: None,
        tags: Vec::new(),
        facets: Vec::new(),
    }));
    let built = writer.rebuild_text(&docs).await.unwrap();
    assert!(built.shards >= 3, "{built:?}");
    // WHEN four edits index their text at the same moment
    let barrier = Arc::new(Barrier::new(4));
    let mut tasks = Vec::new();
    for s in &specs {
        let (writer, barrier) = (writer.clone(), barrier.clone());
        let slug = Slug::parse(&s.slug).unwrap();
        tasks.push(tokio::spawn(async move {
            barrier.wait().await;
            writer.index_text(&slug).await.unwrap();
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    // THEN every blob the manifest names is stored (and nothing else), and q answers
    let (stored, named) = text_items(&stack).await;
    assert_eq!(stored, named);
    let catalog = stack.catalog();
    let mut found = slugs(&catalog, "q=racer").await;
    found.sort();
    assert_eq!(found, ["racer-0", "racer-1", "racer-2", "racer-3"]);
}

/// The text index's manifest as stored.
async fn stored_manifest(stack: &Stack) -> Manifest {
    let item = stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .set_key(Some(Manifest::key()))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    Manifest::from_item(&item).unwrap()
}

/// Dataset `i` of a catalog where two filters each match more than `FETCH_MATCHES` datasets:
/// every one is CC0 but one in 25, and tagged `common` but one in 22.
fn widespread(i: usize) -> Spec {
    Spec {
        slug: format!("wide-{i:03}"),
        name: format!("{} survey {i}", ["Zebra", "alpha", "Mango"][i % 3]),
        description: None,
        category: ["Biology", "transport"][i % 2].into(),
        tags: vec![if i % 22 == 0 { "rare" } else { "common" }.into()],
        license: if i % 25 == 0 { "CC-BY-4.0" } else { "CC0-1.0" }.into(),
    }
}

/// The slugs of `specs` (published in this order) matching `keep`, newest first.
fn newest_first(specs: &[Spec], keep: impl Fn(&Spec) -> bool) -> Vec<String> {
    specs
        .iter()
        .rev()
        .filter(|s| keep(s))
        .map(|s| s.slug.clone())
        .collect()
}

#[tokio::test]
async fn several_filters_are_answered_from_the_index_by_position_sorted_by_the_kept_orders_and_follow_facet_changes(
) {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    let mut specs: Vec<Spec> = (0..110).map(widespread).collect();
    for (i, s) in specs.iter().enumerate() {
        publish(&writer, s, now + Duration::seconds(i as i64)).await;
    }
    let both = |s: &Spec| s.license == "CC0-1.0" && s.tags == ["common"];
    let expected = newest_first(&specs, both);
    assert!(expected.len() > FETCH_MATCHES, "{}", expected.len());
    let q = "license=cc0-1.0&tag=COMMON";
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    let ops = |calls: &[catalog_tests::wire::Call]| -> Vec<String> {
        calls.iter().map(|c| c.operation.clone()).collect()
    };
    wire.take_calls();

    // Cold: the counters and the manifest; the shards of the two facets and the delta; the
    // page's entries, no more
    let (status, first) = list(&catalog, &format!("{q}&page_size=5")).await;
    assert_eq!(status, 200, "{first}");
    let cold = wire.take_calls();
    assert_eq!(ops(&cold), ["DynamoDB.BatchGetItem"; 3]);
    assert_eq!(cold[0].items, 4, "three counters and the manifest");
    assert_eq!(cold[2].items, 5, "the page's entries");
    assert_eq!(first["total"], expected.len());
    // A later page reads its entries only
    list(&catalog, &format!("{q}&page=9&page_size=5")).await;
    assert_eq!(ops(&wire.take_calls()), ["DynamoDB.BatchGetItem"; 2]);
    // Every page, newest first, is the rule's answer
    assert_eq!(all_pages(&catalog, q).await.1, expected);
    let mut oldest_first = expected.clone();
    oldest_first.reverse();
    assert_eq!(
        all_pages(&catalog, &format!("{q}&sort=created:asc"))
            .await
            .1,
        oldest_first
    );
    // In another order, past FETCH_MATCHES matches, the kept order sorts them: its positions
    // are read beside the index, and the page is still the third read
    let mut by_name: Vec<&Spec> = specs.iter().filter(|s| both(s)).collect();
    by_name.sort_by(|a, b| (a.name.to_lowercase(), &a.slug).cmp(&(b.name.to_lowercase(), &b.slug)));
    let by_name: Vec<String> = by_name.iter().map(|s| s.slug.clone()).collect();
    let (fresh, _) = stack.wired(&wire, &Wire::default());
    wire.take_calls();
    let (_, page) = list(&fresh, &format!("{q}&sort=name:desc&page=3&page_size=5")).await;
    let cold = wire.take_calls();
    assert_eq!(ops(&cold), ["DynamoDB.BatchGetItem"; 3]);
    assert_eq!(cold[2].items, 5, "the page's entries");
    let slugs: Vec<&str> = page["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap())
        .collect();
    let mut descending = by_name.clone();
    descending.reverse();
    assert_eq!(slugs, descending[10..15]);
    assert_eq!(
        all_pages(&catalog, &format!("{q}&sort=name")).await.1,
        by_name
    );

    // WHEN a dataset changes license (no word changes) and another leaves the tag
    // THEN the index follows both
    specs[7].license = "CC-BY-4.0".into();
    publish(&writer, &specs[7], Utc::now()).await;
    specs[8].tags = vec!["rare".into()];
    publish(&writer, &specs[8], Utc::now()).await;
    let expected = newest_first(&specs, both);
    assert_eq!(all_pages(&catalog, q).await.1, expected);
    assert!(!expected.contains(&specs[7].slug) && !expected.contains(&specs[8].slug));
    // AND with words too
    let (_, zebra) = all_pages(&catalog, &format!("{q}&q=zebra&sort=created")).await;
    assert_eq!(
        zebra,
        newest_first(&specs, |s| both(s) && s.name.starts_with("Zebra"))
    );

    // GIVEN a catalog whose kept orders were never built THEN sorts over more than
    // FETCH_MATCHES datasets, alone or with one filter, read the list (until reindex, below)
    delete_partition(&stack, catalog_search::orders::ORDER_PK).await;
    let mut all_by_name: Vec<&Spec> = specs.iter().collect();
    all_by_name
        .sort_by(|a, b| (a.name.to_lowercase(), &a.slug).cmp(&(b.name.to_lowercase(), &b.slug)));
    let all_by_name: Vec<String> = all_by_name.iter().map(|s| s.slug.clone()).collect();
    let unsorted = stack.catalog();
    assert_eq!(all_pages(&unsorted, "sort=name").await.1, all_by_name);
    let common: Vec<String> = all_by_name
        .iter()
        .filter(|slug| {
            specs
                .iter()
                .any(|s| s.slug == **slug && s.tags == ["common"])
        })
        .cloned()
        .collect();
    assert!(common.len() > FETCH_MATCHES);
    assert_eq!(all_pages(&unsorted, "tag=common&sort=name").await.1, common);

    // GIVEN an index built before it held filters THEN the same answers, from a scan, until
    // reindex builds it again
    let table = &stack.target.datasets_table;
    let mut manifest = stored_manifest(&stack).await;
    manifest.layout.filters = false;
    stack
        .dynamo
        .put_item()
        .table_name(table)
        .set_item(Some(manifest.to_item().unwrap()))
        .send()
        .await
        .unwrap();
    let fresh = stack.catalog();
    assert_eq!(all_pages(&fresh, q).await.1, expected);
    writer.reindex().await.unwrap();
    let (stored, named) = text_items(&stack).await;
    assert_eq!(stored, named);
    let rebuilt = stack.catalog();
    assert_eq!(all_pages(&rebuilt, q).await.1, expected);
    assert!(stored_manifest(&stack).await.layout.filters);
}

/// A listing reads at most its budget from the index: a word whose shards would pass it is left
/// out, the answer is that of the other words (here none: the plain listing, in the query's own
/// order and filters), and the response names it. The budget counts the bytes the manifest
/// records, exactly.
#[tokio::test]
async fn a_word_past_the_read_budget_is_left_out_and_named_and_its_shards_are_not_read() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..12 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let manifest = stored_manifest(&stack).await;
    assert_eq!(manifest.shards.len(), 1, "a small catalog is one shard");
    let needs = manifest.shards[0].bytes + manifest.delta.bytes;
    assert!(manifest.shards[0].bytes > 0 && manifest.delta.bytes > 0);
    let wire = Wire::default();
    let (wired, _) = stack.wired(&wire, &Wire::default());
    let within = with_read_budget(wired, needs);
    let (status, found) = list(&within, "q=station").await;
    assert_eq!(status, 200);
    assert_eq!(found["total"], 8, "every dataset with a description");
    assert!(found.get("ignored_words").is_none(), "{found}");

    let short = with_read_budget(stack.catalog(), needs - 1);
    for (query, plain) in [
        ("q=station", ""),
        ("q=station&sort=name", "sort=name"),
        ("q=station&sort=created:asc", "sort=created:asc"),
        ("q=station&category=transport", "category=transport"),
        (
            "q=station&tag=birds&license=CC0-1.0",
            "tag=birds&license=CC0-1.0",
        ),
    ] {
        let (status, body) = list(&short, &format!("{query}&page_size=5")).await;
        assert_eq!(status, 200, "{query}: {body}");
        assert_eq!(
            body["ignored_words"],
            serde_json::json!(["station"]),
            "{query}"
        );
        let (_, without) = list(&short, &format!("{plain}&page_size=5")).await;
        assert_eq!(body["items"], without["items"], "{query}");
        assert_eq!(body["total"], without["total"], "{query}");
        assert!(without.get("ignored_words").is_none());
        let (total, slugs) = all_pages(&short, query).await;
        assert_eq!((total, slugs), all_pages(&short, plain).await, "{query}");
    }
    // A word left out is not read: the counter with the manifest, then the page
    let wire = Wire::default();
    let short = with_read_budget(stack.wired(&wire, &Wire::default()).0, needs - 1);
    let (_, body) = list(&short, "q=river&page_size=3").await;
    assert_eq!(body["ignored_words"], serde_json::json!(["river"]));
    let calls = wire.take_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[1].items, 3, "the page's entries only");
}
