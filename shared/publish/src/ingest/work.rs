//! The work directory the Parquet is written to, removed when done, and the conversion of
//! every input into it, one after the other (memory is one input's chunk and one row group).

use std::path::{Path, PathBuf};

use arrow_array::RecordBatch;

use super::error::{IngestError, Skipped};
use super::inputs::output_stem;
use super::parquet::Parts;
use super::source::{open, Format};
use super::{csv, jsonl, Converted, Input, Settings};

/// A directory of its own under `--work-dir` (the system's temporary directory by default),
/// removed with everything in it when dropped.
#[derive(Debug)]
pub struct WorkDir {
    pub path: PathBuf,
}

impl WorkDir {
    pub fn new(base: Option<&Path>) -> Result<Self, IngestError> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let path = base.join(format!("catalog-publish-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&path)
            .map_err(|e| IngestError::Io(format!("cannot create {}", path.display()), e))?;
        Ok(WorkDir { path })
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// Converts one input into Parquet under `work`; returns its files and what was skipped.
pub fn convert_one(
    input: &Input,
    settings: &Settings,
    work: &Path,
) -> Result<(Vec<PathBuf>, u64, Skipped), IngestError> {
    let file = input.path.display().to_string();
    let src = open(&input.path, input.compression)
        .map_err(|e| IngestError::Io(format!("cannot read {file}"), e))?;
    let stem = output_stem(&input.rel);
    let (dir, name) = match stem.rsplit_once('/') {
        Some((dir, name)) => (work.join(dir), name.to_owned()),
        None => (work.to_path_buf(), stem.clone()),
    };
    // The Parquet is written on a thread of its own, a batch or two behind the parsing (each
    // stage about half the work: two cores convert about twice as fast), so memory holds at
    // most the batches in flight, besides one row group.
    let (batches, received) = std::sync::mpsc::sync_channel::<RecordBatch>(2);
    let target = settings.target_file_size;
    let writer = std::thread::spawn(move || -> Result<Option<Parts>, IngestError> {
        let mut parts: Option<Parts> = None;
        for batch in received {
            parts
                .get_or_insert_with(|| Parts::new(&dir, &name, batch.schema(), target))
                .write(&batch)?;
        }
        Ok(parts)
    });
    let mut sink = |batch: &RecordBatch| -> Result<(), IngestError> {
        // A send fails only when the writer stopped on an error, which `join` below returns.
        batches
            .send(batch.clone())
            .map_err(|_| IngestError::Write(file.clone(), "the Parquet writer stopped".into()))
    };
    let gzip_or_zstd = |e: IngestError| match e {
        // A corrupt compressed stream shows as a read error: name the file.
        IngestError::Io(what, e) => IngestError::bad(&file, 0, None, format!("{what}: {e}")),
        other => other,
    };
    let skipped = match input.format {
        Format::Csv | Format::Tsv => {
            let delimiter = settings.delimiter.unwrap_or(match input.format {
                Format::Tsv => b'\t',
                _ => b',',
            });
            csv::convert(
                src,
                &file,
                delimiter,
                settings,
                &settings.overrides,
                &mut sink,
            )
        }
        Format::JsonLines => jsonl::convert(src, &file, settings, &settings.overrides, &mut sink),
    }
    .map_err(gzip_or_zstd);
    // The writer's loop ends once the last sender is gone.
    drop(batches);
    let written = writer
        .join()
        .map_err(|_| IngestError::Write(file.clone(), "the Parquet writer panicked".into()))?;
    // The writer's own error first: a parse that stopped because the writer did says less.
    let parts = written?;
    let skipped = skipped?;
    let Some(parts) = parts else {
        return Err(IngestError::bad(
            &file,
            0,
            None,
            format!(
                "no row left to publish: all {} were skipped (the first: {})",
                skipped.count,
                skipped
                    .first
                    .first()
                    .map_or(String::new(), |r| r.to_string())
            ),
        ));
    };
    let rows = parts.rows;
    Ok((parts.finish()?, rows, skipped))
}

/// Converts every input, in order, into `work`; stops at the first bad one.
pub fn convert_all(
    inputs: &[Input],
    settings: &Settings,
    work: &Path,
) -> Result<Converted, IngestError> {
    let mut converted = Converted {
        outputs: Vec::with_capacity(inputs.len()),
        rows: 0,
        skipped: Skipped::default(),
    };
    for input in inputs {
        let (files, rows, mut skipped) = convert_one(input, settings, work)?;
        // Skipped rows are named by the input's path as published, as the version records them.
        for row in &mut skipped.first {
            row.file.clone_from(&input.rel);
        }
        converted.rows += rows;
        converted.skipped.merge(skipped);
        converted.outputs.push((input.clone(), files));
    }
    Ok(converted)
}
