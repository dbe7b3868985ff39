//! A full-text index of the catalog at a million datasets, in-process (issue 23's first
//! measurement, before the listing is built on one): tantivy, in RAM, over N synthetic
//! summaries with the catalog's searchable and sortable fields. Prints the index's build time,
//! size and this process's peak memory, then the time of each listing shape the API accepts
//! (no filter, one facet, a word prefix, a prefix with two facets) by each sort, at the first
//! page and a deep one.
//!
//! The text field keeps no positions: a word prefix (`q=bird` finding `birds`) is a term-range
//! query, which needs none.

use std::time::Instant;

use tantivy::collector::{Count, TopDocs};
use tantivy::directory::RamDirectory;
use tantivy::query::{AllQuery, BooleanQuery, Occur, Query, RegexQuery, TermQuery};
use tantivy::schema::{
    Field, IndexRecordOption, Schema, TextFieldIndexing, TextOptions, FAST, INDEXED, STORED, STRING,
};
use tantivy::{Index, IndexWriter, Order, TantivyDocument, Term};

use crate::lambda::proc_status_kb;

/// Words the synthetic names and descriptions are drawn from (with a number, every name is
/// unique).
const WORDS: &[&str] = &[
    "bird",
    "birds",
    "river",
    "rivers",
    "air",
    "quality",
    "hourly",
    "daily",
    "city",
    "bikes",
    "traffic",
    "weather",
    "climate",
    "ocean",
    "soil",
    "forest",
    "health",
    "hospital",
    "census",
    "energy",
    "solar",
    "wind",
    "grid",
    "transport",
    "rail",
    "bus",
    "school",
    "crime",
    "housing",
    "prices",
    "election",
    "survey",
    "genome",
    "protein",
    "cells",
    "images",
    "text",
    "speech",
    "sensor",
    "satellite",
    "nightlights",
    "fishing",
    "crops",
    "yield",
    "water",
    "levels",
];

struct Fields {
    slug: Field,
    text: Field,
    category: Field,
    tag: Field,
    license: Field,
}

/// A small deterministic generator (xorshift64), for the synthetic catalogs here and in
/// `text`.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn word(&mut self) -> &'static str {
        WORDS[(self.next() % WORDS.len() as u64) as usize]
    }
}

pub fn run(datasets: usize) -> Result<(), String> {
    let err = |e: tantivy::TantivyError| e.to_string();
    let mut schema = Schema::builder();
    let fields = Fields {
        slug: schema.add_text_field("slug", STRING | STORED),
        text: schema.add_text_field(
            "text",
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("default")
                    .set_index_option(IndexRecordOption::Basic),
            ),
        ),
        category: schema.add_text_field("category", STRING),
        tag: schema.add_text_field("tag", STRING),
        license: schema.add_text_field("license", STRING),
    };
    let seq = schema.add_u64_field("seq", FAST | INDEXED);
    let updated = schema.add_u64_field("updated", FAST);
    let name_rank = schema.add_u64_field("name_rank", FAST);
    let downloads = schema.add_u64_field("downloads", FAST);
    let index =
        Index::create(RamDirectory::create(), schema.build(), Default::default()).map_err(err)?;

    let pid = std::process::id();
    let started = Instant::now();
    let mut writer: IndexWriter = index.writer_with_num_threads(1, 200_000_000).map_err(err)?;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for i in 0..datasets {
        let name = format!("{} {} {} {i}", rng.word(), rng.word(), rng.word());
        let description: Vec<&str> = (0..12).map(|_| rng.word()).collect();
        let mut doc = TantivyDocument::default();
        doc.add_text(fields.slug, format!("ds-{i:07}"));
        doc.add_text(fields.text, format!("{name}\n{}", description.join(" ")));
        doc.add_text(fields.category, format!("cat-{:02}", rng.next() % 40));
        doc.add_text(fields.license, format!("lic-{}", rng.next() % 8));
        for _ in 0..rng.next() % 5 {
            doc.add_text(fields.tag, format!("tag-{:03}", rng.next() % 500));
        }
        doc.add_u64(seq, i as u64);
        doc.add_u64(updated, rng.next() % 1_000_000_000);
        doc.add_u64(name_rank, rng.next() % datasets as u64);
        doc.add_u64(downloads, rng.next() % 10_000);
        writer.add_document(doc).map_err(err)?;
    }
    writer.commit().map_err(err)?;
    writer.wait_merging_threads().map_err(err)?;
    let build = started.elapsed();
    let searcher = index.reader().map_err(err)?.searcher();
    let size = searcher
        .space_usage()
        .map_err(|e| e.to_string())?
        .total()
        .get_bytes();
    println!("Full-text index (tantivy, in RAM), {datasets} synthetic summaries:\n");
    println!("| build (1 thread) | index size | segments | peak RSS (writer budget 200 MB) |");
    println!("|---|---|---|---|");
    println!(
        "| {:.1} s | {:.1} MB | {} | {} MiB |\n",
        build.as_secs_f64(),
        size as f64 / 1e6,
        searcher.segment_readers().len(),
        proc_status_kb(pid, "VmHWM:")? / 1024
    );

    let term = |field: Field, value: &str| Term::from_field_text(field, value);
    let prefix = || -> Result<Box<dyn Query>, String> {
        Ok(Box::new(
            RegexQuery::from_pattern("bird.*", fields.text).map_err(|e| e.to_string())?,
        ))
    };
    let facet = |field: Field, value: &str| -> Box<dyn Query> {
        Box::new(TermQuery::new(term(field, value), IndexRecordOption::Basic))
    };
    let listings: Vec<(&str, Box<dyn Query>)> = vec![
        ("no filter", Box::new(AllQuery)),
        ("category", facet(fields.category, "cat-07")),
        ("q=bird (word prefix)", prefix()?),
        (
            "q=bird, category, tag",
            Box::new(BooleanQuery::new(vec![
                (Occur::Must, prefix()?),
                (Occur::Must, facet(fields.category, "cat-07")),
                (Occur::Must, facet(fields.tag, "tag-042")),
            ])),
        ),
    ];
    println!("| listing | sort | page | matches | on the page | time |");
    println!("|---|---|---|---|---|---|");
    for (label, query) in &listings {
        for (sort, field) in [
            ("created", "seq"),
            ("name", "name_rank"),
            ("downloads", "downloads"),
            ("updated", "updated"),
        ] {
            for page in [1usize, 5_000] {
                let started = Instant::now();
                let (count, top) = searcher
                    .search(
                        query.as_ref(),
                        &(
                            Count,
                            TopDocs::with_limit(20)
                                .and_offset((page - 1) * 20)
                                .order_by_fast_field::<u64>(field, Order::Desc),
                        ),
                    )
                    .map_err(err)?;
                println!(
                    "| {label} | {sort} | {page} | {count} | {} | {:.2} ms |",
                    top.len(),
                    started.elapsed().as_secs_f64() * 1e3
                );
            }
        }
    }
    println!(
        "\nPeak RSS after the queries: {} MiB. In memory only: what a cold instance would read \
         from DynamoDB is not measured here.",
        proc_status_kb(pid, "VmHWM:")? / 1024
    );
    Ok(())
}
