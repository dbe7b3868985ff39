use super::*;

fn doc(seq: u64, name: &str, description: &str, tags: &[&str]) -> TextDoc {
    TextDoc {
        seq,
        name: name.to_owned(),
        description: (!description.is_empty()).then(|| description.to_owned()),
        tags: tags.iter().map(|t| (*t).to_owned()).collect(),
        facets: tags.iter().map(|t| format!("tag#{t}")).collect(),
    }
}

fn q(text: &str) -> Vec<String> {
    let mut w: Vec<String> = words(text).collect();
    w.sort();
    w.dedup();
    w
}

fn seqs(index: &TextIndex, text: &str) -> Vec<u64> {
    index
        .search(&q(text))
        .unwrap()
        .iter()
        .map(|h| h.seq)
        .collect()
}

fn sample() -> Vec<TextDoc> {
    vec![
        doc(
            1,
            "Bird sightings",
            "Counts of birds by volunteers",
            &["birds", "Ecology"],
        ),
        doc(
            2,
            "River levels",
            "Hourly river gauge readings",
            &["hydrology"],
        ),
        doc(
            3,
            "City bikes",
            "Trips of shared bikes; a bird's-eye view",
            &["transport"],
        ),
        doc(4, "Songbirds of Europe", "", &["ornithology"]),
        doc(5, "Air quality", "PM2.5 and NO2, hourly", &["air", "a"]),
    ]
}

/// A catalog of `n` datasets with a few hundred distinct words, deterministic.
fn corpus(n: u64) -> Vec<TextDoc> {
    const SYLLABLES: [&str; 16] = [
        "ka", "ri", "to", "bel", "mar", "sun", "do", "vi", "lo", "qua", "zen", "pe", "ny", "gor",
        "fa", "ul",
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut word = move || {
        let r = next();
        let len = 1 + (r % 3) as usize;
        (0..len)
            .map(|i| SYLLABLES[((r >> (8 + 4 * i)) % 16) as usize])
            .collect::<String>()
    };
    (1..=n)
        .map(|seq| {
            let name = format!("{} {} {seq}", word(), word());
            let description = (0..6).map(|_| word()).collect::<Vec<_>>().join(" ");
            let tags = vec![word(), word()];
            TextDoc {
                seq,
                name,
                description: Some(description),
                facets: vec![
                    format!("category#c{}", seq % 5),
                    format!("license#l{}", seq % 2),
                ],
                tags,
            }
        })
        .collect()
}

#[test]
fn a_word_finds_the_datasets_with_a_word_it_starts() {
    let index = TextIndex::build(&sample(), TextIndex::MAX_SHARD_BYTES).unwrap();
    let mut found = seqs(&index, "bird");
    found.sort();
    assert_eq!(found, [1, 3], "bird finds Bird, birds and bird's-eye");
    let mut found = seqs(&index, "BIRDS");
    found.sort();
    assert_eq!(found, [1], "birds does not find bird");
    assert_eq!(
        seqs(&index, "irds"),
        Vec::<u64>::new(),
        "a word's middle is not a match"
    );
    assert_eq!(
        seqs(&index, "songbird"),
        [4],
        "songbirds is found by its own start"
    );
    assert_eq!(seqs(&index, "hydro"), [2], "tags are searched");
    assert_eq!(seqs(&index, "gauge"), [2], "descriptions are searched");
    assert_eq!(seqs(&index, "pm2"), [5], "letters and digits make one word");
}

#[test]
fn every_word_must_match() {
    let index = TextIndex::build(&sample(), TextIndex::MAX_SHARD_BYTES).unwrap();
    assert_eq!(seqs(&index, "river hourly"), [2]);
    assert_eq!(seqs(&index, "river bird"), Vec::<u64>::new());
    assert_eq!(seqs(&index, ""), Vec::<u64>::new());
}

#[test]
fn a_word_of_one_character_matches_only_itself() {
    let index = TextIndex::build(&sample(), TextIndex::MAX_SHARD_BYTES).unwrap();
    let mut found = seqs(&index, "a");
    found.sort();
    assert_eq!(
        found,
        [3, 5],
        "the word a (dataset 3's text, dataset 5's tag), not air"
    );
    assert_eq!(seqs(&index, "b"), Vec::<u64>::new());
}

#[test]
fn whole_words_in_names_rank_first() {
    let docs = vec![
        doc(1, "Rainfall", "", &[]),
        doc(2, "Rain", "", &[]),
        doc(3, "Storms", "", &["rain"]),
        doc(4, "Storms", "", &["rain"]),
        doc(5, "Weather", "rain", &[]),
        doc(6, "Drought", "", &[]),
    ];
    let index = TextIndex::build(&docs, TextIndex::MAX_SHARD_BYTES).unwrap();
    let hits = index.search(&q("rain")).unwrap();
    let order: Vec<u64> = hits.iter().map(|h| h.seq).collect();
    assert_eq!(order.len(), 5);
    assert_eq!(
        order[..3],
        [2, 4, 3],
        "the word in a name, then in a tag (equal scores: newest first)"
    );
    assert_eq!(hits[1].score, hits[2].score);
    let rank = |seq| order.iter().position(|s| *s == seq).unwrap();
    assert!(rank(2) < rank(1), "a whole word before a word it starts");
    assert!(rank(3) < rank(5), "a tag before the description");
}

fn assert_same_answers(a: &TextIndex, b: &TextIndex, queries: &[&str]) {
    for text in queries {
        let (x, y) = (a.search(&q(text)).unwrap(), b.search(&q(text)).unwrap());
        assert_eq!(
            x.iter().map(|h| h.seq).collect::<Vec<_>>(),
            y.iter().map(|h| h.seq).collect::<Vec<_>>(),
            "{text}"
        );
        for (h, k) in x.iter().zip(&y) {
            assert!((h.score - k.score).abs() < 1e-4, "{text}: {h:?} {k:?}");
        }
    }
}

const QUERIES: [&str; 9] = [
    "ka", "kari", "mar sun", "qua", "zenpe", "bel to", "u", "gorfa ny", "do vi lo",
];

#[test]
fn how_the_index_is_split_does_not_change_any_answer() {
    let docs = corpus(600);
    let whole = TextIndex::build(&docs, usize::MAX).unwrap();
    let split = TextIndex::build(&docs, 4 * 1024).unwrap();
    assert_eq!(whole.layout.lowers.len(), 1);
    assert!(split.layout.lowers.len() > 8, "{:?}", split.layout.lowers);
    assert!(!seqs(&whole, "kari").is_empty());
    assert_same_answers(&whole, &split, &QUERIES);
}

#[test]
fn a_query_reads_only_the_shards_of_its_words() {
    let index = TextIndex::build(&corpus(600), 4 * 1024).unwrap();
    let shards = index.layout.lowers.len();
    for text in QUERIES {
        let needed = index.layout.shards_for(&q(text), &[]);
        assert!(needed.len() < shards / 2, "{text}: {needed:?} of {shards}");
        // With only those loaded, the answer is the same.
        let partial = TextIndex::from_parts(
            index.layout.clone(),
            index.delta().clone(),
            (0..shards)
                .map(|i| needed.contains(&i).then(|| index.shard(i).unwrap().clone()))
                .collect(),
            index.change(),
            index.max_shard_bytes(),
        );
        assert_same_answers(&index, &partial, &[text]);
    }
    let missing = TextIndex::from_parts(
        index.layout.clone(),
        index.delta().clone(),
        vec![None; shards],
        0,
        index.max_shard_bytes(),
    );
    assert!(matches!(
        missing.search(&q("ka")),
        Err(SearchError::NotLoaded(_))
    ));
}

#[test]
fn changes_folded_one_shard_at_a_time_answer_as_a_fresh_build() {
    let mut docs = corpus(240);
    let mut index = TextIndex::build(&docs[..120], 4 * 1024).unwrap();
    let mut most_pending = 0;
    // New datasets, and edits of earlier ones.
    for i in 120..240 {
        index.layout.datasets += 1;
        index.upsert(docs[i].clone()).unwrap();
        if i % 3 == 0 {
            let edited = &mut docs[i / 3];
            edited.name = format!("renamed {}", edited.seq);
            edited.tags.push("edited".into());
            index.upsert(edited.clone()).unwrap();
        }
        index.fold_one().unwrap();
        most_pending = most_pending.max(index.delta().len());
    }
    let fresh = TextIndex::build(&docs, 4 * 1024).unwrap();
    assert_eq!(index.layout.datasets, fresh.layout.datasets);
    let mut renamed = seqs(&index, "renamed");
    renamed.sort();
    assert_eq!(renamed.len(), 40);
    assert_same_answers(&index, &fresh, &QUERIES);
    assert_same_answers(&index, &fresh, &["renamed", "edited ka"]);
    // The delta holds about as many datasets as there are shards, not every change.
    let shards = index.layout.lowers.len();
    assert!(
        most_pending <= 2 * (shards + 2),
        "{most_pending} pending with {shards} shards"
    );
    assert!(index
        .shards
        .iter()
        .flatten()
        .all(|s| s.bytes() <= 4 * 1024 * 2));
}

#[test]
fn a_word_too_common_to_split_by_term_is_split_by_position() {
    // One word, in names, tags and descriptions, with different counts.
    let docs: Vec<TextDoc> = (1..=1100)
        .map(|seq| {
            let many = vec!["common"; 1 + (seq % 7) as usize].join(" ");
            match seq % 3 {
                0 => doc(seq, "common", "", &[]),
                1 => doc(seq, "", &many, &["common"]),
                _ => doc(seq, &many, "common", &[]),
            }
        })
        .map(|d| TextDoc {
            facets: Vec::new(),
            ..d
        })
        .collect();
    let whole = TextIndex::build(&docs[..1000], usize::MAX).unwrap();
    let limit = whole.shard(0).unwrap().bytes() * 3 / 4;
    let mut index = TextIndex::build(&docs[..1000], limit).unwrap();
    assert!(index.layout.lowers.len() > 1, "{:?}", index.layout);
    assert!(
        index.layout.lowers.iter().all(String::is_empty),
        "one term range, split by position: {:?}",
        index.layout
    );
    assert!(index.layout.seq_lowers.windows(2).all(|w| w[0] < w[1]));
    assert_same_answers(&index, &whole, &["common", "com"]);
    // New datasets go to the last positions' shard; none outgrows the limit.
    for doc in &docs[1000..] {
        index.layout.datasets += 1;
        index.upsert(doc.clone()).unwrap();
        for written in index.fold_one().unwrap() {
            assert!(index.shard(written).unwrap().bytes() <= limit);
        }
    }
    let whole = TextIndex::build(&docs, usize::MAX).unwrap();
    assert_same_answers(&index, &whole, &["common", "com"]);
}

/// `index` with every shard stored as a blob and read back (each blob as long as the shard
/// says).
fn read_back(index: &TextIndex) -> TextIndex {
    let shards: Vec<Option<Shard>> = (0..index.layout.lowers.len())
        .map(|i| {
            let blob = index.shard(i).unwrap().to_blob().unwrap();
            assert_eq!(blob.len(), index.shard(i).unwrap().bytes());
            Some(Shard::from_blob(&blob).unwrap())
        })
        .collect();
    TextIndex::from_parts(
        index.layout.clone(),
        index.delta().clone(),
        shards,
        index.change(),
        index.max_shard_bytes(),
    )
}

#[test]
fn a_shard_stored_and_read_back_answers_the_same() {
    let index = TextIndex::build(&corpus(300), 4 * 1024).unwrap();
    assert_same_answers(&index, &read_back(&index), &QUERIES);
}

#[test]
fn a_damaged_blob_is_an_error() {
    let index = TextIndex::build(&sample(), TextIndex::MAX_SHARD_BYTES).unwrap();
    let blob = index.shard(0).unwrap().to_blob().unwrap();
    for bad in [&[][..], &[9, 0][..], &blob[..blob.len() / 2], &blob[..1]] {
        assert!(Shard::from_blob(bad).is_err(), "{} bytes", bad.len());
    }
}

/// Every dataset of `docs` in all of `facets`, newest first: the rule.
fn in_facets(docs: &[TextDoc], facets: &[&str]) -> Vec<u64> {
    let mut seqs: Vec<u64> = docs
        .iter()
        .filter(|d| facets.iter().all(|f| d.facets.iter().any(|g| g == f)))
        .map(|d| d.seq)
        .collect();
    seqs.sort_unstable_by_key(|s| std::cmp::Reverse(*s));
    seqs
}

fn keys(facets: &[&str]) -> Vec<String> {
    facets.iter().map(|f| (*f).to_owned()).collect()
}

fn found(index: &TextIndex, words: &str, facets: &[&str]) -> Vec<u64> {
    index
        .find(&q(words), &keys(facets))
        .unwrap()
        .iter()
        .map(|h| h.seq)
        .collect()
}

const FILTERS: [&[&str]; 5] = [
    &["category#c1"],
    &["category#c1", "license#l0"],
    &["license#l1", "category#c3"],
    &["category#c2", "license#l0", "category#c2"],
    &["category#c4", "license#nope"],
];

#[test]
fn filters_find_the_datasets_in_every_facet_newest_first_however_the_index_is_split() {
    let docs = corpus(900);
    let whole = TextIndex::build(&docs, usize::MAX).unwrap();
    let split = TextIndex::build(&docs, 4 * 1024).unwrap();
    // Facets alone, in small shards
    let facets_only: Vec<TextDoc> = docs
        .iter()
        .map(|d| TextDoc {
            name: String::new(),
            description: None,
            tags: Vec::new(),
            ..d.clone()
        })
        .collect();
    let fine = TextIndex::build(&facets_only, 1024).unwrap();
    // Facet terms sort before every word: a word never reads their shards
    let facet_shards = split.layout.shards_for(&[], &keys(&["license#l0"]));
    for text in QUERIES {
        let needed = split.layout.shards_for(&q(text), &[]);
        assert!(
            needed.iter().all(|s| !facet_shards.contains(s) || *s == 0),
            "{text}: {needed:?}"
        );
    }
    // A facet too common for one shard is split by position
    let common = "\u{1}license#l0".to_owned();
    assert!(
        fine.layout.lowers.iter().filter(|l| **l == common).count() > 1,
        "{:?}",
        fine.layout.lowers
    );
    for facets in FILTERS {
        let expected = in_facets(&docs, facets);
        assert_eq!(found(&whole, "", facets), expected, "{facets:?}");
        assert_eq!(found(&split, "", facets), expected, "{facets:?}");
        assert_eq!(found(&fine, "", facets), expected, "{facets:?}");
    }
    assert!(!in_facets(&docs, FILTERS[1]).is_empty());
    // With words: the words' matches in the facets, ranked as without them
    for text in QUERIES {
        let ranked: Vec<u64> = split
            .search(&q(text))
            .unwrap()
            .iter()
            .map(|h| h.seq)
            .collect();
        let members = in_facets(&docs, FILTERS[1]);
        let expected: Vec<u64> = ranked.into_iter().filter(|s| members.contains(s)).collect();
        assert_eq!(found(&split, text, FILTERS[1]), expected, "{text}");
    }
    assert_eq!(found(&split, "", &[]), Vec::<u64>::new(), "nothing asked");
}

#[test]
fn filters_follow_changes_folded_one_shard_at_a_time() {
    let mut docs = corpus(400);
    let mut index = TextIndex::build(&docs[..200], 4 * 1024).unwrap();
    for i in 200..400 {
        index.layout.datasets += 1;
        index.upsert(docs[i].clone()).unwrap();
        if i % 4 == 0 {
            // An earlier dataset moves to another category
            let moved = &mut docs[i / 4];
            moved.facets[0] = "category#c9".into();
            index.upsert(moved.clone()).unwrap();
        }
        index.fold_one().unwrap();
        if i % 50 == 0 {
            for facets in FILTERS {
                assert_eq!(
                    found(&index, "", facets),
                    in_facets(&docs[..=i], facets),
                    "after {i}: {facets:?}"
                );
            }
        }
    }
    assert_eq!(found(&index, "", &["category#c9"]).len(), 50);
    let fresh = TextIndex::build(&docs, 4 * 1024).unwrap();
    for facets in FILTERS {
        assert_eq!(found(&index, "", facets), found(&fresh, "", facets));
    }
    // Read back from blobs, the same
    let read = read_back(&index);
    for facets in FILTERS {
        assert_eq!(found(&read, "", facets), found(&index, "", facets));
    }
}

#[test]
fn an_index_built_before_filters_refuses_them() {
    let mut index = TextIndex::build(&sample(), TextIndex::MAX_SHARD_BYTES).unwrap();
    assert!(index.layout.filters, "every build holds the facets");
    index.layout.filters = false;
    assert!(matches!(
        index.find(&q("bird"), &keys(&["tag#birds"])),
        Err(SearchError::NoFilters)
    ));
    assert_eq!(index.find(&q("bird"), &[]).unwrap().len(), 2);
}

#[test]
fn a_read_budget_leaves_out_the_words_whose_shards_cost_most_first() {
    let docs = corpus(900);
    let index = TextIndex::build(&docs, 4 * 1024).unwrap();
    let sizes: Vec<u64> = (0..index.layout.lowers.len())
        .map(|i| index.shard(i).unwrap().bytes() as u64)
        .collect();
    let layout = &index.layout;
    let cost = |words: &[String], facets: &[String]| -> u64 {
        layout
            .shards_for(words, facets)
            .iter()
            .map(|s| sizes[*s])
            .sum()
    };
    // `ka` is a common syllable (many shards), `gorvi` a rare word (one)
    let words = q("ka gorvi");
    assert_eq!(words, ["gorvi", "ka"]);
    let (rare, common) = (cost(&words[..1], &[]), cost(&words[1..], &[]));
    assert!(common > 2 * rare, "ka {common} B, gorvi {rare} B");
    let all = cost(&words, &[]);
    // Within the budget: every word, and the bytes they read
    let fits = layout.words_within(&words, &[], &sizes, all);
    assert_eq!(
        (fits.words.clone(), fits.left_out.clone()),
        (words.clone(), vec![])
    );
    assert_eq!(fits.bytes, all);
    // One byte short: the costlier word is left out, whatever its place in the query
    for order in [words.clone(), vec![words[1].clone(), words[0].clone()]] {
        let short = layout.words_within(&order, &[], &sizes, all - 1);
        assert_eq!(short.words, ["gorvi"], "{order:?}");
        assert_eq!(short.left_out, ["ka"], "{order:?}");
        assert_eq!(short.bytes, rare);
    }
    // The facets' shards are taken first, whatever they cost
    let facets = keys(&["license#l0"]);
    let facet_bytes = cost(&[], &facets);
    let with_facets = layout.words_within(&words, &facets, &sizes, facet_bytes + rare);
    assert_eq!(with_facets.words, ["gorvi"]);
    assert_eq!(with_facets.bytes, facet_bytes + rare);
    let none = layout.words_within(&words, &facets, &sizes, 0);
    assert!(none.words.is_empty());
    assert_eq!(none.left_out, ["ka", "gorvi"], "the costliest first");
    assert_eq!(
        none.bytes, facet_bytes,
        "the facets are read over the budget"
    );
    // A word whose shards are already taken adds nothing
    let twice = layout.words_within(&q("ka kari"), &[], &sizes, cost(&q("ka"), &[]));
    assert_eq!(twice.words, ["ka", "kari"]);
    // The shards it plans are enough: with only those loaded, the taken words are answered
    let planned = layout.shards_for(&short_words(&index, &words, all - 1, &sizes), &[]);
    let partial = TextIndex::from_parts(
        layout.clone(),
        index.delta().clone(),
        (0..sizes.len())
            .map(|i| {
                planned
                    .contains(&i)
                    .then(|| index.shard(i).unwrap().clone())
            })
            .collect(),
        index.change(),
        index.max_shard_bytes(),
    );
    assert_eq!(
        partial.find(&words[..1], &[]).unwrap(),
        index.find(&words[..1], &[]).unwrap()
    );
    assert!(!index.find(&words[..1], &[]).unwrap().is_empty());
}

fn short_words(index: &TextIndex, words: &[String], budget: u64, sizes: &[u64]) -> Vec<String> {
    index.layout.words_within(words, &[], sizes, budget).words
}

#[test]
fn a_position_past_any_the_catalog_can_hold_is_a_damaged_index_not_an_allocation() {
    let mut docs = sample();
    docs[0].seq = 1 << 40;
    let index = TextIndex::build(&docs, TextIndex::MAX_SHARD_BYTES).unwrap();
    assert!(matches!(
        index.search(&q("bird")),
        Err(SearchError::Damaged(_))
    ));
    assert_eq!(seqs(&index, "river"), [2], "words it does not hold answer");
}
