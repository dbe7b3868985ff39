//! The one table of routes (`catalog_http::routes::ROUTES`) is the API that template.yaml deploys
//! and that the two OpenAPI documents describe: the same paths, each served by the function the
//! table names, behind the JWT authorizer exactly where the table says, and every other path
//! left to the list function's `$default` route.

use std::collections::BTreeSet;

use catalog_http::routes::{find, Document, Endpoint, Function, ROUTES};
use catalog_http::sharing::{SharingRoute, PREFIX};
use catalog_tests::repo_root;
use serde_norway::Value;

fn yaml(name: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(name)).expect(name);
    serde_norway::from_str(&text).expect("YAML")
}

/// A path of a document, with each `{parameter}` given a value.
fn concrete(path: &str) -> String {
    path.split('/')
        .map(|s| match s {
            "{proxy+}" => "shares",
            "{share}" => catalog_http::sharing::SHARE,
            "{schema}" => catalog_http::sharing::SCHEMA,
            s if s.starts_with('{') => "city-bikes",
            s => s,
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[test]
fn the_route_table_is_the_templates_routes() {
    let template = yaml("template.yaml");
    let mut deployed = BTreeSet::new();
    let mut by_default = Vec::new();
    let resources = template["Resources"].as_mapping().expect("Resources");
    for (name, resource) in resources {
        let Some(events) = resource["Properties"]["Events"].as_mapping() else {
            continue;
        };
        for event in events.values() {
            if event["Type"].as_str() != Some("HttpApi") {
                continue;
            }
            let properties = &event["Properties"];
            let name = name.as_str().expect("a resource name").to_owned();
            match (properties["Method"].as_str(), properties["Path"].as_str()) {
                (Some(method), Some(path)) => {
                    // Each route takes every method: HEAD, OPTIONS, and a JSON 405 for the rest.
                    assert_eq!(method, "ANY", "{name} {path}");
                    let authorized = !properties["Auth"]["Authorizer"].is_null();
                    deployed.insert((name, path.to_owned(), authorized));
                }
                (None, None) => by_default.push(name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
    let table: BTreeSet<(String, String, bool)> = ROUTES
        .iter()
        .filter(|r| !r.by_default)
        .map(|r| {
            let function = r.endpoint.function().resource().to_owned();
            (function, r.path.to_owned(), r.signed_in)
        })
        .collect();
    assert_eq!(deployed, table);
    assert_eq!(by_default, [Function::List.resource()]);
    // The table's own `$default` routes are the list function's.
    for route in ROUTES.iter().filter(|r| r.by_default) {
        assert_eq!(route.endpoint.function(), Function::List, "{}", route.path);
    }
    // And each route is found for its own paths.
    for route in ROUTES {
        let found = find(&concrete(route.path)).map(|m| m.route);
        assert_eq!(found, Some(route), "{}", route.path);
    }
}

#[test]
fn the_route_table_is_what_the_openapi_documents_describe() {
    let paths = |doc: &Value, base: &str| -> BTreeSet<String> {
        let server = doc["servers"][0]["url"].as_str().expect("a server");
        assert_eq!(server, base);
        doc["paths"]
            .as_mapping()
            .expect("paths")
            .keys()
            .map(|p| format!("{base}{}", p.as_str().expect("a path")))
            .collect()
    };
    let catalog = paths(&yaml("openapi.yaml"), catalog_http::routes::API_BASE);
    let table: BTreeSet<String> = ROUTES
        .iter()
        .filter(|r| r.document == Document::Catalog)
        .map(|r| r.path.to_owned())
        .collect();
    assert_eq!(catalog, table);

    // Delta Sharing's document describes the paths below the one route the table gives it,
    // each a route of the protocol's router for each method the document names.
    let sharing = yaml("openapi-delta-sharing.yaml");
    let described = paths(&sharing, PREFIX);
    assert!(described.len() >= 8, "{described:?}");
    let sharing_routes: Vec<_> = ROUTES
        .iter()
        .filter(|r| r.document == Document::DeltaSharing)
        .collect();
    assert_eq!(sharing_routes.len(), 1);
    assert_eq!(sharing_routes[0].endpoint, Endpoint::Sharing);
    for path in described {
        let concrete = concrete(&path);
        let found = find(&concrete).map(|m| m.route.endpoint);
        assert_eq!(found, Some(Endpoint::Sharing), "{path}");
        let relative = path.strip_prefix(PREFIX).expect("below the prefix");
        let methods = sharing["paths"][relative].as_mapping().expect("methods");
        for method in methods.keys().filter_map(Value::as_str) {
            if method == "parameters" {
                continue;
            }
            let method = method.to_ascii_uppercase();
            assert!(
                SharingRoute::parse(&concrete, &method).is_ok(),
                "{method} {path}"
            );
        }
    }
}
