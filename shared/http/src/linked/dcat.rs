//! The public catalog as DCAT-AP 3 (`GET /catalog`, JSON-LD or Turtle), a page at a time with
//! Hydra's paging terms, as CKAN's harvester (ckanext-dcat) and data.europa.eu read it.
//!
//! - The catalog: `{base_url}/catalog`, with a title, a description and a publisher.
//! - Each dataset: its metadata route as IRI; title, description, identifier (the UUID),
//!   keywords (category and tags), last modification, access rights (the EU vocabulary's
//!   `PUBLIC` while keyless, `RESTRICTED` otherwise), its page on the web site when known. (A
//!   list entry holds no `source`: the Croissant document and the metadata name it.)
//! - One distribution per dataset: the active version's Parquet file, with its size, media type
//!   (IANA's `application/vnd.apache.parquet`), format (the EU file-type `PARQUET`) and license;
//!   `accessURL` is the data endpoint, `downloadURL` the download route (a redirect to the file,
//!   behind the same rule). A version of many files (its list entry's `files`) has no
//!   `downloadURL` (the download route serves one file): its `accessURL` is the data endpoint's
//!   listing of the files, and each split is a distribution of its own (`#split-<name>`, the
//!   listing with `?split=<name>`, the split's bytes).
//! - The page: a `hydra:PartialCollectionView` with `totalItems`, `first`, `last`, and
//!   `next`/`previous` where they exist.
//!
//! Every object a DCAT-AP shape constrains by class is typed in the graph itself (a license is
//! a `dct:LicenseDocument`, a URL an `rdfs:Resource`), so the shapes validate without inference.

use super::rdf::{Graph, Term, RDF_TYPE};
use super::{license_iri, Links};
use catalog::records::DatasetSummary;

const DCAT: &str = "http://www.w3.org/ns/dcat#";
const DCT: &str = "http://purl.org/dc/terms/";
const FOAF: &str = "http://xmlns.com/foaf/0.1/";
const HYDRA: &str = "http://www.w3.org/ns/hydra/core#";
const RDFS: &str = "http://www.w3.org/2000/01/rdf-schema#";
const XSD_INTEGER: &str = "http://www.w3.org/2001/XMLSchema#integer";
const XSD_DATE_TIME: &str = "http://www.w3.org/2001/XMLSchema#dateTime";
const XSD_NON_NEGATIVE: &str = "http://www.w3.org/2001/XMLSchema#nonNegativeInteger";
const ACCESS_RIGHT: &str = "http://publications.europa.eu/resource/authority/access-right/";
/// IANA's registration of Parquet's media type.
pub const PARQUET_MEDIA_TYPE: &str =
    "https://www.iana.org/assignments/media-types/application/vnd.apache.parquet";
/// The EU's file-type authority table's Parquet.
pub const PARQUET_FILE_TYPE: &str =
    "http://publications.europa.eu/resource/authority/file-type/PARQUET";

/// The catalog's title and description.
pub const TITLE: &str = "Dataset catalog";
pub const DESCRIPTION: &str = "The public metadata of every dataset this catalog lists: descriptions, licenses, sizes and where to read each Parquet file (a read key is needed outside keyless windows).";
pub const PUBLISHER: &str = "The catalog's operators";

/// Where one page is in the whole list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageInfo {
    pub page: u64,
    pub page_size: u64,
    pub total: u64,
}

impl PageInfo {
    /// The number of the last page (1 for an empty catalog).
    pub fn last(&self) -> u64 {
        self.total.div_ceil(self.page_size.max(1)).max(1)
    }
}

/// The catalog's IRI.
pub fn catalog_iri(links: &Links) -> String {
    format!("{}/catalog", links.api_base)
}

/// The URL of page `page` (`page_size` only when it is not the default).
pub fn page_url(links: &Links, page: u64, page_size: u64, default_size: u64) -> String {
    match page_size == default_size {
        true => format!("{}?page={page}", catalog_iri(links)),
        false => format!("{}?page={page}&page_size={page_size}", catalog_iri(links)),
    }
}

/// The graph of one page of the catalog: the catalog, `items` (each with `keyless` set as of
/// now), and the page's place in the whole.
pub fn catalog_page(
    items: &[DatasetSummary],
    info: PageInfo,
    default_size: u64,
    links: &Links,
) -> Graph {
    let mut g = Graph::default();
    let catalog = Term::iri(catalog_iri(links));
    g.add(&catalog, RDF_TYPE, Term::iri(format!("{DCAT}Catalog")));
    g.add(&catalog, &format!("{DCT}title"), Term::text(TITLE));
    g.add(
        &catalog,
        &format!("{DCT}description"),
        Term::text(DESCRIPTION),
    );
    let publisher = Term::iri(format!("{}#publisher", catalog_iri(links)));
    g.add(&catalog, &format!("{DCT}publisher"), publisher.clone());
    if let Some(site) = &links.site {
        let home = Term::iri(format!("{site}/"));
        g.add(&catalog, &format!("{FOAF}homepage"), home.clone());
        g.add(&home, RDF_TYPE, Term::iri(format!("{FOAF}Document")));
    }
    g.add(&publisher, RDF_TYPE, Term::iri(format!("{FOAF}Agent")));
    g.add(&publisher, &format!("{FOAF}name"), Term::text(PUBLISHER));
    for (i, item) in items.iter().enumerate() {
        let dataset = Term::iri(links.dataset(&item.slug));
        g.add(&catalog, &format!("{DCAT}dataset"), dataset.clone());
        describe(&mut g, &dataset, item, i, links);
    }
    let view = Term::iri(page_url(links, info.page, info.page_size, default_size));
    let page = |n: u64| Term::iri(page_url(links, n, info.page_size, default_size));
    g.add(
        &view,
        RDF_TYPE,
        Term::iri(format!("{HYDRA}PartialCollectionView")),
    );
    g.add(
        &view,
        &format!("{HYDRA}totalItems"),
        Term::typed(info.total.to_string(), XSD_INTEGER),
    );
    g.add(&view, &format!("{HYDRA}first"), page(1));
    g.add(&view, &format!("{HYDRA}last"), page(info.last()));
    if info.page < info.last() {
        g.add(&view, &format!("{HYDRA}next"), page(info.page + 1));
    }
    if info.page > 1 {
        g.add(
            &view,
            &format!("{HYDRA}previous"),
            page((info.page - 1).min(info.last())),
        );
    }
    g
}

fn describe(g: &mut Graph, dataset: &Term, item: &DatasetSummary, i: usize, links: &Links) {
    let card = &item.card;
    g.add(dataset, RDF_TYPE, Term::iri(format!("{DCAT}Dataset")));
    g.add(dataset, &format!("{DCT}title"), Term::text(&card.name));
    let description = card
        .description
        .clone()
        .unwrap_or_else(|| card.name.clone());
    g.add(
        dataset,
        &format!("{DCT}description"),
        Term::text(description),
    );
    g.add(
        dataset,
        &format!("{DCT}identifier"),
        Term::string(item.id.to_string()),
    );
    for keyword in std::iter::once(&card.category).chain(&card.tags) {
        g.add(dataset, &format!("{DCAT}keyword"), Term::text(keyword));
    }
    g.add(
        dataset,
        &format!("{DCT}modified"),
        Term::typed(catalog::time::format_time(&item.updated_at), XSD_DATE_TIME),
    );
    let rights = Term::iri(format!(
        "{ACCESS_RIGHT}{}",
        if item.keyless { "PUBLIC" } else { "RESTRICTED" }
    ));
    g.add(dataset, &format!("{DCT}accessRights"), rights.clone());
    g.add(
        &rights,
        RDF_TYPE,
        Term::iri(format!("{DCT}RightsStatement")),
    );
    if links.site.is_some() {
        let page = Term::iri(links.landing_page(&item.slug));
        g.add(dataset, &format!("{DCAT}landingPage"), page.clone());
        g.add(&page, RDF_TYPE, Term::iri(format!("{FOAF}Document")));
    }
    let base = links.dataset(&item.slug);
    let data = format!("{base}/data");
    match item.files.as_deref() {
        // One file: the data endpoint, and the download route's redirect to the file.
        None => {
            let whole = Distribution {
                iri: format!("{base}#parquet"),
                title: format!("{} (Parquet)", card.name),
                access: data.clone(),
                download: Some(format!("{base}/download")),
                size: item.size,
            };
            whole.add(g, dataset, item, i);
        }
        // Many files: the data endpoint's listing of them (the download route serves one file),
        // for the whole version and for each split.
        Some(files) => {
            let whole = Distribution {
                iri: format!("{base}#parquet"),
                title: format!("{} (Parquet, {} files)", card.name, files.count),
                access: data.clone(),
                download: None,
                size: item.size,
            };
            whole.add(g, dataset, item, i);
            for split in &files.splits {
                let part = Distribution {
                    iri: format!("{base}#split-{}", split.name),
                    title: format!(
                        "{}, split {} (Parquet, {} files)",
                        card.name, split.name, split.files
                    ),
                    access: format!("{data}?split={}", split.name),
                    download: None,
                    size: split.size,
                };
                part.add(g, dataset, item, i);
            }
        }
    }
}

/// A `dcat:Distribution` of a dataset: the whole version, or one split of it.
struct Distribution {
    iri: String,
    title: String,
    access: String,
    download: Option<String>,
    size: u64,
}

impl Distribution {
    fn add(self, g: &mut Graph, dataset: &Term, item: &DatasetSummary, i: usize) {
        let card = &item.card;
        let distribution = Term::iri(self.iri);
        g.add(
            dataset,
            &format!("{DCAT}distribution"),
            distribution.clone(),
        );
        g.add(
            &distribution,
            RDF_TYPE,
            Term::iri(format!("{DCAT}Distribution")),
        );
        g.add(
            &distribution,
            &format!("{DCT}title"),
            Term::text(self.title),
        );
        let access = Term::iri(self.access);
        g.add(&distribution, &format!("{DCAT}accessURL"), access.clone());
        g.add(&access, RDF_TYPE, Term::iri(format!("{RDFS}Resource")));
        if let Some(download) = self.download {
            let download = Term::iri(download);
            g.add(
                &distribution,
                &format!("{DCAT}downloadURL"),
                download.clone(),
            );
            g.add(&download, RDF_TYPE, Term::iri(format!("{RDFS}Resource")));
        }
        let media = Term::iri(PARQUET_MEDIA_TYPE);
        g.add(&distribution, &format!("{DCAT}mediaType"), media.clone());
        g.add(&media, RDF_TYPE, Term::iri(format!("{DCT}MediaType")));
        let format = Term::iri(PARQUET_FILE_TYPE);
        g.add(&distribution, &format!("{DCT}format"), format.clone());
        g.add(
            &format,
            RDF_TYPE,
            Term::iri(format!("{DCT}MediaTypeOrExtent")),
        );
        g.add(
            &distribution,
            &format!("{DCAT}byteSize"),
            Term::typed(self.size.to_string(), XSD_NON_NEGATIVE),
        );
        let license = match license_iri(&card.license) {
            Some(iri) => Term::iri(iri),
            None => Term::Blank(format!("license{i}")),
        };
        g.add(&distribution, &format!("{DCT}license"), license.clone());
        g.add(
            &license,
            RDF_TYPE,
            Term::iri(format!("{DCT}LicenseDocument")),
        );
        g.add(
            &license,
            &format!("{RDFS}label"),
            Term::string(&card.license),
        );
    }
}
