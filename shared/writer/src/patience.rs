//! How long a write waits for other writers, and what it reports when it stops waiting.
//!
//! Two kinds of loss, told apart by the item whose condition failed ([`crate::tx`]):
//! - **on the dataset itself** (`Conflict`): another write changed this dataset first. Worth a
//!   few tries while what the write expects still holds (the caller decides), then reported.
//! - **on an item every writer shares** (`Contended`): the catalog's counter, a facet counter,
//!   the next position of a list, a list's mark while another writer rewrites it. Such a loss
//!   says nothing about this dataset: it is always tried again, with backoff, for as long as a
//!   live writer may hold a list ([`SHARED_WAIT`]; a mark is renewed while its writer works and
//!   lapses within 90 seconds after it stops), and only then reported, naming the shared item.

use std::time::Duration;

use tokio::time::Instant;

use catalog_aws::dynamo::retry::Backoff;

use crate::error::WriteError;

/// The longest a write waits for items other writers share: more than a renumbering of the
/// catalog takes (`reindex` holds the catalog list while it runs: 156 s at a million
/// datasets, see docs/performance.md).
pub(crate) const SHARED_WAIT: Duration = Duration::from_secs(15 * 60);

/// Waits between attempts on shared items: doubling from 50 ms to 2 s, jittered by up to
/// 0.5 s so that racing writers spread out.
const SHARED: Backoff = Backoff::new(u32::MAX, 50, 2000, 500);

/// Writers racing for the text index's or the kept orders' manifests, after their changes
/// committed: each round one of them wins, so this outlasts thirty at once (jittered, 25 ms
/// doubling to 2 s, about a minute in all).
pub(crate) const RACE: Backoff = Backoff::new(30, 25, 2000, 500);

/// The retries of one write: how many of each kind, and since when.
#[derive(Debug)]
pub(crate) struct Patience {
    started: Instant,
    limit: Duration,
    own: u32,
    shared: u32,
}

impl Patience {
    /// Waits for shared items at most `limit` in all.
    pub fn new(limit: Duration) -> Self {
        Self {
            started: Instant::now(),
            limit,
            own: 0,
            shared: 0,
        }
    }

    /// After an attempt failed with `error`: waits before the next attempt (`Ok`), or hands
    /// back the error to report. A conflict on the dataset itself is tried again up to
    /// [`Backoff::CONFLICT`]'s retries; a loss on a shared item until [`SHARED_WAIT`] has
    /// passed, then reported with the time waited; any other error at once.
    pub async fn wait(&mut self, error: WriteError) -> Result<(), WriteError> {
        match error {
            WriteError::Conflict(slug) => {
                if self.own >= Backoff::CONFLICT.retries {
                    return Err(WriteError::Conflict(slug));
                }
                self.own += 1;
                tokio::time::sleep(Backoff::CONFLICT.jittered(self.own)).await;
                Ok(())
            }
            WriteError::Contended { what, .. } => {
                let waited = self.started.elapsed();
                if waited >= self.limit {
                    return Err(WriteError::Contended {
                        what,
                        seconds: waited.as_secs(),
                    });
                }
                self.shared = self.shared.saturating_add(1);
                if self.shared % 10 == 0 {
                    tracing::info!(
                        item = %what,
                        attempts = self.shared,
                        waited_s = waited.as_secs(),
                        "waiting for other writers"
                    );
                }
                let pause = SHARED.jittered(self.shared.min(16));
                tokio::time::sleep(pause.min(self.limit.saturating_sub(waited))).await;
                Ok(())
            }
            other => Err(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contended() -> WriteError {
        WriteError::Contended {
            what: "the catalog's count of listed datasets".into(),
            seconds: 0,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_loss_on_a_shared_item_is_tried_again_until_the_wait_is_over_then_named() {
        let mut patience = Patience::new(Duration::from_secs(60));
        let mut tries = 0;
        let reported = loop {
            match patience.wait(contended()).await {
                Ok(()) => tries += 1,
                Err(e) => break e,
            }
        };
        // 50 ms doubling to 2 s (plus jitter) fills a minute in about 30 tries, not 5
        assert!((20..=40).contains(&tries), "{tries} tries");
        match reported {
            WriteError::Contended { what, seconds } => {
                assert_eq!(what, "the catalog's count of listed datasets");
                assert_eq!(seconds, 60);
            }
            other => panic!("{other:?}"),
        }
        let message = WriteError::Contended {
            what: "the catalog's count of listed datasets".into(),
            seconds: 60,
        }
        .to_string();
        assert!(
            !message.contains("dataset '"),
            "a shared item is not named as a dataset: {message}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_conflict_on_the_dataset_itself_is_tried_a_few_times_then_reported() {
        let mut patience = Patience::new(Duration::from_secs(60));
        let mut tries = 0;
        let reported = loop {
            match patience.wait(WriteError::Conflict("gauges".into())).await {
                Ok(()) => tries += 1,
                Err(e) => break e,
            }
        };
        assert_eq!(tries, Backoff::CONFLICT.retries);
        assert!(matches!(reported, WriteError::Conflict(s) if s == "gauges"));
        // Any other error is reported at once
        let other = patience
            .wait(WriteError::NoSuchDataset("gauges".into()))
            .await;
        assert!(matches!(other, Err(WriteError::NoSuchDataset(_))));
    }
}
