//! JSON Lines to Arrow batches: each line checked (UTF-8, an object), the schema inferred by
//! arrow-json from the first lines (strings that are all dates or timestamps made so), the rest
//! decoded by arrow-json in chunks, strictly (a key the schema lacks is an error); a chunk that
//! does not decode is decoded line by line, and field by field for the line that fails.

use std::io::BufRead;
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_json::reader::{infer_json_schema_from_iterator, ReaderBuilder};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use serde_json::Value;

use super::error::{BadRow, IngestError, OnError, Skipped};
use super::schema::{
    has_zone, looks_like_date, looks_like_timestamp, settle, ColumnType, Overrides,
};
use super::Settings;

const CHUNK_ROWS: usize = 8192;
const CHUNK_BYTES: usize = 8 << 20;
/// The longest line read.
pub const MAX_LINE: usize = 64 << 20;

fn decode(
    schema: &SchemaRef,
    bytes: &[u8],
    rows: usize,
    strict: bool,
) -> Result<RecordBatch, ArrowError> {
    let mut decoder = ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.max(1))
        .with_strict_mode(strict)
        .build_decoder()?;
    let mut offset = 0;
    while offset < bytes.len() {
        let n = decoder.decode(&bytes[offset..])?;
        if n == 0 {
            break;
        }
        offset += n;
    }
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema.clone())))
}

#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    rows: Vec<(u64, usize)>,
}

impl Chunk {
    fn push(&mut self, line: u64, raw: &[u8]) {
        self.rows.push((line, self.bytes.len()));
        self.bytes.extend_from_slice(raw);
        if !raw.ends_with(b"\n") {
            self.bytes.push(b'\n');
        }
    }

    fn row(&self, i: usize) -> &[u8] {
        let end = self.rows.get(i + 1).map_or(self.bytes.len(), |r| r.1);
        &self.bytes[self.rows[i].1..end]
    }
}

/// Converts one JSON Lines input (see the module docs), each batch handed to `sink`.
pub fn convert<R: BufRead>(
    mut src: R,
    file: &str,
    settings: &Settings,
    overrides: &Overrides,
    sink: &mut dyn FnMut(&RecordBatch) -> Result<(), IngestError>,
) -> Result<Skipped, IngestError> {
    let mut skipped = Skipped::default();
    let mut chunk = Chunk::default();
    let mut sample: Vec<(u64, Value)> = Vec::new();
    let mut schema: Option<SchemaRef> = None;
    let (mut line, mut rows, mut bytes_read) = (0u64, 0u64, 0u64);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let n = std::io::Read::take(&mut src, MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| IngestError::Io(format!("reading {file}"), e))?;
        if n == 0 {
            break;
        }
        line += 1;
        bytes_read += n as u64;
        if n > MAX_LINE {
            return Err(IngestError::bad(
                file,
                line,
                None,
                format!("a line over {} MiB", MAX_LINE >> 20),
            ));
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        rows += 1;
        if settings.on_error == OnError::Fail && !chunk.rows.is_empty() && bad_line_ahead(&buf) {
            // A bad value on an earlier line is the one to name.
            let schema = match &schema {
                Some(schema) => schema.clone(),
                None => infer(&sample, overrides, file)?,
            };
            flush(&schema, &chunk, file, settings.on_error, &mut skipped, sink)?;
        }
        let bad = |reason: &str, detail: Option<String>| BadRow {
            file: file.to_owned(),
            line,
            column: None,
            reason: reason.to_owned(),
            value: None,
            detail,
        };
        let Ok(text) = std::str::from_utf8(&buf) else {
            skipped.take(settings.on_error, bad("the line is not valid UTF-8", None))?;
            continue;
        };
        let trimmed = text.trim_start();
        if !trimmed.starts_with('{') {
            skipped.take(
                settings.on_error,
                bad("the line is not a JSON object", None),
            )?;
            continue;
        }
        if schema.is_none() {
            match serde_json::from_str::<Value>(text) {
                Ok(value) => sample.push((line, value)),
                Err(e) => {
                    skipped.take(
                        settings.on_error,
                        bad("not valid JSON", Some(e.to_string())),
                    )?;
                    continue;
                }
            }
        }
        chunk.push(line, &buf);
        if schema.is_none() && sample.len() >= settings.infer_rows.max(1) {
            schema = Some(infer(&sample, overrides, file)?);
            sample.clear();
        }
        if let Some(schema) = &schema {
            if chunk.rows.len() >= CHUNK_ROWS || chunk.bytes.len() >= CHUNK_BYTES {
                flush(schema, &chunk, file, settings.on_error, &mut skipped, sink)?;
                chunk = Chunk::default();
            }
        }
    }
    if bytes_read == 0 || rows == 0 {
        return Err(IngestError::bad(file, 0, None, "the file is empty"));
    }
    if schema.is_none() && !sample.is_empty() {
        schema = Some(infer(&sample, overrides, file)?);
    }
    if let Some(schema) = &schema {
        flush(schema, &chunk, file, settings.on_error, &mut skipped, sink)?;
    }
    Ok(skipped)
}

/// Whether a line is refused before decoding: not UTF-8, not an object.
fn bad_line_ahead(line: &[u8]) -> bool {
    match std::str::from_utf8(line) {
        Ok(text) => !text.trim_start().starts_with('{'),
        Err(_) => true,
    }
}

/// arrow-json's schema of the sampled lines: a column only ever null is a string; a string
/// column whose every value is a date (`YYYY-MM-DD`) is a date, or a timestamp, with its zone
/// when every one has one; nested values (objects, arrays) are refused.
fn infer(
    sample: &[(u64, Value)],
    overrides: &Overrides,
    file: &str,
) -> Result<SchemaRef, IngestError> {
    let inferred =
        infer_json_schema_from_iterator(sample.iter().map(|(_, v)| Ok::<_, ArrowError>(v)))
            .map_err(|e| IngestError::bad(file, 0, None, format!("inferring the schema: {e}")))?;
    let mut fields = Vec::with_capacity(inferred.fields().len());
    for field in inferred.fields() {
        let name = field.name();
        let values = || {
            sample
                .iter()
                .filter_map(|(line, v)| v.get(name).map(|v| (*line, v)))
        };
        let data_type = match field.data_type() {
            DataType::Utf8 => {
                let strings: Vec<&str> = values().filter_map(|(_, v)| v.as_str()).collect();
                if !strings.is_empty() && strings.iter().all(|s| looks_like_date(s)) {
                    DataType::Date32
                } else if !strings.is_empty() && strings.iter().all(|s| looks_like_timestamp(s)) {
                    settle(
                        &DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, None),
                        strings.iter().all(|s| has_zone(s)),
                    )
                } else {
                    DataType::Utf8
                }
            }
            DataType::Null | DataType::Int64 | DataType::Float64 | DataType::Boolean => {
                settle(field.data_type(), false)
            }
            _ => {
                let line = values()
                    .find(|(_, v)| v.is_object() || v.is_array())
                    .map_or(0, |(line, _)| line);
                return Err(IngestError::bad(
                    file,
                    line,
                    Some(name),
                    "a nested value (an object or an array): only flat objects are converted; \
                     flatten it, or give the column as string after encoding it as one",
                ));
            }
        };
        fields.push(Field::new(name, data_type, true));
    }
    if fields.is_empty() {
        return Err(IngestError::bad(
            file,
            0,
            None,
            "the objects have no keys: no column",
        ));
    }
    overrides.apply(Schema::new(fields), file)
}

fn flush(
    schema: &SchemaRef,
    chunk: &Chunk,
    file: &str,
    on_error: OnError,
    skipped: &mut Skipped,
    sink: &mut dyn FnMut(&RecordBatch) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    if chunk.rows.is_empty() {
        return Ok(());
    }
    if let Ok(batch) = decode(schema, &chunk.bytes, chunk.rows.len(), true) {
        return sink(&batch);
    }
    let mut good = Chunk::default();
    for (i, (line, _)) in chunk.rows.iter().enumerate() {
        let raw = chunk.row(i);
        match decode(schema, raw, 1, true) {
            Ok(_) => good.push(*line, raw),
            Err(e) => skipped.take(on_error, bad_line(schema, raw, file, *line, e))?,
        }
    }
    if good.rows.is_empty() {
        return Ok(());
    }
    let batch = decode(schema, &good.bytes, good.rows.len(), true)
        .map_err(|e| IngestError::bad(file, good.rows[0].0, None, e.to_string()))?;
    sink(&batch)
}

/// Names the key of a line that does not decode: a key the schema lacks, or a value not of
/// its column's type.
fn bad_line(schema: &SchemaRef, raw: &[u8], file: &str, line: u64, error: ArrowError) -> BadRow {
    let bad = |column: Option<&str>, reason: String| BadRow {
        file: file.to_owned(),
        line,
        column: column.map(str::to_owned),
        reason,
        value: None,
        detail: None,
    };
    let object = match serde_json::from_slice::<Value>(raw) {
        Ok(Value::Object(object)) => object,
        Ok(_) => return bad(None, "the line is not a JSON object".into()),
        Err(e) => {
            return BadRow {
                detail: Some(e.to_string()),
                ..bad(None, "not valid JSON".into())
            }
        }
    };
    for (key, value) in &object {
        let Ok(field) = schema.field_with_name(key) else {
            let known: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
            return bad(
                Some(key),
                format!(
                    "a key the first lines did not have (the columns: {}); give a schema \
                     (--schema) or more rows to infer from (--infer-rows)",
                    known.join(", ")
                ),
            );
        };
        let single = Arc::new(Schema::new(vec![field.clone()]));
        if decode(&single, raw, 1, false).is_err() {
            let kind = ColumnType::name_of(field.data_type());
            return BadRow {
                value: Some(super::clip(&value.to_string())),
                ..bad(Some(key), format!("not a valid {kind}"))
            };
        }
    }
    BadRow {
        detail: Some(error.to_string()),
        ..bad(None, "the line does not decode".into())
    }
}
