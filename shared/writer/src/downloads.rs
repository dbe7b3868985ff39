//! The download log and the daily download counts, in their own table, written off the request
//! path from the functions' download events ([`catalog::audit`]).
//!
//! | item | pk | sk | holds |
//! |---|---|---|---|
//! | download | `DL#<slug>` | `<time, RFC 3339 ms>#<event id>` | `slug`, `version`, `key_id`, `account` (absent without one), `route`, `at`, `day`, `expire_at` (time to live) |
//! | day count | `COUNT#<UTC day>` | `<slug>` | `n`: the downloads (every route but rows) of that dataset that day, one per requester, `expire_at` |
//! | counted | `SEEN#<UTC day>` | `<slug>#key#<key id>` or `<slug>#client#<digest>` | that this requester's download of the dataset was counted that day; `expire_at` (two days on) |
//!
//! Indexes: `by-account` (`account`, `sk`) holds the downloads of accounts' keys; `by-day`
//! (`day`, `sk`) holds every download, for a time range without a dataset or an account. A
//! download is recorded once whatever the number of deliveries of its event: its item is put
//! on the condition that it is new, in one transaction with its day's count.
//!
//! **Counted once per requester and day.** A day's count takes one download per dataset and
//! requester: the key (its public id), or without a key the requester's address digest
//! ([`catalog::audit::client_label`]); so one key, or one address in a keyless window, cannot
//! inflate `sort=downloads` by downloading again. The first download puts the requester's
//! `SEEN#` item (on the condition that it is new) in the same transaction as its record and the
//! count; a later one that day fails that condition and is recorded alone, uncounted (a second
//! write, for repeated downloads only). A download event that names no requester (no key and
//! no address: events from before the digest, or outside API Gateway) counts each time, as
//! before. Every download is still recorded in the log, counted or not.

use std::collections::BTreeMap;

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, GlobalSecondaryIndex, KeySchemaElement, KeyType, Projection,
    ProjectionType, ScalarAttributeType, TimeToLiveSpecification, TransactWriteItem, Update,
};
use aws_sdk_dynamodb::Client;
use catalog::audit::{Download, Route};
use catalog::error::StoreError;
use catalog_aws::dynamo::attr::{get_s, get_u64, n, s, Item};
use catalog_aws::dynamo::requests::{classify, query_all};
use chrono::{DateTime, Duration, NaiveDate, SecondsFormat, Utc};

use catalog::input::Slug;

use crate::error::WriteError;
use crate::tx::{is_condition_failure, other, put_new};
use crate::writer::DynamoWriter;

const PK: &str = "pk";
const SK: &str = "sk";
const SLUG: &str = "slug";
const VERSION: &str = "version";
const KEY_ID: &str = "key_id";
const ACCOUNT: &str = "account";
const ROUTE: &str = "route";
const AT: &str = "at";
const DAY: &str = "day";
const COUNT: &str = "n";
const EXPIRE_AT: &str = "expire_at";
/// The index of accounts' downloads.
pub const BY_ACCOUNT_INDEX: &str = "by-account";
/// The index of every download by day.
pub const BY_DAY_INDEX: &str = "by-day";

/// The download log and counts.
#[derive(Clone, Debug)]
pub struct DownloadLog {
    client: Client,
    table: String,
}

/// Which downloads to show: at most one of a dataset or an account, and a time range.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    pub dataset: Option<String>,
    /// A Cognito `sub`.
    pub account: Option<String>,
    pub since: Option<DateTime<Utc>>,
    pub until: Option<DateTime<Utc>>,
}

impl DownloadLog {
    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    /// Records each download once (`id` names its event: a redelivered event is skipped),
    /// kept `retention_days`; counts it in its day's count unless it is a rows page or its
    /// requester's download of the dataset was counted that day already. Returns how many were
    /// new.
    pub async fn record(
        &self,
        downloads: &[(String, Download)],
        retention_days: u32,
    ) -> Result<usize, StoreError> {
        let mut recorded = 0;
        for (id, download) in downloads {
            let expire = download.at + Duration::days(i64::from(retention_days));
            let expire_at = n(expire.timestamp().max(0) as u64);
            let day = day_of(download.at);
            let mut item: Item = [
                (PK, s(format!("DL#{}", download.slug))),
                (SK, s(format!("{}#{id}", stamp(download.at)))),
                (SLUG, s(&download.slug)),
                (VERSION, n(download.version)),
                (ROUTE, s(download.route.as_str())),
                (AT, s(stamp(download.at))),
                (DAY, s(&day)),
                (EXPIRE_AT, expire_at.clone()),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
            if let Some(key_id) = &download.key_id {
                item.insert(KEY_ID.to_owned(), s(key_id));
            }
            if let Some(account) = &download.account {
                item.insert(ACCOUNT.to_owned(), s(account));
            }
            let record_alone = self.client.transact_write_items().transact_items(
                TransactWriteItem::builder()
                    .put(put_new(&self.table, item.clone())?)
                    .build(),
            );
            let mut tx = record_alone.clone();
            let requester = download
                .key_id
                .as_ref()
                .map(|k| format!("key#{k}"))
                .or_else(|| download.client.as_ref().map(|c| format!("client#{c}")));
            if download.route.is_download() {
                if let Some(requester) = &requester {
                    // Kept past its day (the day's downloads may arrive late), then expired.
                    let seen_until = n((download.at + Duration::days(2)).timestamp().max(0) as u64);
                    let seen: Item = [
                        (PK, s(format!("SEEN#{day}"))),
                        (SK, s(format!("{}#{requester}", download.slug))),
                        (EXPIRE_AT, seen_until),
                    ]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect();
                    tx = tx.transact_items(
                        TransactWriteItem::builder()
                            .put(put_new(&self.table, seen)?)
                            .build(),
                    );
                }
                let count = Update::builder()
                    .table_name(&self.table)
                    .key(PK, s(format!("COUNT#{day}")))
                    .key(SK, s(&download.slug))
                    .update_expression("ADD #n :one SET #expire = :expire")
                    .expression_attribute_names("#n", COUNT)
                    .expression_attribute_names("#expire", EXPIRE_AT)
                    .expression_attribute_values(":one", n(1))
                    .expression_attribute_values(":expire", expire_at)
                    .build()
                    .map_err(other)?;
                tx = tx.transact_items(TransactWriteItem::builder().update(count).build());
            }
            let counted_once = download.route.is_download() && requester.is_some();
            match tx.send().await {
                Ok(_) => recorded += 1,
                // Recorded already (a redelivered event), or, when it is counted once per
                // requester, perhaps only counted already today: then it is recorded alone.
                Err(e) if is_condition_failure(e.code()) && counted_once => {
                    match record_alone.send().await {
                        Ok(_) => recorded += 1,
                        Err(e) if is_condition_failure(e.code()) => {}
                        Err(e) => return Err(classify(e)),
                    }
                }
                Err(e) if is_condition_failure(e.code()) => {}
                Err(e) => return Err(classify(e)),
            }
        }
        Ok(recorded)
    }

    /// The downloads `filter` selects, oldest first.
    pub async fn list(&self, filter: &Filter) -> Result<Vec<Download>, StoreError> {
        let since = filter.since.map(stamp).unwrap_or_else(|| "0".into());
        // Past any time's stamp: `#` and the id follow it.
        let until = filter
            .until
            .map(|t| format!("{}#~", stamp(t)))
            .unwrap_or_else(|| "~".into());
        let query = |index: Option<&str>, name: &str, value: String| {
            self.client
                .query()
                .table_name(&self.table)
                .set_index_name(index.map(str::to_owned))
                .key_condition_expression("#k = :k AND #sk BETWEEN :since AND :until")
                .expression_attribute_names("#k", name)
                .expression_attribute_names("#sk", SK)
                .expression_attribute_values(":k", s(value))
                .expression_attribute_values(":since", s(&since))
                .expression_attribute_values(":until", s(&until))
        };
        let mut items = match (&filter.dataset, &filter.account) {
            (Some(slug), account) => {
                let mut items =
                    query_all(query(None, PK, format!("DL#{slug}")).consistent_read(true)).await?;
                if let Some(account) = account {
                    items.retain(|i| get_s(i, ACCOUNT).ok().as_deref() == Some(account.as_str()));
                }
                items
            }
            (None, Some(account)) => {
                query_all(query(Some(BY_ACCOUNT_INDEX), ACCOUNT, account.clone())).await?
            }
            (None, None) => {
                let first = filter
                    .since
                    .unwrap_or_else(|| Utc::now() - Duration::days(30))
                    .date_naive();
                let last = filter.until.unwrap_or_else(Utc::now).date_naive();
                let mut items = Vec::new();
                for day in days(first, last) {
                    items.extend(query_all(query(Some(BY_DAY_INDEX), DAY, day)).await?);
                }
                items
            }
        };
        items.sort_by_key(|item| get_s(item, SK).ok());
        items.iter().map(download_of).collect()
    }

    /// Each dataset's downloads over the `window` UTC days up to and including `today` (rows pages
    /// excluded): one Query per day.
    pub async fn counts(
        &self,
        today: NaiveDate,
        window: u32,
    ) -> Result<BTreeMap<String, u64>, StoreError> {
        let mut counts = BTreeMap::new();
        let first = today - Duration::days(i64::from(window.max(1)) - 1);
        for day in days(first, today) {
            let items = query_all(
                self.client
                    .query()
                    .table_name(&self.table)
                    .key_condition_expression("#pk = :pk")
                    .expression_attribute_names("#pk", PK)
                    .expression_attribute_values(":pk", s(format!("COUNT#{day}")))
                    .consistent_read(true),
            )
            .await?;
            for item in items {
                *counts.entry(get_s(&item, SK)?).or_insert(0) += get_u64(&item, COUNT)?;
            }
        }
        Ok(counts)
    }
}

/// How many days a count covers (the public "downloads in the last 30 days").
pub const WINDOW_DAYS: u32 = 30;

/// How far back the daily job looks for datasets whose count may have changed: a dataset
/// downloaded only on days that left the window drops, so the job finds it among the days
/// before the window (as long as it ran at least once in this many days).
pub const LOOKBACK_DAYS: u32 = 60;

/// What the daily count did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RolledUp {
    /// Datasets downloaded in the lookback, checked.
    pub checked: usize,
    /// Datasets whose 30-day count changed, and was set.
    pub changed: usize,
    /// Datasets whose count could not be set, with why (the next run tries again).
    pub failed: Vec<String>,
}

impl DynamoWriter {
    /// Sets every dataset's downloads over the 30 days up to `today` (rows pages aside) on its
    /// item, alias and list entries, where it changed: the list's `downloads` and
    /// `sort=downloads`, and the metadata's `downloads`. Datasets that are gone are skipped.
    pub async fn roll_up_downloads(
        &self,
        log: &DownloadLog,
        today: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<RolledUp, WriteError> {
        let counts = log.counts(today, WINDOW_DAYS).await?;
        let seen = log.counts(today, LOOKBACK_DAYS).await?;
        let mut done = RolledUp::default();
        for slug in seen.keys() {
            let Ok(slug) = Slug::parse(slug) else {
                continue;
            };
            done.checked += 1;
            let count = counts.get(slug.as_str()).copied().unwrap_or(0);
            let stored = match self.stored_dataset(&slug).await {
                Ok(stored) => stored,
                Err(WriteError::NoSuchDataset(_)) => continue,
                Err(e) => {
                    done.failed.push(format!("{slug} ({e})"));
                    continue;
                }
            };
            if stored.downloads == count {
                continue;
            }
            match self.set_downloads(&slug, count, now).await {
                Ok(()) => done.changed += 1,
                Err(e) => done.failed.push(format!("{slug} ({e})")),
            }
        }
        Ok(done)
    }
}

/// A time as the log's sort keys spell it (RFC 3339, milliseconds, UTC): they sort as times.
fn stamp(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn day_of(t: DateTime<Utc>) -> String {
    t.date_naive().to_string()
}

/// Every UTC day from `first` to `last`, both included, as `2026-11-26`.
fn days(first: NaiveDate, last: NaiveDate) -> Vec<String> {
    first
        .iter_days()
        .take_while(|d| *d <= last)
        .map(|d| d.to_string())
        .collect()
}

fn download_of(item: &Item) -> Result<Download, StoreError> {
    let route = match get_s(item, ROUTE)?.as_str() {
        "data" => Route::Data,
        "download" => Route::Download,
        "rows" => Route::Rows,
        "sharing" => Route::Sharing,
        other => return Err(StoreError::Corrupt(format!("unknown route {other}"))),
    };
    let at = DateTime::parse_from_rfc3339(&get_s(item, AT)?)
        .map_err(|_| StoreError::Corrupt("a download's time".into()))?
        .with_timezone(&Utc);
    Ok(Download {
        slug: get_s(item, SLUG)?,
        version: get_u64(item, VERSION)?,
        key_id: get_s(item, KEY_ID).ok(),
        account: get_s(item, ACCOUNT).ok(),
        route,
        at,
        // The requester's digest is kept only in the day's `SEEN#` items.
        client: None,
    })
}

/// Creates the downloads table, with its indexes and time to live (the local stack and the
/// tests; template.yaml declares it on AWS).
pub async fn create_downloads_table(client: &Client, table: &str) -> Result<(), StoreError> {
    let attr = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(other)
    };
    let key = |name: &str, kind: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(name)
            .key_type(kind)
            .build()
            .map_err(other)
    };
    let index = |name: &str, hash: &str| {
        GlobalSecondaryIndex::builder()
            .index_name(name)
            .key_schema(key(hash, KeyType::Hash)?)
            .key_schema(key(SK, KeyType::Range)?)
            .projection(
                Projection::builder()
                    .projection_type(ProjectionType::All)
                    .build(),
            )
            .build()
            .map_err(other)
    };
    client
        .create_table()
        .table_name(table)
        .billing_mode(BillingMode::PayPerRequest)
        .attribute_definitions(attr(PK)?)
        .attribute_definitions(attr(SK)?)
        .attribute_definitions(attr(ACCOUNT)?)
        .attribute_definitions(attr(DAY)?)
        .key_schema(key(PK, KeyType::Hash)?)
        .key_schema(key(SK, KeyType::Range)?)
        .global_secondary_indexes(index(BY_ACCOUNT_INDEX, ACCOUNT)?)
        .global_secondary_indexes(index(BY_DAY_INDEX, DAY)?)
        .send()
        .await
        .map_err(classify)?;
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(
            TimeToLiveSpecification::builder()
                .attribute_name(EXPIRE_AT)
                .enabled(true)
                .build()
                .map_err(other)?,
        )
        .send()
        .await
        .map_err(classify)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_sort_as_times_and_days_span_the_range() {
        let a = DateTime::parse_from_rfc3339("2026-11-26T09:05:00.120Z")
            .unwrap()
            .with_timezone(&Utc);
        let b = a + Duration::milliseconds(900);
        assert!(stamp(a) < stamp(b));
        assert_eq!(stamp(a), "2026-11-26T09:05:00.120Z");
        let d = |s: &str| NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap();
        assert_eq!(
            days(d("2026-11-29"), d("2026-12-01")),
            ["2026-11-29", "2026-11-30", "2026-12-01"]
        );
        assert!(days(d("2026-12-02"), d("2026-12-01")).is_empty());
    }
}
