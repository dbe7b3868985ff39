//! `GET /api/v1/datasets`: a page of the catalog, filtered, searched and sorted.

use chrono::{DateTime, Utc};
use lambda_http::{Body, Request, Response};
use serde::Serialize;

use super::http::{cacheable, freshness, shell, Audience};
use super::request::{accept, all_params, single_param, Endpoint};
use crate::error::ApiError;
use catalog::input::PageRequest;
use catalog::policy::is_keyless;
use catalog::ports::CatalogPager;
use catalog::query::{FacetCounts, ListParams, ListQuery};
use catalog::records::DatasetSummary;

/// A page of datasets ([docs/api.md, List](../../../docs/api.md#list-get-datasets)), and with
/// `facets=true` every facet value of the catalog with its count.
#[derive(Debug, Serialize)]
struct PageResponse<'a> {
    items: &'a [DatasetSummary],
    total: u64,
    page: u64,
    page_size: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    facets: Option<&'a FacetCounts>,
    /// The words of `q` left out as too common to read within a listing's budget.
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    ignored_words: &'a [String],
}

/// `GET /api/v1/datasets`
pub async fn list(req: &Request, pager: &impl CatalogPager, now: DateTime<Utc>) -> Response<Body> {
    shell(req, Audience::Public, list_inner(req, pager, now)).await
}

async fn list_inner(
    req: &Request,
    pager: &impl CatalogPager,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    accept(req, Endpoint::List)?;
    let page = PageRequest::parse(single_param(req, "page")?, single_param(req, "page_size")?)?;
    let tags = all_params(req, "tag");
    let tags: Vec<&str> = tags.iter().map(String::as_str).collect();
    let query = ListQuery::parse(ListParams {
        category: single_param(req, "category")?,
        tags: &tags,
        license: single_param(req, "license")?,
        q: single_param(req, "q")?,
        sort: single_param(req, "sort")?,
        facets: single_param(req, "facets")?,
    })?;
    let mut result = pager.page(&query, page.offset(), page.page_size()).await?;
    for item in &mut result.items {
        item.keyless = is_keyless(item.keyless_until, now);
    }
    tracing::info!(
        page = page.page(),
        page_size = page.page_size(),
        facets = query.facets.len(),
        words = query.words.len(),
        sort = ?query.sort,
        total = result.total,
        returned = result.items.len(),
        facet_values = result.facets.as_ref().map(FacetCounts::len),
        ignored_words = result.ignored_words.len(),
        "listed datasets"
    );
    let (last_modified, max_age) = freshness(result.items.iter().map(|i| i.freshness()), now);
    Ok(cacheable(
        req,
        &PageResponse {
            items: &result.items,
            total: result.total,
            page: page.page(),
            page_size: page.page_size(),
            facets: result.facets.as_ref().filter(|_| query.facet_counts),
            ignored_words: &result.ignored_words,
        },
        last_modified,
        max_age,
    ))
}
