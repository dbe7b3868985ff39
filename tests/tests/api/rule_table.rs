//! The rule table of docs/development.md ("Rules, where they are enforced, and their tests")
//! names code and the assertions that prove it: every test it names is a test function, in the
//! file its path leads to, in a module its binary declares, and the assertion named beside it
//! is in that very function's body; every place of enforcement is a file (and the text named in
//! it) or an item of a workspace crate.
//!
//! Paths are read as written in the table: a test is `binary::module::function` (an integration
//! test binary: `tests/tests/api/`, `shared/http/tests/rules/`, …) or `crate::module::tests::function`
//! (a unit test of a library: `catalog::input::tests::…`); a place is `crate::module::Item`,
//! `path/to/file` or `path/to/file:text`.
//!
//! In a row's test cell, each test is followed by its assertion: a snippet of the test's code
//! that must occur in the function's body (its comments left out; whitespace does not count, so
//! rustfmt's line breaks do not matter). A test that drives a script (a browser's) may be
//! followed by `path/to/script:text` items: the script is one the test's body names, and the
//! text (the script's step or assertion) is in it. In the Markdown, `\|` stands for `|`.

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

/// The length of the string, character or comment that starts `text`, if one does.
fn literal(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    if text.starts_with("//") {
        return Some(text.find('\n').unwrap_or(text.len()));
    }
    if text.starts_with("/*") {
        return Some(text.find("*/").map_or(text.len(), |end| end + 2));
    }
    // Raw strings: r"…", r#"…"#, br#"…"#
    let raw = text.strip_prefix('b').unwrap_or(text);
    if let Some(rest) = raw.strip_prefix('r') {
        let hashes = rest.len() - rest.trim_start_matches('#').len();
        if rest[hashes..].starts_with('"') {
            let close = format!("\"{}", "#".repeat(hashes));
            let start = text.len() - rest.len() + hashes + 1;
            return Some(
                text[start..]
                    .find(&close)
                    .map_or(text.len(), |end| start + end + close.len()),
            );
        }
    }
    let quoted = |start: usize, quote: u8| {
        let mut at = start;
        while at < bytes.len() && bytes[at] != quote {
            at += if bytes[at] == b'\\' { 2 } else { 1 };
        }
        (at + 1).min(bytes.len())
    };
    match bytes {
        [b'"', ..] => Some(quoted(1, b'"')),
        [b'b', b'"', ..] => Some(quoted(2, b'"')),
        // A character ('x', '\n', '\u{1F600}'), not a lifetime ('a)
        [b'\'', b'\\', ..] => Some(quoted(3, b'\'')),
        [b'\'', ..] => {
            let c = text[1..].chars().next()?;
            text[1 + c.len_utf8()..]
                .starts_with('\'')
                .then_some(2 + c.len_utf8())
        }
        _ => None,
    }
}

/// The body of the function that starts `text` (`fn name(…) … { … }`), braces balanced past
/// strings, characters and comments, with its comments left out.
fn body(text: &str) -> String {
    let mut code = String::new();
    let (mut depth, mut parens, mut started) = (0usize, 0usize, false);
    let mut at = 0;
    while at < text.len() {
        let rest = &text[at..];
        if let Some(len) = literal(rest) {
            if started && !rest.starts_with("//") && !rest.starts_with("/*") {
                code.push_str(&rest[..len]);
            }
            at += len;
            continue;
        }
        let c = rest.chars().next().unwrap_or_default();
        match c {
            '(' | '[' => parens += 1,
            ')' | ']' => parens = parens.saturating_sub(1),
            '{' if parens == 0 || started => {
                started = true;
                depth += 1;
            }
            '}' if started => {
                depth -= 1;
                if depth == 0 {
                    code.push(c);
                    break;
                }
            }
            _ => {}
        }
        if started {
            code.push(c);
        }
        at += c.len_utf8();
    }
    code
}

/// `text` without its whitespace: what the table's snippets are compared by.
fn squeezed(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

/// A test the table names: a test function in the file its path leads to. Its body, comments
/// left out.
fn check_test(roots: &BTreeMap<String, Root>, path: &str) -> Result<String, String> {
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
    let start: usize = lines[..at].iter().map(|l| l.len() + 1).sum();
    Ok(body(&text[start..]))
}

/// A script item of a test cell (`path/to/script:text`): the script and the text.
fn script(item: &str) -> Option<(&str, &str)> {
    let (file, text) = item.split_once(':')?;
    (file.contains('/') && !file.contains(char::is_whitespace) && !text.is_empty())
        .then_some((file, text))
}

/// A test path, as the table writes one: lowercase identifiers joined by `::`.
fn is_test_path(item: &str) -> bool {
    item.contains("::")
        && item.split("::").all(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        })
}

/// The tests of a row's test cell: each test, its assertion in its body, a script it runs and
/// the text in that script.
fn check_tests(roots: &BTreeMap<String, Root>, repo: &Path, items: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut items = items.iter().peekable();
    while let Some(path) = items.next() {
        if !is_test_path(path) {
            problems.push(format!(
                "`{path}`: not a test (a test comes before its assertion)"
            ));
            continue;
        }
        let body = check_test(roots, path);
        let Some(assertion) = items.next_if(|a| !is_test_path(a)) else {
            problems.push(format!("`{path}`: no assertion named"));
            continue;
        };
        let body = match body {
            Ok(body) => body,
            Err(e) => {
                problems.push(e);
                continue;
            }
        };
        if !squeezed(&body).contains(&squeezed(assertion)) {
            problems.push(format!("`{path}`: its body does not assert `{assertion}`"));
        }
        while let Some((file, text)) = items
            .next_if(|i| script(i).is_some())
            .and_then(|i| script(i))
        {
            if !body.contains(file) {
                problems.push(format!("`{path}` does not run {file}"));
            }
            let script = std::fs::read_to_string(repo.join(file)).unwrap_or_default();
            if !squeezed(&script).contains(&squeezed(text)) {
                problems.push(format!("`{path}`: {file} does not contain `{text}`"));
            }
        }
    }
    problems
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

/// The text between backticks in a table cell, `\|` read as `|`.
fn quoted(cell: &str) -> Vec<String> {
    cell.split('`')
        .skip(1)
        .step_by(2)
        .map(|item| item.replace("\\|", "|"))
        .collect()
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
/// tests that do not exist, assertions that are not in their test.
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
            if let Err(e) = check_place(&roots, repo, &place) {
                problems.push(format!("{rule}: {e}"));
            }
        }
        for e in check_tests(&roots, repo, &tests) {
            problems.push(format!("{rule}: {e}"));
        }
    }
    problems
}

#[test]
fn every_test_in_the_rule_table_makes_the_assertion_named_beside_it() {
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
    for good in [
        "| page size | `catalog::input::PageRequest::MAX_PAGE_SIZE` | \
         `catalog::input::tests::page_size_above_100_is_capped`: `assert_eq!(p.page_size(), 100)`; \
         `rules::list::list_page_size_above_100_is_capped_and_reported`: \
         `assert_eq!(b[\"page_size\"],   100)` |",
        // `\|` for `|`; a script the test runs, and its text
        "| r | `functions/audit/Cargo.toml` | \
         `function_builds::the_operators_cli_and_the_audit_function_do_link_the_writer`: \
         `.any(\\|p\\| p == \"catalog-writer\")` |",
        "| r | `web/csv.js:neutralizeCsv` | \
         `console::the_csv_export_puts_a_quote_before_every_cell_that_would_start_a_formula`: \
         `assert_eq!(text.trim(), \"csv cells: ok\")`, step \
         `tests/browser/csv_cells.mjs:[\"@SUM(A1)\", \"'@SUM(A1)\"]` |",
    ] {
        assert_eq!(
            problems(&repo, &table(good)),
            Vec::<String>::new(),
            "{good}"
        );
    }
    let test = "`rules::list::list_pages_through_every_dataset_once`";
    let proof = "`assert_eq!(seen, [\"closed-window\", \"open-window\", \"gated\"])`";
    for bad in [
        // a test that does not exist
        format!("| r | `catalog::input::PageRequest` | `rules::list::list_pages_everything_twice`: {proof} |"),
        // a function that is not a test
        format!("| r | `catalog::input::PageRequest` | `rules::list`: {proof} |"),
        format!("| r | `catalog::input::PageRequest` | `catalog::input::echo`: {proof} |"),
        // a module the binary does not have, a binary that does not exist
        format!("| r | `catalog::input::PageRequest` | `rules::lists::list_pages_through_every_dataset_once`: {proof} |"),
        format!("| r | `catalog::input::PageRequest` | `rulez::list::list_pages_through_every_dataset_once`: {proof} |"),
        // a place that does not exist: an item, a file, text in a file
        format!("| r | `catalog::input::PageSize` | {test}: {proof} |"),
        format!("| r | `shared/src/nothing.rs` | {test}: {proof} |"),
        format!("| r | `template.yaml:NoSuchResource` | {test}: {proof} |"),
        // a row without a test
        "| r | `catalog::input::PageRequest` | none |".to_owned(),
        // a test without its assertion, alone or before another test
        format!("| r | `catalog::input::PageRequest` | {test} |"),
        format!("| r | `catalog::input::PageRequest` | {test}; `catalog::input::tests::page_size_above_100_is_capped`: `assert_eq!(p.page_size(), 100)` |"),
        // an assertion the test does not make: another test's in the same file, a changed
        // value, text only in a comment of the test
        format!("| r | `catalog::input::PageRequest` | {test}: `assert_eq!(b[\"page_size\"], 100)` |"),
        format!("| r | `catalog::input::PageRequest` | {test}: `assert_eq!(seen, [\"closed-window\", \"gated\"])` |"),
        "| r | `catalog_search::order` | `catalog_search::order::tests::a_page_read_from_its_covering_chunks_is_that_slice_of_the_order`: `Only the chunks the page needs` |".to_owned(),
        // a script the test does not run, text the script does not hold
        format!("| r | `catalog::input::PageRequest` | {test}: {proof}, step `tests/browser/csv_cells.mjs:safeCell` |"),
        "| r | `web/csv.js` | `console::the_csv_export_puts_a_quote_before_every_cell_that_would_start_a_formula`: \
         `assert_eq!(text.trim(), \"csv cells: ok\")`, step `tests/browser/csv_cells.mjs:no such step` |".to_owned(),
    ] {
        assert!(!problems(&repo, &table(&bad)).is_empty(), "{bad}");
    }
    assert!(!problems(&repo, "no table here").is_empty());
}
