use super::*;

fn with_category(category: &str) -> ListParams<'_> {
    ListParams {
        category: Some(category),
        ..ListParams::default()
    }
}

fn with_tags<'a>(tags: &'a [&'a str]) -> ListParams<'a> {
    ListParams {
        tags,
        ..ListParams::default()
    }
}

fn with_q(q: &str) -> ListParams<'_> {
    ListParams {
        q: Some(q),
        ..ListParams::default()
    }
}

fn with_sort(sort: &str) -> ListParams<'_> {
    ListParams {
        sort: Some(sort),
        ..ListParams::default()
    }
}

#[test]
fn sort_takes_a_field_and_an_optional_direction() {
    let s = |raw| Sort::parse(Some(raw)).unwrap();
    assert_eq!(Sort::parse(None).unwrap(), Sort::DEFAULT);
    assert_eq!(s("created"), Sort::DEFAULT);
    assert!(!s("created:asc").descending);
    assert!(s("updated").descending);
    assert!(!s("name").descending, "names default to A to Z");
    assert!(s("name:desc").descending);
    for bad in [
        "",
        "size",
        "name:up",
        "Name",
        "created:",
        ":asc",
        "name:asc:desc",
    ] {
        assert_eq!(
            Sort::parse(Some(bad)).unwrap_err(),
            QueryError::Sort(bad.to_owned()),
            "{bad}"
        );
    }
}

#[test]
fn the_plan_keeps_single_facets_on_positional_lists() {
    let plain = ListQuery::parse(ListParams::default()).unwrap();
    assert_eq!(plain.plan(), Plan::Listing { descending: true });
    let asc = ListQuery::parse(with_sort("created:asc")).unwrap();
    assert_eq!(asc.plan(), Plan::Listing { descending: false });
    for q in [
        ListQuery::parse(with_category("Biology")).unwrap(),
        ListQuery::parse(with_tags(&["birds"])).unwrap(),
        ListQuery::parse(ListParams {
            license: Some("CC0-1.0"),
            sort: Some("created:asc"),
            ..ListParams::default()
        })
        .unwrap(),
        ListQuery::parse(with_tags(&["birds", "BIRDS "])).unwrap(),
    ] {
        assert!(matches!(q.plan(), Plan::Facet { .. }), "{q:?}");
    }
    for q in [
        ListQuery::parse(ListParams {
            category: Some("biology"),
            sort: Some("name"),
            ..ListParams::default()
        })
        .unwrap(),
        ListQuery::parse(with_sort("updated")).unwrap(),
        ListQuery::parse(with_q("river")).unwrap(),
        ListQuery::parse(ListParams {
            category: Some("biology"),
            tags: &["birds"],
            ..ListParams::default()
        })
        .unwrap(),
        ListQuery::parse(with_tags(&["a", "b"])).unwrap(),
        ListQuery::parse(ListParams {
            license: Some("cc0-1.0"),
            tags: &["birds"],
            sort: Some("downloads"),
            ..ListParams::default()
        })
        .unwrap(),
        ListQuery::parse(ListParams {
            category: Some("biology"),
            q: Some("river"),
            sort: Some("name"),
            ..ListParams::default()
        })
        .unwrap(),
    ] {
        assert_eq!(q.plan(), Plan::Search, "{q:?}");
    }
}

#[test]
fn words_rank_by_relevance_unless_a_sort_is_given() {
    assert!(ListQuery::parse(with_q("river")).unwrap().relevance);
    let sorted = ListQuery::parse(ListParams {
        q: Some("river"),
        sort: Some("created"),
        ..ListParams::default()
    })
    .unwrap();
    assert!(!sorted.relevance, "an explicit sort, even the default one");
    assert!(!ListQuery::parse(with_q(" ,")).unwrap().relevance);
    assert!(!ListQuery::parse(ListParams::default()).unwrap().relevance);
}

fn indexed(seq: u64, name: &str, description: Option<&str>, tags: &[&str]) -> Indexed {
    let card = Card {
        name: name.into(),
        description: description.map(Into::into),
        category: "Biology".into(),
        tags: tags.iter().map(|t| (*t).into()).collect(),
        license: "CC0-1.0".into(),
        access_level: Default::default(),
    };
    Indexed::new(DatasetSummary {
        slug: crate::input::Slug::parse(&format!("d{seq}")).unwrap(),
        id: uuid::Uuid::nil(),
        card,
        size: 0,
        row_count: 0,
        column_count: 0,
        keyless_until: None,
        updated_at: chrono::DateTime::UNIX_EPOCH,
        keyless: false,
        downloads: 0,
        files: None,
        seq,
    })
}

#[test]
fn a_word_matches_the_start_of_a_word_of_the_name_description_or_a_tag() {
    let d = indexed(
        1,
        "Birds of Europe",
        Some("Counts by river-basin"),
        &["Wild life"],
    );
    for word in [
        "bird", "birds", "europe", "of", "basin", "river", "life", "wild",
    ] {
        assert!(d.has_word(word), "{word}");
    }
    for word in ["irds", "eur0", "riverbasin", "s", "e", "birdsong"] {
        assert!(!d.has_word(word), "{word}");
    }
    // Each word lowercased on its own, as the index does: a final sigma, a dotted capital I
    let greek = indexed(4, "ΟΔΟΣ.ΑΒ", None, &["İstanbul"]);
    for word in words("ΟΔΟΣ İstanbul") {
        assert!(greek.has_word(&word), "{word}");
    }
    let long = indexed(5, &"x".repeat(MAX_WORD_BYTES + 1), None, &[]);
    assert!(!long.has_word("xx"), "a word the index leaves out");
    let one = indexed(2, "A b c", None, &[]);
    assert!(one.has_word("a") && one.has_word("b"));
    assert!(
        !indexed(3, "Apples", None, &[]).has_word("a"),
        "one character is a word"
    );
}

#[test]
fn with_scores_only_what_the_index_found_matches_best_first() {
    let all = [
        indexed(1, "River levels", None, &[]),
        indexed(2, "River temperatures", None, &[]),
        indexed(3, "River flows", None, &[]),
        indexed(4, "Lakes", None, &[]),
    ];
    let q = ListQuery::parse(with_q("river")).unwrap();
    let scores = Scores::from([(1, 1.0), (2, 3.0), (3, 1.0), (4, 9.0)]);
    let page = q.select(all.iter(), Some(&scores), Some(0), 10);
    let seqs: Vec<u64> = page.items.iter().map(|s| s.seq).collect();
    // 4 was "found" but does not hold the word (a stale index): it is left out.
    assert_eq!(seqs, [2, 3, 1], "best first, ties newest first");
    assert_eq!(page.total, 3);
    let found_one = Scores::from([(1, 1.0)]);
    let page = q.select(all.iter(), Some(&found_one), Some(0), 10);
    assert_eq!(page.total, 1, "what the index did not find does not match");
    let unranked = q.select(all.iter(), None, Some(0), 10);
    let seqs: Vec<u64> = unranked.items.iter().map(|s| s.seq).collect();
    assert_eq!(
        seqs,
        [3, 2, 1],
        "without an index: matched here, newest first"
    );
}

#[test]
fn asking_for_facet_counts_does_not_change_the_plan() {
    let counted = ListQuery::parse(ListParams {
        facets: Some("true"),
        ..with_category("biology")
    })
    .unwrap();
    assert!(counted.facet_counts);
    assert!(matches!(counted.plan(), Plan::Facet { .. }));
    assert!(
        !ListQuery::parse(ListParams::default())
            .unwrap()
            .facet_counts
    );
    assert_eq!(
        ListQuery::parse(ListParams {
            facets: Some("1"),
            ..ListParams::default()
        }),
        Err(QueryError::FacetsFlag("1".into()))
    );
}

#[test]
fn facet_values_are_normalized_and_bounded() {
    let q = ListQuery::parse(with_category("  Biology ")).unwrap();
    assert_eq!(
        q.facets,
        [Facet::new(FacetKind::Category, "biology").unwrap()]
    );
    assert_eq!(q.facets[0].key(), "category#biology");
    for bad in ["", "   ", &"x".repeat(129)] {
        assert_eq!(
            ListQuery::parse(with_category(bad)).unwrap_err(),
            QueryError::Facet(FacetError {
                kind: FacetKind::Category
            })
        );
    }
    let nine = ["t"; 9];
    assert_eq!(
        ListQuery::parse(with_tags(&nine)).unwrap_err(),
        QueryError::TooManyTags
    );
}

#[test]
fn q_is_split_into_lowercase_words() {
    let q = ListQuery::parse(with_q("River-Levels  2024, river")).unwrap();
    assert_eq!(q.words, ["2024", "levels", "river"]);
    assert!(ListQuery::parse(with_q("  ")).unwrap().words.is_empty());
    let long = "a ".repeat(129);
    assert_eq!(
        ListQuery::parse(with_q(&long)).unwrap_err(),
        QueryError::QTooLong
    );
    assert_eq!(
        ListQuery::parse(with_q("a b c d e f g h i")).unwrap_err(),
        QueryError::TooManyWords
    );
}
