use super::*;

fn route(path: &str, method: &str) -> Result<SharingRoute, String> {
    SharingRoute::parse(&format!("{PREFIX}{path}"), method)
        .map_err(|e| format!("{} {}", e.status().as_u16(), error_code(&e)))
}

#[test]
fn every_protocol_route_parses_with_its_method() {
    use SharingRoute::*;
    let t = |s: &str| s.to_owned();
    for (path, method, expected) in [
        ("/shares", "GET", ListShares),
        ("/shares/catalog", "GET", GetShare),
        ("/shares/CATALOG/schemas", "GET", ListSchemas),
        ("/shares/catalog/all-tables", "GET", ListTables),
        ("/shares/catalog/schemas/datasets/tables", "GET", ListTables),
        (
            "/shares/catalog/schemas/datasets/tables/City-Bikes",
            "HEAD",
            TableVersion(t("city-bikes")),
        ),
        (
            "/shares/catalog/schemas/datasets/tables/city-bikes/version",
            "GET",
            TableVersion(t("city-bikes")),
        ),
        (
            "/shares/catalog/schemas/Datasets/tables/city-bikes/metadata",
            "GET",
            TableMetadata(t("city-bikes")),
        ),
        (
            "/shares/catalog/schemas/datasets/tables/city-bikes/query",
            "POST",
            Query(t("city-bikes")),
        ),
        (
            "/shares/catalog/schemas/datasets/tables/city-bikes/changes",
            "GET",
            Changes(t("city-bikes")),
        ),
    ] {
        assert_eq!(route(path, method), Ok(expected), "{method} {path}");
    }
}

#[test]
fn unknown_shares_schemas_routes_and_methods_are_the_protocols_errors() {
    for (path, method, expected) in [
        ("/shares/other", "GET", "404 RESOURCE_DOES_NOT_EXIST"),
        (
            "/shares/other/all-tables",
            "GET",
            "404 RESOURCE_DOES_NOT_EXIST",
        ),
        (
            "/shares/catalog/schemas/other/tables",
            "GET",
            "404 RESOURCE_DOES_NOT_EXIST",
        ),
        (
            "/shares/catalog/schemas/datasets/tables/t/nothing",
            "GET",
            "404 RESOURCE_DOES_NOT_EXIST",
        ),
        ("/nothing", "GET", "404 RESOURCE_DOES_NOT_EXIST"),
        (
            "/shares/catalog/schemas/datasets/tables/t/query",
            "GET",
            "405 METHOD_NOT_ALLOWED",
        ),
        (
            "/shares/catalog/schemas/datasets/tables/t/metadata",
            "POST",
            "405 METHOD_NOT_ALLOWED",
        ),
        ("/shares", "DELETE", "405 METHOD_NOT_ALLOWED"),
    ] {
        assert_eq!(
            route(path, method),
            Err(expected.to_owned()),
            "{method} {path}"
        );
    }
}

#[test]
fn a_profile_names_the_endpoint_the_key_and_its_expiry() {
    let at = DateTime::parse_from_rfc3339("2027-01-02T03:04:05Z")
        .unwrap()
        .to_utc();
    assert_eq!(
        profile("https://example.org/api/v1/", "dcat_x", Some(at)),
        serde_json::json!({
            "shareCredentialsVersion": 1,
            "endpoint": "https://example.org/api/v1/delta-sharing",
            "bearerToken": "dcat_x",
            "expirationTime": "2027-01-02T03:04:05Z",
        })
    );
    assert!(profile("http://h/api/v1", "k", None)
        .get("expirationTime")
        .is_none());
}

#[test]
fn list_windows_cap_max_results_and_read_only_their_own_tokens() {
    assert_eq!(
        ListWindow::parse(None, None).unwrap(),
        ListWindow {
            offset: 0,
            limit: 100
        }
    );
    assert_eq!(ListWindow::parse(Some("0"), None).unwrap().limit, 0);
    assert_eq!(ListWindow::parse(Some("5000"), None).unwrap().limit, 100);
    let token = encode_token(240);
    assert_eq!(
        ListWindow::parse(Some("7"), Some(&token)).unwrap(),
        ListWindow {
            offset: 240,
            limit: 7
        }
    );
    for bad in ["-1", "x", "1.5", "", "2147483648"] {
        let e = ListWindow::parse(Some(bad), None).unwrap_err();
        assert_eq!(error_code(&e), "INVALID_PARAMETER_VALUE", "{bad:?}");
    }
    for bad in ["240", "p", "p-1", "px", "p1234567890123"] {
        let e = ListWindow::parse(None, Some(bad)).unwrap_err();
        assert_eq!(error_code(&e), "INVALID_PARAMETER_VALUE", "{bad:?}");
    }
}

#[test]
fn query_bodies_read_the_version_ignore_hints_and_refuse_what_is_unsupported() {
    assert_eq!(QueryRequest::parse(b"").unwrap(), QueryRequest::default());
    assert_eq!(QueryRequest::parse(b"{}").unwrap(), QueryRequest::default());
    assert_eq!(
        QueryRequest::parse(
            br#"{"version": 3, "limitHint": 10, "predicateHints": ["a > 1"], "maxFiles": 5}"#
        )
        .unwrap(),
        QueryRequest { version: Some(3) }
    );
    let code = |body: &str| error_code(&QueryRequest::parse(body.as_bytes()).unwrap_err());
    assert_eq!(code("{"), "MALFORMED_REQUEST");
    assert_eq!(code("[]"), "MALFORMED_REQUEST");
    assert_eq!(code(r#"{"limitHint": "ten"}"#), "MALFORMED_REQUEST");
    assert_eq!(code(r#"{"limitHint": 2147483648}"#), "MALFORMED_REQUEST");
    assert_eq!(
        code(r#"{"jsonPredicateHints": {"op": "and"}}"#),
        "MALFORMED_REQUEST"
    );
    assert_eq!(code(r#"{"version": -1}"#), "INVALID_PARAMETER_VALUE");
    assert_eq!(code(r#"{"version": "2"}"#), "INVALID_PARAMETER_VALUE");
    assert_eq!(
        code(r#"{"timestamp": "2026-01-01T00:00:00Z"}"#),
        "UNSUPPORTED_OPERATION"
    );
    assert_eq!(code(r#"{"startingVersion": 1}"#), "UNSUPPORTED_OPERATION");
}

#[test]
fn query_hints_read_paging_and_tokens_and_refuse_a_token_of_other_hints() {
    use hints::{Hints, PageToken, MAX_PAGE_FILES};
    let parse = |body: &str| Hints::parse(body.as_bytes());
    let none = parse("{}").unwrap();
    assert!(none.predicates.is_empty() && none.paging().is_none());
    let h = parse(r#"{"predicateHints": ["a > 1"], "jsonPredicateHints": "{}", "limitHint": 5}"#)
        .unwrap();
    assert_eq!(h.predicates.len(), 2);
    assert_eq!(h.limit, Some(5));
    assert!(h.paging().is_none());
    // maxFiles: 1 to 2147483647, capped
    assert_eq!(
        parse(r#"{"maxFiles": 7}"#)
            .unwrap()
            .paging()
            .unwrap()
            .max_files,
        7
    );
    assert_eq!(
        parse(r#"{"maxFiles": 2147483647}"#).unwrap().max_files,
        Some(MAX_PAGE_FILES)
    );
    for bad in ["0", "-1", "1.5", "\"3\"", "2147483648"] {
        let e = parse(&format!(r#"{{"maxFiles": {bad}}}"#)).unwrap_err();
        assert_eq!(error_code(&e), "INVALID_PARAMETER_VALUE", "{bad}");
    }
    // a token round-trips, pages from its position, and is checked against its hints and version
    let from = files::Position {
        file: 1234,
        rows: 56,
    };
    let token = PageToken::encode(3, from, h.digest);
    let body = format!(
        r#"{{"predicateHints": ["a > 1"], "jsonPredicateHints": "{{}}", "limitHint": 5, "pageToken": "{token}"}}"#
    );
    let paged = parse(&body).unwrap();
    assert_eq!(paged.paging().unwrap().from, from);
    assert_eq!(paged.paging().unwrap().max_files, MAX_PAGE_FILES);
    assert!(paged.check_token(3).is_ok());
    assert_eq!(
        error_code(&paged.check_token(4).unwrap_err()),
        "INVALID_PARAMETER_VALUE"
    );
    let other = parse(&format!(r#"{{"limitHint": 6, "pageToken": "{token}"}}"#)).unwrap();
    assert_eq!(
        error_code(&other.check_token(3).unwrap_err()),
        "INVALID_PARAMETER_VALUE"
    );
    assert!(parse(r#"{"limitHint": 6}"#).unwrap().check_token(3).is_ok());
    for bad in [
        "p1",
        "f1.2",
        "f1.2.3.xyz",
        "f1.2.3.0123456789abcdef.9",
        "f99999999999999999999.0.0.0123456789abcdef",
    ] {
        let e = parse(&format!(r#"{{"pageToken": "{bad}"}}"#)).unwrap_err();
        assert_eq!(error_code(&e), "INVALID_PARAMETER_VALUE", "{bad}");
    }
    assert!(parse(r#"{"pageToken": ""}"#).unwrap().token.is_none());
    assert_eq!(
        error_code(&parse(r#"{"pageToken": 5}"#).unwrap_err()),
        "INVALID_PARAMETER_VALUE"
    );
}
