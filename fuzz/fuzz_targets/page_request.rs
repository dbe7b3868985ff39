#![no_main]
//! Any `page` and `page_size`: in bounds or a 400; never a panic.
use catalog::input::PageRequest;
use catalog::error::ApiError;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|input: (Option<&str>, Option<&str>)| {
    match PageRequest::parse(input.0, input.1) {
        Ok(p) => {
            assert!(p.page() >= 1);
            assert!((1..=PageRequest::MAX_PAGE_SIZE).contains(&p.page_size()));
        }
        Err(e) => assert_eq!(ApiError::from(e).status().as_u16(), 400),
    }
});
