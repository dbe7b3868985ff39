#![no_main]
//! Any path segment: a slug that round-trips, a UUID, or a 400; never a panic.
use catalog::input::DatasetRef;
use catalog::error::ApiError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|raw: &str| {
    match DatasetRef::parse(raw) {
        Ok(DatasetRef::Slug(slug)) => assert_eq!(slug.as_str(), raw),
        Ok(DatasetRef::Id(_)) => assert_eq!(raw.len(), 36),
        Err(e) => assert_eq!(ApiError::from(e).status().as_u16(), 400),
    }
});
