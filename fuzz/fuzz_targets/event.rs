#![no_main]
//! Any event document, as Lambda would deliver it (API Gateway v1, v2, function URL, or
//! garbage), through what the functions run: deserialized as lambda_runtime does, then
//! `catalog_http::lambda::Guard` in front of lambda_http's adapter, routed to whichever handler the
//! path selects. Never a panic; the response document has a documented status and a JSON body.
use std::convert::Infallible;

use catalog_http::lambda::Guard;
use catalog_memory::{FakeRows, FakeSigner, MemoryCatalog};
use lambda_http::request::LambdaRequest;
use lambda_http::{service_fn, Adapter, Context, LambdaEvent, Request, Service};
use libfuzzer_sys::fuzz_target;

async fn answer(
    req: Request,
    catalog: &MemoryCatalog,
) -> Result<lambda_http::Response<lambda_http::Body>, Infallible> {
    let signer = FakeSigner {
        ttl: chrono::Duration::minutes(15),
    };
    Ok(catalog_http::api::dispatch(
        &req,
        catalog,
        &signer,
        &FakeRows::default(),
        chrono::Utc::now(),
    )
    .await)
}

fuzz_target!(|doc: &str| {
    let Ok(payload) = serde_json::from_str::<LambdaRequest>(doc) else {
        return;
    };
    let catalog = MemoryCatalog::default();
    let mut function = Guard::new(Adapter::from(service_fn(|req| answer(req, &catalog))));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let event = LambdaEvent::new(payload, Context::default());
    let Ok(response) = rt.block_on(function.call(event));
    let response = serde_json::to_value(response).unwrap();
    let status = response["statusCode"].as_u64().unwrap_or(0);
    assert!(
        [200, 204, 400, 401, 403, 404, 405].contains(&status),
        "status {status}"
    );
    if status == 204 {
        // A CORS preflight: no body.
        assert_eq!(response["body"].as_str().unwrap_or_default(), "");
        return;
    }
    let body: serde_json::Value =
        serde_json::from_str(response["body"].as_str().unwrap_or_default()).expect("JSON body");
    if status != 200 {
        assert!(body.get("error").and_then(|e| e.as_str()).is_some());
    }
});
