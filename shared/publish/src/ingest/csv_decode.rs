//! The decoding stage of [`super::csv::convert`]: a chunk or a block of records into one batch
//! by arrow-csv. arrow-csv's own checks (each record's number of fields, UTF-8, each value's
//! type) are the detection: a block it refuses is read again record by record with csv-core
//! ([`rescan`]) to name the first bad line and column, and under `--on-error skip` to leave out
//! each bad record, counted.

use arrow_array::RecordBatch;
use arrow_schema::{ArrowError, SchemaRef};

use super::csv_dialect::Dialect;
use super::error::{BadRow, IngestError, OnError, FIRST_SKIPPED};
use super::records::{RecordError, Records};
use super::schema::ColumnType;

/// A run of checked rows: their raw bytes and where each starts (the rows read one by one
/// while the schema is inferred, and the rows of a block read again).
#[derive(Default)]
pub(super) struct Chunk {
    pub bytes: Vec<u8>,
    /// (line, start in `bytes`)
    pub rows: Vec<(u64, usize)>,
    /// Records among these lines that failed their checks (`--on-error skip`), taken with the
    /// rows' own bad values in line order: the first [`FIRST_SKIPPED`], and how many more.
    pub bad: Vec<BadRow>,
    pub bad_more: u64,
}

impl Chunk {
    pub fn push(&mut self, line: u64, raw: &[u8]) {
        self.rows.push((line, self.bytes.len()));
        self.bytes.extend_from_slice(raw);
        if !raw.ends_with(b"\n") && !raw.ends_with(b"\r") {
            self.bytes.push(b'\n');
        }
    }

    /// A record that failed its checks, kept under `--on-error skip` (the first few named).
    pub fn skip(&mut self, bad: BadRow) {
        if self.bad.len() < FIRST_SKIPPED {
            self.bad.push(bad);
        } else {
            self.bad_more += 1;
        }
    }

    fn row(&self, i: usize) -> &[u8] {
        let end = self
            .rows
            .get(i + 1)
            .map_or(self.bytes.len(), |(_, start)| *start);
        &self.bytes[self.rows[i].1..end]
    }
}

/// Whole records as they are in the input, once the schema is known: the splitter found
/// their bounds (csv-core) and checked nothing else. Ends with a line end (the last record of
/// the input is given one).
pub(super) struct Block {
    pub bytes: Vec<u8>,
    /// How many records `bytes` holds, as csv-core counted them.
    pub rows: usize,
    /// csv-core's line where `bytes` starts (the line the first record starts on, blank lines
    /// before it aside): record `n` of a re-read starting on line `l` is on line
    /// `first_line + l - 1`.
    pub first_line: u64,
}

/// A record's number of fields, its UTF-8, and a quote left open at the end of the input.
pub(super) fn check<R: std::io::BufRead>(
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

/// Decodes a block into one batch, by the decoding thread's `kept` decoder; a block arrow-csv
/// refuses (or whose rows it counts otherwise) is read again record by record and decoded as
/// a chunk ([`decode_chunk`]).
pub(super) fn decode_block(
    dialect: &Dialect,
    schema: &SchemaRef,
    block: &Block,
    names: &[String],
    file: &str,
    on_error: OnError,
    kept: &mut Option<(arrow_csv::reader::Decoder, usize)>,
) -> Result<(Option<RecordBatch>, Vec<BadRow>, u64), IngestError> {
    if block.rows == 0 {
        return Ok((None, Vec::new(), 0));
    }
    if let Ok(batch) = dialect.decode_lines(kept, schema, &block.bytes, block.rows) {
        if batch.num_rows() == block.rows {
            return Ok((Some(batch), Vec::new(), 0));
        }
    }
    let chunk = rescan(dialect, block, names, file, on_error)?;
    decode_chunk(dialect, schema, &chunk, names, file, on_error)
}

/// A block read again record by record, each named by its line and checked ([`check`]): the
/// good rows, and the bad records (under [`OnError::Fail`], up to the first).
fn rescan(
    dialect: &Dialect,
    block: &Block,
    names: &[String],
    file: &str,
    on_error: OnError,
) -> Result<Chunk, IngestError> {
    let mut records = Records::new(&block.bytes[..], dialect.delimiter, dialect.quote);
    let mut chunk = Chunk::default();
    loop {
        let line = match records.next_record() {
            Ok(Some(line)) => block.first_line + line - 1,
            Ok(None) => return Ok(chunk),
            Err(RecordError::Io(e)) => return Err(IngestError::Io(format!("reading {file}"), e)),
            Err(RecordError::TooLong(line)) => {
                let line = block.first_line + line - 1;
                let reason = format!(
                    "a record over {} MiB: a quote left open?",
                    super::records::MAX_RECORD >> 20
                );
                return Err(IngestError::bad(file, line, None, reason));
            }
        };
        match check(&records, names, file, line) {
            Some(bad) if on_error == OnError::Fail => {
                chunk.bad.push(bad);
                return Ok(chunk);
            }
            Some(bad) => chunk.skip(bad),
            None => chunk.push(line, &records.raw),
        }
    }
}

/// Decodes a chunk into one batch of its good rows, and its bad rows in line order; a chunk
/// that fails is halved until each bad row stands alone ([`sift`]), and the bad rows named
/// (under [`OnError::Fail`], up to the first, which is the error to report), with the count of
/// bad rows not named.
pub(super) fn decode_chunk(
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
    let sifting = Sifting {
        dialect,
        schema,
        chunk,
        names,
        file,
        on_error,
    };
    let stopped = sifting.sift(0..chunk.rows.len(), &mut good, &mut bad);
    // The first bad line is the one reported.
    bad.sort_by_key(|row| row.line);
    if stopped {
        return Ok((None, bad, 0));
    }
    if good.rows.is_empty() {
        return Ok((None, bad, chunk.bad_more));
    }
    let batch = dialect
        .decode(schema, &good.bytes, good.rows.len(), None)
        .map_err(|e| IngestError::bad(file, good.rows[0].0, None, e.to_string()))?;
    Ok((Some(batch), bad, chunk.bad_more))
}

/// A chunk that does not decode, sifted for its bad rows.
struct Sifting<'a> {
    dialect: &'a Dialect,
    schema: &'a SchemaRef,
    chunk: &'a Chunk,
    names: &'a [String],
    file: &'a str,
    on_error: OnError,
}

impl Sifting<'_> {
    /// The rows of `range` that decode go to `good`, in order, the others (named) to `bad`: a
    /// range that decodes is good as a whole, one that does not is halved, down to a row
    /// alone. True when a bad row stops everything ([`OnError::Fail`]).
    fn sift(&self, range: std::ops::Range<usize>, good: &mut Chunk, bad: &mut Vec<BadRow>) -> bool {
        let chunk = self.chunk;
        let start = chunk.rows[range.start].1;
        let end = chunk
            .rows
            .get(range.end)
            .map_or(chunk.bytes.len(), |(_, start)| *start);
        let decoded = self
            .dialect
            .decode(self.schema, &chunk.bytes[start..end], range.len(), None);
        match decoded {
            Ok(_) => {
                for i in range {
                    good.push(chunk.rows[i].0, chunk.row(i));
                }
                false
            }
            Err(e) if range.len() == 1 => {
                let (line, raw) = (chunk.rows[range.start].0, chunk.row(range.start));
                let (dialect, schema) = (self.dialect, self.schema);
                bad.push(bad_row(
                    dialect, schema, raw, self.names, self.file, line, e,
                ));
                self.on_error == OnError::Fail
            }
            Err(_) => {
                let mid = range.start + range.len() / 2;
                self.sift(range.start..mid, good, bad) || self.sift(mid..range.end, good, bad)
            }
        }
    }
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

/// What the splitter hands on, in the input's order: a chunk of checked rows or a block of
/// records to decode with the schema, or a record that failed its checks.
pub(super) enum Work {
    Chunk(Chunk, SchemaRef),
    Block(Block, SchemaRef),
    Bad(BadRow),
}
