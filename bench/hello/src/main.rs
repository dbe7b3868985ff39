//! The floor for cold-start figures: the smallest `lambda_http` function, with the same runtime,
//! tracing subscriber and release profile as the catalog's functions, and no AWS SDK.

use lambda_http::{run, service_fn, Body, Error, Request, Response};

async fn hello(_req: Request) -> Result<Response<Body>, Error> {
    Ok(Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(r#"{"hello":"world"}"#))?)
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::tracing::init_default_subscriber();
    run(service_fn(hello)).await
}
