//! What finding datasets costs on the wire, and the list function's permissions.

use super::*;

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

    // A small list (at most 100 entries), sorted: the first request reads the candidate list,
    // the next ones only the counters
    let q = "category=biology&tag=birds&sort=name";
    wire.take_calls();
    let (_, first) = list(&catalog, q).await;
    let cold = wire.take_calls();
    assert_eq!(cold[0].operation, "DynamoDB.BatchGetItem");
    assert!(cold[1..].iter().all(|c| c.operation == "DynamoDB.Query"));
    let read: usize = cold.iter().map(|c| c.items).sum();
    assert!(
        read <= 3 + 2 + 10 + 1,
        "the smallest candidate list (biology, 10 datasets), 3 counters and 2 manifests: {read}"
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
        "facets=true",
        "facets=true&category=biology",
        "facets=true&q=station",
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

/// An instance keeps the last 4 lists it read for scans (docs/api.md: a filter's list of at
/// most 100 datasets, sorted by other than publication): with the catalog unchanged, a scan
/// over any of them costs only the counters' read; a fifth list evicts the one read first.
#[tokio::test]
async fn an_instance_keeps_four_lists_and_a_new_one_takes_the_place_of_one_read_once() {
    let stack = Stack::start().await;
    let writer = stack.writer();
    let now = Utc::now();
    for i in 0..12 {
        publish(&writer, &spec(i), now + Duration::seconds(i as i64)).await;
    }
    let wire = Wire::default();
    let (catalog, _) = stack.wired(&wire, &Wire::default());
    // Five scans, each over another list: two tags, three categories
    let scans = [
        "tag=rivers&sort=name",
        "category=biology&sort=name",
        "category=transport&sort=updated",
        "category=environment&sort=name:desc",
        "tag=birds&sort=downloads",
    ];
    let ask = |q: &'static str| {
        let catalog = catalog.clone();
        let wire = wire.clone();
        async move {
            wire.take_calls();
            let (status, _) = list(&catalog, q).await;
            assert_eq!(status, 200, "{q}");
            wire.take_calls()
                .into_iter()
                .map(|c| c.operation)
                .collect::<Vec<String>>()
        }
    };
    let read_list = |ops: &[String], q: &str| {
        assert!(
            ops.len() >= 2
                && ops[0] == "DynamoDB.BatchGetItem"
                && ops[1..].iter().all(|o| o == "DynamoDB.Query"),
            "{q}: reads its list: {ops:?}"
        );
    };
    let counters_only = |ops: &[String], q: &str| {
        assert_eq!(
            ops,
            ["DynamoDB.BatchGetItem"],
            "{q}: kept, only the counters read"
        );
    };

    // GIVEN four scans over four lists, each read once
    for q in &scans[..4] {
        read_list(&ask(q).await, q);
    }
    // WHEN the first is asked again, or another query over the same list THEN it is kept
    counters_only(&ask(scans[0]).await, scans[0]);
    counters_only(
        &ask("tag=rivers&sort=updated:asc").await,
        "tag=rivers&sort=updated:asc",
    );
    // WHEN a fifth list is read THEN it takes the place of one read only once (the first three
    // filled the cache's hot part, the fourth its cold part and was not read again): the list
    // read again and the other two stay
    read_list(&ask(scans[4]).await, scans[4]);
    for q in [scans[2], scans[1], scans[4], scans[0]] {
        counters_only(&ask(q).await, q);
    }
    read_list(&ask(scans[3]).await, scans[3]);
}
