//! How one CSV input is written (delimiter, quote, nulls), and its records decoded by
//! arrow-csv with it: shared by the splitter ([`super::csv_split`]), the decoders
//! ([`super::csv_decode`]) and the pipeline ([`super::csv`]).

use arrow_array::RecordBatch;
use arrow_csv::reader::{Decoder, ReaderBuilder};
use arrow_schema::{ArrowError, SchemaRef};
use regex::Regex;

use super::error::IngestError;

/// Settings of one CSV input, as arrow-csv takes them.
pub(super) struct Dialect {
    pub delimiter: u8,
    pub quote: u8,
    pub nulls: Option<Regex>,
}

impl Dialect {
    pub fn is_null(&self, value: &str) -> bool {
        match &self.nulls {
            Some(re) => re.is_match(value),
            None => value.is_empty(),
        }
    }

    fn builder(&self, schema: &SchemaRef, rows: usize) -> ReaderBuilder {
        let mut builder = ReaderBuilder::new(schema.clone())
            .with_header(false)
            .with_delimiter(self.delimiter)
            .with_quote(self.quote)
            .with_batch_size(rows.max(1));
        if let Some(re) = &self.nulls {
            builder = builder.with_null_regex(re.clone());
        }
        builder
    }

    /// The records of `bytes`, at most `rows` of them, in one batch.
    pub fn decode(
        &self,
        schema: &SchemaRef,
        bytes: &[u8],
        rows: usize,
        projection: Option<Vec<usize>>,
    ) -> Result<RecordBatch, ArrowError> {
        let mut builder = self.builder(schema, rows);
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

    /// The `rows` records of `bytes`, which ends with a line end, in one batch, by a decoder
    /// kept from one call to the next (its buffers are not allocated again for each block;
    /// one that fails is dropped). An error when `bytes` holds more records.
    pub fn decode_lines(
        &self,
        kept: &mut Option<(Decoder, usize)>,
        schema: &SchemaRef,
        bytes: &[u8],
        rows: usize,
    ) -> Result<RecordBatch, ArrowError> {
        if kept.as_ref().is_none_or(|(_, capacity)| *capacity <= rows) {
            let capacity = (rows + 1).next_power_of_two();
            *kept = Some((self.builder(schema, capacity).build_decoder(), capacity));
        }
        let Some((decoder, _)) = kept.as_mut() else {
            unreachable!("a decoder was just kept")
        };
        let decoded = (|| {
            let mut offset = 0;
            while offset < bytes.len() {
                let n = decoder.decode(&bytes[offset..])?;
                if n == 0 {
                    return Err(ArrowError::CsvError("more records than counted".into()));
                }
                offset += n;
            }
            decoder.flush()
        })();
        match decoded {
            Ok(Some(batch)) => Ok(batch),
            Ok(None) => Ok(RecordBatch::new_empty(schema.clone())),
            Err(e) => {
                *kept = None;
                Err(e)
            }
        }
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
