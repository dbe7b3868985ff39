//! CSV and TSV to Arrow batches: csv-core splits the records (the first ones one by one, each
//! checked and named by its line, for arrow-csv to infer the schema from; the rest in blocks
//! of whole records, [`super::csv_split`]), arrow-csv decodes them ([`super::csv_decode`]);
//! a block that does not decode is read again record by record, and a row that fails is
//! decoded column by column, to name the row and the column.

use std::io::BufRead;

use arrow_array::RecordBatch;

use super::csv_decode::{decode_block, decode_chunk, Work};
use super::csv_dialect::{null_regex, Dialect};
use super::csv_split::split;
use super::error::{BadRow, IngestError, Skipped};
use super::schema::Overrides;
use super::Settings;

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
/// Three stages run at once: this input's records are split on one thread (csv-core finds
/// where records end, [`super::csv_split`]), blocks are decoded and checked by arrow-csv on as
/// many threads as there are cores (the most work), and batches reach `sink` on the caller's
/// thread, in order, with the bad rows taken in line order (so `OnError::Fail` names the
/// first bad line, as one thread would). At most two blocks per decoding thread are in flight.
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
            scope.spawn(move || {
                let mut kept = None;
                loop {
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
                        Work::Block(block, schema) => {
                            let names = names_slot.get().map_or(&[][..], Vec::as_slice);
                            decode_block(dialect, &schema, &block, names, file, on_error, &mut kept)
                                .map(|(batch, bad, more)| Done::Decoded(batch, bad, more))
                        }
                    };
                    if done_tx.send((seq, done)).is_err() {
                        return;
                    }
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
