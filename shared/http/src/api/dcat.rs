//! `GET /api/v1/catalog`: the public catalog as DCAT-AP 3 ([`crate::linked::dcat`]), JSON-LD or
//! Turtle by content negotiation, a page of datasets at a time in the list endpoint's default
//! order (publication order, newest first), at the list endpoint's cost.

use chrono::{DateTime, Utc};
use lambda_http::http::{header, HeaderValue, Method};
use lambda_http::{Body, Request, Response};

use super::http::{cacheable_as, freshness, shell, Audience};
use super::request::{accept, links, single_param, Endpoint};
use crate::error::ApiError;
use crate::linked::dcat::{catalog_page, PageInfo};
use catalog::input::PageRequest;
use catalog::policy::is_keyless;
use catalog::ports::CatalogPager;
use catalog::query::ListQuery;

/// Datasets per page unless `page_size` says otherwise (at most the list endpoint's maximum).
pub const DEFAULT_PAGE_SIZE: u64 = PageRequest::MAX_PAGE_SIZE;

/// The two serializations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RdfFormat {
    JsonLd,
    Turtle,
}

impl RdfFormat {
    pub fn content_type(self) -> &'static str {
        match self {
            Self::JsonLd => "application/ld+json",
            Self::Turtle => "text/turtle; charset=utf-8",
        }
    }

    /// `format=jsonld|ttl` wins; else the `Accept` media range with the highest weight among
    /// JSON-LD (`application/ld+json`, `application/json`) and Turtle (`text/turtle`), the
    /// first listed on a tie; JSON-LD when neither is acceptable or nothing was asked.
    pub fn negotiate(format: Option<&str>, accept: Option<&str>) -> Result<Self, ApiError> {
        match format {
            Some("jsonld" | "json-ld") => return Ok(Self::JsonLd),
            Some("ttl" | "turtle") => return Ok(Self::Turtle),
            Some(other) => {
                return Err(ApiError::BadRequest(format!(
                    "format must be jsonld or ttl, not '{}'",
                    catalog::input::echo(other)
                )))
            }
            None => {}
        }
        let mut best: Option<(f32, Self)> = None;
        for range in accept.unwrap_or_default().split(',') {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or_default().trim().to_ascii_lowercase();
            let weight = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f32>().ok())
                .unwrap_or(1.0);
            let format = match media.as_str() {
                "text/turtle" | "application/x-turtle" => Self::Turtle,
                "application/ld+json" | "application/json" => Self::JsonLd,
                _ => continue,
            };
            if weight > 0.0 && best.is_none_or(|(w, _)| weight > w) {
                best = Some((weight, format));
            }
        }
        Ok(best.map_or(Self::JsonLd, |(_, format)| format))
    }
}

/// `GET /api/v1/catalog`
pub async fn catalog(
    req: &Request,
    pager: &impl CatalogPager,
    now: DateTime<Utc>,
) -> Response<Body> {
    let mut response = shell(req, Audience::Public, catalog_inner(req, pager, now)).await;
    // The body depends on Accept: caches must keep one copy per format (a preflight's does not).
    if req.method() != Method::OPTIONS {
        response
            .headers_mut()
            .insert(header::VARY, HeaderValue::from_static("Accept"));
    }
    response
}

async fn catalog_inner(
    req: &Request,
    pager: &impl CatalogPager,
    now: DateTime<Utc>,
) -> Result<Response<Body>, ApiError> {
    accept(req, Endpoint::Catalog)?;
    let default_size = DEFAULT_PAGE_SIZE.to_string();
    let page = PageRequest::parse(
        single_param(req, "page")?,
        Some(single_param(req, "page_size")?.unwrap_or(&default_size)),
    )?;
    let format = RdfFormat::negotiate(
        single_param(req, "format")?,
        req.headers()
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok()),
    )?;
    let query = ListQuery::default();
    let mut result = pager.page(&query, page.offset(), page.page_size()).await?;
    for item in &mut result.items {
        item.keyless = is_keyless(item.keyless_until, now);
    }
    let info = PageInfo {
        page: page.page(),
        page_size: page.page_size(),
        total: result.total,
    };
    let graph = catalog_page(&result.items, info, DEFAULT_PAGE_SIZE, &links(req));
    tracing::info!(
        page = page.page(),
        page_size = page.page_size(),
        total = result.total,
        returned = result.items.len(),
        format = ?format,
        triples = graph.len(),
        "listed the DCAT catalog"
    );
    let body = match format {
        RdfFormat::JsonLd => graph.to_json_ld().to_string(),
        RdfFormat::Turtle => graph.to_turtle(),
    };
    let (last_modified, max_age) = freshness(result.items.iter().map(|i| i.freshness()), now);
    Ok(cacheable_as(
        req,
        body,
        format.content_type(),
        last_modified,
        max_age,
    ))
}

#[cfg(test)]
mod tests {
    use super::RdfFormat::{self, JsonLd, Turtle};

    #[test]
    fn the_format_follows_the_parameter_then_the_weights_of_accept() {
        let n = |format, accept| RdfFormat::negotiate(format, accept).unwrap();
        assert_eq!(n(None, None), JsonLd);
        assert_eq!(n(None, Some("text/turtle")), Turtle);
        assert_eq!(
            n(None, Some("application/ld+json;q=0.5, text/turtle;q=0.9")),
            Turtle
        );
        assert_eq!(n(None, Some("text/turtle;q=0, application/json")), JsonLd);
        assert_eq!(n(None, Some("application/rdf+xml")), JsonLd);
        assert_eq!(n(None, Some("*/*")), JsonLd);
        assert_eq!(n(Some("ttl"), Some("application/ld+json")), Turtle);
        assert_eq!(n(Some("jsonld"), Some("text/turtle")), JsonLd);
        assert!(RdfFormat::negotiate(Some("xml"), None).is_err());
    }
}
