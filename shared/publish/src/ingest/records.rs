//! CSV records as csv-core (the parser under arrow-csv) splits them, each with its raw bytes
//! and the line it starts on, so that a bad one can be named and left out before arrow-csv
//! decodes the rest.

use std::io::BufRead;

use csv_core::{ReadRecordResult, Reader, ReaderBuilder};

/// The longest record read (its fields' bytes): past it, a quote was surely left open.
pub const MAX_RECORD: usize = 64 << 20;

/// What reading a record can meet, besides a record.
#[derive(Debug)]
pub enum RecordError {
    Io(std::io::Error),
    /// A record longer than [`MAX_RECORD`], starting at this line.
    TooLong(u64),
}

/// The line ends before a record's first byte (csv-core skips empty lines).
pub fn blank_lines(raw: &[u8]) -> u64 {
    raw.iter()
        .take_while(|b| **b == b'\n' || **b == b'\r')
        .filter(|b| **b == b'\n')
        .count() as u64
}

/// The records of a CSV stream.
pub struct Records<R> {
    src: R,
    core: Reader,
    quote: u8,
    /// The current record's raw bytes, as in the input.
    pub raw: Vec<u8>,
    out: Vec<u8>,
    ends: Vec<usize>,
    fields: usize,
    /// Whether the current record was ended by the end of the input, not by a line end.
    pub ended_by_eof: bool,
}

impl<R: BufRead> Records<R> {
    pub fn new(src: R, delimiter: u8, quote: u8) -> Self {
        Records {
            src,
            core: ReaderBuilder::new()
                .delimiter(delimiter)
                .quote(quote)
                .double_quote(true)
                .build(),
            quote,
            raw: Vec::new(),
            out: vec![0; 4096],
            ends: vec![0; 64],
            fields: 0,
            ended_by_eof: false,
        }
    }

    /// Reads the next record; returns the line it starts on (1-based), or `None` at the end.
    pub fn next_record(&mut self) -> Result<Option<u64>, RecordError> {
        self.raw.clear();
        let first_line = self.core.line();
        let (mut nout, mut nend) = (0, 0);
        loop {
            let input = self.src.fill_buf().map_err(RecordError::Io)?;
            let eof = input.is_empty();
            let (result, nin, o, e) =
                self.core
                    .read_record(input, &mut self.out[nout..], &mut self.ends[nend..]);
            self.raw.extend_from_slice(&input[..nin]);
            self.src.consume(nin);
            nout += o;
            nend += e;
            match result {
                ReadRecordResult::InputEmpty => {}
                ReadRecordResult::OutputFull => {
                    if self.out.len() >= MAX_RECORD {
                        return Err(RecordError::TooLong(first_line + self.blank_lines()));
                    }
                    let grown = self.out.len() * 2;
                    self.out.resize(grown, 0);
                }
                ReadRecordResult::OutputEndsFull => {
                    let grown = self.ends.len() * 2;
                    self.ends.resize(grown, 0);
                }
                ReadRecordResult::Record => {
                    self.fields = nend;
                    self.ended_by_eof = eof;
                    return Ok(Some(first_line + self.blank_lines()));
                }
                ReadRecordResult::End => return Ok(None),
            }
        }
    }

    /// Empty lines before the record (csv-core skips them; they are in `raw`).
    fn blank_lines(&self) -> u64 {
        blank_lines(&self.raw)
    }

    /// The input, at the end of the last record read, and the parser, which goes on from there
    /// (its line count with it).
    pub fn into_parts(self) -> (R, Reader) {
        (self.src, self.core)
    }

    /// How many fields the current record has.
    pub fn fields(&self) -> usize {
        self.fields
    }

    /// The current record's field `i`, unquoted.
    pub fn field(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.out[start..self.ends[i]]
    }

    /// Whether the current record, ended by the end of the input, leaves a quote open: an odd
    /// number of quote characters in its raw bytes (a quoted field's own quotes are doubled).
    pub fn unterminated_quote(&self) -> bool {
        self.ended_by_eof && self.raw.iter().filter(|b| **b == self.quote).count() % 2 == 1
    }
}
