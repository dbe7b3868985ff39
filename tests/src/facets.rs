//! The catalog list and the facet lists as stored, read item by item with a Scan, and what they
//! must hold, decided here without the code under test: a facet value is its category, license
//! or tag trimmed and lowercased (docs/api.md: filters match case-insensitively); a blank value
//! belongs to no list; a tag given twice is listed once. Likewise the facet counts the list
//! answers with `facets=true`: counted here from the catalog list as stored, each value in the
//! form the earliest published dataset having it gives.

use std::collections::{BTreeMap, HashMap};

use aws_sdk_dynamodb::types::AttributeValue;

use crate::stack::Stack;

pub type Item = HashMap<String, AttributeValue>;

/// Every item of a table, over every Scan page.
pub async fn scan_all(client: &aws_sdk_dynamodb::Client, table: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan");
        items.extend(out.items.unwrap_or_default());
        match out.last_evaluated_key {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => break,
        }
    }
    items
}

/// A string or number attribute as text ("" when absent).
pub fn text(item: &Item, name: &str) -> String {
    match item.get(name) {
        Some(AttributeValue::S(v)) | Some(AttributeValue::N(v)) => v.clone(),
        _ => String::new(),
    }
}

fn strings(item: &Item, name: &str) -> Vec<String> {
    match item.get(name) {
        Some(AttributeValue::L(l)) => l.iter().filter_map(|t| t.as_s().ok().cloned()).collect(),
        Some(AttributeValue::Ss(l)) => l.clone(),
        _ => Vec::new(),
    }
}

/// `SEQ#000000000042` is 42.
pub fn position(sk: &str) -> u64 {
    sk.strip_prefix("SEQ#")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("not a list position: {sk}"))
}

/// The facet lists a dataset with these fields belongs to (`category#biology`, `tag#birds`,
/// `license#cc0-1.0`), sorted, each once.
pub fn facet_keys(category: &str, tags: &[String], license: &str) -> Vec<String> {
    let mut keys: Vec<String> = [("category", category), ("license", license)]
        .into_iter()
        .chain(tags.iter().map(|t| ("tag", t.as_str())))
        .filter_map(|(kind, raw)| {
            let value = raw.trim().to_lowercase();
            (!value.is_empty()).then(|| format!("{kind}#{value}"))
        })
        .collect();
    keys.sort();
    keys.dedup();
    keys
}

/// What the datasets table holds, list by list.
#[derive(Debug, Default)]
pub struct Stored {
    /// The catalog list: (position, slug, facet keys of the entry).
    pub listed: Vec<(u64, String, Vec<String>)>,
    /// The catalog counter's `total`.
    pub listed_total: Option<u64>,
    /// Each facet list: (position, the entry's `seq`, slug), by position.
    pub lists: BTreeMap<String, Vec<(u64, u64, String)>>,
    /// Each facet counter: (`total`, whether a rebuild mark is set).
    pub counters: BTreeMap<String, (u64, bool)>,
}

impl Stored {
    pub async fn read(stack: &Stack) -> Self {
        let mut stored = Self::default();
        for item in scan_all(&stack.dynamo, &stack.target.datasets_table).await {
            let pk = text(&item, "pk");
            let sk = text(&item, "sk");
            if pk == "LIST" {
                let keys = facet_keys(
                    &text(&item, "category"),
                    &strings(&item, "tags"),
                    &text(&item, "license"),
                );
                stored
                    .listed
                    .push((position(&sk), text(&item, "slug"), keys));
            } else if let Some(key) = pk.strip_prefix("LIST#") {
                let seq = text(&item, "seq").parse().expect("a facet entry's seq");
                stored.lists.entry(key.to_owned()).or_default().push((
                    position(&sk),
                    seq,
                    text(&item, "slug"),
                ));
            } else if pk == "CATALOG" && sk == "COUNTER" {
                stored.listed_total = text(&item, "total").parse().ok();
            } else if let Some(key) = pk.strip_prefix("CATALOG#") {
                let total = text(&item, "total")
                    .parse()
                    .expect("a facet counter's total");
                stored
                    .counters
                    .insert(key.to_owned(), (total, item.contains_key("rebuild_until")));
            }
        }
        stored.listed.sort();
        for list in stored.lists.values_mut() {
            list.sort();
        }
        stored
    }

    /// The slugs of each facet list, by position.
    pub fn slugs(&self) -> BTreeMap<String, Vec<String>> {
        self.lists
            .iter()
            .map(|(k, l)| (k.clone(), l.iter().map(|(_, _, s)| s.clone()).collect()))
            .collect()
    }
}

/// Every facet value of the catalog with how many listed datasets have it, as the list answers
/// them with `facets=true` (docs/api.md): counted here from the catalog list as stored, read
/// item by item; each value in the form (trimmed) of the earliest published dataset that has
/// it (its first such tag); most first, then by value ignoring case.
pub async fn expected_facet_counts(stack: &Stack) -> serde_json::Value {
    let mut entries: Vec<(u64, Item)> = scan_all(&stack.dynamo, &stack.target.datasets_table)
        .await
        .into_iter()
        .filter(|item| text(item, "pk") == "LIST")
        .map(|item| (position(&text(&item, "sk")), item))
        .collect();
    entries.sort_by_key(|(position, _)| *position);
    // (kind, lowercase value) -> (form, count)
    let mut counted: BTreeMap<(String, String), (String, u64)> = BTreeMap::new();
    for (_, item) in &entries {
        let raw: Vec<(&str, String)> = [("category", text(item, "category"))]
            .into_iter()
            .chain(strings(item, "tags").into_iter().map(|t| ("tag", t)))
            .chain([("license", text(item, "license"))])
            .collect();
        let mut seen = Vec::new();
        for (kind, raw) in raw {
            let value = raw.trim().to_lowercase();
            if value.is_empty() || seen.contains(&(kind, value.clone())) {
                continue;
            }
            seen.push((kind, value.clone()));
            counted
                .entry((kind.to_owned(), value))
                .or_insert_with(|| (raw.trim().to_owned(), 0))
                .1 += 1;
        }
    }
    let mut answer = serde_json::json!({"category": [], "tag": [], "license": []});
    for kind in ["category", "tag", "license"] {
        let mut values: Vec<(&String, &String, u64)> = counted
            .iter()
            .filter(|((k, _), _)| k == kind)
            .map(|((_, value), (form, count))| (value, form, *count))
            .collect();
        values.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
        answer[kind] = values
            .into_iter()
            .map(|(_, form, count)| serde_json::json!({"value": form, "count": count}))
            .collect();
    }
    answer
}

/// The list's `facets=true` answer (through the list handler and the DynamoDB adapter) is what
/// counting the whole catalog gives, whatever the filters, words, order and page asked for.
pub async fn assert_facet_counts_exact(stack: &Stack) {
    let want = expected_facet_counts(stack).await;
    let catalog = stack.catalog();
    let some_value = want["category"][0]["value"].as_str().unwrap_or("none");
    for query in [
        "facets=true".to_owned(),
        format!(
            "facets=true&category={}&page=2",
            some_value.to_uppercase().replace(' ', "%20")
        ),
        "facets=true&tag=no-such-tag&q=nothing&sort=name".to_owned(),
    ] {
        let resp = catalog_http::api::list(
            &crate::v2_request(&format!("/api/v1/datasets?{query}"), &[]),
            &catalog,
            chrono::Utc::now(),
        )
        .await;
        let body = crate::json_body(&resp);
        assert_eq!(resp.status(), 200, "{query}: {body}");
        assert_eq!(body["facets"], want, "{query}: the facet counts");
    }
}

/// Every dataset item and its alias agree with the catalog list: a listed dataset (its item
/// has `seq`) is the entry at that position, once; an unpublished one has no `seq` and no
/// entry; every entry's dataset exists, and none is left marked `withdrawn`; no renumbering
/// mark is left behind.
pub async fn assert_positions_consistent(stack: &Stack) {
    let items = scan_all(&stack.dynamo, &stack.target.datasets_table).await;
    let mut entries: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for item in items.iter().filter(|i| text(i, "pk") == "LIST") {
        assert!(
            !item.contains_key("withdrawn"),
            "a withdrawn entry is left: {item:?}"
        );
        entries
            .entry(text(item, "slug"))
            .or_default()
            .push(position(&text(item, "sk")));
    }
    let datasets: Vec<&Item> = items
        .iter()
        .filter(|i| text(i, "pk").starts_with("DS#") && text(i, "sk") == "DATASET")
        .collect();
    let mut listed = 0;
    for item in &datasets {
        let slug = text(item, "slug");
        let seq = text(item, "seq");
        let alias = items
            .iter()
            .find(|i| text(i, "pk") == format!("ID#{}", text(item, "id")))
            .unwrap_or_else(|| panic!("{slug}: no alias"));
        assert_eq!(text(alias, "seq"), seq, "{slug}: the alias's seq");
        assert_eq!(
            text(alias, "unpublished_at"),
            text(item, "unpublished_at"),
            "{slug}: the alias's mark"
        );
        let unpublished = item.contains_key("unpublished_at");
        match (seq.parse::<u64>().ok(), entries.get(&slug)) {
            (Some(seq), Some(at)) => {
                assert!(!unpublished, "{slug}: unpublished yet listed");
                assert_eq!(at, &vec![seq], "{slug}: listed once, at its seq");
                listed += 1;
            }
            (None, None) => {}
            (seq, at) => panic!("{slug}: seq {seq:?}, list entries {at:?}"),
        }
    }
    assert_eq!(listed, entries.len(), "every list entry's dataset exists");
    let mark = items
        .iter()
        .find(|i| text(i, "pk") == "CATALOG" && text(i, "sk") == "REBUILD");
    assert!(
        mark.is_none_or(|m| !m.contains_key("rebuild_until")),
        "the catalog list's mark is left: {mark:?}"
    );
}

/// The catalog list holds positions 1..=total with its counter saying total, and every facet
/// list holds exactly the listed datasets with that value (from the catalog list, the source
/// of truth), at positions 1..=n in publication order, its counter says n, and no rebuild mark
/// is left behind. A facet whose datasets all left keeps its counter, at 0. And the facet
/// counts are exact ([`assert_facet_counts_exact`]).
pub async fn assert_facet_lists_consistent(stack: &Stack) {
    assert_positions_consistent(stack).await;
    let stored = Stored::read(stack).await;
    let positions: Vec<u64> = stored.listed.iter().map(|(p, _, _)| *p).collect();
    let wanted: Vec<u64> = (1..=positions.len() as u64).collect();
    assert_eq!(positions, wanted, "the catalog list: positions 1..=total");
    assert_eq!(
        stored.listed_total,
        Some(positions.len() as u64),
        "the catalog counter"
    );
    // Expected: facet key -> [(catalog position, slug)] in publication order
    let mut expected: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for (seq, slug, keys) in &stored.listed {
        for key in keys {
            expected
                .entry(key.clone())
                .or_default()
                .push((*seq, slug.clone()));
        }
    }
    let mut lists = stored.lists.clone();
    for (key, want) in &expected {
        let have = lists.remove(key).unwrap_or_default();
        let positions: Vec<u64> = have.iter().map(|(p, _, _)| *p).collect();
        let wanted_positions: Vec<u64> = (1..=want.len() as u64).collect();
        assert_eq!(positions, wanted_positions, "{key}: positions 1..=total");
        let members: Vec<(u64, String)> =
            have.into_iter().map(|(_, seq, slug)| (seq, slug)).collect();
        assert_eq!(&members, want, "{key}: members in publication order");
        assert_eq!(
            stored.counters.get(key),
            Some(&(want.len() as u64, false)),
            "{key}: counter"
        );
    }
    assert!(
        lists.values().all(Vec::is_empty),
        "stray facet lists: {lists:?}"
    );
    for (key, counter) in &stored.counters {
        if !expected.contains_key(key) {
            assert_eq!(*counter, (0, false), "{key}: a facet nobody has any more");
        }
    }
    assert_facet_counts_exact(stack).await;
}
