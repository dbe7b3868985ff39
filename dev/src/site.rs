//! The web site (`web/`), served by the local API beside `/api/v1` on one origin, as CloudFront
//! serves it when deployed: the same files, the same security headers, and `config.json` made
//! from the environment (the deployed one is written at deploy from the stack's outputs).

use std::path::{Path, PathBuf};

use hyper::body::Bytes;
use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

/// The files of `web/` the site serves, and their types. Nothing else is served.
const FILES: &[(&str, &str)] = &[
    ("index.html", "text/html; charset=utf-8"),
    ("dataset.html", "text/html; charset=utf-8"),
    ("account.html", "text/html; charset=utf-8"),
    ("operators.html", "text/html; charset=utf-8"),
    ("org.html", "text/html; charset=utf-8"),
    ("404.html", "text/html; charset=utf-8"),
    ("api.js", "text/javascript; charset=utf-8"),
    ("session.js", "text/javascript; charset=utf-8"),
    ("dom.js", "text/javascript; charset=utf-8"),
    ("format.js", "text/javascript; charset=utf-8"),
    ("catalog.js", "text/javascript; charset=utf-8"),
    ("dataset.js", "text/javascript; charset=utf-8"),
    ("rows.js", "text/javascript; charset=utf-8"),
    ("files.js", "text/javascript; charset=utf-8"),
    ("linked.js", "text/javascript; charset=utf-8"),
    ("account.js", "text/javascript; charset=utf-8"),
    ("request.js", "text/javascript; charset=utf-8"),
    ("operators.js", "text/javascript; charset=utf-8"),
    ("org.js", "text/javascript; charset=utf-8"),
    ("memberships.js", "text/javascript; charset=utf-8"),
    ("console.js", "text/javascript; charset=utf-8"),
    ("csv.js", "text/javascript; charset=utf-8"),
    ("console-worker.js", "text/javascript; charset=utf-8"),
    ("apache-arrow.js", "text/javascript; charset=utf-8"),
    ("readme.js", "text/javascript; charset=utf-8"),
    ("editor.js", "text/javascript; charset=utf-8"),
    ("upload.js", "text/javascript; charset=utf-8"),
    ("style.css", "text/css; charset=utf-8"),
    ("favicon.svg", "image/svg+xml"),
];

/// The files the dataset page takes from npm (`web/package.json`, installed into
/// `web/node_modules` by dev/setup), served under `/vendor/` as published: the path served, the
/// file under `web/node_modules`, its type. For the SQL console, DuckDB-WASM's module, its worker
/// for browsers with WebAssembly exceptions (the `eh` bundle) and that bundle's WebAssembly, and
/// Apache Arrow's one-file build, which the module needs (`apache-arrow.js`); for the dataset
/// card (`readme.js`), marked's ES module and DOMPurify's minified browser build; for an upload's
/// SHA-256 (`upload.js`), hash-wasm's SHA-256 build. dev/deploy-site uploads the same.
pub const VENDOR: &[(&str, &str, &str)] = &[
    (
        "vendor/duckdb/duckdb-browser.mjs",
        "@duckdb/duckdb-wasm/dist/duckdb-browser.mjs",
        "text/javascript; charset=utf-8",
    ),
    (
        "vendor/duckdb/duckdb-browser-eh.worker.js",
        "@duckdb/duckdb-wasm/dist/duckdb-browser-eh.worker.js",
        "text/javascript; charset=utf-8",
    ),
    (
        "vendor/duckdb/duckdb-eh.wasm",
        "@duckdb/duckdb-wasm/dist/duckdb-eh.wasm",
        "application/wasm",
    ),
    (
        "vendor/apache-arrow/Arrow.esnext.min.js",
        "apache-arrow/Arrow.esnext.min.js",
        "text/javascript; charset=utf-8",
    ),
    // The dataset card (readme.js): marked's module, and DOMPurify's.
    (
        "vendor/marked/marked.esm.js",
        "marked/lib/marked.esm.js",
        "text/javascript; charset=utf-8",
    ),
    (
        "vendor/dompurify/purify.min.js",
        "dompurify/dist/purify.min.js",
        "text/javascript; charset=utf-8",
    ),
    // A browser upload's SHA-256 (upload.js, for an organisation's editors): hash-wasm's.
    (
        "vendor/hash-wasm/sha256.umd.min.js",
        "hash-wasm/dist/sha256.umd.min.js",
        "text/javascript; charset=utf-8",
    ),
];

/// The files served with the console's policy ([`console_security_policy`]): the dataset page,
/// and the console's worker, whose policy is its own answer's (a worker does not inherit its
/// page's). template.yaml gives these two paths the same policy (`ConsoleSecurityHeaders`).
pub const CONSOLE_FILES: &[&str] = &["dataset.html", "console-worker.js"];

/// What CloudFront compresses: files up to 10 MB (the WebAssembly is larger and goes as it is).
const COMPRESS_AT_MOST: usize = 10_000_000;

/// The page of a path the site does not have (one of [`FILES`]).
const NOT_FOUND_PAGE: &str = "404.html";

/// What the site's `config.json` says of accounts (the template's outputs when deployed).
#[derive(Debug, Clone)]
pub struct SiteAccounts {
    /// Whose members see the Access requests link (`OperatorsGroupName`).
    pub operators_group: String,
    /// `open`, `invite` or `domains` (`SignUpMode`): the sign-up form follows it.
    pub sign_up_mode: String,
}

impl SiteAccounts {
    /// OPERATORS_GROUP and SIGN_UP_MODE, else the template's defaults.
    pub fn from_env() -> Self {
        let var = |name: &str, default: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.trim().is_empty())
                .unwrap_or_else(|| default.to_owned())
        };
        Self {
            operators_group: var("OPERATORS_GROUP", crate::cognito::OPERATORS_GROUP),
            sign_up_mode: var("SIGN_UP_MODE", "open"),
        }
    }
}

/// The site's configuration and where its files are.
pub struct Site {
    dir: PathBuf,
    config: Bytes,
    csp: String,
    /// The policy of [`CONSOLE_FILES`].
    console_csp: String,
    cognito_endpoint: String,
}

/// The hash of the dataset page's import map (an inline script, which `script-src` must name):
/// `apache-arrow` is `./apache-arrow.js`, for DuckDB-WASM's module, which imports Arrow by
/// name. tests/tests/console.rs checks it against web/dataset.html.
pub const IMPORT_MAP_HASH: &str = "'sha256-oKKDPaj53YeLVa9NwyltaCbKjV7tx4VBHpisoYsaRFw='";

/// The dataset page's policy, for its SQL console: the site's, and WebAssembly
/// (`'wasm-unsafe-eval'`: compiling it, not JavaScript's eval), the import map, workers of this
/// origin, and reads of the data bucket (`data_origin`: where presigned URLs point).
/// template.yaml's `ConsoleSecurityHeaders` holds the same directives.
pub fn console_security_policy(cognito_endpoint: &str, data_origin: Option<&str>) -> String {
    let cognito = cognito_endpoint.trim_end_matches('/');
    let data = data_origin.map_or(String::new(), |o| format!(" {}", o.trim_end_matches('/')));
    format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval' {IMPORT_MAP_HASH}; \
         worker-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self' {cognito}{data}; form-action 'self'; base-uri 'none'; \
         frame-ancestors 'none'"
    )
}

/// The Content-Security-Policy of every page: only this origin's scripts, styles and images,
/// calls to this origin and to Cognito, no framing. template.yaml's response headers policy
/// holds the same directives, with the region's Cognito endpoint.
pub fn content_security_policy(cognito_endpoint: &str) -> String {
    let cognito = cognito_endpoint.trim_end_matches('/');
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self' {cognito}; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    )
}

impl Site {
    /// `dir`: the `web/` folder; `cognito_endpoint`: where the page signs in;
    /// `client_id`: the user pool's web client; `accounts`: the operators' group and the
    /// sign-up mode.
    pub fn new(
        dir: &Path,
        cognito_endpoint: &str,
        client_id: &str,
        accounts: &SiteAccounts,
    ) -> Self {
        let config = serde_json::json!({
            "apiBase": "/api/v1",
            "cognitoEndpoint": cognito_endpoint,
            "userPoolClientId": client_id,
            "operatorsGroup": accounts.operators_group,
            "signUpMode": accounts.sign_up_mode,
        });
        Self {
            dir: dir.to_path_buf(),
            config: Bytes::from(config.to_string()),
            csp: content_security_policy(cognito_endpoint),
            console_csp: console_security_policy(cognito_endpoint, None),
            cognito_endpoint: cognito_endpoint.to_owned(),
        }
    }

    /// The data bucket's origin (`scheme://host[:port]` of the presigned URLs), which the
    /// console's policy lets it read.
    pub fn with_data_origin(mut self, data_origin: &str) -> Self {
        self.console_csp = console_security_policy(&self.cognito_endpoint, Some(data_origin));
        self
    }

    /// The site's answer for `path`, or `None` when the path is the API's.
    pub fn answer(&self, path: &str, accepts_gzip: bool) -> Option<Response<Bytes>> {
        if path.starts_with("/api/") || path == "/api" {
            return None;
        }
        let name = match path.trim_start_matches('/') {
            "" => "index.html",
            other => other,
        };
        if name == "config.json" {
            return Some(self.respond(
                StatusCode::OK,
                "application/json",
                self.config.clone(),
                false,
            ));
        }
        let found = FILES
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(file, kind)| (self.dir.join(file), *kind))
            .or_else(|| {
                VENDOR
                    .iter()
                    .find(|(served, _, _)| *served == name)
                    .map(|(_, file, kind)| (self.dir.join("node_modules").join(file), *kind))
            })
            .and_then(|(file, kind)| {
                std::fs::read(file)
                    .ok()
                    .map(|bytes| (Bytes::from(bytes), kind))
            });
        Some(match found {
            Some((bytes, kind)) => {
                let mut answer = self.respond(StatusCode::OK, kind, bytes, accepts_gzip);
                if CONSOLE_FILES.contains(&name) {
                    if let Ok(csp) = HeaderValue::try_from(self.console_csp.as_str()) {
                        answer
                            .headers_mut()
                            .insert(header::CONTENT_SECURITY_POLICY, csp);
                    }
                }
                answer
            }
            None => self.not_found(accepts_gzip),
        })
    }

    /// Any other path: the site's own 404 page (`web/404.html`, as CloudFront answers an unknown
    /// site path when deployed), with the same headers; plain text if it cannot be read.
    fn not_found(&self, accepts_gzip: bool) -> Response<Bytes> {
        match std::fs::read(self.dir.join(NOT_FOUND_PAGE)) {
            Ok(page) => self.respond(
                StatusCode::NOT_FOUND,
                "text/html; charset=utf-8",
                Bytes::from(page),
                accepts_gzip,
            ),
            Err(_) => self.respond(
                StatusCode::NOT_FOUND,
                "text/plain; charset=utf-8",
                Bytes::from_static(b"Not found. The catalog is at /"),
                false,
            ),
        }
    }

    fn respond(
        &self,
        status: StatusCode,
        kind: &'static str,
        body: Bytes,
        gzip: bool,
    ) -> Response<Bytes> {
        let (body, encoded) = if gzip && body.len() > 256 && body.len() <= COMPRESS_AT_MOST {
            (Bytes::from(gzipped(&body)), true)
        } else {
            (body, false)
        };
        let mut response = Response::new(body);
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
        if encoded {
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
        if let Ok(csp) = HeaderValue::try_from(self.csp.as_str()) {
            headers.insert(header::CONTENT_SECURITY_POLICY, csp);
        }
        for (name, value) in SECURITY_HEADERS {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        response
    }
}

/// The headers beside the CSP, as CloudFront's response headers policy sets them (HSTS too: a
/// browser ignores it over plain HTTP).
pub const SECURITY_HEADERS: &[(&str, &str)] = &[
    (
        "strict-transport-security",
        "max-age=63072000; includeSubDomains",
    ),
    ("x-content-type-options", "nosniff"),
    ("x-frame-options", "DENY"),
    ("referrer-policy", "strict-origin-when-cross-origin"),
];

fn gzipped(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    // Writing to a Vec cannot fail.
    let _ = encoder.write_all(bytes);
    encoder.finish().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> Site {
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        Site::new(
            &web,
            "http://127.0.0.1:8000/",
            "client-1",
            &SiteAccounts {
                operators_group: "operators".into(),
                sign_up_mode: "invite".into(),
            },
        )
    }

    #[test]
    fn the_api_is_not_the_site() {
        assert!(site().answer("/api/v1/datasets", false).is_none());
        assert!(site().answer("/api", false).is_none());
    }

    #[test]
    fn pages_carry_the_security_headers() {
        let page = site().answer("/", false).unwrap();
        assert_eq!(page.status(), StatusCode::OK);
        let csp = page.headers()["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("frame-ancestors 'none'")
                && csp.contains("connect-src 'self' http://127.0.0.1:8000")
        );
        assert_eq!(page.headers()["x-content-type-options"], "nosniff");
        assert_eq!(page.headers()["x-frame-options"], "DENY");
        assert_eq!(
            page.headers()["strict-transport-security"],
            "max-age=63072000; includeSubDomains"
        );
        assert!(std::str::from_utf8(page.body())
            .unwrap()
            .contains("<title>"));
    }

    #[test]
    fn only_the_site_s_files_are_served() {
        assert_eq!(
            site().answer("/../Cargo.toml", false).unwrap().status(),
            404
        );
        assert_eq!(site().answer("/nothing.html", false).unwrap().status(), 404);
        let config = site().answer("/config.json", false).unwrap();
        let value: serde_json::Value = serde_json::from_slice(config.body()).unwrap();
        assert_eq!(value["userPoolClientId"], "client-1");
        assert_eq!(value["operatorsGroup"], "operators");
        assert_eq!(value["signUpMode"], "invite");
        assert_eq!(value["apiBase"], "/api/v1");
    }

    #[test]
    fn an_unknown_path_gets_the_site_s_404_page_with_its_headers() {
        for path in [
            "/datasets/birds/discussions/questions",
            "/nothing.html",
            "/../Cargo.toml",
        ] {
            let page = site().answer(path, false).unwrap();
            assert_eq!(page.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
            assert_eq!(page.headers()["x-frame-options"], "DENY");
            assert!(page.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .contains("default-src 'none'"));
            let body = std::str::from_utf8(page.body()).unwrap();
            assert!(body.contains("<h1>Page not found</h1>"), "{body}");
            // Served at any depth: its links start at the root.
            assert!(body.contains(r#"href="/style.css""#));
        }
        let zipped = site().answer("/no/such/page", true).unwrap();
        assert_eq!(zipped.status(), StatusCode::NOT_FOUND);
        assert_eq!(zipped.headers()["content-encoding"], "gzip");
    }

    #[test]
    fn text_is_gzipped_when_the_browser_asks() {
        let plain = site().answer("/dataset.js", false).unwrap();
        let zipped = site().answer("/dataset.js", true).unwrap();
        assert_eq!(zipped.headers()["content-encoding"], "gzip");
        assert!(zipped.body().len() < plain.body().len() / 2);
    }

    #[test]
    fn every_file_in_web_is_served() {
        // A module added to web/ but not to FILES would be a 404 in the browser.
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        let mut missing = Vec::new();
        for entry in std::fs::read_dir(&web).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            // npm's: what the console takes from it is served from VENDOR.
            let npm = ["package.json", "package-lock.json", "node_modules"];
            if !FILES.iter().any(|(file, _)| *file == name) && !npm.contains(&name.as_str()) {
                missing.push(name);
            }
        }
        assert!(
            missing.is_empty(),
            "web/ files the site does not serve: {missing:?}"
        );
    }

    #[test]
    fn the_console_s_files_carry_its_policy_and_no_other_page_does() {
        let site = site().with_data_origin("http://127.0.0.1:8014");
        for path in ["/dataset.html", "/console-worker.js"] {
            let answer = site.answer(path, false).unwrap();
            assert_eq!(answer.status(), StatusCode::OK, "{path}");
            let csp = answer.headers()["content-security-policy"]
                .to_str()
                .unwrap();
            assert_eq!(
                csp,
                console_security_policy("http://127.0.0.1:8000/", Some("http://127.0.0.1:8014"))
            );
            assert!(csp.contains("script-src 'self' 'wasm-unsafe-eval' 'sha256-"));
            assert!(csp.contains("worker-src 'self';"));
            assert!(csp.contains("connect-src 'self' http://127.0.0.1:8000 http://127.0.0.1:8014;"));
        }
        for path in [
            "/",
            "/account.html",
            "/operators.html",
            "/console.js",
            "/dataset.js",
        ] {
            let answer = site.answer(path, false).unwrap();
            let csp = answer.headers()["content-security-policy"]
                .to_str()
                .unwrap();
            assert_eq!(
                csp,
                content_security_policy("http://127.0.0.1:8000/"),
                "{path}"
            );
            assert!(!csp.contains("wasm") && !csp.contains("8014"));
        }
    }

    #[test]
    fn the_console_s_npm_files_are_served_when_installed_and_the_webassembly_uncompressed() {
        let web = Path::new(env!("CARGO_MANIFEST_DIR")).join("../web");
        if !web.join("node_modules").exists() {
            // dev/setup installs them (npm ci); without them they are 404s like any other path.
            assert_eq!(
                site()
                    .answer("/vendor/duckdb/duckdb-eh.wasm", false)
                    .unwrap()
                    .status(),
                StatusCode::NOT_FOUND
            );
            return;
        }
        for (path, _, kind) in VENDOR {
            let answer = site().answer(&format!("/{path}"), true).unwrap();
            assert_eq!(answer.status(), StatusCode::OK, "{path}");
            assert_eq!(answer.headers()["content-type"], *kind, "{path}");
        }
        let wasm = site()
            .answer("/vendor/duckdb/duckdb-eh.wasm", true)
            .unwrap();
        assert_eq!(wasm.headers()["content-type"], "application/wasm");
        assert!(wasm.headers().get("content-encoding").is_none());
        assert_eq!(&wasm.body()[..4], b"\0asm");
        // Only what VENDOR names: nothing else of node_modules.
        for path in [
            "/vendor/duckdb/duckdb-mvp.wasm",
            "/node_modules/apache-arrow/package.json",
            "/vendor/../package.json",
        ] {
            assert_eq!(
                site().answer(path, false).unwrap().status(),
                StatusCode::NOT_FOUND
            );
        }
    }
}
