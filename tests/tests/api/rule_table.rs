//! The rule table of docs/development.md ("Rules, where they are enforced, and their tests")
//! names code and tests that exist: every test it names is a test function, in the file its
//! path leads to, in a module its binary declares; every place of enforcement is a file (and
//! the text named in it) or an item of a workspace crate.
//!
//! Paths are read as written in the table: a test is `binary::module::function` (an integration
//! test binary: `tests/tests/api/`, `shared/tests/rules/`, …) or `crate::module::tests::function`
//! (a unit test of a library: `catalog::input::tests::…`); a place is `crate::module::Item`,
//! `path/to/file` or `path/to/file:text`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use catalog_tests::repo_root;

const DOC: &str = "docs/development.md";
const HEADING: &str = "## Rules, where they are enforced, and their tests";

/// Where a path's first segment leads: a library's `src/` directory, or an integration test
/// binary's root file (`tests/X.rs` or `tests/X/main.rs`) and its directory.
#[derive(Debug, Clone)]
struct Root {
    file: PathBuf,
    dir: PathBuf,
}

/// A manifest, parsed.
fn manifest(dir: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    text.parse().ok()
}

/// The libraries and test binaries of the workspace's members, by the name a path starts with.
fn roots(repo: &Path) -> BTreeMap<String, Root> {
    let workspace = manifest(repo).expect("Cargo.toml");
    let members = workspace
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
        .expect("the workspace's members");
    let mut roots = BTreeMap::new();
    for member in members.iter().filter_map(|m| m.as_str()) {
        let dir = repo.join(member);
        if let Some(name) = lib_name(&dir) {
            roots.insert(
                name,
                Root {
                    file: dir.join("src/lib.rs"),
                    dir: dir.join("src"),
                },
            );
        }
        let Ok(entries) = std::fs::read_dir(dir.join("tests")) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.extension().is_some_and(|e| e == "rs") {
                let dir = path.with_extension("");
                roots.insert(name, Root { file: path, dir });
            } else if path.join("main.rs").exists() {
                let file = path.join("main.rs");
                roots.insert(name, Root { file, dir: path });
            }
        }
    }
    roots
}

/// The library name of a crate (`[lib] name`, else the package's name with `_` for `-`), if it
/// has a library.
fn lib_name(dir: &Path) -> Option<String> {
    if !dir.join("src/lib.rs").exists() {
        return None;
    }
    let manifest = manifest(dir)?;
    let name_in = |section: &str| {
        let name = manifest.get(section)?.get("name")?.as_str()?;
        Some(name.replace('-', "_"))
    };
    name_in("lib").or_else(|| name_in("package"))
}

/// Follows a path's module segments from its root: the file the rest is in (inline modules,
/// items, the function), and that rest. Each module on the way must be declared by its parent.
fn resolve<'a>(
    roots: &BTreeMap<String, Root>,
    path: &'a str,
) -> Result<(PathBuf, Vec<&'a str>), String> {
    let mut segments = path.split("::");
    let first = segments.next().unwrap_or_default();
    let root = roots
        .get(first)
        .ok_or_else(|| format!("`{path}`: no library or test binary `{first}`"))?;
    let (mut file, mut dir) = (root.file.clone(), root.dir.clone());
    let mut rest: Vec<&str> = segments.collect();
    while rest.len() > 1 {
        let module = rest[0];
        let child = [
            dir.join(format!("{module}.rs")),
            dir.join(module).join("mod.rs"),
        ]
        .into_iter()
        .find(|f| f.exists());
        let Some(child) = child else { break };
        let parent = std::fs::read_to_string(&file).unwrap_or_default();
        if !parent.contains(&format!("mod {module};")) {
            return Err(format!(
                "`{path}`: {} does not declare `mod {module};`",
                file.display()
            ));
        }
        dir = dir.join(module);
        file = child;
        rest.remove(0);
    }
    Ok((file, rest))
}

/// Whether `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(word)
        .any(|(i, _)| !text[..i].ends_with(ident) && !text[i + word.len()..].starts_with(ident))
}

/// A test the table names: a test function in the file its path leads to.
fn check_test(roots: &BTreeMap<String, Root>, path: &str) -> Result<(), String> {
    let (file, rest) = resolve(roots, path)?;
    let function = *rest
        .last()
        .ok_or_else(|| format!("`{path}`: no function"))?;
    let text =
        std::fs::read_to_string(&file).map_err(|e| format!("`{path}`: {}: {e}", file.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let at = lines.iter().position(|l| {
        let l = l.trim_start();
        let l = l.strip_prefix("async ").unwrap_or(l);
        l.strip_prefix("fn ")
            .and_then(|l| l.strip_prefix(function))
            .is_some_and(|l| l.starts_with('(') || l.starts_with('<'))
    });
    let Some(at) = at else {
        return Err(format!(
            "`{path}`: no function `{function}` in {}",
            file.display()
        ));
    };
    let attribute = lines[..at]
        .iter()
        .rev()
        .map(|l| l.trim())
        .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
        .any(|l| l.starts_with("#[test]") || l.starts_with("#[tokio::test"));
    if !attribute {
        return Err(format!(
            "`{path}`: `{function}` in {} is not a test",
            file.display()
        ));
    }
    for module in &rest[..rest.len() - 1] {
        if !text.contains(&format!("mod {module}")) {
            return Err(format!(
                "`{path}`: no module `{module}` in {}",
                file.display()
            ));
        }
    }
    Ok(())
}

/// A place of enforcement: an item of a workspace crate, or a file (and text in it).
fn check_place(roots: &BTreeMap<String, Root>, repo: &Path, place: &str) -> Result<(), String> {
    if place.contains("::") && !place.contains('/') {
        let (file, rest) = resolve(roots, place)?;
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("`{place}`: {}: {e}", file.display()))?;
        let Some(first) = rest.first() else {
            return Ok(());
        };
        let defined = [
            "fn", "struct", "enum", "const", "static", "type", "trait", "mod",
        ]
        .iter()
        .any(|keyword| has_word(&text, &format!("{keyword} {first}")));
        if !defined {
            return Err(format!(
                "`{place}`: `{first}` is not defined in {}",
                file.display()
            ));
        }
        if let Some(missing) = rest.iter().find(|s| !has_word(&text, s)) {
            return Err(format!("`{place}`: no `{missing}` in {}", file.display()));
        }
        return Ok(());
    }
    let (file, needle) = match place.split_once(':') {
        Some((file, needle)) => (file, Some(needle)),
        None => (place, None),
    };
    let path = repo.join(file);
    if !path.exists() {
        return Err(format!("`{place}`: no file {file}"));
    }
    if let Some(needle) = needle {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        if !text.contains(needle) {
            return Err(format!("`{place}`: {file} does not contain `{needle}`"));
        }
    }
    Ok(())
}

/// The text between backticks in a table cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The rows of the rule tables in `doc`'s section (rule, places, tests), without their headers.
fn rows(doc: &str) -> Vec<(String, String, String)> {
    let Some((_, section)) = doc.split_once(HEADING) else {
        return Vec::new();
    };
    let section = section.split("\n## ").next().unwrap_or_default();
    let lines: Vec<&str> = section.lines().collect();
    let separator = |l: &str| l.starts_with("|---");
    lines
        .iter()
        .enumerate()
        .filter(|(i, l)| {
            l.starts_with('|') && !separator(l) && !lines.get(i + 1).is_some_and(|n| separator(n))
        })
        .map(|(_, l)| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split(" | ").collect();
            let cell = |i: usize| {
                cells
                    .get(i)
                    .map(|c| c.trim().to_owned())
                    .unwrap_or_default()
            };
            (cell(0), cell(1), cell(2))
        })
        .collect()
}

/// Every problem with the rule table in `doc`: rows that name no place or no test, places and
/// tests that do not exist.
fn problems(repo: &Path, doc: &str) -> Vec<String> {
    let roots = roots(repo);
    let rows = rows(doc);
    if rows.is_empty() {
        return vec![format!("no rule table under \"{HEADING}\"")];
    }
    let mut problems = Vec::new();
    for (rule, places, tests) in &rows {
        let (places, tests) = (quoted(places), quoted(tests));
        if places.is_empty() || tests.is_empty() {
            problems.push(format!("{rule}: a row names a place and a test"));
        }
        for place in places {
            if let Err(e) = check_place(&roots, repo, place) {
                problems.push(format!("{rule}: {e}"));
            }
        }
        for test in tests {
            if let Err(e) = check_test(&roots, test) {
                problems.push(format!("{rule}: {e}"));
            }
        }
    }
    problems
}

#[test]
fn every_test_named_in_the_rule_table_exists() {
    let repo = repo_root();
    let doc = std::fs::read_to_string(repo.join(DOC)).expect(DOC);
    let rows = rows(&doc);
    assert!(rows.len() >= 100, "{} rows", rows.len());
    let problems = problems(&repo, &doc);
    assert!(problems.is_empty(), "{DOC}:\n{}", problems.join("\n"));
}

/// The check itself: a row is refused for each way it can be wrong.
#[test]
fn a_rule_table_naming_what_does_not_exist_is_refused() {
    let repo = repo_root();
    let table = |row: &str| {
        format!(
            "{HEADING}\n\n| rule | where | test |\n|---|---|---|\n{row}\n\n## Next\n\n| a | b | c |\n"
        )
    };
    let good = "| page size | `catalog::input::PageRequest::MAX_PAGE_SIZE` | \
                `catalog::input::tests::page_size_above_100_is_capped`, \
                `rules::list::list_page_size_above_100_is_capped_and_reported` |";
    assert_eq!(problems(&repo, &table(good)), Vec::<String>::new());
    for bad in [
        // a test that does not exist
        "| r | `catalog::input::PageRequest` | `rules::list::list_pages_everything_twice` |",
        // a function that is not a test
        "| r | `catalog::input::PageRequest` | `rules::list` |",
        "| r | `catalog::input::PageRequest` | `catalog::input::echo` |",
        // a module the binary does not have, a binary that does not exist
        "| r | `catalog::input::PageRequest` | `rules::lists::list_pages_through_every_dataset_once` |",
        "| r | `catalog::input::PageRequest` | `rulez::list::list_pages_through_every_dataset_once` |",
        // a place that does not exist: an item, a file, text in a file
        "| r | `catalog::input::PageSize` | `rules::list::list_pages_through_every_dataset_once` |",
        "| r | `shared/src/nothing.rs` | `rules::list::list_pages_through_every_dataset_once` |",
        "| r | `template.yaml:NoSuchResource` | `rules::list::list_pages_through_every_dataset_once` |",
        // a row without a test
        "| r | `catalog::input::PageRequest` | none |",
    ] {
        assert!(!problems(&repo, &table(bad)).is_empty(), "{bad}");
    }
    assert!(!problems(&repo, "no table here").is_empty());
}
