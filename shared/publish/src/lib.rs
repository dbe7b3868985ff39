//! Publishing a version, as `catalog-admin publish` and the publishing function
//! (`catalog-publish`, a file uploaded from the site) both run it: [`publish`] (statistics,
//! the upload to the version's immutable key, the writer's one publish operation; many files,
//! in place from the bucket) and [`ingest`] (CSV, TSV and JSON Lines converted to Parquet
//! first). Moved out of the CLI unchanged (issue 40), so that both link the same code;
//! `catalog_admin::{publish, ingest}` re-export these modules.

pub mod ingest;
pub mod publish;
pub mod site;
