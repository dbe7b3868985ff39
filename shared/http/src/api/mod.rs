//! The HTTP API: one file per endpoint, on top of the ports.
//!
//! - [`request`]: what a request carries (route, request id, query parameters, presented key);
//! - `list`, `metadata`, `data`: the three catalog endpoints, and `rows` (its reader is the
//!   rows function's); `croissant` (the metadata function's) and `download` (the data
//!   function's: `data`'s answer as a redirect); `catalog`: the DCAT catalog (the list
//!   function's); `gate`: who is let through to a dataset's data, for `data` and `rows`;
//!   [`account`]: the account routes
//!   (keys), [`access`]: access requests and operators' decisions; `sharing`: the Delta Sharing
//!   routes ([`crate::sharing`]);
//! - `http`: how every answer is built (JSON bodies, errors, CORS, HTTP caching, HEAD).
//!
//! Handlers never fail: every outcome, including storage failures, is a [`Response`]. An `Err`
//! from a lambda_http handler would become a 502 at API Gateway.

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};

use catalog::ports::{DownloadReader, MetadataReader, UrlSigner};
use catalog::rows::RowsReader;

pub mod access;
pub mod account;
mod croissant;
mod data;
mod data_files;
mod data_original;
mod dcat;
pub mod editor;
mod file_list;
pub mod gate;
mod http;
mod list;
mod metadata;
pub mod orgs;
pub mod preferences;
pub mod request;
mod rows;
mod sharing;
pub mod uploads;

pub use croissant::croissant;
pub use data::{data, download, DataReader};
pub use dcat::{catalog, RdfFormat};
pub use http::{cors, entity_tag, error_response, preflight_answer, PUBLIC_MAX_AGE_SECONDS};
pub use list::list;
pub use metadata::metadata;
pub use request::{pick_request_id, presented_key, request_id, request_path, Endpoint, Route};
pub use rows::rows;
pub use sharing::{sharing, SharingStore};

/// Answers a request as the deployed API routes it (the local API, the tests and the fuzz
/// targets; each function calls its own handler): the metadata, data and rows routes and the
/// Delta Sharing routes to their handlers, everything else to the list handler, as the
/// `$default` route does.
pub async fn dispatch<C>(
    req: &Request,
    catalog: &C,
    signer: &impl UrlSigner,
    rows_reader: &impl RowsReader,
    now: DateTime<Utc>,
) -> Response<Body>
where
    C: SharingStore
        + MetadataReader
        + DownloadReader
        + catalog::ports::ManifestReader
        + catalog::ports::SplitStatsReader,
{
    let endpoint = crate::routes::find(request_path(req)).map(|m| m.route.endpoint);
    match endpoint {
        Some(Endpoint::Sharing) => sharing(req, catalog, signer, now).await,
        Some(Endpoint::Metadata) => metadata(req, catalog, now).await,
        Some(Endpoint::Data) => data(req, catalog, signer, now).await,
        Some(Endpoint::Rows) => rows(req, catalog, rows_reader, now).await,
        Some(Endpoint::Croissant) => croissant(req, catalog, now).await,
        Some(Endpoint::Catalog) => self::catalog(req, catalog, now).await,
        Some(Endpoint::Download) => download(req, catalog, signer, now).await,
        // The list function's own route, and (the `$default` route) every other path.
        Some(Endpoint::List | Endpoint::Account | Endpoint::Editor) | None => {
            list(req, catalog, now).await
        }
    }
}
