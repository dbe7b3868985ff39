//! The dataset card (its Markdown README): set by `catalog-admin publish --readme`, by the
//! metadata file's `readme` and by `catalog-admin meta readme`, removed by `--clear`, answered
//! by the metadata endpoint as `readme`, kept out of list entries and the text index; refused
//! over 32 KiB, when not UTF-8, and when it would push the dataset's item past 400 KB.

use super::*;
use catalog_aws::dynamo::codec::{item_size, ITEM_LIMIT_BYTES};
use catalog_aws::dynamo::layout::{alias_pk, dataset_pk, key_of, DATASET_SK};

/// A work directory of the test's own, for the card files.
fn work() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("card-test-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).expect("work directory");
    dir
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write a card file");
    path
}

async fn readme(stack: &Stack, slug: &str) -> Value {
    let answer = metadata(stack, slug).await;
    assert_eq!(answer.status(), 200);
    let body = json_body(&answer);
    assert!(
        body.as_object().unwrap().contains_key("readme"),
        "the answer always names `readme`: {body}"
    );
    body["readme"].clone()
}

async fn search(stack: &Stack, words: &str) -> Value {
    json_body(
        &api::list(
            &v2_request(&format!("/api/v1/datasets?q={words}"), &[]),
            &stack.catalog(),
            Utc::now(),
        )
        .await,
    )
}

/// The dataset item and its UUID alias, as stored.
async fn items(stack: &Stack, slug: &str) -> Vec<catalog_aws::dynamo::layout::Item> {
    let mut found = Vec::new();
    let item = stack
        .dynamo
        .get_item()
        .table_name(&stack.target.datasets_table)
        .set_key(Some(key_of(dataset_pk(slug), DATASET_SK)))
        .consistent_read(true)
        .send()
        .await
        .unwrap()
        .item
        .expect("the dataset item");
    let id = uuid::Uuid::parse_str(item["id"].as_s().unwrap()).unwrap();
    found.push(item);
    found.push(
        stack
            .dynamo
            .get_item()
            .table_name(&stack.target.datasets_table)
            .set_key(Some(key_of(alias_pk(&id), DATASET_SK)))
            .consistent_read(true)
            .send()
            .await
            .unwrap()
            .item
            .expect("the alias item"),
    );
    found
}

#[tokio::test]
async fn a_card_round_trips_through_the_store_and_the_metadata_answer() {
    let stack = Stack::start().await;
    let dir = work();
    // Markdown with a heading, a table, code, a link and text outside ASCII.
    let first = "# River gauges\n\nLevels by *station*, in **metres**; zebraquokka.\n\n\
                 | station | unit |\n|---|---|\n| Köln | m |\n\n```sql\nSELECT 1;\n```\n\n\
                 [Source](https://example.org/gauges)\n";
    let card = write(&dir, "README.md", first);

    // GIVEN a dataset published with a card
    let out = admin(
        &stack,
        &[
            "publish",
            sample("river-levels").to_str().unwrap(),
            "--slug",
            "gauges",
            "--readme",
            card.to_str().unwrap(),
        ]
        .into_iter()
        .chain(META)
        .collect::<Vec<_>>(),
        &[],
    );
    ok(&out);
    // THEN the metadata answer holds it as written, and the store holds it on the dataset
    // item and its alias
    assert_eq!(readme(&stack, "gauges").await, first);
    for item in items(&stack, "gauges").await {
        assert_eq!(item["readme"].as_s().unwrap(), first);
    }
    // AND no list entry carries it, and its words are not searched
    let listed = list(&stack).await;
    assert_eq!(listed["items"][0]["slug"], "gauges");
    assert!(listed["items"][0].get("readme").is_none(), "{listed}");
    assert!(!listed.to_string().contains("zebraquokka"), "{listed}");
    assert_eq!(search(&stack, "zebraquokka").await["total"], 0);
    assert_eq!(
        search(&stack, "staged").await["total"],
        1,
        "the name is searched"
    );

    // WHEN it is replaced with `catalog-admin meta readme`
    let second = "## Changed\n\n- one\n- two\n";
    let printed = ok(&admin(
        &stack,
        &[
            "meta",
            "readme",
            "gauges",
            write(&dir, "NEW.md", second).to_str().unwrap(),
        ],
        &[],
    ));
    assert!(printed.contains("card set"), "{printed}");
    // THEN the next request answers the new card, and the list entry's `updated_at` follows
    assert_eq!(readme(&stack, "gauges").await, second);
    let entry = &list(&stack).await["items"][0];
    assert_eq!(
        entry["updated_at"],
        json_body(&metadata(&stack, "gauges").await)["updated_at"]
    );
    // AND a re-publish that gives no card keeps it
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    assert_eq!(readme(&stack, "gauges").await, second);

    // WHEN the metadata file gives one
    let third = "Card from the metadata file.\n";
    let meta_file = write(
        &dir,
        "meta.json",
        serde_json::json!({ "readme": third }).to_string(),
    );
    ok(&admin(
        &stack,
        &[
            "publish",
            sample("river-levels").to_str().unwrap(),
            "--slug",
            "gauges",
            "--metadata",
            meta_file.to_str().unwrap(),
        ],
        &[],
    ));
    assert_eq!(readme(&stack, "gauges").await, third);

    // WHEN it is cleared
    let printed = ok(&admin(
        &stack,
        &["meta", "readme", "gauges", "--clear"],
        &[],
    ));
    assert!(printed.contains("card removed"), "{printed}");
    // THEN the answer says null, and neither item holds it
    assert_eq!(readme(&stack, "gauges").await, Value::Null);
    for item in items(&stack, "gauges").await {
        assert!(
            item.get("readme").is_none_or(|v| v.is_null()),
            "{:?}",
            item.get("readme")
        );
    }
    // AND a dataset published without one answers null
    ok(&publish(&stack, &sample("city-bikes"), "bikes"));
    assert_eq!(readme(&stack, "bikes").await, Value::Null);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_card_over_32_kib_or_not_utf8_is_refused_and_nothing_changes() {
    let stack = Stack::start().await;
    let dir = work();
    let kept = "# Kept\n";
    let out = admin(
        &stack,
        &[
            "publish",
            sample("river-levels").to_str().unwrap(),
            "--slug",
            "gauges",
            "--readme",
            write(&dir, "kept.md", kept).to_str().unwrap(),
        ]
        .into_iter()
        .chain(META)
        .collect::<Vec<_>>(),
        &[],
    );
    ok(&out);
    // 32 KiB is taken; one byte more is not (a two-byte character across the limit)
    let at_limit = "a".repeat(32 * 1024);
    let over = format!("{}é", "a".repeat(32 * 1024 - 1));
    let over_file = write(&dir, "over.md", &over);
    for args in [
        vec!["meta", "readme", "gauges", over_file.to_str().unwrap()],
        [
            "publish",
            sample("river-levels").to_str().unwrap(),
            "--slug",
            "gauges",
            "--readme",
            over_file.to_str().unwrap(),
        ]
        .into_iter()
        .chain(META)
        .collect(),
    ] {
        let out = admin(&stack, &args, &[]);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("the card (README) is 32769 bytes, over the 32768 bytes (32 KiB)"),
            "{stderr}"
        );
        assert_eq!(readme(&stack, "gauges").await, kept, "{args:?}");
    }
    // Not UTF-8: refused, naming it
    let latin1 = write(&dir, "latin1.md", b"# Caf\xe9\n");
    let out = admin(
        &stack,
        &["meta", "readme", "gauges", latin1.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("is not UTF-8 text"), "{stderr}");
    // Blank: refused, pointing at --clear
    let blank = write(&dir, "blank.md", " \n");
    let out = admin(
        &stack,
        &["meta", "readme", "gauges", blank.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is empty"));
    // Neither a file nor --clear: a usage error
    let out = admin(&stack, &["meta", "readme", "gauges"], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(readme(&stack, "gauges").await, kept);
    // A dataset that does not exist: refused by name
    let out = admin(
        &stack,
        &[
            "meta",
            "readme",
            "nothing-here",
            write(&dir, "ok.md", "# ok").to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing-here"));
    // At the limit exactly: taken
    ok(&admin(
        &stack,
        &[
            "meta",
            "readme",
            "gauges",
            write(&dir, "limit.md", &at_limit).to_str().unwrap(),
        ],
        &[],
    ));
    assert_eq!(readme(&stack, "gauges").await, at_limit.as_str());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_card_that_would_push_the_dataset_item_past_400_kb_is_refused() {
    let stack = Stack::start().await;
    let dir = work();
    // GIVEN a dataset whose insights leave 16 KiB of room in its item (measured as stored)
    ok(&publish(&stack, &sample("river-levels"), "gauges"));
    let stored = items(&stack, "gauges")
        .await
        .iter()
        .map(item_size)
        .max()
        .unwrap();
    let insights = "i".repeat(ITEM_LIMIT_BYTES - stored - 16 * 1024);
    let meta_file = write(
        &dir,
        "meta.json",
        serde_json::json!({ "insights": insights }).to_string(),
    );
    let republish = |extra: Vec<String>| {
        let mut args: Vec<String> = [
            "publish",
            sample("river-levels").to_str().unwrap(),
            "--slug",
            "gauges",
            "--metadata",
            meta_file.to_str().unwrap(),
        ]
        .map(String::from)
        .to_vec();
        args.extend(extra);
        args
    };
    let args = republish(vec![]);
    ok(&admin(
        &stack,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[],
    ));
    let near = items(&stack, "gauges")
        .await
        .iter()
        .map(item_size)
        .max()
        .unwrap();
    assert!(
        (ITEM_LIMIT_BYTES - 17 * 1024..ITEM_LIMIT_BYTES - 15 * 1024).contains(&near),
        "{near}"
    );
    let big = write(&dir, "big.md", "b".repeat(32 * 1024));

    // WHEN a 32 KiB card is set on it
    let out = admin(
        &stack,
        &["meta", "readme", "gauges", big.to_str().unwrap()],
        &[],
    );
    // THEN it is refused by size, naming the card and the limit, and nothing changed
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("the card (32 KB) does not fit")
            && stderr.contains("over DynamoDB's 400 KB item limit")
            && stderr.contains("shorten the card"),
        "{stderr}"
    );
    assert_eq!(readme(&stack, "gauges").await, Value::Null);
    // AND a publish giving it is refused before anything is written, naming the card too
    let args = republish(vec!["--readme".into(), big.to_str().unwrap().into()]);
    let out = admin(
        &stack,
        &args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("over DynamoDB's 400 KB item limit")
            && stderr.contains("shorten the insights, discussions and card"),
        "{stderr}"
    );
    assert_eq!(readme(&stack, "gauges").await, Value::Null);
    let version = json_body(&metadata(&stack, "gauges").await)["version"].clone();
    assert_eq!(version, 2, "the refused publish made no version");
    // AND a card that fits is taken
    let small = write(&dir, "small.md", "s".repeat(8 * 1024));
    ok(&admin(
        &stack,
        &["meta", "readme", "gauges", small.to_str().unwrap()],
        &[],
    ));
    assert_eq!(readme(&stack, "gauges").await, "s".repeat(8 * 1024));
    let _ = std::fs::remove_dir_all(&dir);
}
