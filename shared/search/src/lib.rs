//! The catalog's listings: the text index, the kept orders, their DynamoDB storage, and the list
//! function's adapter that reads pages from them (docs/architecture.md).
//!
//! - [`index`]: full-text search of the listings, on tantivy, in shards by term range.
//! - [`order`]: the listings' kept orders (name, update, downloads), in chunks by key range.
//! - [`text`], [`orders`]: how the index and the orders are stored in the datasets table.
//! - [`listing`]: the list function's DynamoDB adapter ([`listing::Listing`], the
//!   `CatalogPager` port), with what an instance keeps of them.

pub mod index;
pub mod listing;
pub mod order;
pub mod orders;
pub mod text;
