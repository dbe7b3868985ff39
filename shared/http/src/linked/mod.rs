//! The catalog's metadata in the open vocabularies other tools read: [`croissant`] (MLCommons
//! Croissant JSON-LD, one dataset) and [`dcat`] (a DCAT-AP 3 catalog, in JSON-LD or Turtle,
//! from the triples of [`rdf`]). The web site writes schema.org's `Dataset` and `DataCatalog`
//! itself (`web/linked.js`).
//!
//! These documents name things by absolute URL, so they need to know where the API and the web
//! site are: [`Links`], read from each request (`api::request::links`).

pub mod croissant;
pub mod croissant_files;
pub mod dcat;
pub mod rdf;

use catalog::slug::Slug;

/// Where this deployment's API and web site are, as a request reached them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Links {
    /// `{scheme}://{host}/api/v1`: the base URL of every API route.
    pub api_base: String,
    /// `{scheme}://{host}` of the web site, when the request came through it (the site's
    /// CloudFront distribution, or the local server, which serve the API under the same origin).
    pub site: Option<String>,
}

impl Links {
    /// The metadata route of a dataset.
    pub fn dataset(&self, slug: &Slug) -> String {
        format!("{}/datasets/{slug}", self.api_base)
    }

    /// The dataset's page on the web site, else its metadata route.
    pub fn landing_page(&self, slug: &Slug) -> String {
        match &self.site {
            Some(site) => format!("{site}/dataset.html?slug={slug}"),
            None => self.dataset(slug),
        }
    }

    /// The download route of one version: a redirect to its presigned URL.
    pub fn download(&self, slug: &Slug, version: u64) -> String {
        format!(
            "{}/datasets/{slug}/download?version={version}",
            self.api_base
        )
    }
}

/// A dataset's license as an IRI: a URL as given, an SPDX identifier (`CC-BY-4.0`) as its
/// page on spdx.org; `None` for free text, which the documents then give as text.
pub fn license_iri(license: &str) -> Option<String> {
    let license = license.trim();
    if license.starts_with("https://") || license.starts_with("http://") {
        return (!license.contains(char::is_whitespace)).then(|| license.to_owned());
    }
    let spdx = !license.is_empty()
        && license.len() <= 64
        && license.starts_with(|c: char| c.is_ascii_alphanumeric())
        && license
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+'));
    spdx.then(|| format!("https://spdx.org/licenses/{license}"))
}

/// `source` as a URL, when it is one (no whitespace, http or https).
pub fn source_url(source: &str) -> Option<&str> {
    let source = source.trim();
    let is_url = (source.starts_with("https://") || source.starts_with("http://"))
        && !source.contains(char::is_whitespace)
        && url::Url::parse(source).is_ok();
    is_url.then_some(source)
}

/// Percent-encodes everything but RFC 3986's unreserved characters, for a name inside an IRI.
pub fn escape_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn licenses_become_iris_when_they_name_one() {
        assert_eq!(
            license_iri("CC-BY-4.0").as_deref(),
            Some("https://spdx.org/licenses/CC-BY-4.0")
        );
        assert_eq!(
            license_iri("https://example.org/terms").as_deref(),
            Some("https://example.org/terms")
        );
        assert_eq!(license_iri("See the terms of use"), None);
        assert_eq!(license_iri(""), None);
        assert_eq!(license_iri("-x"), None);
    }

    #[test]
    fn sources_are_urls_only_when_they_parse() {
        assert_eq!(
            source_url(" https://a.example/x "),
            Some("https://a.example/x")
        );
        assert_eq!(source_url("Regional Ornithology Society"), None);
        assert_eq!(source_url("https://a b"), None);
    }

    #[test]
    fn segments_keep_only_unreserved_characters() {
        assert_eq!(
            escape_segment("name with space/é"),
            "name%20with%20space%2F%C3%A9"
        );
        assert_eq!(escape_segment("a-b.c_d~e"), "a-b.c_d~e");
    }

    #[test]
    fn pages_link_to_the_site_when_it_is_known() {
        let slug = Slug::parse("city-bikes").unwrap();
        let mut links = Links {
            api_base: "https://api.example/api/v1".to_owned(),
            site: None,
        };
        assert_eq!(
            links.landing_page(&slug),
            "https://api.example/api/v1/datasets/city-bikes"
        );
        links.site = Some("https://site.example".to_owned());
        assert_eq!(
            links.landing_page(&slug),
            "https://site.example/dataset.html?slug=city-bikes"
        );
        assert_eq!(
            links.download(&slug, 3),
            "https://api.example/api/v1/datasets/city-bikes/download?version=3"
        );
    }
}
