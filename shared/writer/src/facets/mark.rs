//! A list's mark: held by one writer while it rewrites the list, renewed while it lives, lapsing
//! when it stops.

use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use catalog::query::Facet;
use catalog_aws::dynamo::attr::{s, time};
use catalog_aws::dynamo::layout::name::REBUILD_UNTIL;
use catalog_aws::dynamo::layout::{counter_key, facet_counter_pk, Item};
use catalog_aws::dynamo::requests::classify;
use chrono::{DateTime, Utc};

use crate::error::WriteError;
use crate::patience::Patience;
use crate::tx::{is_condition_failure, UNMARKED};
use crate::writer::DynamoWriter;

/// How long a list's mark holds without being renewed: a writer that stops holding a list
/// (or dies) lets other writers take it after at most this long. With renewals every
/// `RENEW_SECONDS`, writers' clocks may differ by up to 75 seconds.
const MARK_SECONDS: i64 = 90;

/// How often a writer renews the mark of a list it holds (each renewal given at most as long).
const RENEW_SECONDS: u64 = 15;

/// The attribute beside a mark naming the writer that holds it (a token of its own).
pub(crate) const MARK_OWNER: &str = "mark_owner";

/// A list held by this writer: its mark is renewed until this is dropped (the writer clears
/// the mark itself when it is done; if it cannot, the mark lapses).
#[derive(Debug)]
pub(crate) struct Held(tokio::task::JoinHandle<()>);

impl Drop for Held {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl DynamoWriter {
    /// Marks a facet list as being rewritten ([`Self::hold`]): appends and in-place updates of
    /// its entries are refused (and tried again by `activate`) until `write_facet` clears the
    /// mark. A second rewrite of the same list waits for it.
    pub(crate) async fn mark_facet(
        &self,
        facet: &Facet,
        now: DateTime<Utc>,
    ) -> Result<Held, WriteError> {
        self.hold(counter_key(facet_counter_pk(facet)), &facet.key(), now)
            .await
    }

    /// Sets the rebuild mark on the item `key` (a facet counter, or the catalog list's mark
    /// item) for `MARK_SECONDS`, under a token of this writer's, and renews it every
    /// `RENEW_SECONDS` for as long as the returned [`Held`] lives: a live writer keeps its
    /// list however long its work takes, and a writer that stops (or dies) lets it lapse within
    /// a minute. Waits for another writer's mark to be cleared or to lapse, for as long as a
    /// write waits for shared items ([`crate::patience::SHARED_WAIT`]); then `Busy`, naming
    /// `list`.
    pub(crate) async fn hold(
        &self,
        key: Item,
        list: &str,
        now: DateTime<Utc>,
    ) -> Result<Held, WriteError> {
        let token = crate::tx::token();
        let mut patience = Patience::new(self.shared_wait);
        loop {
            let at = Utc::now().max(now);
            let marked = self
                .client
                .update_item()
                .table_name(&self.datasets_table)
                .set_key(Some(key.clone()))
                .update_expression("SET #mark = :until, #owner = :token")
                .condition_expression(UNMARKED)
                .expression_attribute_names("#mark", REBUILD_UNTIL)
                .expression_attribute_names("#owner", MARK_OWNER)
                .expression_attribute_values(":now", time(&at))
                .expression_attribute_values(
                    ":until",
                    time(&(at + chrono::Duration::seconds(MARK_SECONDS))),
                )
                .expression_attribute_values(":token", s(&token))
                .send()
                .await;
            match marked {
                Ok(_) => return Ok(self.renew(key, token)),
                Err(e) if is_condition_failure(e.code()) => {
                    let held = WriteError::Contended {
                        what: list.to_owned(),
                        seconds: 0,
                    };
                    if patience.wait(held).await.is_err() {
                        return Err(WriteError::Busy(list.to_owned()));
                    }
                }
                Err(e) => return Err(WriteError::from(classify(e))),
            }
        }
    }

    /// Renews the mark on `key` while it is still this writer's (`token`) and not cleared,
    /// every `RENEW_SECONDS`, until the returned guard is dropped.
    fn renew(&self, key: Item, token: String) -> Held {
        let (client, table) = (self.client.clone(), self.datasets_table.clone());
        let task = tokio::spawn(async move {
            loop {
                tokio::time::sleep(std::time::Duration::from_secs(RENEW_SECONDS)).await;
                let until = Utc::now() + chrono::Duration::seconds(MARK_SECONDS);
                let renewing = client
                    .update_item()
                    .table_name(&table)
                    .set_key(Some(key.clone()))
                    .update_expression("SET #mark = :until")
                    .condition_expression("attribute_exists(#mark) AND #owner = :token")
                    .expression_attribute_names("#mark", REBUILD_UNTIL)
                    .expression_attribute_names("#owner", MARK_OWNER)
                    .expression_attribute_values(":until", time(&until))
                    .expression_attribute_values(":token", s(&token))
                    .send();
                let wait = std::time::Duration::from_secs(RENEW_SECONDS);
                let Ok(renewed) = tokio::time::timeout(wait, renewing).await else {
                    tracing::warn!("a list's mark was not renewed in time");
                    continue;
                };
                match renewed {
                    Ok(_) => {}
                    // Cleared, or taken over after it lapsed: nothing left to renew.
                    Err(e) if is_condition_failure(e.code()) => return,
                    Err(e) => tracing::warn!(error = %classify(e), "a list's mark was not renewed"),
                }
            }
        });
        Held(task)
    }
}
