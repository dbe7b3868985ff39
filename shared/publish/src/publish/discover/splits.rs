//! Splits: from `--split NAME=GLOB`, or from the layout of the paths (the module above says
//! which rule wins).

use std::collections::BTreeSet;
use std::path::Path;

use catalog::files::SplitName;

use super::{bad, is_parquet_name, match_options, Found};
use crate::publish::PublishError;

/// The top-level directory names read as splits (Hugging Face's keywords for its three splits).
pub const SPLIT_DIRECTORIES: [&str; 10] = [
    "train",
    "training",
    "validation",
    "valid",
    "val",
    "dev",
    "test",
    "testing",
    "eval",
    "evaluation",
];

/// How the files' splits were found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `--split NAME=GLOB`.
    Flags,
    /// `data/<split>-….parquet`.
    HuggingFace,
    /// `<split>/…`.
    SplitDirectories,
    /// No splits.
    None,
}

impl Layout {
    pub fn describe(self) -> &'static str {
        match self {
            Self::Flags => "splits as --split gives them",
            Self::HuggingFace => "splits from Hugging Face's data/<split>-*.parquet",
            Self::SplitDirectories => "splits from the top-level directories",
            Self::None => "no splits",
        }
    }
}

/// Whether `name` is a split's name ([`SplitName`]).
pub fn is_split_name(name: &str) -> bool {
    SplitName::parse(name).is_ok()
}

/// A `--split` glob: relative to the root, no `..`, no backslash.
fn split_pattern(name: &str, raw: &str) -> Result<glob::Pattern, PublishError> {
    let refuse = |why: &str| bad(format!("--split {name}={raw}: the glob {why}"));
    if raw.is_empty() {
        return Err(refuse("is empty"));
    }
    if raw.starts_with('/') || Path::new(raw).is_absolute() {
        return Err(refuse(
            "is absolute: give it relative to the directory published",
        ));
    }
    if raw.contains('\\') {
        return Err(refuse("holds a backslash: separate directories with '/'"));
    }
    if raw.split('/').any(|s| s == "..") {
        return Err(refuse(
            "has a '..' segment: give it relative to the directory published",
        ));
    }
    glob::Pattern::new(raw.strip_prefix("./").unwrap_or(raw))
        .map_err(|e| refuse(&format!("is not a glob: {e}")))
}

/// The splits given by `--split`, in their first order, each with its globs.
pub(super) fn split_flags(
    flags: &[String],
) -> Result<Vec<(String, Vec<glob::Pattern>)>, PublishError> {
    let mut splits: Vec<(String, Vec<glob::Pattern>)> = Vec::new();
    for flag in flags {
        let Some((name, raw)) = flag.split_once('=') else {
            return Err(bad(format!("--split {flag}: expected NAME=GLOB")));
        };
        SplitName::parse(name).map_err(|e| bad(e.to_string()))?;
        let pattern = split_pattern(name, raw)?;
        match splits.iter_mut().find(|(n, _)| n == name) {
            Some((_, patterns)) => patterns.push(pattern),
            None => splits.push((name.to_owned(), vec![pattern])),
        }
    }
    Ok(splits)
}

/// Every file's split by `--split`, each file in exactly one, each split with a file.
pub(super) fn assign_flags(
    files: &mut [Found],
    splits: &[(String, Vec<glob::Pattern>)],
) -> Result<(), PublishError> {
    let mut used = BTreeSet::new();
    for file in files.iter_mut() {
        let mut matched = splits
            .iter()
            .filter(|(_, patterns)| {
                patterns
                    .iter()
                    .any(|p| p.matches_with(&file.rel, match_options()))
            })
            .map(|(name, _)| name);
        let Some(split) = matched.next() else {
            return Err(bad(format!(
                "file '{}' matches no --split glob: give every file a split",
                file.rel
            )));
        };
        if let Some(other) = matched.next() {
            return Err(bad(format!(
                "file '{}' matches the globs of two splits, '{split}' and '{other}'",
                file.rel
            )));
        }
        used.insert(split.clone());
        file.split = Some(split.clone());
    }
    if let Some((name, _)) = splits.iter().find(|(name, _)| !used.contains(name)) {
        return Err(bad(format!(
            "split '{name}' has no files: its --split glob matches none"
        )));
    }
    Ok(())
}

/// The split of `data/<split>-….parquet`, if `rel` is so laid out.
fn hugging_face_split(rel: &str) -> Option<&str> {
    let name = rel.strip_prefix("data/")?;
    if name.contains('/') || !is_parquet_name(name) {
        return None;
    }
    let (split, _) = name.split_once('-')?;
    is_split_name(split).then_some(split)
}

/// The split of `<split>/…`, if `rel` is so laid out.
fn directory_split(rel: &str) -> Option<&str> {
    let (top, _) = rel.split_once('/')?;
    SPLIT_DIRECTORIES.contains(&top).then_some(top)
}

/// Splits by the first layout that covers every file.
pub(super) fn assign_layout(files: &mut [Found]) -> Layout {
    type Rule = fn(&str) -> Option<&str>;
    let rules: [(Layout, Rule); 2] = [
        (Layout::HuggingFace, hugging_face_split),
        (Layout::SplitDirectories, directory_split),
    ];
    for (layout, rule) in rules {
        if files.iter().all(|f| rule(&f.rel).is_some()) {
            for file in files.iter_mut() {
                file.split = rule(&file.rel).map(str::to_owned);
            }
            return layout;
        }
    }
    Layout::None
}
