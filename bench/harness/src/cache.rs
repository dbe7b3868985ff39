//! Memory of the list function's scan cache at scale: four lists of N catalog entries, built
//! as the list function builds them (`DatasetSummary` → `Indexed`) and kept in the same
//! `SnapshotCache`, with this process's resident memory read before and after. The entries
//! have the sizes of a realistic catalog: a 30-character name, a 150-character description,
//! three tags, a category and a license.

use std::sync::Arc;

use catalog::input::Slug;
use catalog::query::Indexed;
use catalog::records::{Card, DatasetSummary};
use catalog_aws::dynamo::snapshots::{SnapshotCache, SNAPSHOTS, SNAPSHOT_BUDGET_BYTES};

use crate::lambda::proc_status_kb;

fn entry(list: usize, i: usize) -> Indexed {
    let categories = ["environment", "transport", "biology", "economics", "health"];
    let tags = [
        "hourly",
        "daily",
        "city",
        "sensors",
        "survey",
        "open-data",
        "rivers",
    ];
    Indexed::new(DatasetSummary {
        slug: Slug::parse(&format!("dataset-{list}-{i:06}")).expect("a slug"),
        id: uuid::Uuid::new_v4(),
        card: Card {
            access_level: Default::default(),
            name: format!("Measurements, station {i:06}-{list}"),
            description: Some(format!(
                "Hourly readings from station {i} of network {list}: temperature, humidity, \
                 particulate matter and nitrogen dioxide, quality-checked {i}."
            )),
            category: categories[i % categories.len()].to_owned(),
            tags: (0..3)
                .map(|k| tags[(i + k) % tags.len()].to_owned())
                .collect(),
            license: "CC-BY-4.0".to_owned(),
        },
        size: 123_456_789,
        row_count: 1_000_000,
        column_count: 12,
        keyless_until: None,
        updated_at: chrono::Utc::now(),
        keyless: false,
        downloads: 0,
        files: None,
        seq: i as u64 + 1,
    })
}

/// With `unbounded`, the cache keeps all four lists (no byte budget): what they would take.
pub fn run(datasets: usize, unbounded: bool) -> Result<(), String> {
    let pid = std::process::id();
    let before = proc_status_kb(pid, "VmRSS:")?;
    let budget = if unbounded {
        usize::MAX
    } else {
        SNAPSHOT_BUDGET_BYTES
    };
    // Four lists built one after the other, as four scans would; the peak includes one list
    // being built while the others are kept, as in the function.
    let mut cache = SnapshotCache::with_budget(budget);
    let mut estimated = Vec::new();
    for list in 0..SNAPSHOTS {
        let items: Vec<Indexed> = (0..datasets).map(|i| entry(list, i)).collect();
        estimated.push(items.iter().map(Indexed::approx_bytes).sum::<usize>());
        cache.put(format!("LIST#{list}"), 1, Arc::new(items));
    }
    let after = proc_status_kb(pid, "VmRSS:")?;
    let peak = proc_status_kb(pid, "VmHWM:")?;
    let kept = cache.lists().len();
    let kept_bytes = cache.bytes();
    let per_list_kb = after.saturating_sub(before) / kept.max(1) as u64;
    let mb = |kb: u64| kb as f64 / 1024.0;
    println!("## List function: scan cache memory at {datasets} datasets per list");
    println!();
    println!("| figure | value |");
    println!("|---|---|");
    println!("| lists built | {SNAPSHOTS} |");
    match unbounded {
        true => println!("| lists kept (no budget) | {kept} |"),
        false => println!(
            "| lists kept within the {} MB budget | {kept} |",
            SNAPSHOT_BUDGET_BYTES >> 20
        ),
    }
    println!(
        "| estimated bytes per list (approx_bytes) | {:.1} MB |",
        estimated[0] as f64 / (1 << 20) as f64
    );
    println!(
        "| estimated bytes kept | {:.1} MB |",
        kept_bytes as f64 / (1 << 20) as f64
    );
    println!("| resident memory before | {:.1} MB |", mb(before));
    println!(
        "| resident memory with the cache full | {:.1} MB |",
        mb(after)
    );
    println!(
        "| resident memory per kept list | {:.1} MB |",
        mb(per_list_kb)
    );
    println!("| peak resident memory (VmHWM) | {:.1} MB |", mb(peak));
    if unbounded && (estimated[0] as u64) < per_list_kb * 1024 {
        return Err(format!(
            "approx_bytes ({} bytes) underestimates a list's resident memory ({per_list_kb} KB)",
            estimated[0]
        ));
    }
    if !unbounded && kept_bytes > SNAPSHOT_BUDGET_BYTES {
        return Err("the cache holds more than its budget".into());
    }
    Ok(())
}
