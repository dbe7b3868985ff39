//! The download log and counts: downloads recorded once each (a redelivered event is skipped),
//! counted by day (rows pages excepted), expiring after the retention, and `catalog-admin
//! audit` showing who downloaded what, with the account's email, filtered by dataset, account
//! and time.

use super::*;
use catalog::audit::{Download, Route};
use catalog_tests::facets::{scan_all, text};
use catalog_writer::downloads::DownloadLog;
use chrono::{DateTime, Duration as Span};

const TABLE: &str = "catalog-downloads";
const PASSWORD: &str = "Correct-horse-battery-9";

fn at(raw: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(raw)
        .unwrap()
        .with_timezone(&Utc)
}

fn download(
    slug: &str,
    key: Option<&str>,
    account: Option<&str>,
    route: Route,
    when: &str,
) -> Download {
    Download {
        slug: slug.into(),
        version: 2,
        key_id: key.map(str::to_owned),
        account: account.map(str::to_owned),
        route,
        at: at(when),
        client: None,
    }
}

/// The slugs a listing with `query` answers, in its order.
async fn ordered(stack: &Stack, query: &str) -> Vec<String> {
    let resp = api::list(
        &v2_request(&format!("/api/v1/datasets?{query}"), &[]),
        &stack.catalog(),
        Utc::now(),
    )
    .await;
    json_body(&resp)["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["slug"].as_str().unwrap().to_owned())
        .collect()
}

fn audit_count(stack: &Stack, env: &[(&str, &str)]) -> String {
    ok(&admin(stack, &["count-downloads"], env))
}

#[tokio::test]
async fn downloads_are_recorded_once_counted_by_day_and_shown_by_audit_with_filters() {
    let stack = Stack::start().await;
    for (file, slug) in [
        ("river-levels", "river-levels"),
        ("city-bikes", "city-bikes"),
        ("bird-sightings", "never-downloaded"),
    ] {
        ok(&publish(&stack, &sample(file), slug));
    }
    let pool = stack.user_pool().await;
    let cognito = stack.cognito();
    let sub =
        catalog_dev::cognito::sign_up_confirmed(&cognito, &pool, "partner@example.com", PASSWORD)
            .await
            .unwrap();
    let log = DownloadLog::new(stack.dynamo.clone(), TABLE);
    let today = Utc::now();
    let stamp = |ago: Span| (today - ago).to_rfc3339();
    let (two_days, one_day, now) = (
        stamp(Span::days(2)),
        stamp(Span::days(1)),
        stamp(Span::zero()),
    );

    // GIVEN downloads by a partner's key, an operator's key and none (a keyless window), one
    // of them delivered twice, and one of them a rows page
    let events = [
        (
            "e1",
            download(
                "river-levels",
                Some("key_partner"),
                Some(&sub),
                Route::Data,
                &two_days,
            ),
        ),
        (
            "e2",
            download(
                "river-levels",
                Some("key_operator"),
                None,
                Route::Sharing,
                &one_day,
            ),
        ),
        (
            "e3",
            download(
                "river-levels",
                Some("key_partner"),
                Some(&sub),
                Route::Rows,
                &now,
            ),
        ),
        (
            "e4",
            download("city-bikes", None, None, Route::Download, &now),
        ),
    ];
    let mut events: Vec<(String, Download)> = events
        .into_iter()
        .map(|(id, d)| (id.to_owned(), d))
        .collect();
    // The first event delivered again (CloudWatch Logs redelivers a batch it could not hand
    // over).
    events.push(events[0].clone());
    // WHEN they are recorded, with a 30-day retention
    let recorded = log.record(&events, 30).await.unwrap();
    // THEN each is recorded once
    assert_eq!(recorded, 4);
    // AND counted on its day, rows pages aside
    let counts = log.counts(today.date_naive(), 30).await.unwrap();
    assert_eq!(counts.get("river-levels"), Some(&2));
    assert_eq!(counts.get("city-bikes"), Some(&1));
    let last_day = log.counts(today.date_naive(), 1).await.unwrap();
    assert_eq!(
        last_day.get("river-levels"),
        None,
        "its rows page is not a download"
    );
    // AND every item expires 30 days after its download (DynamoDB's time to live)
    for item in scan_all(&stack.dynamo, TABLE).await {
        if text(&item, "pk").starts_with("DL#") {
            let at = at(&text(&item, "at"));
            let expire: i64 = text(&item, "expire_at").parse().unwrap();
            assert_eq!(expire, (at + Span::days(30)).timestamp(), "{item:?}");
        }
    }

    // WHEN the operator asks who downloaded what
    let env: Vec<(&str, &str)> = vec![("USER_POOL_ID", &pool.pool_id)];
    let audit = |args: &[&str]| {
        let mut all = vec!["audit"];
        all.extend(args);
        ok(&admin(&stack, &all, &env))
    };
    let out = audit(&[]);
    // THEN every download shows, oldest first, with the account's email, key, dataset,
    // version and route
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "4 downloads", "{out}");
    let expect = [
        (
            "partner@example.com",
            "key_partner",
            "river-levels v2",
            "data",
        ),
        (
            "(operator's key)",
            "key_operator",
            "river-levels v2",
            "sharing",
        ),
        (
            "partner@example.com",
            "key_partner",
            "river-levels v2",
            "rows",
        ),
        ("(no key)", "-", "city-bikes v2", "download"),
    ];
    // (the last two share a time: their order is by event id)
    for (line, (who, key, what, route)) in lines[1..].iter().zip(expect) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        assert!(line.contains(who) && fields.contains(&key), "{line}");
        assert!(
            line.contains(what) && fields.last() == Some(&route),
            "{line}"
        );
    }
    // AND the filters select by dataset, account and time
    assert!(audit(&["--dataset", "city-bikes"]).starts_with("1 downloads"));
    let partner = audit(&["--account", "partner@example.com"]);
    assert!(partner.starts_with("2 downloads"), "{partner}");
    assert!(partner
        .lines()
        .skip(1)
        .all(|l| l.contains("partner@example.com")));
    let since = (today - Span::hours(36)).to_rfc3339();
    assert!(audit(&["--since", &since]).starts_with("3 downloads"));
    assert!(audit(&["--since", "-36h", "--dataset", "river-levels"]).starts_with("2 downloads"));
    assert!(audit(&["--until", &since]).starts_with("1 downloads"));
    assert!(audit(&[
        "--dataset",
        "river-levels",
        "--account",
        "partner@example.com",
        "--since",
        "-1h"
    ])
    .starts_with("1 downloads"));
    // WHEN the daily count runs
    let out = audit_count(&stack, &env);
    assert!(
        out.contains("2 datasets downloaded in 60 days, 2 counts changed"),
        "{out}"
    );
    // THEN the list and the metadata show each dataset's downloads, and sort by them
    let listed = list(&stack).await;
    let shown: Vec<(String, u64)> = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["slug"].as_str().unwrap().to_owned(),
                i["downloads"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            ("never-downloaded".to_owned(), 0),
            ("city-bikes".to_owned(), 1),
            ("river-levels".to_owned(), 2)
        ]
    );
    assert_eq!(
        ordered(&stack, "sort=downloads").await,
        ["river-levels", "city-bikes", "never-downloaded"]
    );
    assert_eq!(
        ordered(&stack, "sort=downloads:asc&category=testing").await,
        ["never-downloaded", "city-bikes", "river-levels"]
    );
    assert_eq!(
        json_body(&metadata(&stack, "river-levels").await)["downloads"],
        2
    );
    // AND the lists and their copies stay exact: nothing for reindex to repair
    catalog_tests::facets::assert_facet_lists_consistent(&stack).await;
    let out = ok(&admin(&stack, &["datasets", "reindex"], &[]));
    assert!(
        out.contains("(0 entries written or removed; 0 catalog entries moved or removed)"),
        "{out}"
    );
    // AND a second run changes nothing; publishing a new version keeps the count
    assert!(audit_count(&stack, &env).contains("0 counts changed"));
    ok(&publish(&stack, &sample("river-levels"), "river-levels"));
    assert_eq!(
        json_body(&metadata(&stack, "river-levels").await)["downloads"],
        2
    );

    // AND without the table's name, it says what is missing
    let out = admin(&stack, &["audit"], &[("DOWNLOADS_TABLE", "")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("DOWNLOADS_TABLE"));
}

#[tokio::test]
async fn a_key_or_a_keyless_requester_counts_once_a_day_however_often_it_downloads() {
    // GIVEN a dataset
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "river-levels"));
    let log = DownloadLog::new(stack.dynamo.clone(), TABLE);
    let today = Utc::now();
    let now = today.to_rfc3339();
    let yesterday = (today - Span::days(1)).to_rfc3339();
    let keyless = |client: Option<&str>, when: &str| Download {
        client: client.map(str::to_owned),
        ..download("river-levels", None, None, Route::Download, when)
    };
    // AND downloads today: one key 5 times (by both URL routes and Delta Sharing), another
    // key once, a keyless requester 3 times, another once, and two keyless downloads whose
    // events name no requester; and the first key once yesterday
    let mut events: Vec<Download> = Vec::new();
    for route in [
        Route::Data,
        Route::Data,
        Route::Download,
        Route::Sharing,
        Route::Data,
    ] {
        events.push(download("river-levels", Some("key_a"), None, route, &now));
    }
    events.push(download(
        "river-levels",
        Some("key_b"),
        None,
        Route::Data,
        &now,
    ));
    for _ in 0..3 {
        events.push(keyless(Some("c1c1c1c1c1c1c1c1"), &now));
    }
    events.push(keyless(Some("c2c2c2c2c2c2c2c2"), &now));
    events.push(keyless(None, &now));
    events.push(keyless(None, &now));
    events.push(download(
        "river-levels",
        Some("key_a"),
        None,
        Route::Data,
        &yesterday,
    ));
    let mut events: Vec<(String, Download)> = events
        .into_iter()
        .enumerate()
        .map(|(i, d)| (format!("e{i}"), d))
        .collect();
    // (one of them delivered twice)
    events.push(events[1].clone());
    // WHEN they are recorded
    let recorded = log.record(&events, 30).await.unwrap();
    // THEN every download is in the log, once
    assert_eq!(recorded, 13);
    let listed = log
        .list(&catalog_writer::downloads::Filter {
            dataset: Some("river-levels".into()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(listed.len(), 13);
    // AND today counts each key and each named requester once, and each unnamed keyless
    // download: key_a, key_b, c1, c2, and the two unnamed
    let today_count = log.counts(today.date_naive(), 1).await.unwrap();
    assert_eq!(today_count.get("river-levels"), Some(&6));
    // AND yesterday's download by the same key counts on its own day
    let month = log.counts(today.date_naive(), 30).await.unwrap();
    assert_eq!(month.get("river-levels"), Some(&7));
    // AND recording the same batch again changes nothing
    assert_eq!(log.record(&events, 30).await.unwrap(), 0);
    assert_eq!(
        log.counts(today.date_naive(), 30)
            .await
            .unwrap()
            .get("river-levels"),
        Some(&7)
    );
}

/// The local stack runs the same pipeline: downloads through the local API (as `dev/run`
/// serves it) are read from its log lines and recorded; `catalog-admin audit` shows them, and
/// `catalog-admin count-downloads` (the daily job) puts the counts on the list.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_local_stack_records_downloads_through_the_same_pipeline() {
    let stack = Stack::start().await;
    ok(&publish(&stack, &sample("river-levels"), "river-levels"));
    let key = create_key(&stack);
    let (api, _guard) = catalog_tests::start_local_api(&stack);
    // WHEN someone downloads twice and reads a page of rows
    for path in ["data", "download", "rows?length=5"] {
        let (status, _, _) = catalog_tests::http_request(
            "GET",
            &format!("{api}/datasets/river-levels/{path}"),
            &[("x-api-key", key.as_str())],
        )
        .await;
        assert!(status == 200 || status == 302, "{path}: {status}");
    }
    // THEN the operators' log shows the three, with the key (the log is written as the
    // requests are logged: wait a moment for it)
    let mut out = String::new();
    for _ in 0..50 {
        out = ok(&admin(&stack, &["audit", "--dataset", "river-levels"], &[]));
        if out.starts_with("3 downloads") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(out.starts_with("3 downloads"), "{out}");
    let routes: Vec<&str> = out
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().last().unwrap())
        .collect();
    assert_eq!(routes, ["data", "download", "rows"], "{out}");
    assert!(out.lines().skip(1).all(|l| l.contains("(operator's key)")));
    // AND the daily count, run by hand, shows one download: the key's two downloads count
    // once a day (and the rows page is not one)
    let counted = ok(&admin(&stack, &["count-downloads"], &[]));
    assert!(counted.contains("1 counts changed"), "{counted}");
    let (_, _, body) =
        catalog_tests::http_request("GET", &format!("{api}/datasets?sort=downloads"), &[]).await;
    let page: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(page["items"][0]["downloads"], 1, "{page}");
}
