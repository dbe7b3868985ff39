//! The client recipes of the README ("Clients"), run as written against the local API over
//! moto and s3s-fs (which checks every signature and expiry): curl, requests + pandas, DuckDB
//! with httpfs, `catalog-admin download` and Delta Sharing's connector, whose checks (SHA-256, errors) are tested here too.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use catalog_tests::{built_binary, repo_root, samples_dir, tool, Stack, EVENTS_READ_KEY};
use chrono::Utc;

/// The README's code blocks that start with `# recipe: <name>`.
fn recipes() -> Vec<(String, String, String)> {
    let readme = std::fs::read_to_string(repo_root().join("README.md")).expect("README.md");
    let mut found = Vec::new();
    let mut lines = readme.lines();
    while let Some(line) = lines.next() {
        let Some(lang) = line.strip_prefix("```") else {
            continue;
        };
        let block: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        if let Some(name) = block
            .first()
            .and_then(|first| first.strip_prefix("# recipe: "))
        {
            found.push((name.to_owned(), lang.to_owned(), block.join("\n")));
        }
    }
    found
}

/// A directory for one recipe run, removed afterwards.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("catalog-recipe-{name}-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `HOME` for DuckDB: its extension directory holds the httpfs build that the PyPI package
/// duckdb-ext-httpfs ships, where `INSTALL httpfs` would have put it (this machine is offline).
fn duckdb_home(scratch: &Path) -> PathBuf {
    let python = tool("PYTHON", ".venv/bin/python");
    let out = Command::new(&python)
        .args([
            "-c",
            "import duckdb, importlib.util, os; \
             spec = importlib.util.find_spec('duckdb_ext'); \
             base = list(spec.submodule_search_locations)[0]; \
             print(duckdb.__version__); print(base)",
        ])
        .output()
        .expect("python");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = text.lines();
    let version = lines.next().unwrap().trim().to_owned();
    let base = PathBuf::from(lines.next().unwrap().trim());
    let file = base.join(format!(
        "extensions/v{version}/linux_amd64/httpfs.duckdb_extension"
    ));
    assert!(file.exists(), "{} (duckdb-ext-httpfs)", file.display());
    let home = scratch.join("home");
    let dir = home.join(format!(".duckdb/extensions/v{version}/linux_amd64"));
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(&file, dir.join("httpfs.duckdb_extension")).unwrap();
    home
}

fn run_recipe(
    name: &str,
    lang: &str,
    script: &str,
    base: &str,
    key: &str,
    dir: &Path,
    home: &Path,
) -> Output {
    // The protocols' clients live in their own virtualenvs (Delta Sharing's connector pins
    // older pandas and pyarrow; CKAN pins its own web stack).
    let python = match name {
        "delta-sharing" | "mlcroissant" => tool("PROTOCOLS_PYTHON", ".venv-protocols/bin/python"),
        "ckan-dcat" => tool("CKAN_PYTHON", ".venv-ckan/bin/python"),
        _ => tool("PYTHON", ".venv/bin/python"),
    };
    let venv_bin = python.parent().unwrap().to_path_buf();
    let admin_dir = built_binary("catalog-admin")
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths([venv_bin, admin_dir].into_iter().chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let mut cmd = match lang {
        "sh" => {
            let mut c = Command::new("bash");
            c.args(["-euo", "pipefail", "-c", script]);
            c
        }
        "python" => {
            let mut c = Command::new(&python);
            c.args(["-c", script]);
            c
        }
        other => panic!("recipe language {other}"),
    };
    cmd.current_dir(dir)
        .env("BASE", base)
        .env("KEY", key)
        .env("PATH", path)
        .env("HOME", home)
        .env_remove("CATALOG_API_KEY")
        .env_remove("CATALOG_API_URL")
        .output()
        .expect("run recipe")
}

#[tokio::test(flavor = "multi_thread")]
async fn every_readme_recipe_downloads_the_gated_dataset() {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);
    let original = std::fs::read(samples_dir().join("air-quality-hourly.parquet")).unwrap();
    let rows = parquet_rows(&original);

    let recipes = recipes();
    let names: Vec<&str> = recipes.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "curl",
            "pandas",
            "duckdb",
            "catalog-admin",
            "delta-sharing",
            "mlcroissant",
            "ckan-dcat"
        ]
    );
    for (name, lang, script) in &recipes {
        let scratch = Scratch::new(name);
        let home = duckdb_home(&scratch.0);
        let out = run_recipe(
            name,
            lang,
            script,
            &base,
            EVENTS_READ_KEY,
            &scratch.0,
            &home,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "recipe {name} failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        match name.as_str() {
            "catalog-admin" => {
                let file = scratch.0.join("air-quality-hourly-v1.parquet");
                assert_eq!(std::fs::read(&file).unwrap(), original, "{name}");
                assert!(stdout.contains("verified"), "{stdout}");
            }
            "ckan-dcat" => {
                // Every dataset of the catalog, harvested with its file's size
                for sample in catalog_tests::manifest().datasets {
                    let line = format!("{} {}", sample.meta.card.name, sample.size);
                    assert!(stdout.lines().any(|l| l == line), "{line}: {stdout}");
                }
            }
            _ => assert_eq!(
                stdout.trim().lines().last(),
                Some(rows.to_string().as_str()),
                "recipe {name} prints the row count"
            ),
        }
        if name == "curl" {
            let file = scratch.0.join("air-quality-hourly.parquet");
            assert_eq!(std::fs::read(file).unwrap(), original);
        }
    }
}

fn parquet_rows(bytes: &[u8]) -> u64 {
    catalog_tests::read_parquet(bytes::Bytes::copy_from_slice(bytes)).0
}

fn download(base: &str, key: Option<&str>, args: &[&str], dir: &Path) -> Output {
    let mut cmd = catalog_tests::admin_command();
    cmd.arg("download")
        .args(args)
        .args(["--api-url", base])
        .current_dir(dir)
        .env_remove("CATALOG_API_KEY");
    if let Some(key) = key {
        cmd.env("CATALOG_API_KEY", key);
    }
    catalog_tests::run_admin(&mut cmd)
}

#[tokio::test(flavor = "multi_thread")]
async fn download_verifies_the_file_and_reports_api_errors_by_code() {
    let stack = Stack::start().await;
    let now = Utc::now();
    stack.seed_samples(now).await;
    stack.add_key(EVENTS_READ_KEY, &["read"], now, None).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);
    let scratch = Scratch::new("download");
    let dir = &scratch.0;

    // A keyless dataset needs no key; --output and --version are honoured
    let out = download(
        &base,
        None,
        &["city-bikes", "--version", "1", "-o", "bikes.parquet"],
        dir,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let original = std::fs::read(samples_dir().join("city-bikes.parquet")).unwrap();
    assert_eq!(std::fs::read(dir.join("bikes.parquet")).unwrap(), original);

    // API errors name their code, and nothing is written
    for (key, args, code) in [
        (None, vec!["air-quality-hourly"], "missing_key"),
        (
            Some("dcat_not_a_key"),
            vec!["air-quality-hourly"],
            "invalid_key",
        ),
        (
            Some(EVENTS_READ_KEY),
            vec!["air-quality-hourly", "--version", "7"],
            "not_found",
        ),
        (Some(EVENTS_READ_KEY), vec!["no-such-dataset"], "not_found"),
    ] {
        let out = download(&base, key, &args, dir);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains(&format!("code {code}")),
            "{args:?}: {stderr}"
        );
    }

    // WHEN the stored object no longer matches its recorded SHA-256
    let descriptor: serde_json::Value = {
        let (status, _, body) = catalog_tests::http_request(
            "GET",
            &format!("{base}/datasets/air-quality-hourly/data"),
            &[("x-api-key", EVENTS_READ_KEY)],
        )
        .await;
        assert_eq!(status, 200);
        serde_json::from_slice(&body).unwrap()
    };
    let object_key = descriptor["url"]
        .as_str()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .rsplit_once(&format!("/{}/", stack.target.bucket))
        .map(|(_, k)| k.to_owned())
        .expect("path-style URL");
    stack
        .s3
        .put_object()
        .bucket(&stack.target.bucket)
        .key(&object_key)
        .body(b"not the published bytes".to_vec().into())
        .send()
        .await
        .unwrap();
    // THEN the download fails, saying so, and leaves no file behind
    let out = download(&base, Some(EVENTS_READ_KEY), &["air-quality-hourly"], dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("SHA-256"), "{stderr}");
    let left: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("air-quality-hourly"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

/// On a terminal (a pseudo-terminal from `script`), `download` draws its progress bar on
/// stderr: the bytes received out of the total, in human units.
#[tokio::test(flavor = "multi_thread")]
async fn download_shows_a_progress_bar_on_a_terminal() {
    let stack = Stack::start().await;
    stack.seed_samples(Utc::now()).await;
    let (base, _api) = catalog_tests::start_local_api(&stack);
    let scratch = Scratch::new("progress");
    let command = format!(
        "{} download city-bikes --api-url {base}",
        built_binary("catalog-admin").display()
    );
    let out = Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .current_dir(&scratch.0)
        .env_remove("CATALOG_API_KEY")
        .output()
        .expect("script (util-linux)");
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{shown}");
    let size = std::fs::metadata(samples_dir().join("city-bikes.parquet"))
        .unwrap()
        .len();
    let total = indicatif::HumanBytes(size).to_string();
    assert!(
        shown.contains(&format!("/{total}")),
        "no progress bar ({total}) in: {shown:?}"
    );
    assert!(shown.contains("verified"), "{shown}");
}

#[test]
fn download_refuses_plain_http_except_to_loopback() {
    let dir = std::env::temp_dir().join(format!("catalog-http-{}", uuid::Uuid::new_v4()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = download(
        "http://example.com/api/v1",
        Some(EVENTS_READ_KEY),
        &["air-quality-hourly"],
        &dir,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("clear text"), "{stderr}");
    assert!(stderr.contains("https://"), "{stderr}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
