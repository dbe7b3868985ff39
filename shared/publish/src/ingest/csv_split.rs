//! The splitting stage of [`super::csv::convert`]: the header, then the first rows one by one
//! (each checked, for the schema's inference), then, once the schema is known, the rest of the
//! input in blocks of whole records: csv-core finds where the last whole record of a block
//! ends, the block goes to the decoders as it was read (no copy, no check: arrow-csv's own
//! checks detect a bad record, [`super::csv_decode`]), and the partial record after it starts
//! the next block.

use std::io::BufRead;

use arrow_schema::{Field, Schema, SchemaRef};
use csv_core::ReadRecordResult;

use super::csv_decode::{check, Block, Chunk, Work};
use super::csv_dialect::Dialect;
use super::error::{BadRow, IngestError, OnError};
use super::records::{blank_lines, RecordError, Records, MAX_RECORD};
use super::schema::{check_names, has_zone, settle, Overrides};
use super::Settings;

/// Raw bytes of CSV in a block (its records end at or after it): 512 KiB to 4 MiB took the
/// same CPU time; 4 MiB twice the memory.
pub(super) const BLOCK_BYTES: usize = 1 << 20;

fn too_long(file: &str, line: u64) -> IngestError {
    IngestError::bad(
        file,
        line,
        None,
        format!("a record over {} MiB: a quote left open?", MAX_RECORD >> 20),
    )
}

/// The header, the rows the schema is inferred from, then the rest in blocks ([`blocks`]),
/// sent in order with the schema once it is inferred; under [`OnError::Fail`], a record read
/// for the inference that fails its checks is sent as it is, in its place, and ends the input.
/// Stops when the other stages stopped.
pub(super) fn split<R: BufRead>(
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
            RecordError::TooLong(line) => too_long(file, line),
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
    let mut seen_rows = 0u64;
    let schema = loop {
        let Some(line) = read(&mut records)? else {
            break None;
        };
        seen_rows += 1;
        if let Some(bad) = check(&records, names, file, line) {
            if settings.on_error == OnError::Fail {
                // The rows before it go first, so that an earlier bad value is named first;
                // the bad record then stops the conversion, and nothing more is read.
                if !chunk.rows.is_empty() {
                    let schema = infer(dialect, &chunk, names, &zoned, overrides, file)?;
                    if !send(Work::Chunk(std::mem::take(&mut chunk), schema)) {
                        return Ok(());
                    }
                }
                send(Work::Bad(bad));
                return Ok(());
            }
            chunk.skip(bad);
            continue;
        }
        for (i, zoned) in zoned.iter_mut().enumerate() {
            if let Ok(value) = std::str::from_utf8(records.field(i)) {
                *zoned &= dialect.is_null(value) || has_zone(value);
            }
        }
        chunk.push(line, &records.raw);
        if chunk.rows.len() >= settings.infer_rows.max(1) {
            break Some(infer(dialect, &chunk, names, &zoned, overrides, file)?);
        }
    };
    let Some(schema) = schema else {
        // The input ended within the rows read for the schema.
        if seen_rows == 0 {
            return Err(IngestError::bad(
                file,
                0,
                None,
                "the file has a header and no rows",
            ));
        }
        // Every row failed its checks: no schema, nothing to decode, only bad rows to count.
        let schema = if chunk.rows.is_empty() {
            std::sync::Arc::new(Schema::empty())
        } else {
            infer(dialect, &chunk, names, &zoned, overrides, file)?
        };
        send(Work::Chunk(chunk, schema));
        return Ok(());
    };
    if !send(Work::Chunk(chunk, schema.clone())) {
        return Ok(());
    }
    let (src, core) = records.into_parts();
    blocks(src, core, dialect.quote, file, &schema, &mut send)
}

/// The rest of the input after the rows read one by one, in blocks of about [`BLOCK_BYTES`]
/// of whole records, each sent with the schema; a last record that leaves a quote open is
/// sent on its own, bad. csv-core (`core`, where the rows read one by one left it) finds the
/// records' bounds and counts the lines; nothing else is checked here.
fn blocks<R: BufRead>(
    mut src: R,
    mut core: csv_core::Reader,
    quote: u8,
    file: &str,
    schema: &SchemaRef,
    send: &mut dyn FnMut(Work) -> bool,
) -> Result<(), IngestError> {
    // csv-core copies each field here: only the bounds are kept.
    let mut out = vec![0u8; 1 << 16];
    let mut ends = vec![0usize; 1 << 10];
    let mut block: Vec<u8> = Vec::with_capacity(BLOCK_BYTES + (BLOCK_BYTES >> 2));
    // Bytes of `block` csv-core has read, whole records among them, and where the last ends.
    let (mut parsed, mut rows, mut end) = (0usize, 0usize, 0usize);
    let mut first_line = core.line();
    let mut end_line = first_line;
    loop {
        let want = BLOCK_BYTES.max(parsed + (64 << 10));
        let eof = fill(&mut src, &mut block, want)
            .map_err(|e| IngestError::Io(format!("reading {file}"), e))?;
        while parsed < block.len() {
            let (result, read, _, _) = core.read_record(&block[parsed..], &mut out, &mut ends);
            parsed += read;
            match result {
                ReadRecordResult::Record => {
                    rows += 1;
                    end = parsed;
                    end_line = core.line();
                }
                ReadRecordResult::InputEmpty | ReadRecordResult::End => break,
                ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {}
            }
        }
        if eof {
            // The last record, ended by the end of the input rather than a line end.
            let mut bad = None;
            if finish(&mut core, &mut out, &mut ends) {
                let tail = &block[end..];
                if tail.iter().filter(|b| **b == quote).count() % 2 == 1 {
                    bad = Some(BadRow {
                        file: file.to_owned(),
                        line: end_line + blank_lines(tail),
                        column: None,
                        reason: "unterminated quote (a quoted field runs to the end of the file)"
                            .into(),
                        value: None,
                        detail: None,
                    });
                } else {
                    rows += 1;
                    if !block.ends_with(b"\n") && !block.ends_with(b"\r") {
                        block.push(b'\n');
                    }
                    end = block.len();
                }
            }
            block.truncate(end);
            let block = Block {
                bytes: block,
                rows,
                first_line,
            };
            if rows > 0 && !send(Work::Block(block, schema.clone())) {
                return Ok(());
            }
            if let Some(bad) = bad {
                send(Work::Bad(bad));
            }
            return Ok(());
        }
        if block.len() - end > MAX_RECORD {
            return Err(too_long(file, end_line + blank_lines(&block[end..])));
        }
        if rows > 0 {
            // The partial record after the last whole one starts the next block; csv-core
            // has read it already.
            let mut next = Vec::with_capacity(BLOCK_BYTES + (BLOCK_BYTES >> 2));
            next.extend_from_slice(&block[end..]);
            parsed = next.len();
            block.truncate(end);
            let full = Block {
                bytes: std::mem::replace(&mut block, next),
                rows,
                first_line,
            };
            if !send(Work::Block(full, schema.clone())) {
                return Ok(());
            }
            (rows, end, first_line) = (0, 0, end_line);
        }
    }
}

/// Reads into `block` until it holds `want` bytes; true at the end of the input.
fn fill<R: BufRead>(src: &mut R, block: &mut Vec<u8>, want: usize) -> std::io::Result<bool> {
    while block.len() < want {
        let buf = match src.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(true);
        }
        let n = buf.len().min(want - block.len());
        block.extend_from_slice(&buf[..n]);
        src.consume(n);
    }
    Ok(false)
}

/// Tells csv-core the input ended: true when that ended a record.
fn finish(core: &mut csv_core::Reader, out: &mut [u8], ends: &mut [usize]) -> bool {
    loop {
        match core.read_record(&[], out, ends).0 {
            ReadRecordResult::Record => return true,
            ReadRecordResult::End | ReadRecordResult::InputEmpty => return false,
            ReadRecordResult::OutputFull | ReadRecordResult::OutputEndsFull => {}
        }
    }
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
    let mut format = arrow_csv::reader::Format::default()
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
