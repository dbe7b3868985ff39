//! The catalog's HTTP side (docs/architecture.md): it links no AWS SDK; a function's `main.rs`
//! hands it the adapters.
//!
//! - [`api`]: the endpoints, on top of `catalog`'s ports.
//! - [`error`]: an error's HTTP status and challenge, the one place they are mapped.
//! - [`routes`]: the API's routes in one table: path, endpoint, function, authorizer, document.
//! - [`lambda`]: the Lambda entry point, with a guard against events lambda_http cannot convert.
//! - [`sharing`]: the Delta Sharing protocol's routes, bodies and answers.
//! - [`linked`]: the metadata as Croissant and DCAT documents (the RDF writer is by hand: an RDF
//!   library would add to the metadata and list functions' size).

pub mod api;
pub mod error;
pub mod lambda;
pub mod linked;
pub mod routes;
pub mod sharing;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
