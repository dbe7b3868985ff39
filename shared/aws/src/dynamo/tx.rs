//! TransactWriteItems, as the accounts' writes use it: conflicts retried with jitter, and a
//! failed condition reported by the position of its write.

use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::TransactWriteItem;
use aws_sdk_dynamodb::Client;

use super::requests::classify;
use super::retry::Backoff;
use catalog::error::StoreError;

/// How a transaction ended, from its cancellation reasons.
enum Outcome {
    Done,
    /// The condition of the write at this position failed.
    ConditionFailed(usize),
    /// Another transaction held an item: worth retrying.
    Conflict,
}

pub(crate) fn other(message: &str) -> StoreError {
    StoreError::Other(message.to_owned().into())
}

/// A built request, or the builder's error as a store error.
pub(crate) fn build<T, E: std::error::Error + Send + Sync + 'static>(
    r: Result<T, E>,
) -> Result<T, StoreError> {
    r.map_err(|e| StoreError::Other(Box::new(e)))
}

async fn transact(client: &Client, items: Vec<TransactWriteItem>) -> Result<Outcome, StoreError> {
    let result = client
        .transact_write_items()
        .set_transact_items(Some(items))
        .send()
        .await;
    let err = match result {
        Ok(_) => return Ok(Outcome::Done),
        Err(err) => err,
    };
    if let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
        err.as_service_error()
    {
        let codes: Vec<Option<&str>> = cancelled
            .cancellation_reasons()
            .iter()
            .map(|r| r.code())
            .collect();
        if let Some(at) = codes
            .iter()
            .position(|c| *c == Some("ConditionalCheckFailed"))
        {
            return Ok(Outcome::ConditionFailed(at));
        }
        if codes.contains(&Some("TransactionConflict")) {
            return Ok(Outcome::Conflict);
        }
    }
    if let Some(TransactWriteItemsError::TransactionInProgressException(_)) = err.as_service_error()
    {
        return Ok(Outcome::Conflict);
    }
    Err(classify(err))
}

/// Runs a transaction, retrying conflicts (`Backoff::CONFLICT`). `Err(position)`: the condition
/// of the write at that position failed.
pub(crate) async fn transact_retrying(
    client: &Client,
    items: Vec<TransactWriteItem>,
) -> Result<Result<(), usize>, StoreError> {
    let b = Backoff::CONFLICT;
    for retry in 0..=b.retries {
        if retry > 0 {
            // Jittered: concurrent writes on one account must not retry in lockstep.
            tokio::time::sleep(b.jittered(retry)).await;
        }
        match transact(client, items.clone()).await? {
            Outcome::Conflict => continue,
            Outcome::Done => return Ok(Ok(())),
            Outcome::ConditionFailed(at) => return Ok(Err(at)),
        }
    }
    Err(StoreError::Unavailable(
        "the account's item stayed in conflict after retries".into(),
    ))
}
