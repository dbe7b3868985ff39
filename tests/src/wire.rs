//! What the SDK clients send over the wire, counted by an interceptor: the cost of a request in
//! round trips and items read.

use std::sync::{Arc, Mutex};

use aws_smithy_runtime_api::box_error::BoxError;
use aws_smithy_runtime_api::client::interceptors::context::{
    AfterDeserializationInterceptorContextRef, BeforeDeserializationInterceptorContextRef,
};
use aws_smithy_runtime_api::client::interceptors::Intercept;
use aws_smithy_runtime_api::client::orchestrator::Metadata;
use aws_smithy_runtime_api::client::runtime_components::RuntimeComponents;
use aws_smithy_types::config_bag::ConfigBag;

/// Records the operation name of every request an SDK client got a response to over the wire,
/// and how many items the response carried. (Presigning runs the interceptors up to
/// transmission but sends nothing, so "before transmit" would count it; "before
/// deserialization" only happens for a real round trip.)
#[derive(Debug, Clone, Default)]
pub struct Wire(Arc<Mutex<Vec<Call>>>);

/// One request on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// `Service.Operation`, e.g. `DynamoDB.GetItem`.
    pub operation: String,
    /// Items in a DynamoDB response (`Item`, `Items`, `Responses`); 0 for others.
    pub items: usize,
    /// The response's bytes on the wire (its `Content-Length`; 0 when it has none).
    pub bytes: usize,
}

impl Intercept for Wire {
    fn name(&self) -> &'static str {
        "Wire"
    }

    fn read_before_deserialization(
        &self,
        context: &BeforeDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        let operation = cfg
            .load::<Metadata>()
            .map(|m| format!("{}.{}", m.service(), m.name()))
            .unwrap_or_else(|| "?".into());
        let bytes = context
            .response()
            .headers()
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        catalog::lock(&self.0).push(Call {
            operation,
            items: 0,
            bytes,
        });
        Ok(())
    }

    fn read_after_deserialization(
        &self,
        context: &AfterDeserializationInterceptorContextRef<'_>,
        _components: &RuntimeComponents,
        _cfg: &mut ConfigBag,
    ) -> Result<(), BoxError> {
        if let Ok(output) = context.output_or_error() {
            let items = items_in(output);
            if let Some(last) = catalog::lock(&self.0).last_mut() {
                last.items = items;
            }
        }
        Ok(())
    }
}

/// Items in a deserialized DynamoDB output.
fn items_in(output: &aws_smithy_runtime_api::client::interceptors::context::Output) -> usize {
    use aws_sdk_dynamodb::operation::{
        batch_get_item::BatchGetItemOutput, get_item::GetItemOutput, query::QueryOutput,
    };
    if let Some(o) = output.downcast_ref::<GetItemOutput>() {
        return usize::from(o.item.is_some());
    }
    if let Some(o) = output.downcast_ref::<QueryOutput>() {
        return o.items().len();
    }
    if let Some(o) = output.downcast_ref::<BatchGetItemOutput>() {
        return o
            .responses
            .as_ref()
            .map(|r| r.values().map(Vec::len).sum())
            .unwrap_or(0);
    }
    0
}

impl Wire {
    /// The operations recorded since the last call, in order.
    pub fn take(&self) -> Vec<String> {
        self.take_calls().into_iter().map(|c| c.operation).collect()
    }

    /// The calls recorded since the last call, in order.
    pub fn take_calls(&self) -> Vec<Call> {
        std::mem::take(&mut *catalog::lock(&self.0))
    }
}
