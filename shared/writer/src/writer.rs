//! [`DynamoWriter`]: the catalog's write side, one method a write, each in its own module.

use aws_sdk_dynamodb::Client;
use catalog::error::StoreError;
use catalog_aws::dynamo::layout::Item;
use catalog_aws::dynamo::requests::get_consistent;

use crate::patience;

/// Writes datasets, versions and keys.
#[derive(Clone, Debug)]
pub struct DynamoWriter {
    pub(crate) client: Client,
    pub(crate) datasets_table: String,
    pub(crate) keys_table: String,
    /// How long a write waits for items other writers share ([`patience`]).
    pub(crate) shared_wait: std::time::Duration,
}

impl DynamoWriter {
    pub fn new(
        client: Client,
        datasets_table: impl Into<String>,
        keys_table: impl Into<String>,
    ) -> Self {
        Self {
            client,
            datasets_table: datasets_table.into(),
            keys_table: keys_table.into(),
            shared_wait: patience::SHARED_WAIT,
        }
    }

    /// Waits at most `limit` for items other writers share (15 minutes by default, longer
    /// than a renumbering of a million datasets holds the catalog list): a function whose
    /// timeout is shorter gives up with a named error inside it, rather than being cut off.
    pub fn with_shared_wait(mut self, limit: std::time::Duration) -> Self {
        self.shared_wait = limit;
        self
    }

    /// One item of the datasets table, read consistently.
    pub(crate) async fn get(&self, key: Item) -> Result<Option<Item>, StoreError> {
        get_consistent(&self.client, &self.datasets_table, key).await
    }
}
