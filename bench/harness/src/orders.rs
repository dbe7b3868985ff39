//! The kept orders (`catalog_search::order`) at a million datasets, in-process: N synthetic summaries
//! (names of two to four Zipf-distributed words from the text bench's vocabulary, update times
//! over three years, Zipf-distributed download counts), each order built into chunks and stored
//! as the datasets table stores it (`catalog_search::orders`).
//!
//! Prints, for each order: the build (time, chunks, sizes of what a listing and a writer read,
//! the manifest a listing reads first); what a sorted page reads (no filter: the chunks holding
//! its ranks; with matches: every chunk's positions, and the time to keep the matches in order);
//! and what 1,000 changes write (a dataset updated, a new download count, a rename, a new
//! dataset), the bytes of every chunk and manifest each writes.

use std::collections::BTreeMap;
use std::time::Instant;

use catalog_search::order::{self, Chunk, Key, Sorted};
use catalog_search::orders::{chunk_items, ChunkRef, OrderManifest};

use crate::index::Rng;
use crate::lambda::proc_status_kb;
use crate::text::{word, zipf};

/// One synthetic dataset's sort fields.
pub(crate) struct Fields {
    name: String,
    slug: String,
    updated: (i64, u32),
    downloads: u64,
}

impl Fields {
    pub(crate) fn key(&self, sort: Sorted, seq: u64) -> Key {
        match sort {
            Sorted::Name => Key::Name(self.name.to_lowercase(), self.slug.clone()),
            Sorted::Updated => Key::Updated(self.updated.0, self.updated.1, seq),
            Sorted::Downloads => Key::Downloads(self.downloads, seq),
        }
    }
}

const START: i64 = 1_700_000_000;
const THREE_YEARS: u64 = 3 * 365 * 86_400;

pub(crate) fn synthetic(rng: &mut Rng, seq: u64) -> Fields {
    let name: Vec<String> = (0..2 + rng.below(3))
        .map(|_| word(zipf(rng, 200_000)))
        .collect();
    Fields {
        name: name.join(" "),
        slug: format!("dataset-{seq}"),
        updated: (
            START + rng.below(THREE_YEARS) as i64,
            rng.below(1_000) as u32 * 1_000_000,
        ),
        downloads: zipf(rng, 100_000) as u64,
    }
}

/// An order as the table holds it: the manifest's chunks, and each chunk's keys.
struct Stored {
    sort: Sorted,
    generation: u64,
    chunks: Vec<(ChunkRef, Chunk)>,
}

impl Stored {
    fn manifest(&self) -> OrderManifest {
        OrderManifest {
            sort: self.sort,
            generation: self.generation,
            datasets: self
                .chunks
                .iter()
                .map(|(r, _)| u64::from(r.bounds.len))
                .sum(),
            chunks: self.chunks.iter().map(|(r, _)| r.clone()).collect(),
        }
    }

    /// Bytes of a chunk's two blobs, as stored.
    fn stored(chunk: &Chunk) -> (usize, usize) {
        let packed = chunk
            .seqs_packed()
            .map_or(chunk.len() * 4, |(_, b)| b.len());
        (packed, chunk.keys_bytes().len())
    }
}

fn manifest_bytes(m: &OrderManifest) -> Result<usize, String> {
    let item = m.to_item().map_err(|e| e.to_string())?;
    Ok(match item.get("manifest") {
        Some(aws_sdk_dynamodb::types::AttributeValue::B(b)) => b.as_ref().len(),
        _ => 0,
    })
}

fn mb(bytes: usize) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

pub fn run(datasets: usize) -> Result<(), String> {
    let pid = std::process::id();
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    let mut fields: Vec<Fields> = (1..=datasets as u64)
        .map(|seq| synthetic(&mut rng, seq))
        .collect();
    let generated = proc_status_kb(pid, "VmRSS:")? / 1024;
    println!(
        "Kept orders (catalog_search::order), {datasets} synthetic summaries, chunks of at most {} \
         (built {} full):\n",
        order::MAX_CHUNK,
        order::BUILD_CHUNK
    );
    println!(
        "| order | build | chunks | positions (a page of matches reads all) | keys (writers) | \
         manifest (read first, deflated) | a page with no filter reads | keeping 50% / 1% of \
         matches in order |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut orders = Vec::new();
    for sort in Sorted::ALL {
        let started = Instant::now();
        let built = order::build(
            fields
                .iter()
                .enumerate()
                .map(|(i, f)| (f.key(sort, i as u64 + 1), i as u64 + 1))
                .collect(),
        );
        let mut chunks = Vec::with_capacity(built.len());
        for (i, chunk) in built.into_iter().enumerate() {
            let (r, _) = chunk_items(sort, 1, "bench", i, &chunk)
                .map_err(|e| e.to_string())?
                .ok_or("an empty chunk")?;
            chunks.push((r, chunk));
        }
        let build = started.elapsed();
        let stored = Stored {
            sort,
            generation: 1,
            chunks,
        };
        let (mut positions, mut keys) = (0, 0);
        for (_, chunk) in &stored.chunks {
            let (p, k) = Stored::stored(chunk);
            positions += p;
            keys += k;
        }
        let manifest = stored.manifest();
        let lens = manifest.lens();
        let middle = datasets as u64 / 2;
        let range = order::covering(&lens, false, middle, 20);
        let page_bytes: usize = stored.chunks[range.clone()]
            .iter()
            .map(|(_, c)| Stored::stored(c).0)
            .sum();
        let seqs: Vec<Vec<u32>> = stored
            .chunks
            .iter()
            .map(|(_, c)| c.seqs().map(|s| s as u32).collect())
            .collect();
        let mut walks = Vec::new();
        for share in [2u64, 100] {
            let matches: Vec<u64> = (1..=datasets as u64).filter(|s| s % share == 0).collect();
            // Timed from here: the walk, as a listing pays it.
            let started = Instant::now();
            let found = order::walk(&seqs, true, &matches);
            walks.push(format!(
                "{:.0} ms ({})",
                started.elapsed().as_secs_f64() * 1e3,
                found.len()
            ));
        }
        println!(
            "| {} | {:.1} s | {} | {} | {} | {} | {} chunk(s), {} | {} |",
            sort.as_str(),
            build.as_secs_f64(),
            stored.chunks.len(),
            mb(positions),
            mb(keys),
            mb(manifest_bytes(&manifest)?),
            range.len(),
            mb(page_bytes),
            walks.join(" / "),
        );
        orders.push(stored);
    }
    println!(
        "\nPeak RSS: {} MiB (the summaries alone: {generated} MiB).\n",
        proc_status_kb(pid, "VmHWM:")? / 1024
    );

    // What changes write: each change moves one dataset in each order its key changed in.
    let mut written: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    let mut now = START + THREE_YEARS as i64;
    for step in 0..1_000u64 {
        let (what, seq) = match step % 4 {
            0 => (
                "a dataset updated (a new version, a keyless window)",
                1 + rng.below(datasets as u64),
            ),
            1 => ("a new download count", 1 + rng.below(datasets as u64)),
            2 => ("a rename (a new version)", 1 + rng.below(datasets as u64)),
            _ => {
                let seq = fields.len() as u64 + 1;
                fields.push(synthetic(&mut rng, seq));
                ("a new dataset", seq)
            }
        };
        let at = seq as usize - 1;
        let old: Option<Vec<Key>> = (what != "a new dataset").then(|| {
            Sorted::ALL
                .iter()
                .map(|s| fields[at].key(*s, seq))
                .collect()
        });
        now += 1;
        match step % 4 {
            0 | 3 => fields[at].updated = (now, 0),
            1 => fields[at].downloads = zipf(&mut rng, 100_000) as u64,
            _ => {
                fields[at].name = format!(
                    "{} {}",
                    word(zipf(&mut rng, 200_000)),
                    word(rng.below(500) as usize)
                );
                fields[at].updated = (now, 0);
            }
        }
        let mut bytes = 0;
        for (i, stored) in orders.iter_mut().enumerate() {
            let new = fields[at].key(stored.sort, seq);
            let was = old.as_ref().map(|o| &o[i]);
            if was == Some(&new) {
                continue;
            }
            let bounds: Vec<_> = stored
                .chunks
                .iter()
                .map(|(r, _)| r.bounds.clone())
                .collect();
            let touched = order::touched(&bounds, was, &new);
            let loaded = touched
                .iter()
                .map(|c| (*c, stored.chunks[*c].1.clone()))
                .collect();
            let replacements =
                order::edit(&bounds, loaded, seq, was, new).map_err(|e| e.to_string())?;
            stored.generation += 1;
            for (c, with) in replacements.into_iter().rev() {
                let mut refs = Vec::new();
                for (k, chunk) in with.into_iter().enumerate() {
                    let (p, keys) = Stored::stored(&chunk);
                    bytes += p + keys;
                    let (r, _) =
                        chunk_items(stored.sort, stored.generation, "bench", c * 4 + k, &chunk)
                            .map_err(|e| e.to_string())?
                            .ok_or("an empty chunk")?;
                    refs.push((r, chunk));
                }
                stored.chunks.splice(c..=c, refs);
            }
            bytes += manifest_bytes(&stored.manifest())?;
        }
        written.entry(what).or_default().push(bytes);
    }
    println!("| change (250 of each) | bytes written to the orders: mean | largest |");
    println!("|---|---|---|");
    for (what, mut bytes) in written {
        bytes.sort_unstable();
        let mean = bytes.iter().sum::<usize>() / bytes.len();
        println!("| {what} | {} | {} |", mb(mean), mb(bytes[bytes.len() - 1]));
    }
    Ok(())
}
