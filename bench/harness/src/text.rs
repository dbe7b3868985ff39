//! The listings' text index (`catalog_search::index`) at a million datasets, in-process: N synthetic
//! summaries whose words follow a Zipf law over a 200,000-word vocabulary (plus years and
//! unique numbers in names, tags from 3,000), with Zipf-distributed categories and licenses,
//! built into term-range shards.
//!
//! Prints the build (time, shards, sizes, peak memory); for each query shape (words, filters,
//! both), the shards and bytes a cold listing reads and the time to load and search them; the worst word prefix of
//! two letters; and what publishing costs: each of 400 new datasets recorded in the delta and
//! folded into one shard, with the bytes written.

use std::time::{Duration, Instant};

use catalog_search::index::{Shard, TextDoc, TextIndex};
use catalog_search::listing::READ_BUDGET;

use crate::index::Rng;
use crate::lambda::proc_status_kb;

/// A rank in 0..n, about Zipf-distributed (log-uniform): rank r has weight about 1/(r+1).
pub(crate) fn zipf(rng: &mut Rng, n: usize) -> usize {
    let u = (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
    (((n as f64 + 1.0).ln() * u).exp() as usize)
        .saturating_sub(1)
        .min(n - 1)
}

const SYLLABLES: [&str; 24] = [
    "ka", "ri", "to", "bel", "mar", "sun", "do", "vi", "lo", "qua", "zen", "pe", "ny", "gor", "fa",
    "ul", "tre", "sam", "ex", "no", "hy", "lin", "co", "da",
];

/// The `i`th word of the vocabulary: distinct syllable strings, short ones first.
pub(crate) fn word(i: usize) -> String {
    let mut n = i;
    let mut w = String::new();
    loop {
        w.push_str(SYLLABLES[n % SYLLABLES.len()]);
        n /= SYLLABLES.len();
        if n == 0 {
            break;
        }
        n -= 1;
    }
    w
}

const VOCABULARY: usize = 200_000;
const TAGS: usize = 3_000;
/// Categories and licenses, Zipf-distributed too: the most common category holds about a
/// fifth of the catalog, the most common license about a third.
const CATEGORIES: usize = 40;
const LICENSES: usize = 8;

pub(crate) fn synthetic(datasets: usize) -> Vec<TextDoc> {
    let vocabulary: Vec<String> = (0..VOCABULARY).map(word).collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    (1..=datasets as u64)
        .map(|seq| {
            let mut name: Vec<String> = (0..2 + rng.below(3))
                .map(|_| vocabulary[zipf(&mut rng, VOCABULARY)].clone())
                .collect();
            match rng.below(20) {
                0..5 => name.push((1990 + rng.below(37)).to_string()),
                5..7 => name.push(format!("v{seq}")),
                _ => {}
            }
            let description: Vec<&str> = (0..8 + rng.below(33))
                .map(|_| vocabulary[zipf(&mut rng, VOCABULARY)].as_str())
                .collect();
            let tags: Vec<String> = (0..1 + rng.below(4))
                .map(|_| format!("t{}", word(zipf(&mut rng, TAGS))))
                .collect();
            let mut facets = vec![
                format!("category#c{}", zipf(&mut rng, CATEGORIES)),
                format!("license#l{}", zipf(&mut rng, LICENSES)),
            ];
            facets.extend(tags.iter().map(|t| format!("tag#{t}")));
            facets.sort();
            facets.dedup();
            TextDoc {
                seq,
                name: name.join(" "),
                description: Some(description.join(" ")),
                tags,
                facets,
            }
        })
        .collect()
}

fn mb(bytes: usize) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

pub fn run(datasets: usize) -> Result<(), String> {
    let err = |e: catalog_search::index::SearchError| e.to_string();
    let pid = std::process::id();
    let docs = synthetic(datasets);
    let generated = proc_status_kb(pid, "VmRSS:")? / 1024;
    let started = Instant::now();
    let mut index = TextIndex::build(&docs, TextIndex::MAX_SHARD_BYTES).map_err(err)?;
    let build = started.elapsed();
    let shards = index.layout.lowers.len();
    let mut sizes: Vec<usize> = (0..shards)
        .map(|i| index.shard(i).map_or(0, Shard::bytes))
        .collect();
    let total: usize = sizes.iter().sum();
    sizes.sort_unstable();
    let layout_bytes: usize = index.layout.lowers.iter().map(|l| l.len() + 10).sum();
    let mut kinds = std::collections::BTreeMap::new();
    for i in 0..shards {
        for (kind, bytes) in index.shard(i).unwrap().bytes_by_kind().map_err(err)? {
            *kinds.entry(kind).or_insert(0) += bytes;
        }
    }
    let one = TextIndex::build(&docs, usize::MAX).map_err(err)?.bytes();
    println!(
        "Text index (catalog_search::index, tantivy), {datasets} synthetic summaries, shards of at \
         most {} KB:\n",
        TextIndex::MAX_SHARD_BYTES / 1024
    );
    println!(
        "| build (1 thread) | shards | index size | shard size: median / largest | layout | \
         peak RSS (summaries alone) |"
    );
    println!("|---|---|---|---|---|---|");
    println!(
        "| {:.1} s | {shards} | {} | {} / {} | {} | {} MiB ({generated} MiB) |\n",
        build.as_secs_f64(),
        mb(total),
        mb(sizes[shards / 2]),
        mb(sizes[shards - 1]),
        mb(layout_bytes),
        proc_status_kb(pid, "VmHWM:")? / 1024,
    );
    let kinds: Vec<String> = kinds
        .iter()
        .map(|(k, b)| format!("{k} {}", mb(*b)))
        .collect();
    println!(
        "By file: {}. The same datasets in one index: {} (the split costs {:.0}% more: a \
         dataset is in each shard its words fall in, with its position in each).\n",
        kinds.join(", "),
        mb(one),
        (total as f64 / one as f64 - 1.0) * 100.0
    );

    // What a cold listing reads for each query shape: the shards of its words (and the delta).
    let common = word(0);
    let filter = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
    let common_tag = format!("tag#t{}", word(0));
    let filters: Vec<(String, String, Vec<String>)> = vec![
        (
            "the most common category".into(),
            String::new(),
            filter(&["category#c0"]),
        ),
        (
            "it and the most common license".into(),
            String::new(),
            filter(&["category#c0", "license#l0"]),
        ),
        (
            "a rare category and a common tag".into(),
            String::new(),
            filter(&["category#c30", &common_tag]),
        ),
        (
            "three filters".into(),
            String::new(),
            filter(&["category#c1", "license#l1", &common_tag]),
        ),
        (
            "the most common word in the most common category".into(),
            common.clone(),
            filter(&["category#c0"]),
        ),
    ];
    let shapes: Vec<(String, String, Vec<String>)> = vec![
        ("the most common word".into(), common.clone()),
        ("its first two letters".into(), common[..2].to_owned()),
        ("the 100th word".into(), word(99)),
        ("the 10,000th word".into(), word(9_999)),
        ("a year".into(), "2024".into()),
        ("a unique number".into(), format!("v{}", datasets / 2)),
        (
            "two common words".into(),
            format!("{} {}", word(1), word(2)),
        ),
        (
            "three words".into(),
            format!("{} {} {}", word(3), word(50), word(700)),
        ),
        ("a tag".into(), format!("t{}", word(5))),
        (
            "eight words".into(),
            (10..18).map(word).collect::<Vec<_>>().join(" "),
        ),
        (
            "the eight most common words".into(),
            (0..8).map(word).collect::<Vec<_>>().join(" "),
        ),
    ]
    .into_iter()
    .map(|(shape, q)| (shape, q, Vec::new()))
    .chain(filters)
    .collect();
    // What a listing's budget counts: each shard as stored, the delta, and in a kept order
    // every chunk's positions (packed: 20 bits a dataset at a million).
    let stored: Vec<Vec<u8>> = (0..shards)
        .map(|i| index.shard(i).unwrap().to_blob().map_err(err))
        .collect::<Result<_, String>>()?;
    let stored_sizes: Vec<u64> = stored.iter().map(|b| b.len() as u64).collect();
    let delta_bytes = index.delta().shard().bytes() as u64;
    let bits = (u64::BITS - (datasets as u64).leading_zeros()) as u8;
    let positions = catalog_search::order::packed_len(datasets, bits) as u64;
    println!(
        "Each query's second read within the listing's budget ({} for the index's parts, the \
         delta ({}) and, sorted by name, update or downloads, every chunk's positions ({})): \
         the words it leaves out, and what it reads.\n",
        mb(READ_BUDGET as usize),
        mb(delta_bytes as usize),
        mb(positions as usize)
    );
    println!(
        "| q and filters | sort | left out | shards read | bytes read (with the positions) | \
         load | search | matches |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for (shape, q, facets) in &shapes {
        let mut words: Vec<String> = catalog_search::index::words(q).collect();
        words.sort();
        words.dedup();
        for sorted in [false, true] {
            let fixed = delta_bytes + if sorted { positions } else { 0 };
            let budgeted = index.layout.words_within(
                &words,
                facets,
                &stored_sizes,
                READ_BUDGET.saturating_sub(fixed),
            );
            let needed = index.layout.shards_for(&budgeted.words, facets);
            let bytes = budgeted.bytes + fixed;
            let started = Instant::now();
            let mut loaded = vec![None; shards];
            for i in &needed {
                loaded[*i] = Some(Shard::from_blob(&stored[*i]).map_err(err)?);
            }
            let load = started.elapsed();
            let cold = TextIndex::from_parts(
                index.layout.clone(),
                index.delta().clone(),
                loaded,
                index.change(),
                index.max_shard_bytes(),
            );
            let started = Instant::now();
            let hits = match budgeted.words.is_empty() && facets.is_empty() {
                true => datasets,
                false => cold.find(&budgeted.words, facets).map_err(err)?.len(),
            };
            let search = started.elapsed();
            let asked = q
                .split_whitespace()
                .map(str::to_owned)
                .chain(facets.iter().cloned())
                .collect::<Vec<_>>()
                .join(" ");
            let left_out = match budgeted.left_out.is_empty() {
                true => "none".to_owned(),
                false => format!("`{}`", budgeted.left_out.join(" ")),
            };
            println!(
                "| {shape} (`{asked}`) | {} | {left_out} | {} | {} | {} | {} | {hits} |",
                match (sorted, budgeted.words.is_empty()) {
                    (true, _) => "name",
                    (false, true) => "created",
                    (false, false) => "relevance",
                },
                needed.len(),
                mb(bytes as usize),
                ms(load),
                ms(search),
            );
        }
    }

    // The worst one-word query: every two-letter start of a word in the vocabulary.
    let mut prefixes: Vec<String> = (0..VOCABULARY)
        .map(word)
        .chain((0..TAGS).map(|i| format!("t{}", word(i))))
        .map(|w| w.chars().take(2).collect())
        .collect();
    prefixes.sort();
    prefixes.dedup();
    let mut worst = (0, String::new(), 0);
    for prefix in &prefixes {
        let needed = index.layout.shards_for(std::slice::from_ref(prefix), &[]);
        let bytes: usize = needed
            .iter()
            .map(|i| index.shard(*i).map_or(0, Shard::bytes))
            .sum();
        if bytes > worst.0 {
            worst = (bytes, prefix.clone(), needed.len());
        }
    }
    println!(
        "\nThe largest read of one word, over the {} two-letter starts: `{}`, {} shards, {}.\n",
        prefixes.len(),
        worst.1,
        worst.2,
        mb(worst.0)
    );

    // Publishing: each new dataset goes into the delta, then one shard folds the delta in.
    let publishes = 400;
    let mut extra = synthetic(datasets + publishes);
    let fresh = extra.split_off(datasets);
    drop(extra);
    drop(docs);
    let (mut most_delta, mut most_written, mut most_docs) = (0usize, 0usize, 0usize);
    let mut time = Duration::ZERO;
    let mut slowest = Duration::ZERO;
    for doc in fresh {
        let started = Instant::now();
        index.layout.datasets += 1;
        index.upsert(doc).map_err(err)?;
        let written = index.fold_one().map_err(err)?;
        let took = started.elapsed();
        time += took;
        slowest = slowest.max(took);
        let shard_bytes: usize = written
            .iter()
            .map(|i| index.shard(*i).map_or(0, Shard::bytes))
            .sum();
        let layout_bytes: usize = index.layout.lowers.iter().map(|l| l.len() + 10).sum();
        let delta = index.delta().shard().bytes();
        most_delta = most_delta.max(delta);
        most_docs = most_docs.max(index.delta().len());
        most_written = most_written.max(delta + shard_bytes + layout_bytes);
    }
    println!(
        "| publishes | each: delta + one shard + layout written, at most | delta at most | time \
         each: mean / slowest |"
    );
    println!("|---|---|---|---|");
    println!(
        "| {publishes} | {} | {} ({most_docs} datasets) | {} / {} |",
        mb(most_written),
        mb(most_delta),
        ms(time / publishes as u32),
        ms(slowest)
    );
    Ok(())
}
