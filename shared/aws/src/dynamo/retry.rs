//! One retry loop with exponential backoff, for every DynamoDB request that may have to be
//! repeated: unprocessed batch keys, a list mark held by another writer, a transaction that
//! lost a race.

use std::future::Future;
use std::time::Duration;

/// Waits `base * 2^retry`, at most `cap`, plus a random `[0, jitter)` so that racing writers
/// spread out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// Attempts after the first.
    pub retries: u32,
    pub base: Duration,
    pub cap: Duration,
    pub jitter: Duration,
}

/// What one attempt came to.
#[derive(Debug)]
pub enum Attempt<T, S> {
    Done(T),
    /// Try again, with this state (what is left to do).
    Retry(S),
}

impl Backoff {
    /// BatchGetItem's unprocessed keys on the request path: 3 retries, 50 to 200 ms.
    pub const BATCH_READ: Self = Self::new(3, 25, 200, 0);
    /// BatchWriteItem's unprocessed items: 7 retries, 50 ms to 0.8 s.
    pub const BATCH_WRITE: Self = Self::new(7, 25, 800, 0);
    /// A transaction that lost a race with another writer: 5 retries, 0.1 to 1.6 s, jittered.
    pub const CONFLICT: Self = Self::new(5, 50, 1600, 256);
    /// An eventually consistent index catching up with a write: about a second in all.
    pub const INDEX_CATCH_UP: Self = Self::new(4, 50, 400, 0);
    /// Waiting for another writer's list mark: about a minute in all.
    pub const LIST_MARK: Self = Self::new(39, 100, 1600, 0);

    pub const fn new(retries: u32, base_ms: u64, cap_ms: u64, jitter_ms: u64) -> Self {
        Self {
            retries,
            base: Duration::from_millis(base_ms),
            cap: Duration::from_millis(cap_ms),
            jitter: Duration::from_millis(jitter_ms),
        }
    }

    /// The wait before retry number `retry` (1 = the first retry), without jitter.
    pub fn delay(&self, retry: u32) -> Duration {
        self.base
            .checked_mul(1u32.checked_shl(retry).unwrap_or(u32::MAX))
            .unwrap_or(self.cap)
            .min(self.cap)
    }

    /// The wait before retry number `retry`, with its random jitter.
    pub fn jittered(&self, retry: u32) -> Duration {
        let jitter_ms = self.jitter.as_millis() as u64;
        let random = if jitter_ms == 0 {
            0
        } else {
            let bytes = uuid::Uuid::new_v4().into_bytes();
            u64::from(u16::from_le_bytes([bytes[0], bytes[1]])) % jitter_ms
        };
        self.delay(retry) + Duration::from_millis(random)
    }

    /// Runs `step` until it is done, fails, or has been retried `retries` times; then
    /// `give_up` turns the last state into the error.
    pub async fn run<S, T, E, Fut>(
        &self,
        mut state: S,
        mut step: impl FnMut(S) -> Fut,
        give_up: impl FnOnce(S) -> E,
    ) -> Result<T, E>
    where
        Fut: Future<Output = Result<Attempt<T, S>, E>>,
    {
        for retry in 0..=self.retries {
            if retry > 0 {
                tokio::time::sleep(self.jittered(retry)).await;
            }
            match step(state).await? {
                Attempt::Done(t) => return Ok(t),
                Attempt::Retry(next) => state = next,
            }
        }
        Err(give_up(state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_the_cap() {
        let b = Backoff::new(10, 100, 1600, 0);
        let ms: Vec<u128> = (1..=6).map(|r| b.delay(r).as_millis()).collect();
        assert_eq!(ms, [200, 400, 800, 1600, 1600, 1600]);
        assert_eq!(b.delay(200), Duration::from_millis(1600), "no overflow");
    }

    #[test]
    fn the_list_mark_is_waited_for_about_a_minute() {
        let b = Backoff::LIST_MARK;
        let total: Duration = (1..=b.retries).map(|r| b.delay(r)).sum();
        assert!(
            (50..=70).contains(&total.as_secs()),
            "{total:?} is not about a minute"
        );
    }

    #[test]
    fn jitter_stays_below_its_bound() {
        let b = Backoff::CONFLICT;
        for retry in 1..=b.retries {
            for _ in 0..50 {
                let d = b.jittered(retry);
                assert!(d >= b.delay(retry) && d < b.delay(retry) + b.jitter);
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn run_retries_until_done_and_gives_up_with_the_last_state() {
        let b = Backoff::new(3, 1, 8, 0);
        let done: Result<u32, String> = b
            .run(
                0u32,
                |n| async move {
                    Ok(if n == 2 {
                        Attempt::Done(n)
                    } else {
                        Attempt::Retry(n + 1)
                    })
                },
                |n| format!("gave up at {n}"),
            )
            .await;
        assert_eq!(done, Ok(2));
        let gave_up: Result<u32, String> = b
            .run(
                0u32,
                |n| async move { Ok(Attempt::Retry(n + 1)) },
                |n| format!("gave up at {n}"),
            )
            .await;
        assert_eq!(
            gave_up,
            Err("gave up at 4".to_owned()),
            "1 attempt + 3 retries"
        );
        let failed: Result<u32, String> = b
            .run(
                0u32,
                |_| async { Err("boom".to_owned()) },
                |_| unreachable!(),
            )
            .await;
        assert_eq!(failed, Err("boom".to_owned()));
    }
}
