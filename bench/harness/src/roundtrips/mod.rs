//! DynamoDB and S3 requests per API request, on a catalog of 100,000 datasets, counted on the
//! wire by an SDK interceptor on the real clients talking to moto and s3s-fs.
//!
//! Seeding: the sample datasets are published through the lib crate's writer (the operators'
//! path). Their items are then the templates for the bulk: each bulk dataset gets copies of a
//! published dataset's items (dataset, alias, version, list entry) under its own slug, UUID and
//! list position, written with BatchWriteItem, and the catalog counter is set to the total. So
//! every item has exactly the shape the writer makes, and there are really 100,000 of each.
//!
//! For the filters, bulk dataset `i` is in category `cat-{i % 20}`, has tags `tag-{i % 50}`
//! and `bulk` (every bulk dataset: a 100,000-entry facet list) and license `lic-{i % 5}`; its
//! facet list entries and the facet counters are written the same way, at the positions the
//! writer would give them.
//!
//! With `--private N`, N private datasets of an organisation join the catalog after it is
//! seeded ([`private`]): the listings' rows should read exactly what they read without them.
//!
//! The steps, in order: [`seed::catalog`] (prints the `Seeded` line),
//! [`seed::must_fail`] (what the refusals need), [`cases::measure`] (the API requests' table)
//! and [`accounts::measure`] (the account routes' table).

mod accounts;
mod cases;
mod private;
mod seed;

pub(crate) use seed::write_batch;

use catalog_tests::{Stack, EVENTS_READ_KEY};
use chrono::Utc;

/// Seeds a catalog of `datasets` datasets on moto and s3s-fs (and `private` private datasets
/// besides, in no list: [`private`]), then prints the requests each API request and each
/// account route sends; fails if any of them missed its target.
pub async fn run(datasets: u64, private: u64) -> Result<(), String> {
    let stack = Stack::start().await;
    let now = Utc::now();
    let published = stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let bulk = seed::catalog(&stack, &published, datasets).await?;
    if private > 0 {
        private::seed(&stack, private).await?;
    }
    seed::must_fail(&stack, now).await?;
    let mut misses = cases::measure(&stack, datasets, bulk).await?;
    println!();
    misses += accounts::measure(&stack).await?;
    if misses > 0 {
        return Err(format!(
            "{misses} request(s) missed their round-trip target"
        ));
    }
    println!("Every request met its target at {datasets} datasets.");
    Ok(())
}
