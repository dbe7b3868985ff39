//! Which arguments are text inputs, and their paths relative to the inputs' root (module docs
//! of [`super`]).

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use super::error::IngestError;
use super::source::{compression_of, detect, stem_of, Format};
use super::Input;

fn usage(message: String) -> IngestError {
    IngestError::Usage(message)
}

fn is_glob(arg: &str) -> bool {
    arg.contains(['*', '?', '['])
}

fn absolute(path: &Path) -> Result<PathBuf, IngestError> {
    let absolute = std::path::absolute(path)
        .map_err(|e| IngestError::Io(format!("cannot read {}", path.display()), e))?;
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

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> Result<(), IngestError> {
    let unreadable = |e| IngestError::Io(format!("cannot read {}", dir.display()), e);
    let mut entries = std::fs::read_dir(dir)
        .map_err(unreadable)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(unreadable)?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let path = entry.path();
        if entry.file_type().map_err(unreadable)?.is_dir() {
            walk(&path, files)?;
        } else if path.is_file() {
            files.push(path);
        }
    }
    Ok(())
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The text inputs among `args` (CLI's inputs), or `None` when there are none (Parquet, as
/// before). Refuses a mix of text inputs and other files, and two inputs that would make the
/// same Parquet path.
pub fn text_inputs(
    args: &[PathBuf],
    forced: Option<Format>,
) -> Result<Option<Vec<Input>>, IngestError> {
    let is_text = |path: &Path| forced.is_some() || detect(&name_of(path)).is_some();
    // (the file, whether it was named itself rather than found in a directory)
    let mut files: Vec<(PathBuf, bool)> = Vec::new();
    let mut bases = Vec::new();
    let sole_directory = args.len() == 1 && args[0].is_dir();
    for arg in args {
        let text = arg.to_string_lossy();
        if arg.is_dir() {
            let dir = absolute(arg)?;
            let mut found = Vec::new();
            walk(&dir, &mut found)?;
            files.extend(found.into_iter().map(|f| (f, false)));
            bases.push(if sole_directory {
                dir.clone()
            } else {
                dir.parent().map_or(dir.clone(), Path::to_path_buf)
            });
        } else if arg.is_file() {
            let file = absolute(arg)?;
            bases.push(file.parent().map_or(file.clone(), Path::to_path_buf));
            files.push((file, true));
        } else if is_glob(&text) {
            let Ok(matches) = glob::glob(&text) else {
                return Ok(None);
            };
            for matched in matches.flatten() {
                if matched.is_dir() {
                    let mut found = Vec::new();
                    walk(&absolute(&matched)?, &mut found)?;
                    files.extend(found.into_iter().map(|f| (f, false)));
                } else if matched.is_file() {
                    files.push((absolute(&matched)?, true));
                }
            }
            let base: PathBuf = Path::new(text.as_ref())
                .components()
                .take_while(|c| !is_glob(&c.as_os_str().to_string_lossy()))
                .collect();
            let base = if base.as_os_str().is_empty() || base == Path::new(text.as_ref()) {
                PathBuf::from(".")
            } else {
                base
            };
            bases.push(absolute(&base)?);
        } else if is_text(arg) {
            return Err(IngestError::Io(
                format!("cannot read {text}"),
                std::io::Error::from(std::io::ErrorKind::NotFound),
            ));
        } else {
            // Not there: publish says so as it always has.
            return Ok(None);
        }
    }
    if !files.iter().any(|(f, _)| is_text(f)) {
        return Ok(None);
    }
    let others: Vec<String> = files
        .iter()
        .filter(|(f, named)| {
            !is_text(f) && (*named || name_of(f).to_ascii_lowercase().ends_with(".parquet"))
        })
        .map(|(f, _)| f.display().to_string())
        .collect();
    if !others.is_empty() {
        return Err(usage(format!(
            "{} is not CSV, TSV or JSON Lines, and the others are: publish Parquet and text \
             inputs separately (or give --format to read every file as one format)",
            others[..others.len().min(3)].join(", ")
        )));
    }
    let mut root = bases[0].clone();
    for base in &bases[1..] {
        while !base.starts_with(&root) && root.pop() {}
    }
    let mut inputs = Vec::new();
    let mut outputs: BTreeMap<String, String> = BTreeMap::new();
    for (path, _) in files.into_iter().filter(|(f, _)| is_text(f)) {
        let rel = path
            .strip_prefix(&root)
            .map_err(|_| {
                usage(format!(
                    "{} is not under {}",
                    path.display(),
                    root.display()
                ))
            })?
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let name = name_of(&path);
        let (format, compression) = match (forced, detect(&name)) {
            (Some(format), _) => (format, compression_of(&name)),
            (None, Some((_, format, compression))) => (format, compression),
            (None, None) => continue,
        };
        let stem = output_stem(&rel);
        if let Some(first) = outputs.insert(stem.clone(), rel.clone()) {
            return Err(usage(format!(
                "'{first}' and '{rel}' would both become '{stem}.parquet': rename one"
            )));
        }
        inputs.push(Input {
            path,
            rel,
            format,
            compression,
        });
    }
    inputs.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(Some(inputs))
}

/// An input's path as published, without its extensions (`train/a.csv.gz` is `train/a`).
pub fn output_stem(rel: &str) -> String {
    match rel.rsplit_once('/') {
        Some((dir, name)) => format!("{dir}/{}", stem_of(name)),
        None => stem_of(rel).to_owned(),
    }
}
