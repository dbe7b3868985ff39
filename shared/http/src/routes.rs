//! The API's routes, in one table ([`ROUTES`]): the path of each, the endpoint that answers it,
//! the function that serves it, whether the HTTP API's JWT authorizer guards it, and the API
//! document that describes it. Read from it: the catalog functions' router
//! ([`crate::api::Route::parse`]), the dispatch the local server and the tests use
//! ([`crate::api::dispatch`], [`is_signed_in`]), and the test that holds the table against
//! template.yaml and both OpenAPI documents (`tests/tests/api/routes.rs`).

/// Who answers a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    List,
    Metadata,
    Data,
    Rows,
    /// The public catalog as DCAT.
    Catalog,
    /// The metadata as Croissant JSON-LD.
    Croissant,
    /// The data endpoint's answer as a redirect.
    Download,
    /// Every Delta Sharing route, below [`crate::sharing::PREFIX`].
    Sharing,
    /// An account's keys and access requests, and the operators' decisions.
    Account,
    /// An organisation's datasets, for its members and editors (the editor function).
    Editor,
}

impl Endpoint {
    /// The function that serves it.
    pub const fn function(self) -> Function {
        match self {
            Self::List | Self::Catalog => Function::List,
            Self::Metadata | Self::Croissant => Function::Metadata,
            Self::Data | Self::Download => Function::Data,
            Self::Rows => Function::Rows,
            Self::Sharing => Function::Sharing,
            Self::Account => Function::Accounts,
            Self::Editor => Function::Editor,
        }
    }
}

/// A function of the stack that answers HTTP requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Function {
    List,
    Metadata,
    Data,
    Rows,
    Sharing,
    Accounts,
    Editor,
}

impl Function {
    /// Its resource in template.yaml.
    pub const fn resource(self) -> &'static str {
        match self {
            Self::List => "CatalogListFunction",
            Self::Metadata => "CatalogMetadataFunction",
            Self::Data => "CatalogDataFunction",
            Self::Rows => "CatalogRowsFunction",
            Self::Sharing => "CatalogSharingFunction",
            Self::Accounts => "CatalogKeysFunction",
            Self::Editor => "CatalogEditorFunction",
        }
    }
}

/// The API document that describes a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Document {
    /// openapi.yaml, whose paths are below [`API_BASE`].
    Catalog,
    /// openapi-delta-sharing.yaml, whose paths are below [`crate::sharing::PREFIX`].
    DeltaSharing,
}

/// One route of the HTTP API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RouteEntry {
    /// As template.yaml writes it: `{name}` is one segment, `{proxy+}` one or more.
    pub path: &'static str,
    pub endpoint: Endpoint,
    /// Behind the HTTP API's JWT authorizer.
    pub signed_in: bool,
    /// Reached through the HTTP API's `$default` route, with no route of its own.
    pub by_default: bool,
    pub document: Document,
}

/// The start of every API path.
pub const API_BASE: &str = "/api/v1";

const fn route(path: &'static str, endpoint: Endpoint) -> RouteEntry {
    RouteEntry {
        path,
        endpoint,
        signed_in: matches!(endpoint, Endpoint::Account | Endpoint::Editor),
        by_default: matches!(endpoint, Endpoint::Catalog),
        document: match endpoint {
            Endpoint::Sharing => Document::DeltaSharing,
            _ => Document::Catalog,
        },
    }
}

/// Every route of the HTTP API. Any other path reaches the list function through the
/// `$default` route, which answers a JSON 404.
pub const ROUTES: &[RouteEntry] = &[
    route("/api/v1/datasets", Endpoint::List),
    route("/api/v1/catalog", Endpoint::Catalog),
    route("/api/v1/datasets/{slug}", Endpoint::Metadata),
    route("/api/v1/datasets/{slug}/croissant", Endpoint::Croissant),
    route("/api/v1/datasets/{slug}/data", Endpoint::Data),
    route("/api/v1/datasets/{slug}/download", Endpoint::Download),
    route("/api/v1/datasets/{slug}/rows", Endpoint::Rows),
    route("/api/v1/delta-sharing/{proxy+}", Endpoint::Sharing),
    route("/api/v1/account/keys", Endpoint::Account),
    route("/api/v1/account/keys/{id}", Endpoint::Account),
    route("/api/v1/account/access", Endpoint::Account),
    route("/api/v1/account/access/{slug}", Endpoint::Account),
    route("/api/v1/account/preferences", Endpoint::Account),
    route("/api/v1/operator/access", Endpoint::Account),
    route(
        "/api/v1/operator/access/{slug}/{account}",
        Endpoint::Account,
    ),
    route("/api/v1/account/orgs", Endpoint::Account),
    route("/api/v1/account/invitations", Endpoint::Account),
    route("/api/v1/account/invitations/{org}", Endpoint::Account),
    route("/api/v1/orgs", Endpoint::Account),
    route("/api/v1/orgs/{org}", Endpoint::Account),
    route("/api/v1/orgs/{org}/members/{account}", Endpoint::Account),
    route("/api/v1/orgs/{org}/invitations", Endpoint::Account),
    route("/api/v1/orgs/{org}/invitations/{id}", Endpoint::Account),
    route("/api/v1/orgs/{org}/uploads", Endpoint::Account),
    route("/api/v1/orgs/{org}/uploads/{id}", Endpoint::Account),
    route(
        "/api/v1/orgs/{org}/uploads/{id}/complete",
        Endpoint::Account,
    ),
    route("/api/v1/orgs/{org}/datasets", Endpoint::Editor),
    route("/api/v1/orgs/{org}/datasets/{name}", Endpoint::Editor),
    route(
        "/api/v1/orgs/{org}/datasets/{name}/versions",
        Endpoint::Editor,
    ),
    route("/api/v1/orgs/{org}/datasets/{name}/diff", Endpoint::Editor),
    route(
        "/api/v1/orgs/{org}/datasets/{name}/versions/{n}/activate",
        Endpoint::Editor,
    ),
];

/// A path matched to its route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Matched<'p> {
    pub route: &'static RouteEntry,
    /// The `{name}` segments, in order (`{proxy+}` is not one of them).
    pub params: Vec<&'p str>,
}

impl RouteEntry {
    /// Whether `path` is this route's, with its parameters. A segment's parameter is never
    /// empty; `{proxy+}` takes one segment or more; no route takes a trailing slash.
    pub fn matches<'p>(&self, path: &'p str) -> Option<Vec<&'p str>> {
        let mut wanted = self.path.split('/');
        let mut given = path.split('/');
        let mut params = Vec::new();
        loop {
            match (wanted.next(), given.next()) {
                (None, None) => return Some(params),
                (Some("{proxy+}"), Some(first)) => {
                    let rest: Vec<&str> = std::iter::once(first).chain(given).collect();
                    return rest.iter().all(|s| !s.is_empty()).then_some(params);
                }
                (Some(w), Some(g)) if w.starts_with('{') && w.ends_with('}') && !g.is_empty() => {
                    params.push(g)
                }
                (Some(w), Some(g)) if w == g => {}
                _ => return None,
            }
        }
    }
}

/// The route `path` takes, if any.
pub fn find(path: &str) -> Option<Matched<'_>> {
    ROUTES
        .iter()
        .find_map(|route| route.matches(path).map(|params| Matched { route, params }))
}

/// Whether `path` is one of the routes behind the JWT authorizer.
pub fn is_signed_in(path: &str) -> bool {
    find(path).is_some_and(|m| m.route.signed_in)
}

/// The name a browser saves a download under (the URL's `Content-Disposition`, on the data and
/// download routes and Delta Sharing's), the name `catalog-admin download` gives it too, and
/// Croissant's file id: `<slug>-v<version>.parquet`.
pub fn download_name(slug: &catalog::slug::Slug, version: u64) -> String {
    format!("{slug}-v{version}.parquet")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_path_finds_its_one_route_and_its_parameters() {
        fn found(path: &str) -> Option<(Endpoint, Vec<&str>)> {
            find(path).map(|m| (m.route.endpoint, m.params))
        }
        assert_eq!(found("/api/v1/datasets"), Some((Endpoint::List, vec![])));
        assert_eq!(
            found("/api/v1/datasets/data"),
            Some((Endpoint::Metadata, vec!["data"]))
        );
        assert_eq!(
            found("/api/v1/datasets/x/rows"),
            Some((Endpoint::Rows, vec!["x"]))
        );
        assert_eq!(
            found("/api/v1/operator/access/x/abc"),
            Some((Endpoint::Account, vec!["x", "abc"]))
        );
        assert_eq!(
            found("/api/v1/delta-sharing/shares/s/schemas"),
            Some((Endpoint::Sharing, vec![]))
        );
        for none in [
            "/api/v1/datasets/",
            "/api/v1/datasets//data",
            "/api/v1/delta-sharing",
            "/api/v1/delta-sharing/",
            "/api/v1/delta-sharing/shares/",
            "/prod/api/v1/datasets",
            "/api/v1/account/keys/",
        ] {
            assert_eq!(found(none), None, "{none}");
        }
        // No path is taken by two routes.
        for route in ROUTES {
            let concrete = route
                .path
                .replace("{proxy+}", "a/b")
                .replace(['{', '}'], "");
            let takers: Vec<_> = ROUTES
                .iter()
                .filter(|r| r.matches(&concrete).is_some())
                .collect();
            assert_eq!(takers, [route], "{concrete}");
        }
        assert!(is_signed_in("/api/v1/account/keys/key_1"));
        assert!(!is_signed_in("/api/v1/datasets/x/data"));
    }
}
