#![no_main]
//! Any event document, as Lambda would deliver it (API Gateway v1, v2, function URL, or
//! garbage): parsing never panics, and a parsed request gets a documented status with a JSON
//! body from whichever function the path routes to.
use catalog::api::Route;
use catalog::memory::{FakeSigner, MemoryCatalog};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|doc: &str| {
    let Ok(req) = lambda_http::request::from_str(doc) else {
        return;
    };
    let catalog = MemoryCatalog::default();
    let signer = FakeSigner {
        ttl: chrono::Duration::minutes(15),
    };
    let now = chrono::Utc::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let resp = rt.block_on(async {
        match Route::parse(req.uri().path()) {
            Some(Route::Metadata(_)) => catalog::api::metadata(&req, &catalog, now).await,
            Some(Route::Data(_)) => catalog::api::data(&req, &catalog, &signer, now).await,
            _ => catalog::api::list(&req, &catalog, now).await,
        }
    });
    let status = resp.status().as_u16();
    assert!(
        [200, 400, 401, 403, 404, 405].contains(&status),
        "status {status}"
    );
    let body: serde_json::Value = serde_json::from_slice(resp.body().as_ref()).expect("JSON body");
    if status != 200 {
        assert!(body.get("error").and_then(|e| e.as_str()).is_some());
    }
});
