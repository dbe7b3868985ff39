//! CSV and TSV to Arrow batches: csv-core splits the records (each checked for its number of
//! fields and UTF-8, and named by its line), arrow-csv infers the schema from the first rows
//! and decodes the rest in chunks; a chunk that does not decode is decoded row by row, and
//! column by column for the row that fails, to name the row and the column.

use std::io::BufRead;

use arrow_array::RecordBatch;
use arrow_csv::reader::{Format as CsvFormat, ReaderBuilder};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use regex::Regex;

use super::error::{BadRow, IngestError, OnError, Skipped};
use super::records::{RecordError, Records};
use super::schema::{check_names, has_zone, settle, ColumnType, Overrides};
use super::Settings;

/// Rows decoded at once.
const CHUNK_ROWS: usize = 8192;
/// Raw bytes decoded at once.
const CHUNK_BYTES: usize = 8 << 20;

/// A run of checked rows: their raw bytes and where each starts.
#[derive(Default)]
struct Chunk {
    bytes: Vec<u8>,
    /// (line, start in `bytes`)
    rows: Vec<(u64, usize)>,
}

impl Chunk {
    fn push(&mut self, line: u64, raw: &[u8]) {
        self.rows.push((line, self.bytes.len()));
        self.bytes.extend_from_slice(raw);
        if !raw.ends_with(b"\n") && !raw.ends_with(b"\r") {
            self.bytes.push(b'\n');
        }
    }

    fn row(&self, i: usize) -> &[u8] {
        let end = self
            .rows
            .get(i + 1)
            .map_or(self.bytes.len(), |(_, start)| *start);
        &self.bytes[self.rows[i].1..end]
    }

    fn full(&self) -> bool {
        self.rows.len() >= CHUNK_ROWS || self.bytes.len() >= CHUNK_BYTES
    }

    fn clear(&mut self) {
        self.bytes.clear();
        self.rows.clear();
    }
}

/// Settings of one CSV input, as arrow-csv takes them.
struct Dialect {
    delimiter: u8,
    quote: u8,
    nulls: Option<Regex>,
}

impl Dialect {
    fn is_null(&self, value: &str) -> bool {
        match &self.nulls {
            Some(re) => re.is_match(value),
            None => value.is_empty(),
        }
    }

    fn decode(
        &self,
        schema: &SchemaRef,
        bytes: &[u8],
        rows: usize,
        projection: Option<Vec<usize>>,
    ) -> Result<RecordBatch, ArrowError> {
        let mut builder = ReaderBuilder::new(schema.clone())
            .with_header(false)
            .with_delimiter(self.delimiter)
            .with_quote(self.quote)
            .with_batch_size(rows.max(1));
        if let Some(re) = &self.nulls {
            builder = builder.with_null_regex(re.clone());
        }
        if let Some(p) = projection {
            builder = builder.with_projection(p);
        }
        let mut decoder = builder.build_decoder();
        let mut offset = 0;
        while offset < bytes.len() {
            let n = decoder.decode(&bytes[offset..])?;
            if n == 0 {
                break;
            }
            offset += n;
        }
        decoder.decode(&[])?;
        Ok(decoder
            .flush()?
            .unwrap_or_else(|| RecordBatch::new_empty(schema.clone())))
    }
}

/// The null regex of `--null` values (the empty field is always null).
pub fn null_regex(nulls: &[String]) -> Result<Option<Regex>, IngestError> {
    if nulls.is_empty() {
        return Ok(None);
    }
    let alternatives: Vec<String> = nulls.iter().map(|n| regex::escape(n)).collect();
    Regex::new(&format!("^(?:|{})$", alternatives.join("|")))
        .map(Some)
        .map_err(|e| IngestError::Usage(format!("--null: {e}")))
}

/// Converts one CSV input: the header, the schema (inferred from the first
/// `settings.infer_rows` rows, then overridden), every row checked and decoded; each batch
/// handed to `sink`, which is first given the schema.
pub fn convert<R: BufRead>(
    src: R,
    file: &str,
    delimiter: u8,
    settings: &Settings,
    overrides: &Overrides,
    sink: &mut dyn FnMut(&RecordBatch) -> Result<(), IngestError>,
) -> Result<Skipped, IngestError> {
    let dialect = Dialect {
        delimiter,
        quote: b'"',
        nulls: null_regex(&settings.nulls)?,
    };
    let mut records = Records::new(src, delimiter, dialect.quote);
    let read = |records: &mut Records<R>| {
        records.next_record().map_err(|e| match e {
            RecordError::Io(e) => IngestError::Io(format!("reading {file}"), e),
            RecordError::TooLong(line) => IngestError::bad(
                file,
                line,
                None,
                format!(
                    "a record over {} MiB: a quote left open?",
                    super::records::MAX_RECORD >> 20
                ),
            ),
        })
    };
    let Some(header_line) = read(&mut records)? else {
        return Err(IngestError::bad(file, 0, None, "the file is empty"));
    };
    if records.unterminated_quote() {
        return Err(IngestError::bad(
            file,
            header_line,
            None,
            "unterminated quote",
        ));
    }
    let mut names = Vec::with_capacity(records.fields());
    for i in 0..records.fields() {
        let name = std::str::from_utf8(records.field(i)).map_err(|_| {
            IngestError::bad(
                file,
                header_line,
                None,
                format!("the header's column {} is not valid UTF-8", i + 1),
            )
        })?;
        names.push(name.to_owned());
    }
    check_names(&names, file)?;
    let mut skipped = Skipped::default();
    let mut chunk = Chunk::default();
    let mut zoned = vec![true; names.len()];
    let mut schema: Option<SchemaRef> = None;
    let mut seen_rows = 0u64;
    while let Some(line) = read(&mut records)? {
        seen_rows += 1;
        if let Some(bad) = check(&records, &names, file, line) {
            if settings.on_error == OnError::Fail && !chunk.rows.is_empty() {
                // A bad value on an earlier line is the one to name.
                let schema = match &schema {
                    Some(schema) => schema.clone(),
                    None => infer(&dialect, &chunk, &names, &zoned, overrides, file)?,
                };
                flush(
                    &dialect,
                    &schema,
                    &chunk,
                    &names,
                    file,
                    settings.on_error,
                    &mut skipped,
                    sink,
                )?;
            }
            skipped.take(settings.on_error, bad)?;
            continue;
        }
        if schema.is_none() {
            for (i, zoned) in zoned.iter_mut().enumerate() {
                if let Ok(value) = std::str::from_utf8(records.field(i)) {
                    *zoned &= dialect.is_null(value) || has_zone(value);
                }
            }
        }
        chunk.push(line, &records.raw);
        if schema.is_none() && chunk.rows.len() >= settings.infer_rows.max(1) {
            schema = Some(infer(&dialect, &chunk, &names, &zoned, overrides, file)?);
        }
        if chunk.full() {
            if let Some(schema) = &schema {
                flush(
                    &dialect,
                    schema,
                    &chunk,
                    &names,
                    file,
                    settings.on_error,
                    &mut skipped,
                    sink,
                )?;
                chunk.clear();
            }
        }
    }
    if seen_rows == 0 {
        return Err(IngestError::bad(
            file,
            0,
            None,
            "the file has a header and no rows",
        ));
    }
    if schema.is_none() && !chunk.rows.is_empty() {
        schema = Some(infer(&dialect, &chunk, &names, &zoned, overrides, file)?);
    }
    if let Some(schema) = &schema {
        flush(
            &dialect,
            schema,
            &chunk,
            &names,
            file,
            settings.on_error,
            &mut skipped,
            sink,
        )?;
    }
    Ok(skipped)
}

/// A record's number of fields, its UTF-8, and a quote left open at the end of the input.
fn check<R: BufRead>(
    records: &Records<R>,
    names: &[String],
    file: &str,
    line: u64,
) -> Option<BadRow> {
    let bad = |column: Option<&str>, reason: String| {
        Some(BadRow {
            file: file.to_owned(),
            line,
            column: column.map(str::to_owned),
            reason,
            value: None,
            detail: None,
        })
    };
    if records.unterminated_quote() {
        return bad(
            None,
            "unterminated quote (a quoted field runs to the end of the file)".into(),
        );
    }
    let n = records.fields();
    if n != names.len() {
        let (more, by) = if n > names.len() {
            ("many", n - names.len())
        } else {
            ("few", names.len() - n)
        };
        return bad(
            None,
            format!(
                "too {more} fields: {n} where the header has {} ({by} {})",
                names.len(),
                if n > names.len() { "more" } else { "fewer" }
            ),
        );
    }
    for (i, name) in names.iter().enumerate() {
        if std::str::from_utf8(records.field(i)).is_err() {
            return bad(Some(name), "the value is not valid UTF-8".into());
        }
    }
    None
}

/// The schema arrow-csv infers from the rows sampled, named by the header, settled
/// ([`settle`]) and overridden.
fn infer(
    dialect: &Dialect,
    chunk: &Chunk,
    names: &[String],
    zoned: &[bool],
    overrides: &Overrides,
    file: &str,
) -> Result<SchemaRef, IngestError> {
    let mut format = CsvFormat::default()
        .with_header(false)
        .with_delimiter(dialect.delimiter)
        .with_quote(dialect.quote);
    if let Some(re) = &dialect.nulls {
        format = format.with_null_regex(re.clone());
    }
    let (inferred, _) = format
        .infer_schema(&chunk.bytes[..], None)
        .map_err(|e| IngestError::bad(file, 0, None, format!("inferring the schema: {e}")))?;
    let fields: Vec<Field> = inferred
        .fields()
        .iter()
        .zip(names)
        .zip(zoned)
        .map(|((field, name), zoned)| Field::new(name, settle(field.data_type(), *zoned), true))
        .collect();
    overrides.apply(Schema::new(fields), file)
}

/// Decodes a chunk into one batch for `sink`; a chunk that fails is decoded row by row, and the
/// bad rows named (the first an error under [`OnError::Fail`]).
#[allow(clippy::too_many_arguments)]
fn flush(
    dialect: &Dialect,
    schema: &SchemaRef,
    chunk: &Chunk,
    names: &[String],
    file: &str,
    on_error: OnError,
    skipped: &mut Skipped,
    sink: &mut dyn FnMut(&RecordBatch) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    if chunk.rows.is_empty() {
        return Ok(());
    }
    if let Ok(batch) = dialect.decode(schema, &chunk.bytes, chunk.rows.len(), None) {
        return sink(&batch);
    }
    let mut good = Chunk::default();
    for (i, (line, _)) in chunk.rows.iter().enumerate() {
        let raw = chunk.row(i);
        match dialect.decode(schema, raw, 1, None) {
            Ok(_) => good.push(*line, raw),
            Err(e) => skipped.take(
                on_error,
                bad_row(dialect, schema, raw, names, file, *line, e),
            )?,
        }
    }
    if good.rows.is_empty() {
        return Ok(());
    }
    let batch = dialect
        .decode(schema, &good.bytes, good.rows.len(), None)
        .map_err(|e| IngestError::bad(file, good.rows[0].0, None, e.to_string()))?;
    sink(&batch)
}

/// Names the column of a row that does not decode, and its value.
fn bad_row(
    dialect: &Dialect,
    schema: &SchemaRef,
    raw: &[u8],
    names: &[String],
    file: &str,
    line: u64,
    error: ArrowError,
) -> BadRow {
    for (i, name) in names.iter().enumerate() {
        if dialect.decode(schema, raw, 1, Some(vec![i])).is_err() {
            let mut records = Records::new(raw, dialect.delimiter, dialect.quote);
            let value = match records.next_record() {
                Ok(Some(_)) if i < records.fields() => {
                    String::from_utf8_lossy(records.field(i)).into_owned()
                }
                _ => String::new(),
            };
            let kind = ColumnType::name_of(schema.field(i).data_type());
            return BadRow {
                file: file.to_owned(),
                line,
                column: Some(name.clone()),
                reason: format!("not a valid {kind}"),
                value: Some(format!("'{}'", super::clip(&value))),
                detail: None,
            };
        }
    }
    BadRow {
        file: file.to_owned(),
        line,
        column: None,
        reason: "the row does not decode".into(),
        value: None,
        detail: Some(error.to_string()),
    }
}
