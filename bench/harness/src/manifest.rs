//! A many-file version's manifest (issue 38), in-process: manifests of 1,000, 10,000 and 100,000
//! synthetic files with 10 and 50 columns of statistics, Hive-partitioned by `year` and
//! `month` as Spark writes them (`year=2023/month=6/part-….parquet`), each encoded as the
//! datasets table stores it (`catalog_aws::dynamo::manifest`).
//!
//! Prints, per manifest: the chunk items (how many, their bytes); what a data page of 1,000
//! files, a rows offset and a partition-filtered Delta Sharing query read (items, BatchGetItem
//! round trips, bytes, read units, decoding time); and the S3 alternative (one object holding
//! the whole manifest, read once per function instance): its size, the time to decode it and
//! what it takes in memory once decoded.

use std::collections::HashMap;
use std::mem::size_of;
use std::time::Instant;

use aws_sdk_dynamodb::types::AttributeValue;
use catalog::files::{
    ColumnRange, FileEntry, FileInput, Manifest, ManifestInput, PartitionFilter, PartitionValue,
    RelPath, StatValue, Summary,
};
use catalog_aws::dynamo::codec::item_size;
use catalog_aws::dynamo::layout::{name, Item};
use catalog_aws::dynamo::manifest::{chunk_keys, decode_chunk, encode_chunk, summary_value};

use crate::index::Rng;

/// Most keys one BatchGetItem takes.
const BATCH_KEYS: usize = 100;
/// Most bytes one BatchGetItem answers with.
const BATCH_BYTES: usize = 16 * 1024 * 1024;

pub fn run(sizes: &[usize], columns: &[usize]) -> Result<(), String> {
    println!("## Manifest storage: chunk items in the datasets table, or one S3 object\n");
    println!(
        "Synthetic files: `year=2020..2024/month=1..12/part-<i>.parquet` (60 partitions, files in"
    );
    println!(
        "order), statistics per column cycling over five kinds: an increasing integer id, a random"
    );
    println!("float, a random 8 to 16 letter word, an RFC 3339 timestamp, a small random integer.");
    println!(
        "Read units: eventually consistent, 4 KB each, halved. Times: this machine, one core.\n"
    );
    for &n in sizes {
        for &c in columns {
            one(n, c)?;
        }
    }
    Ok(())
}

fn one(n: usize, columns: usize) -> Result<(), String> {
    let started = Instant::now();
    let manifest = Manifest::build(input(n, columns)).map_err(|e| e.to_string())?;
    let built = started.elapsed();

    let started = Instant::now();
    let mut summary = manifest.summary.clone();
    let mut stored: HashMap<String, Item> = HashMap::new();
    let (mut file_bytes, mut stat_bytes) = (Vec::new(), Vec::new());
    for c in 0..summary.chunks.len() {
        let encoded = encode_chunk("bench", 1, &manifest, c);
        summary.chunks[c].file_parts = encoded.file_parts;
        summary.chunks[c].stat_parts = encoded.stat_parts;
        let (files, stats) = encoded.items.split_at(encoded.file_parts as usize);
        file_bytes.push(files.iter().map(item_size).sum::<usize>());
        stat_bytes.push(stats.iter().map(item_size).sum::<usize>());
        for item in encoded.items {
            stored.insert(sk(&item), item);
        }
    }
    let encoded = started.elapsed();
    let summary_bytes = match summary_value(&summary) {
        AttributeValue::B(b) => b.as_ref().len(),
        _ => 0,
    };
    let file_items: u32 = summary.chunks.iter().map(|c| c.file_parts).sum();
    let stat_items: u32 = summary.chunks.iter().map(|c| c.stat_parts).sum();
    let max_stat_parts = summary
        .chunks
        .iter()
        .map(|c| c.stat_parts)
        .max()
        .unwrap_or(0);

    println!("### {n} files, {columns} columns\n");
    println!("| | |\n|---|---|");
    println!("| build (validate, sort, chunk) | {:.1} ms |", ms(built));
    println!("| encode every chunk | {:.1} ms |", ms(encoded));
    println!("| chunks | {} |", summary.chunks.len());
    println!(
        "| summary on the version item (`files`, deflated) | {} bytes |",
        summary_bytes
    );
    println!(
        "| files items | {file_items}: {} bytes each on average, {} at most |",
        avg(&file_bytes),
        file_bytes.iter().max().unwrap_or(&0)
    );
    println!(
        "| statistics items | {stat_items} ({max_stat_parts} at most per chunk): {} bytes per chunk on average, {} at most |",
        avg(&stat_bytes),
        stat_bytes.iter().max().unwrap_or(&0)
    );
    println!(
        "| everything stored | {} items, {} bytes |\n",
        stored.len(),
        file_bytes.iter().sum::<usize>() + stat_bytes.iter().sum::<usize>()
    );

    println!("| read | chunks | items | BatchGetItems | bytes | read units | decode | files |");
    println!("|---|---|---|---|---|---|---|---|");
    // A data page: the middle page of the version's files.
    let page = summary.chunks.len() / 2;
    let chunk = summary.page_chunk(None, page as u64).ok_or("no page")?;
    read_row(
        &summary,
        &stored,
        "data page (1,000 files)",
        &[chunk],
        false,
        |_| true,
    )?;
    // A rows offset near the end.
    let (chunk, row) = summary
        .chunk_of_row(None, summary.rows - 1)
        .ok_or("no last row")?;
    let started = Instant::now();
    let found = decode(&summary, &stored, &[chunk], false)?;
    let (file, within) = found[0].locate_row(row).ok_or("row not found")?;
    let elapsed = started.elapsed();
    let bytes: usize = keys_bytes(&summary, &stored, &[chunk], false);
    println!(
        "| rows offset {} (file {}, row {within}) | 1 | {} | 1 | {bytes} | {} | {:.2} ms | 1 |",
        summary.rows - 1,
        found[0].first_file + file as u64,
        summary.chunks[chunk].file_parts,
        units(&summary, &stored, &[chunk], false),
        ms(elapsed),
    );
    // A partition-filtered Delta Sharing query, with statistics.
    let filter = PartitionFilter::parse(["year=2023", "month=6"]).map_err(|e| e.to_string())?;
    let resolved = summary.resolve(&filter).ok_or("the filter names nothing")?;
    let chunks = summary.chunks_matching(None, &resolved);
    read_row(
        &summary,
        &stored,
        "Delta Sharing, year=2023 AND month=6",
        &chunks,
        true,
        |f| resolved.matches(&f.partitions),
    )?;
    let all: Vec<usize> = (0..summary.chunks.len()).collect();
    read_row(
        &summary,
        &stored,
        "Delta Sharing, no filter",
        &all,
        true,
        |_| true,
    )?;

    // The S3 alternative: the whole manifest, one object, decoded once per instance.
    let object: usize = file_bytes.iter().sum::<usize>() + stat_bytes.iter().sum::<usize>();
    let started = Instant::now();
    let everything = decode(&summary, &stored, &all, true)?;
    let decoded = started.elapsed();
    let held: usize = everything
        .iter()
        .flat_map(|c| &c.files)
        .map(heap_of)
        .sum::<usize>();
    println!(
        "\nS3 alternative: one object of about {} bytes (the same deflated blobs), decoded in {:.0} ms, \
         about {:.1} MB in memory once decoded ({} bytes a file).\n",
        object,
        ms(decoded),
        held as f64 / 1e6,
        held / n.max(1),
    );
    Ok(())
}

fn read_row(
    summary: &Summary,
    stored: &HashMap<String, Item>,
    what: &str,
    chunks: &[usize],
    stats: bool,
    keep: impl Fn(&FileEntry) -> bool,
) -> Result<(), String> {
    let keys: usize = chunks
        .iter()
        .map(|&c| chunk_keys("bench", 1, summary, c, stats).len())
        .sum();
    let started = Instant::now();
    let found = decode(summary, stored, chunks, stats)?;
    let kept = found
        .iter()
        .flat_map(|c| &c.files)
        .filter(|f| keep(f))
        .count();
    let elapsed = started.elapsed();
    println!(
        "| {what} | {} | {keys} | {} | {} | {} | {:.2} ms | {kept} |",
        chunks.len(),
        round_trips(keys, keys_bytes(summary, stored, chunks, stats)),
        keys_bytes(summary, stored, chunks, stats),
        units(summary, stored, chunks, stats),
        ms(elapsed),
    );
    Ok(())
}

fn decode(
    summary: &Summary,
    stored: &HashMap<String, Item>,
    chunks: &[usize],
    stats: bool,
) -> Result<Vec<catalog::files::FileChunk>, String> {
    chunks
        .iter()
        .map(|&c| {
            decode_chunk(1, summary, c, stored, stats)
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("chunk {c} missing"))
        })
        .collect()
}

fn items<'a>(
    summary: &Summary,
    stored: &'a HashMap<String, Item>,
    chunks: &[usize],
    stats: bool,
) -> Vec<&'a Item> {
    chunks
        .iter()
        .flat_map(|&c| chunk_keys("bench", 1, summary, c, stats))
        .filter_map(|k| stored.get(&sk(&k)))
        .collect()
}

/// BatchGetItems for `keys` items of `bytes` in all: 100 keys each, and at most 16 MB in each
/// answer (DynamoDB leaves the rest unprocessed, for another request).
fn round_trips(keys: usize, bytes: usize) -> usize {
    keys.div_ceil(BATCH_KEYS).max(bytes.div_ceil(BATCH_BYTES))
}

fn keys_bytes(s: &Summary, stored: &HashMap<String, Item>, c: &[usize], stats: bool) -> usize {
    items(s, stored, c, stats).into_iter().map(item_size).sum()
}

fn units(s: &Summary, stored: &HashMap<String, Item>, c: &[usize], stats: bool) -> f64 {
    let blocks: usize = items(s, stored, c, stats)
        .into_iter()
        .map(|i| item_size(i).div_ceil(4096))
        .sum();
    blocks as f64 / 2.0
}

fn sk(item: &Item) -> String {
    match item.get(name::SK) {
        Some(AttributeValue::S(s)) => s.clone(),
        _ => String::new(),
    }
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn avg(v: &[usize]) -> usize {
    v.iter().sum::<usize>() / v.len().max(1)
}

/// What a decoded file takes in memory: the struct, and what its fields own on the heap.
fn heap_of(f: &FileEntry) -> usize {
    let text = |v: &Option<StatValue>| match v {
        Some(StatValue::Text(t)) => t.capacity(),
        _ => 0,
    };
    size_of::<FileEntry>()
        + f.path.as_str().len()
        + f.sha256.capacity()
        + f.split.as_ref().map_or(0, |s| s.as_str().len())
        + f.partitions.capacity() * size_of::<PartitionValue>()
        + f.stats.capacity() * size_of::<Option<ColumnRange>>()
        + f.stats
            .iter()
            .flatten()
            .map(|r| text(&r.min) + text(&r.max))
            .sum::<usize>()
}

/// `n` files of `columns` columns, in 60 Hive partitions.
fn input(n: usize, columns: usize) -> ManifestInput {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let names: Vec<String> = (0..columns).map(|c| format!("column_{c}")).collect();
    let files = (0..n)
        .map(|i| {
            let partition = i * 60 / n;
            let (year, month) = (2020 + partition / 12, 1 + partition % 12);
            let rows = 50_000 + rng.below(50_000);
            let stats = names
                .iter()
                .enumerate()
                .map(|(c, name)| (name.clone(), range(&mut rng, c, i as i64)))
                .collect();
            let sha: String = (0..4).map(|_| format!("{:016x}", rng.next())).collect();
            FileInput {
                path: RelPath::parse(&format!(
                    "year={year}/month={month}/part-{i:05}-{:08x}.snappy.parquet",
                    rng.next() as u32
                ))
                .expect("a valid path"),
                split: None,
                rows,
                size: rows * 40 + rng.below(100_000),
                sha256: sha,
                stats,
            }
        })
        .collect();
    ManifestInput {
        files,
        columns: names,
        ..Default::default()
    }
}

fn range(rng: &mut Rng, column: usize, file: i64) -> ColumnRange {
    let (min, max) = match column % 5 {
        0 => (
            StatValue::Int(file * 100_000),
            StatValue::Int(file * 100_000 + 99_999),
        ),
        1 => {
            let a = rng.next() as f64 / u64::MAX as f64 * 1e6;
            (
                StatValue::Float(a),
                StatValue::Float(a + rng.below(1_000) as f64 / 7.0),
            )
        }
        2 => {
            let word = |rng: &mut Rng| -> String {
                (0..8 + rng.below(9))
                    .map(|_| (b'a' + rng.below(26) as u8) as char)
                    .collect()
            };
            let (a, b) = (word(rng), word(rng));
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            (StatValue::Text(a), StatValue::Text(b))
        }
        3 => {
            let t = 1_700_000_000 + rng.below(86_400 * 365) as i64;
            let at = |s: i64| {
                chrono::DateTime::from_timestamp(s, 0)
                    .map(|d| d.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
                    .unwrap_or_default()
            };
            (StatValue::Text(at(t)), StatValue::Text(at(t + 3_600)))
        }
        _ => {
            let a = rng.below(100) as i64;
            (StatValue::Int(a), StatValue::Int(a + rng.below(100) as i64))
        }
    };
    ColumnRange {
        min: Some(min),
        max: Some(max),
        null_count: Some(rng.below(50)),
    }
}
