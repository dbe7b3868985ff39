//! The mailer, off the request path: every minute (an EventBridge schedule) it sends the
//! pending notices of access requests and decisions through Amazon SES. Composition root only:
//! the logic is in `catalog::notices`, the adapters in `catalog_aws::mailer`.

use catalog_aws::mailer::Mailroom;
use lambda_http::lambda_runtime::{self, service_fn, Error, LambdaEvent};
use serde_json::Value;

#[tokio::main]
async fn main() -> Result<(), Error> {
    catalog::logging::init_logging();
    let mailroom = Mailroom::from_env().await?;
    let mailroom = &mailroom;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        mailroom.handle(event.payload).await.map_err(Error::from)
    }))
    .await
}
