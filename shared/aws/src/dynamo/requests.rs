//! Requests that span pages or retries, and how an SDK error is classified: every DynamoDB
//! read and write of the crate and of `catalog-writer` goes through these.

use std::collections::HashMap;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::operation::query::builders::QueryFluentBuilder;
use aws_sdk_dynamodb::operation::scan::builders::ScanFluentBuilder;
use aws_sdk_dynamodb::types::KeysAndAttributes;
use aws_sdk_dynamodb::Client;

use super::attr::s;
use super::layout::Item;
use super::retry::{Attempt, Backoff};
use catalog::error::{BoxError, StoreError};

/// Sorts an SDK error into "the backend throttled us" (a rate limit), "retry later" (timeouts,
/// connection failures, server errors, and any 5xx answer, even one that is not DynamoDB's JSON:
/// an error page from something in the way) and everything else.
pub fn classify<E>(err: SdkError<E, HttpResponse>) -> StoreError
where
    E: ProvideErrorMetadata + std::error::Error + Send + Sync + 'static,
{
    enum Kind {
        Throttled,
        Transient,
        Other,
    }
    let kind = match &err {
        SdkError::TimeoutError(_) | SdkError::DispatchFailure(_) | SdkError::ResponseError(_) => {
            Kind::Transient
        }
        SdkError::ServiceError(e) => match e.err().code() {
            Some(
                "ProvisionedThroughputExceededException"
                | "ThrottlingException"
                | "RequestLimitExceeded"
                | "LimitExceededException",
            ) => Kind::Throttled,
            Some("InternalServerError" | "ServiceUnavailable") => Kind::Transient,
            _ if e.raw().status().is_server_error() => Kind::Transient,
            _ => Kind::Other,
        },
        _ => Kind::Other,
    };
    let boxed: BoxError = Box::new(err);
    match kind {
        Kind::Throttled => StoreError::Throttled(boxed),
        Kind::Transient => StoreError::Unavailable(boxed),
        Kind::Other => StoreError::Other(boxed),
    }
}

// ---------------------------------------------------------------------------------------------

/// One BatchGetItem, with its unprocessed keys retried (`Backoff::BATCH_READ`): every item
/// found, by table.
pub async fn batch_get_all(
    client: &Client,
    request: HashMap<String, KeysAndAttributes>,
) -> Result<HashMap<String, Vec<Item>>, StoreError> {
    Backoff::BATCH_READ
        .run(
            (request, HashMap::<String, Vec<Item>>::new()),
            |(request, mut found)| async move {
                let out = client
                    .batch_get_item()
                    .set_request_items(Some(request))
                    .send()
                    .await
                    .map_err(classify)?;
                for (table, items) in out.responses.unwrap_or_default() {
                    found.entry(table).or_default().extend(items);
                }
                Ok(match out.unprocessed_keys {
                    Some(rest) if !rest.is_empty() => Attempt::Retry((rest, found)),
                    _ => Attempt::Done(found),
                })
            },
            |_| StoreError::Unavailable("BatchGetItem left keys unprocessed after retries".into()),
        )
        .await
}

/// Every item a Query returns, over all its pages.
pub async fn query_all(query: QueryFluentBuilder) -> Result<Vec<Item>, StoreError> {
    all_pages(|start| {
        let page = query.clone().set_exclusive_start_key(start);
        async move {
            let out = page.send().await.map_err(classify)?;
            Ok((out.items.unwrap_or_default(), out.last_evaluated_key))
        }
    })
    .await
}

/// Every item a Scan returns, over all its pages (operators' tools only: the functions never
/// scan).
pub async fn scan_all(scan: ScanFluentBuilder) -> Result<Vec<Item>, StoreError> {
    all_pages(|start| {
        let page = scan.clone().set_exclusive_start_key(start);
        async move {
            let out = page.send().await.map_err(classify)?;
            Ok((out.items.unwrap_or_default(), out.last_evaluated_key))
        }
    })
    .await
}

/// Reads pages from `page(start)` (a page's items and the key to start the next at) until a
/// page has no next key.
async fn all_pages<F, Fut>(page: F) -> Result<Vec<Item>, StoreError>
where
    F: FnMut(Option<Item>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<Item>, Option<Item>), StoreError>>,
{
    let mut items = Vec::new();
    for_each_page(page, |found| {
        items.extend(found);
        Ok(())
    })
    .await?;
    Ok(items)
}

/// Hands each page from `page(start)` to `each` as it arrives, so that a long read never holds
/// more than one page of raw items.
async fn for_each_page<F, Fut>(
    mut page: F,
    mut each: impl FnMut(Vec<Item>) -> Result<(), StoreError>,
) -> Result<(), StoreError>
where
    F: FnMut(Option<Item>) -> Fut,
    Fut: std::future::Future<Output = Result<(Vec<Item>, Option<Item>), StoreError>>,
{
    let mut start = None;
    loop {
        let (found, next) = page(start).await?;
        each(found)?;
        match next {
            Some(k) if !k.is_empty() => start = Some(k),
            _ => return Ok(()),
        }
    }
}

/// Every page of one partition, in key order (consistent reads), handed to `each` as it
/// arrives.
pub async fn for_each_in_partition(
    client: &Client,
    table: &str,
    pk: &str,
    each: impl FnMut(Vec<Item>) -> Result<(), StoreError>,
) -> Result<(), StoreError> {
    let query = partition_query(client, table, pk);
    for_each_page(
        |start| {
            let page = query.clone().set_exclusive_start_key(start);
            async move {
                let out = page.send().await.map_err(classify)?;
                Ok((out.items.unwrap_or_default(), out.last_evaluated_key))
            }
        },
        each,
    )
    .await
}

/// Every item of one partition, in key order (consistent reads, all pages).
pub async fn query_partition(
    client: &Client,
    table: &str,
    pk: &str,
) -> Result<Vec<Item>, StoreError> {
    query_all(partition_query(client, table, pk)).await
}

/// A consistent Query of one whole partition.
fn partition_query(client: &Client, table: &str, pk: &str) -> QueryFluentBuilder {
    client
        .query()
        .table_name(table)
        .key_condition_expression(format!("{} = :pk", super::layout::name::PK))
        .expression_attribute_values(":pk", s(pk))
        .consistent_read(true)
}

/// One item by its key, read strongly consistent: one GetItem.
pub async fn get_consistent(
    client: &Client,
    table: &str,
    key: Item,
) -> Result<Option<Item>, StoreError> {
    Ok(client
        .get_item()
        .table_name(table)
        .set_key(Some(key))
        .consistent_read(true)
        .send()
        .await
        .map_err(classify)?
        .item)
}
