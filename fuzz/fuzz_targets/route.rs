#![no_main]
//! Any path: routing never panics.
use libfuzzer_sys::fuzz_target;

fuzz_target!(|path: &str| {
    let _ = catalog_http::api::Route::parse(path);
});
