//! The request path's Lambda functions never link the write side: their dependency trees (as
//! Cargo resolves them for a build) contain the `catalog` crate and not `catalog-writer`; only
//! the audit function, which writes the download log and counts off the request path, does.
//! Only the rows function and the per-file statistics function (off the request path) link
//! Arrow and Parquet. The library crates are layers the compiler
//! keeps apart: `catalog` (the domain and the ports) links none of the others, no AWS SDK and no
//! HTTP; `catalog-http` links no AWS SDK; each function links only the crates it uses.

use std::process::Command;

/// The packages in `package`'s normal (non-dev) dependency tree.
fn dependency_tree(package: &str) -> Vec<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let out = Command::new(cargo)
        .args(["tree", "--locked", "--offline", "--edges", "normal,build"])
        .args(["--prefix", "none", "--format", "{p}", "--package", package])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run cargo tree");
    assert!(
        out.status.success(),
        "cargo tree -p {package} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

/// Every Lambda function of the stack.
const FUNCTIONS: [&str; 12] = [
    "catalog-list",
    "catalog-metadata",
    "catalog-data",
    "catalog-keys",
    "catalog-signup",
    "catalog-rows",
    "catalog-sharing",
    "catalog-audit",
    "catalog-file-stats",
    "catalog-mailer",
    "catalog-editor",
    "catalog-publish",
];

/// The functions that write through the writer: the audit function (the download counts, off
/// the request path) and the editor function (an organisation's editors' descriptions and
/// rollbacks, each the writer's one activation), and the publishing function (a file uploaded
/// from the site, by the writer's one publish operation). Through it they link the text index.
const WRITERS: [&str; 3] = ["catalog-audit", "catalog-editor", "catalog-publish"];

#[test]
fn the_functions_do_not_link_the_writer() {
    // The writers (the audit and editor functions) are the ones that do.
    for function in FUNCTIONS.iter().filter(|f| !WRITERS.contains(f)) {
        let tree = dependency_tree(function);
        assert!(
            tree.iter().any(|p| p == "catalog"),
            "{function} should depend on the lib crate: {tree:?}"
        );
        assert!(
            !tree.iter().any(|p| p == "catalog-writer"),
            "{function} links catalog-writer"
        );
    }
}

/// No function links the Cognito SDK: the accounts (keys) function asks Cognito's GetUser with
/// one plain HTTPS call (`catalog_aws::cognito`), which keeps it within its size target. Only the
/// operators' CLI uses the SDK.
#[test]
fn no_function_links_the_cognito_sdk() {
    for function in FUNCTIONS {
        assert!(
            !dependency_tree(function)
                .iter()
                .any(|p| p == "aws-sdk-cognitoidentityprovider"),
            "{function} links the Cognito SDK"
        );
    }
    assert!(dependency_tree("catalog-admin")
        .iter()
        .any(|p| p == "aws-sdk-cognitoidentityprovider"));
}

/// No function links a regex engine: logging is set up with a level filter
/// (`catalog::logging::init_logging`), not lambda_http's default `EnvFilter`, which brings
/// regex-automata and regex-syntax (about 180 KB of every function). The exceptions depend on
/// tantivy, which depends on `regex`: the list function, which serves `q` from the text index,
/// and the audit function, through the writer (which keeps the index; the audit function never
/// calls that part).
#[test]
fn no_function_links_a_regex_engine() {
    for function in FUNCTIONS
        .iter()
        .filter(|f| **f != "catalog-list" && !WRITERS.contains(f))
    {
        let tree = dependency_tree(function);
        let linked: Vec<&String> = tree
            .iter()
            .filter(|p| p.as_str() == "regex-automata" || p.as_str() == "matchers")
            .collect();
        assert!(linked.is_empty(), "{function} links {linked:?}");
    }
}

/// Arrow and Parquet stay out of every function but the rows function, whose reader needs them,
/// the per-file statistics function, which counts a staged file's values (`catalog-stats`), and
/// the publishing function, which runs what `catalog-admin publish` runs
/// (`catalog-publish-core`: statistics, and CSV converted by arrow-csv).
#[test]
fn only_the_rows_and_file_stats_functions_link_arrow_and_parquet() {
    let heavy = |p: &String| {
        p == "parquet" || p.starts_with("arrow-") || p == "catalog-preview" || p == "catalog-stats"
    };
    for function in FUNCTIONS.iter().filter(|f| {
        !matches!(
            **f,
            "catalog-rows" | "catalog-file-stats" | "catalog-publish"
        )
    }) {
        let tree = dependency_tree(function);
        assert!(
            !tree.iter().any(heavy),
            "{function} links {:?}",
            tree.iter().filter(|p| heavy(p)).collect::<Vec<_>>()
        );
    }
    let rows = dependency_tree("catalog-rows");
    assert!(rows.iter().any(|p| p == "parquet"), "{rows:?}");
    assert!(rows.iter().any(|p| p == "catalog-preview"), "{rows:?}");
    assert!(!rows.iter().any(|p| p == "catalog-stats"), "{rows:?}");
    let stats = dependency_tree("catalog-file-stats");
    assert!(stats.iter().any(|p| p == "catalog-stats"), "{stats:?}");
    let publish = dependency_tree("catalog-publish");
    for linked in ["catalog-publish-core", "catalog-stats", "arrow-csv"] {
        assert!(publish.iter().any(|p| p == linked), "{linked}: {publish:?}");
    }
}

/// Only the list function, which searches it, and the writer's user among the functions (the
/// audit function) link the text index (tantivy).
#[test]
fn only_the_list_function_links_the_text_index() {
    for function in FUNCTIONS {
        let linked = dependency_tree(function).iter().any(|p| p == "tantivy");
        let expected = function == "catalog-list" || WRITERS.contains(&function);
        assert_eq!(linked, expected, "{function}");
    }
}

#[test]
fn the_operators_cli_and_the_audit_function_do_link_the_writer() {
    // The same query finds the writer where it is used, so the check above can fail.
    for user in [
        "catalog-admin",
        "catalog-audit",
        "catalog-editor",
        "catalog-publish",
    ] {
        assert!(
            dependency_tree(user).iter().any(|p| p == "catalog-writer"),
            "{user}"
        );
    }
    // The audit function does not link Cognito's SDK: it writes DynamoDB alone.
    let audit = dependency_tree("catalog-audit");
    assert!(!audit.iter().any(|p| p == "aws-sdk-cognitoidentityprovider"));
}

/// The library crates' layers (docs/architecture.md): the domain knows no adapter, no HTTP and
/// no search engine; the HTTP side knows no AWS SDK and no adapter; the adapters know no HTTP.
#[test]
fn the_library_crates_link_only_the_layers_below_them() {
    let aws_sdk = |p: &String| p.starts_with("aws-sdk-") || p == "aws-config";
    let catalog = dependency_tree("catalog");
    for outside in [
        "catalog-aws",
        "catalog-http",
        "catalog-search",
        "lambda_http",
        "tantivy",
    ] {
        assert!(
            !catalog.iter().any(|p| p == outside),
            "catalog links {outside}"
        );
    }
    assert!(!catalog.iter().any(aws_sdk), "catalog links the AWS SDK");
    let http = dependency_tree("catalog-http");
    assert!(http.iter().any(|p| p == "lambda_http"), "{http:?}");
    assert!(
        !http.iter().any(aws_sdk),
        "catalog-http links {:?}",
        http.iter().filter(|p| aws_sdk(p)).collect::<Vec<_>>()
    );
    for adapter in ["catalog-aws", "catalog-search", "tantivy"] {
        assert!(
            !http.iter().any(|p| p == adapter),
            "catalog-http links {adapter}"
        );
    }
    let aws = dependency_tree("catalog-aws");
    assert!(aws.iter().any(|p| p == "aws-sdk-dynamodb"), "{aws:?}");
    for above in ["catalog-http", "catalog-search", "lambda_http", "tantivy"] {
        assert!(!aws.iter().any(|p| p == above), "catalog-aws links {above}");
    }
    let search = dependency_tree("catalog-search");
    assert!(!search
        .iter()
        .any(|p| p == "catalog-http" || p == "lambda_http"));
}

/// Each function links the crates it uses and no other: the HTTP side only where requests are
/// answered (not the sign-up trigger, the audit, the file-stats or the mailer function), the listings' crate only in the
/// list function.
#[test]
fn each_function_links_only_the_crates_it_uses() {
    for function in FUNCTIONS {
        let tree = dependency_tree(function);
        let links = |c: &str| tree.iter().any(|p| p == c);
        let http = !matches!(
            function,
            "catalog-signup"
                | "catalog-audit"
                | "catalog-file-stats"
                | "catalog-mailer"
                | "catalog-publish"
        );
        assert_eq!(links("catalog-http"), http, "{function} and catalog-http");
        assert_eq!(
            links("catalog-search"),
            function == "catalog-list" || WRITERS.contains(&function),
            "{function} and catalog-search"
        );
        assert!(
            !links("catalog-memory"),
            "{function} links the in-memory adapters"
        );
    }
}

/// Only the mailer function, off the request path, links the SES SDK (catalog-aws's `ses`
/// feature): the other functions never send email.
#[test]
fn only_the_mailer_links_ses() {
    for function in FUNCTIONS {
        assert_eq!(
            dependency_tree(function)
                .iter()
                .any(|p| p == "aws-sdk-sesv2"),
            function == "catalog-mailer",
            "{function} and aws-sdk-sesv2"
        );
    }
}

/// The functions keep their small hand-rolled clients (the Cognito GetUser call, EMF on stdout,
/// the RDF writer) and the SDK's own HTTP client: none links reqwest, the HTTP client of the
/// operators' CLI, dev/, the tests and the bench.
#[test]
fn no_function_links_reqwest() {
    for function in FUNCTIONS {
        assert!(
            !dependency_tree(function).iter().any(|p| p == "reqwest"),
            "{function} links reqwest"
        );
    }
    // The same query finds it where it is used, so the check above can fail.
    assert!(dependency_tree("catalog-admin")
        .iter()
        .any(|p| p == "reqwest"));
}
