//! CSV and TSV to Arrow batches: csv-core splits the records (each checked for its number of
//! fields and UTF-8, and named by its line), arrow-csv infers the schema from the first rows
//! and decodes the rest in chunks; a chunk that does not decode is decoded row by row, and
//! column by column for the row that fails, to name the row and the column.

use std::io::BufRead;

use arrow_array::RecordBatch;
use arrow_csv::reader::{Format as CsvFormat, ReaderBuilder};
use arrow_schema::{ArrowError, Field, Schema, SchemaRef};
use regex::Regex;

use super::error::{BadRow, IngestError, OnError, Skipped, FIRST_SKIPPED};
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
    /// Records among these lines that failed their checks (`--on-error skip`), taken with the
    /// rows' own bad values in line order: the first [`FIRST_SKIPPED`], and how many more.
    bad: Vec<BadRow>,
    bad_more: u64,
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

/// What the splitter hands on, in the input's order: a chunk of checked rows to decode with
/// the schema, or a record that failed its checks.
enum Work {
    Chunk(Chunk, SchemaRef),
    Bad(BadRow),
}

/// A piece of work done: the batch of a chunk's good rows and its bad rows (in line order),
/// or the bad record as it came.
enum Done {
    /// The batch, the bad rows named, and how many more were bad.
    Decoded(Option<RecordBatch>, Vec<BadRow>, u64),
    Bad(BadRow),
}

/// Converts one CSV input: the header, the schema (inferred from the first
/// `settings.infer_rows` rows, then overridden), every row checked and decoded; each batch
/// handed to `sink`, in the input's order.
///
/// Three stages run at once: this input's records are split and checked on one thread (csv-core
/// is fast), chunks are decoded by arrow-csv on as many threads as there are cores (the most
/// work), and batches reach `sink` on the caller's thread, in order, with the bad rows taken
/// in line order (so `OnError::Fail` names the first bad line, as one thread would). At most
/// two chunks per decoding thread are in flight.
pub fn convert<R: BufRead + Send>(
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
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let on_error = settings.on_error;
    let (work_tx, work_rx) = std::sync::mpsc::sync_channel::<(u64, Work)>(2 * threads);
    // Held by the decoders only: once they all stopped (the collector stopped), the receiver
    // is dropped and a splitter waiting to send stops too.
    let work_rx = std::sync::Arc::new(std::sync::Mutex::new(work_rx));
    let (done_tx, done_rx) =
        std::sync::mpsc::sync_channel::<(u64, Result<Done, IngestError>)>(2 * threads);
    // The header's names, once the splitter read them.
    let names_slot = std::sync::OnceLock::<Vec<String>>::new();
    let (dialect, names_slot) = (&dialect, &names_slot);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let work_rx = std::sync::Arc::clone(&work_rx);
            scope.spawn(move || loop {
                let next = match work_rx.lock() {
                    Ok(rx) => rx.recv(),
                    Err(_) => return,
                };
                let Ok((seq, work)) = next else { return };
                let done = match work {
                    Work::Bad(bad) => Ok(Done::Bad(bad)),
                    Work::Chunk(chunk, schema) => {
                        let names = names_slot.get().map_or(&[][..], Vec::as_slice);
                        decode_chunk(dialect, &schema, &chunk, names, file, on_error)
                            .map(|(batch, bad, more)| Done::Decoded(batch, bad, more))
                    }
                };
                if done_tx.send((seq, done)).is_err() {
                    return;
                }
            });
        }
        drop(done_tx);
        drop(work_rx);
        let splitter = scope
            .spawn(move || split(src, file, dialect, settings, overrides, names_slot, work_tx));
        // The collector: results in order, whatever order the decoders finish in.
        let mut skipped = Skipped::default();
        let mut waiting = std::collections::BTreeMap::new();
        let mut next = 0u64;
        let mut collected: Result<(), IngestError> = Ok(());
        for (seq, done) in done_rx.iter() {
            waiting.insert(seq, done);
            while let Some(done) = waiting.remove(&next) {
                next += 1;
                let step = done.and_then(|done| match done {
                    Done::Bad(bad) => skipped.take(on_error, bad),
                    Done::Decoded(batch, bad, more) => {
                        for row in bad {
                            skipped.take(on_error, row)?;
                        }
                        skipped.count += more;
                        batch.map_or(Ok(()), |batch| sink(&batch))
                    }
                });
                if let Err(e) = step {
                    collected = Err(e);
                    break;
                }
            }
            if collected.is_err() {
                break;
            }
        }
        // Stopping here drops the results' receiver: the decoders, then the splitter, stop at
        // their next send.
        drop(done_rx);
        let split = splitter
            .join()
            .map_err(|_| IngestError::bad(file, 0, None, "the CSV reader panicked"))?;
        // An error met in order (an earlier line) wins over one the splitter met further on.
        collected?;
        split?;
        Ok(skipped)
    })
}

/// The splitting stage of [`convert`]: the header, then every record checked and gathered into
/// chunks, sent in order with the schema once it is inferred; a record that fails its checks
/// is sent as it is, in its place. Stops when the other stages stopped.
fn split<R: BufRead>(
    src: R,
    file: &str,
    dialect: &Dialect,
    settings: &Settings,
    overrides: &Overrides,
    names_slot: &std::sync::OnceLock<Vec<String>>,
    work: std::sync::mpsc::SyncSender<(u64, Work)>,
) -> Result<(), IngestError> {
    let mut records = Records::new(src, dialect.delimiter, dialect.quote);
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
    let names = names_slot.get_or_init(|| names);
    let mut seq = 0u64;
    // Sends the next piece of work; false once the other stages stopped.
    let mut send = |item: Work| {
        let sent = work.send((seq, item)).is_ok();
        seq += 1;
        sent
    };
    let mut chunk = Chunk::default();
    let mut zoned = vec![true; names.len()];
    let mut schema: Option<SchemaRef> = None;
    let mut seen_rows = 0u64;
    while let Some(line) = read(&mut records)? {
        seen_rows += 1;
        if let Some(bad) = check(&records, names, file, line) {
            if settings.on_error == OnError::Fail {
                // The rows before it go first, so that an earlier bad value is named first;
                // the bad record then stops the conversion, and nothing more is read.
                if !chunk.rows.is_empty() {
                    let schema = match &schema {
                        Some(schema) => schema.clone(),
                        None => infer(dialect, &chunk, names, &zoned, overrides, file)?,
                    };
                    if !send(Work::Chunk(std::mem::take(&mut chunk), schema)) {
                        return Ok(());
                    }
                }
                send(Work::Bad(bad));
                return Ok(());
            }
            if chunk.bad.len() < FIRST_SKIPPED {
                chunk.bad.push(bad);
            } else {
                chunk.bad_more += 1;
            }
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
            schema = Some(infer(dialect, &chunk, names, &zoned, overrides, file)?);
        }
        if chunk.full() {
            if let Some(schema) = &schema {
                if !send(Work::Chunk(std::mem::take(&mut chunk), schema.clone())) {
                    return Ok(());
                }
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
        schema = Some(infer(dialect, &chunk, names, &zoned, overrides, file)?);
    }
    // Every row failed its checks: no schema, nothing to decode, only bad rows to count.
    let schema = schema.unwrap_or_else(|| std::sync::Arc::new(Schema::empty()));
    send(Work::Chunk(chunk, schema));
    Ok(())
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

/// Decodes a chunk into one batch of its good rows, and its bad rows in line order; a chunk
/// that fails is decoded row by row, and the bad rows named (under [`OnError::Fail`], up to
/// the first, which is the error to report), with the count of bad rows not named.
fn decode_chunk(
    dialect: &Dialect,
    schema: &SchemaRef,
    chunk: &Chunk,
    names: &[String],
    file: &str,
    on_error: OnError,
) -> Result<(Option<RecordBatch>, Vec<BadRow>, u64), IngestError> {
    let mut bad = chunk.bad.clone();
    if chunk.rows.is_empty() {
        return Ok((None, bad, chunk.bad_more));
    }
    if let Ok(batch) = dialect.decode(schema, &chunk.bytes, chunk.rows.len(), None) {
        return Ok((Some(batch), bad, chunk.bad_more));
    }
    let mut good = Chunk::default();
    for (i, (line, _)) in chunk.rows.iter().enumerate() {
        let raw = chunk.row(i);
        match dialect.decode(schema, raw, 1, None) {
            Ok(_) => good.push(*line, raw),
            Err(e) => {
                bad.push(bad_row(dialect, schema, raw, names, file, *line, e));
                if on_error == OnError::Fail {
                    return Ok((None, bad, 0));
                }
            }
        }
    }
    bad.sort_by_key(|row| row.line);
    if good.rows.is_empty() {
        return Ok((None, bad, chunk.bad_more));
    }
    let batch = dialect
        .decode(schema, &good.bytes, good.rows.len(), None)
        .map_err(|e| IngestError::bad(file, good.rows[0].0, None, e.to_string()))?;
    Ok((Some(batch), bad, chunk.bad_more))
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
