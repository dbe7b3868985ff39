//! Every filter and sort answers what filtering the whole catalog gives, and facet lists follow every change.

use super::*;
use catalog_tests::facets::assert_facet_lists_consistent;

#[tokio::test]
async fn every_filter_and_sort_answers_what_filtering_the_whole_catalog_gives() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let start = Utc::now() - Duration::hours(1);
    // Three at a time in the same second: ties in updated_at, which fall back to publication
    // order.
    for i in 0..14 {
        publish(&writer, &spec(i), start + Duration::seconds(i as i64 / 3)).await;
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

    // Words: each must start a word of the name, description or a tag, case-insensitively;
    // in publication order with sort=created
    let all_words = |v: &Value, words: &[&str]| words.iter().all(|w| starts_a_word(v, w));
    let river_station = expected(&everything, |v| all_words(v, &["river", "station"]), None);
    assert!(river_station.len() >= 4, "{river_station:?}");
    assert_eq!(slugs("q=RIVER%20station&sort=created").await, river_station);
    // Without a sort, best match first. Every match has each word once in its description; a
    // tag starting with "river" (`rivers`) counts beside it. Ties go newest first.
    let rivers_tag = |slug: &String| {
        let v = everything.iter().find(|v| v["slug"] == *slug).unwrap();
        has_tag(v, "rivers")
    };
    let mut ranked = river_station.clone();
    ranked.sort_by_key(|slug| !rivers_tag(slug));
    assert!(ranked.iter().any(rivers_tag) && !ranked.iter().all(rivers_tag));
    assert_eq!(slugs("q=RIVER%20station").await, ranked);
    assert_eq!(
        slugs("q=zebra&category=environment").await,
        expected(
            &everything,
            |v| all_words(v, &["zebra"]) && v["category"] == "environment",
            None
        )
    );
    // A word matches the start of a word, not its middle: `bird` finds the `birds` tag (and
    // `irds`, below, nothing)
    assert_eq!(
        slugs("q=bird&sort=created").await,
        expected(&everything, |v| has_tag(v, "birds"), None)
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
    // sort=updated over every page: the whole sequence is updated_at newest first, ties in
    // publication order (newest first; the plain listing's order, which a stable sort keeps)
    let updated_at = |v: &Value| v["updated_at"].as_str().unwrap().to_owned();
    let newest_updated = |a: &Value, b: &Value| updated_at(b).cmp(&updated_at(a));
    let updated = slugs("sort=updated").await;
    assert_eq!(
        updated,
        expected(&everything, |_| true, Some(&newest_updated))
    );
    assert_eq!(
        &updated[..2],
        ["ds-03", "ds-08"],
        "re-published last come first"
    );
    assert_eq!(
        slugs("sort=updated:desc").await,
        updated,
        "desc is the default"
    );
    // and ascending is exactly the reverse: oldest first, ties oldest published first
    let mut oldest_updated = updated.clone();
    oldest_updated.reverse();
    assert_eq!(slugs("sort=updated:asc").await, oldest_updated);
    let ties = everything
        .windows(2)
        .filter(|w| updated_at(&w[0]) == updated_at(&w[1]))
        .count();
    assert!(ties >= 4, "the catalog has ties in updated_at: {ties}");

    // Errors: unknown values and bad parameters are 400 with code bad_request
    for q in [
        "sort=size",
        "sort=name:up",
        "category=biology&category=transport",
        // every single-valued parameter given twice
        "license=cc0-1.0&license=mit",
        "q=river&q=station",
        "sort=name&sort=updated",
        "category=",
    ] {
        let (status, body) = list(&catalog, q).await;
        assert_eq!(status, 400, "{q}: {body}");
        assert_eq!(body["code"], "bad_request", "{q}");
    }
    // No match is not an error: neither words nothing has, nor a filter value no dataset has
    // (a stale link, a category that has just emptied, a value never seen), alone or combined.
    for q in [
        "q=nothing-matches-this",
        "q=irds",
        "category=astronomy",
        "tag=birds&tag=nonexistent",
        "license=proprietary",
        "category=astronomy&sort=name",
        "license=proprietary&page=3",
    ] {
        let (status, body) = list(&catalog, q).await;
        assert_eq!(status, 200, "{q}: {body}");
        assert_eq!(body["total"], 0, "{q}");
        assert_eq!(body["items"], serde_json::json!([]), "{q}");
    }
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
    let (status, body) = list(&catalog, "category=biology").await;
    assert_eq!(
        (status, body["total"].as_u64()),
        (200, Some(0)),
        "without its list, a facet matches nothing (until reindex)"
    );
    // THEN reindex rebuilds them as they were
    let catalog_writer::Reindexed {
        lists: facets,
        written,
        ..
    } = writer.reindex().await.unwrap();
    assert!(facets >= 8 && written > 0, "{facets} {written}");
    for (q, slugs) in before {
        assert_eq!(all_pages(&catalog, &q).await.1, slugs, "{q}");
    }
    assert_facet_lists_consistent(&stack).await;
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

#[tokio::test]
async fn the_catalog_counter_says_whether_the_filters_are_indexed() {
    use aws_sdk_dynamodb::types::AttributeValue;
    let stack = Stack::start().await;
    let writer = stack.writer();
    let counter = || async {
        stack
            .dynamo
            .get_item()
            .table_name(&stack.target.datasets_table)
            .key("pk", AttributeValue::S("CATALOG".into()))
            .key("sk", AttributeValue::S("COUNTER".into()))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item
    };
    // A catalog born with filters: its first listing marks them indexed.
    publish(&writer, &spec(0), Utc::now()).await;
    assert!(catalog_aws::dynamo::facets_indexed(
        counter().await.as_ref()
    ));
    // A catalog from before filters (no mark) is not...
    stack
        .dynamo
        .update_item()
        .table_name(&stack.target.datasets_table)
        .key("pk", AttributeValue::S("CATALOG".into()))
        .key("sk", AttributeValue::S("COUNTER".into()))
        .update_expression("REMOVE facets_indexed")
        .send()
        .await
        .unwrap();
    assert!(!catalog_aws::dynamo::facets_indexed(
        counter().await.as_ref()
    ));
    // ...and a later publish does not pretend it is, while reindex makes it so.
    publish(&writer, &spec(1), Utc::now()).await;
    assert!(!catalog_aws::dynamo::facets_indexed(
        counter().await.as_ref()
    ));
    writer.reindex().await.unwrap();
    assert!(catalog_aws::dynamo::facets_indexed(
        counter().await.as_ref()
    ));
}

/// The sample catalog's facet lists, as stored and as answered, are what its manifest
/// (dev/samples.py's manifest.json, read here as plain JSON) says: each category, tag and
/// license value, lowercased, lists the datasets that have it, in publication order.
#[tokio::test]
async fn the_sample_catalogs_facet_lists_are_what_its_manifest_says() {
    use catalog_tests::facets::Stored;
    use std::collections::BTreeMap;
    let stack = Stack::start().await;
    // GIVEN the samples published one after the other, in manifest order
    stack.seed_samples(Utc::now()).await;
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(catalog_tests::samples_dir().join("manifest.json")).unwrap(),
    )
    .unwrap();
    let mut expected: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for d in manifest["datasets"].as_array().unwrap() {
        let slug = d["slug"].as_str().unwrap().to_owned();
        let mut values = vec![
            format!(
                "category#{}",
                d["category"].as_str().unwrap().to_lowercase()
            ),
            format!("license#{}", d["license"].as_str().unwrap().to_lowercase()),
        ];
        for tag in d["tags"].as_array().unwrap() {
            values.push(format!("tag#{}", tag.as_str().unwrap().to_lowercase()));
        }
        values.sort();
        values.dedup();
        for value in values {
            expected.entry(value).or_default().push(slug.clone());
        }
    }
    assert!(
        expected.values().any(|slugs| slugs.len() > 1),
        "some value is shared: {expected:?}"
    );

    // THEN the stored lists are exactly those, with counters to match
    let stored = Stored::read(&stack).await;
    assert_eq!(stored.slugs(), expected);
    for (key, slugs) in &expected {
        assert_eq!(
            stored.counters.get(key),
            Some(&(slugs.len() as u64, false)),
            "{key}"
        );
    }
    // AND each filter answers its list, newest first, whatever the case it is asked in
    let catalog = stack.catalog();
    for (key, slugs) in &expected {
        let (kind, value) = key.split_once('#').unwrap();
        let query = format!("{kind}={}", value.to_uppercase());
        let mut newest_first = slugs.clone();
        newest_first.reverse();
        assert_eq!(all_pages(&catalog, &query).await.1, newest_first, "{query}");
    }
}

/// Datasets activated for the first time at the same moment, into the same facet lists, are
/// all listed: distinct positions 1..=n in the catalog list and in every facet list, counters
/// to match. Each activation is sent through a client whose calls are counted, to show that the
/// race for the next position was actually run (and lost, then retried) at least once; and
/// through a proxy that hands moto one request at a time, as DynamoDB applies each request in
/// isolation (moto does not: see `catalog_tests::faults`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_publishes_at_the_same_moment_are_all_listed() {
    let stack = Stack::start().await;
    let proxy = catalog_tests::faults::start_proxy(stack.dynamo_url.clone()).await;
    proxy.serialize(true);
    let wire = Wire::default();
    let writer = DynamoWriter::new(
        aws_sdk_dynamodb::Client::from_conf(
            aws_sdk_dynamodb::config::Builder::from(&stack.sdk)
                .endpoint_url(&proxy.url)
                .interceptor(wire.clone())
                .build(),
        ),
        &stack.target.datasets_table,
        &stack.target.keys_table,
    );
    let now = Utc::now();
    let mut lost = 0;
    let mut published = 0;
    // Rounds of 2, 3 and 4 datasets at once, all in category biology and tag birds
    for (round, size) in [2usize, 3, 4].into_iter().enumerate() {
        // Every publish of the round reserves and uploads, then waits for the others, so that
        // the activations start at the same moment; the calls before that are left out.
        let uploaded = Arc::new(Barrier::new(size + 1));
        let go = Arc::new(Barrier::new(size + 1));
        let mut tasks = Vec::new();
        for k in 0..size {
            let mut s = spec(3 * (round * 10 + k));
            s.slug = format!("race-{round}-{k}");
            s.category = "Biology".into();
            s.tags = vec!["birds".into(), format!("round-{round}")];
            let (writer, uploaded, go) = (writer.clone(), uploaded.clone(), go.clone());
            tasks.push(tokio::spawn(async move {
                let meta = &meta(&s);
                let slug = Slug::parse(&s.slug).unwrap();
                let publication = Publication {
                    slug: &slug,
                    meta,
                    id: None,
                    new_only: false,
                    now,
                };
                writer
                    .publish(publication, |reserved| async move {
                        uploaded.wait().await;
                        go.wait().await;
                        Ok::<_, WriteError>(Staged {
                            version: version_record(&s.slug, reserved.version, now),
                            meta: meta.clone(),
                        })
                    })
                    .await
            }));
        }
        // WHEN every activation starts at the same moment
        uploaded.wait().await;
        wire.take_calls();
        go.wait().await;
        for task in tasks {
            task.await.unwrap().expect("every publish succeeds");
        }
        published += size;
        let transactions = wire
            .take_calls()
            .iter()
            .filter(|c| c.operation == "DynamoDB.TransactWriteItems")
            .count();
        lost += transactions - size;
        // THEN all are listed, each once, at positions 1..=n, in the facet lists too
        assert_facet_lists_consistent(&stack).await;
        let (_, slugs) = all_pages(&stack.catalog(), "").await;
        assert_eq!(slugs.len(), published, "{slugs:?}");
        let (_, birds) = all_pages(&stack.catalog(), "category=biology&tag=birds").await;
        assert_eq!(birds.len(), published);
        let round_tag = format!("tag=round-{round}");
        assert_eq!(all_pages(&stack.catalog(), &round_tag).await.0, size as u64);
    }
    assert!(
        lost > 0,
        "no activation ever lost the race: nothing was tested"
    );
}
