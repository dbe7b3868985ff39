//! What `publish` is given: one file (a single-file version, as always), or a directory,
//! several files or globs (a version of many files), each with its path as published and its
//! split. Only the file system is read here (names, and each file's first and last 4 bytes);
//! nothing is written.
//!
//! **The arguments.** Each is a directory, a file, or a glob (`*`, `?`, `[…]`, `**` for any
//! depth; expanded here, sorted, so a shell that did not expand it changes nothing). One
//! argument that is a file, without `--split`, is a single-file version, published exactly as
//! before. Anything else is a version of many files, even of one.
//! - In a directory (walked to any depth, sorted), files and directories whose name starts
//!   with `.` or `_` are skipped (`.git`, Spark's `_SUCCESS` and `_delta_log`, as pyarrow and
//!   Spark skip them), and so are files whose name does not end in `.parquet` (ASCII case
//!   aside; [`Discovered::ignored`] names them). Symbolic links to files are followed; links to
//!   directories are not walked.
//! - A file named as an argument, or matched by a glob, is taken whatever its name.
//! - Every file taken must be Parquet: `PAR1` at its start and at its end.
//!
//! **Paths as published** are relative to the root: the directory when it is the only
//! argument; otherwise the deepest directory holding every argument (a file's or a directory's
//! parent, so a directory given beside others keeps its name; a glob's directory before its
//! first wildcard, so `sales/year=*/*.parquet` keeps its partitions even when one matches).
//!
//! **Splits**, the first rule that applies:
//! 1. `--split NAME=GLOB` (repeatable; the same name twice is the union): GLOB is matched
//!    against the paths as published (`*` within a directory, `**` across); every file must
//!    match exactly one split, and every split at least one file.
//! 2. Hugging Face's layout: every file is `data/<split>-<anything>.parquet` (as
//!    `data/train-00000-of-00003.parquet`): the split is the name before the first `-`.
//! 3. Split directories: every file is under a top-level directory named as a split by
//!    Hugging Face's conventions: `train`, `training`, `validation`, `valid`, `val`, `dev`,
//!    `test`, `testing`, `eval`, `evaluation`; the split is the directory's name, as written.
//! 4. Otherwise (or with `--no-splits`) no file has a split.
//!
//! A layout applies only when it covers every file. Hive partitions (`key=value/` directory
//! segments) are read from the paths as published, below any split directory, by the version's
//! manifest.

use std::collections::BTreeMap;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Component, Path, PathBuf};

use super::PublishError;

mod splits;

use splits::{assign_flags, assign_layout, split_flags};
pub use splits::{Layout, SPLIT_DIRECTORIES};

/// Most files one version holds.
pub const MAX_FILES: usize = 100_000;

/// One file found: where it is, its path as published and its split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    /// Relative to [`Discovered::root`], `/`-separated.
    pub rel: String,
    pub split: Option<String>,
}

/// The files of a version of many files, sorted by their paths as published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovered {
    pub root: PathBuf,
    pub files: Vec<Found>,
    pub layout: Layout,
    /// The splits named by `--split`, each with at least one file (empty for a layout).
    pub splits: Vec<String>,
    /// Files skipped in the directories walked, not named `*.parquet` (relative paths).
    pub ignored: Vec<String>,
}

/// What the command line gives.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    pub args: Vec<PathBuf>,
    /// `--split NAME=GLOB`, as given.
    pub splits: Vec<String>,
    /// `--no-splits`: no layout is read as splits.
    pub no_splits: bool,
}

impl Inputs {
    /// The file of a single-file version: one argument that is not a directory (nor a glob
    /// matching something other than itself), and no `--split`. A path that does not exist is
    /// taken as one (publish then says it cannot read it, as always).
    pub fn single_file(&self) -> Option<PathBuf> {
        let [path] = self.args.as_slice() else {
            return None;
        };
        let glob = path.to_str().is_some_and(is_glob);
        (self.splits.is_empty() && !path.is_dir() && (path.is_file() || !glob))
            .then(|| path.to_owned())
    }
}

fn bad(message: String) -> PublishError {
    PublishError::BadInput(message)
}

fn is_glob(arg: &str) -> bool {
    arg.contains(['*', '?', '['])
}

fn match_options() -> glob::MatchOptions {
    glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    }
}

/// `path` made absolute and its `.` and `..` segments resolved by name (symbolic links are not
/// followed).
fn normalize(path: &Path) -> Result<PathBuf, PublishError> {
    let absolute = std::path::absolute(path)
        .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Ok(out)
}

/// The directory of a glob before its first wildcard.
fn glob_base(pattern: &str) -> PathBuf {
    let mut base = PathBuf::new();
    let components: Vec<Component> = Path::new(pattern).components().collect();
    for component in &components[..components.len().saturating_sub(1)] {
        if component.as_os_str().to_str().is_some_and(is_glob) {
            break;
        }
        base.push(component);
    }
    if base.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        base
    }
}

fn common_ancestor(paths: &[PathBuf]) -> PathBuf {
    let mut common = paths[0].clone();
    for path in &paths[1..] {
        while !path.starts_with(&common) {
            if !common.pop() {
                break;
            }
        }
    }
    common
}

// Which names a version takes: the one rule of `catalog::files`, shared with a staged
// prefix's fan-out (`catalog_stats::fanout`) and `stats edges`.
use catalog::files::is_hidden_name as hidden;
pub(crate) use catalog::files::is_parquet_name;

/// Walks `dir`, sorted, adding its Parquet files to `files` and the others to `ignored`; stops
/// once over [`MAX_FILES`].
fn walk(
    dir: &Path,
    files: &mut Vec<PathBuf>,
    ignored: &mut Vec<PathBuf>,
) -> Result<(), PublishError> {
    let unreadable = |e: std::io::Error| bad(format!("cannot read {}: {e}", dir.display()));
    let mut entries = std::fs::read_dir(dir)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            return Err(bad(format!(
                "{}: the name is not UTF-8",
                entry.path().display()
            )));
        };
        if hidden(name) {
            continue;
        }
        let kind = entry.file_type().map_err(unreadable)?;
        let path = entry.path();
        if kind.is_dir() {
            walk(&path, files, ignored)?;
        } else if path.is_file() {
            if is_parquet_name(name) {
                files.push(path);
            } else {
                ignored.push(path);
            }
        }
        if files.len() > MAX_FILES {
            return Err(too_many());
        }
    }
    Ok(())
}

/// Adds a file `arg` gave to `given`; refuses once over [`MAX_FILES`].
fn take<'a>(
    given: &mut Vec<(PathBuf, &'a str)>,
    found: PathBuf,
    arg: &'a str,
) -> Result<(), PublishError> {
    given.push((found, arg));
    if given.len() > MAX_FILES {
        return Err(too_many());
    }
    Ok(())
}

fn too_many() -> PublishError {
    bad(format!(
        "more than {MAX_FILES} files: a version holds at most {MAX_FILES}"
    ))
}

/// Whether the file at `path` starts and ends with Parquet's magic bytes, `PAR1`.
pub fn is_parquet(path: &Path) -> std::io::Result<bool> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    if len < 12 {
        return Ok(false);
    }
    let (mut head, mut tail) = ([0u8; 4], [0u8; 4]);
    file.read_exact(&mut head)?;
    file.seek(SeekFrom::End(-4))?;
    file.read_exact(&mut tail)?;
    Ok(&head == b"PAR1" && &tail == b"PAR1")
}

/// The files of a version of many files (module docs), checked: each is Parquet, at most
/// [`MAX_FILES`], none given twice, every split named with a file, every split name allowed.
pub fn discover(inputs: &Inputs) -> Result<Discovered, PublishError> {
    let splits = split_flags(&inputs.splits)?;
    if inputs.args.is_empty() {
        return Err(bad("no file, directory or glob given".into()));
    }
    let mut bases = Vec::new();
    // (the file, the argument that gave it)
    let mut given: Vec<(PathBuf, &str)> = Vec::new();
    let mut ignored_paths = Vec::new();
    let sole_directory = inputs.args.len() == 1 && inputs.args[0].is_dir();
    for path in &inputs.args {
        let arg = path
            .to_str()
            .ok_or_else(|| bad(format!("{}: the path is not UTF-8", path.display())))?;
        if path.is_dir() {
            let dir = normalize(path)?;
            let mut files = Vec::new();
            walk(&dir, &mut files, &mut ignored_paths)?;
            for file in files {
                take(&mut given, file, arg)?;
            }
            bases.push(if sole_directory {
                dir
            } else {
                dir.parent().map_or(dir.clone(), Path::to_path_buf)
            });
        } else if path.is_file() {
            let file = normalize(path)?;
            bases.push(file.parent().map_or(file.clone(), Path::to_path_buf));
            take(&mut given, file, arg)?;
        } else if is_glob(arg) {
            let matches = glob::glob_with(arg, match_options())
                .map_err(|e| bad(format!("'{arg}' is not a glob: {e}")))?;
            let before = given.len();
            for matched in matches {
                let matched = matched.map_err(|e| bad(format!("cannot read {e}")))?;
                let name = matched.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if matched.is_dir() {
                    if !hidden(name) {
                        let mut files = Vec::new();
                        walk(&normalize(&matched)?, &mut files, &mut ignored_paths)?;
                        for file in files {
                            take(&mut given, file, arg)?;
                        }
                    }
                } else if matched.is_file() {
                    take(&mut given, normalize(&matched)?, arg)?;
                }
            }
            if given.len() == before {
                return Err(bad(format!("'{arg}' matches no file")));
            }
            bases.push(normalize(&glob_base(arg))?);
        } else {
            return Err(bad(format!("cannot read {arg}: no such file or directory")));
        }
    }
    let root = common_ancestor(&bases);
    let relative = |path: &Path| -> Result<String, PublishError> {
        let rel = path.strip_prefix(&root).map_err(|_| {
            bad(format!(
                "{} is not under {}",
                path.display(),
                root.display()
            ))
        })?;
        let parts = rel
            .components()
            .map(|c| match c {
                Component::Normal(part) => part
                    .to_str()
                    .ok_or_else(|| bad(format!("{}: the path is not UTF-8", path.display()))),
                _ => Err(bad(format!(
                    "{}: the path as published would have a '..' or be absolute",
                    path.display()
                ))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(parts.join("/"))
    };
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    let mut files = Vec::with_capacity(given.len());
    for (path, arg) in &given {
        let rel = relative(path)?;
        if let Some(first) = seen.insert(rel.clone(), arg) {
            return Err(bad(format!(
                "file '{rel}' is given twice (by '{first}' and by '{arg}'): two files of a \
                 version cannot have the same path"
            )));
        }
        files.push(Found {
            path: path.clone(),
            rel,
            split: None,
        });
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    for file in &files {
        match is_parquet(&file.path) {
            Ok(true) => {}
            Ok(false) => {
                return Err(bad(format!(
                    "file '{}' is not a Parquet file (no PAR1 at its start and end)",
                    file.rel
                )))
            }
            Err(e) => return Err(bad(format!("cannot read {}: {e}", file.path.display()))),
        }
    }
    let layout = if !splits.is_empty() {
        assign_flags(&mut files, &splits)?;
        Layout::Flags
    } else if inputs.no_splits {
        Layout::None
    } else {
        assign_layout(&mut files)
    };
    let ignored = ignored_paths
        .iter()
        .map(|p| relative(p))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Discovered {
        root,
        files,
        layout,
        splits: splits.into_iter().map(|(name, _)| name).collect(),
        ignored,
    })
}

/// The files of a version of many files given by name rather than found on disk (the objects
/// under a prefix in S3): each `(where it is, its path relative to the root)`, as a directory
/// walk would have found them. The same rules as [`discover`]'s for a directory: names with a
/// segment starting with `.` or `_` are skipped, names not ending in `.parquet` are left out
/// ([`Discovered::ignored`]), at most [`MAX_FILES`]; then the same splits (`--split`, the
/// layouts, `--no-splits`). The files' bytes are not read here.
pub fn discover_names(
    root: PathBuf,
    names: Vec<(PathBuf, String)>,
    inputs: &Inputs,
) -> Result<Discovered, PublishError> {
    let splits = split_flags(&inputs.splits)?;
    let mut files = Vec::new();
    let mut ignored = Vec::new();
    for (path, rel) in names {
        if rel.is_empty()
            || rel
                .split('/')
                .any(|segment| segment.is_empty() || hidden(segment))
        {
            continue;
        }
        let name = rel.rsplit('/').next().unwrap_or(&rel);
        if !is_parquet_name(name) {
            ignored.push(rel);
            continue;
        }
        files.push(Found {
            path,
            rel,
            split: None,
        });
        if files.len() > MAX_FILES {
            return Err(too_many());
        }
    }
    if files.is_empty() {
        return Err(bad(format!(
            "no Parquet file (named *.parquet) under {}",
            root.display()
        )));
    }
    files.sort_by(|a, b| a.rel.cmp(&b.rel));
    let layout = if !splits.is_empty() {
        assign_flags(&mut files, &splits)?;
        Layout::Flags
    } else if inputs.no_splits {
        Layout::None
    } else {
        assign_layout(&mut files)
    };
    Ok(Discovered {
        root,
        files,
        layout,
        splits: splits.into_iter().map(|(name, _)| name).collect(),
        ignored,
    })
}

#[cfg(test)]
mod tests;
