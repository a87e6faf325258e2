//! Parquet output on several threads, one row group each: every encoder thread builds the
//! record batch of its row group from the stored rows and encodes its column chunks in
//! memory; an appender thread writes the encoded row groups to the file in order. Building
//! and encoding are most of an export's CPU and row groups are independent, so the work
//! spreads over every core; bounded channels keep at most a few row groups in memory.

use std::fs::File;
use std::io::BufWriter;
use std::num::NonZeroUsize;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::arrow::arrow_writer::{ArrowColumnChunk, ArrowRowGroupWriterFactory, compute_leaves};
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::ColumnPath;
use strata::RowChunk;

use super::parquet::{self as mapping, BatchBuilder};
use super::schema::{ExportSchema, Stop};
use crate::cli::error::{CliError, Result};

/// Output buffer of the Parquet file.
const FILE_BUFFER_BYTES: usize = 1 << 20;
/// Encoder threads at most: one scan thread feeds them, so more would sit idle.
const MAX_ENCODERS: usize = 3;
/// Row pieces queued for each encoder beyond one whole row group.
const PIECES_IN_FLIGHT: usize = 2;

/// The file being written.
type FileWriter = SerializedFileWriter<BufWriter<File>>;

/// The writer properties of every export (docs/PERFORMANCE.md, "Parquet export", explains
/// the choices): Snappy, dictionaries on (keys and low-cardinality strings shrink a lot) but
/// for `plain_columns`, whose values are mostly distinct so a dictionary only costs time,
/// statistics per column chunk only (page statistics cost time and readers rarely use them)
/// and none for `unordered_columns`.
fn properties(schema: &ExportSchema, group_rows: usize) -> WriterProperties {
    let builder = mapping::plain_columns(schema).iter().fold(
        WriterProperties::builder(),
        |builder, column| {
            builder.set_column_dictionary_enabled(ColumnPath::from(column.as_str()), false)
        },
    );
    mapping::unordered_columns(schema)
        .iter()
        .fold(builder, |builder, column| {
            builder.set_column_statistics_enabled(
                ColumnPath::from(column.as_str()),
                EnabledStatistics::None,
            )
        })
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_size(group_rows)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .build()
}

/// Rows `start..start + len` of a chunk, for the row group being built.
struct Piece {
    /// `None` for the empty piece that ends the last, partial row group.
    chunk: Option<Arc<RowChunk>>,
    start: usize,
    len: usize,
    /// The last piece of its row group: encode the group now.
    ends_group: bool,
}

/// One encoder thread and the channel feeding it.
struct Encoder {
    pieces: Option<SyncSender<Piece>>,
    thread: Option<JoinHandle<std::result::Result<(), Stop>>>,
}

/// A Parquet file written by encoder threads, fed whole chunks of rows in scan order.
pub struct ParquetSink {
    encoders: Vec<Encoder>,
    appender: Option<JoinHandle<Result<FileWriter>>>,
    /// The encoder of the row group being filled.
    current: usize,
    /// Rows sent to the row group being filled.
    filled: usize,
    group_rows: usize,
    shown: String,
}

impl ParquetSink {
    /// Creates `path` and starts the threads that write the rows of `schema` to it.
    pub fn create(path: &Path, schema: &ExportSchema, group_rows: usize) -> Result<Self> {
        let shown = path.display().to_string();
        let fail = {
            let shown = shown.clone();
            move |e: ParquetError| CliError::Io(format!("cannot write {shown}: {e}"))
        };
        let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
        let out = BufWriter::with_capacity(FILE_BUFFER_BYTES, file);
        let arrow_schema = mapping::arrow_schema(schema);
        let props = properties(schema, group_rows);
        // `ArrowWriter` puts the Arrow schema into the file's metadata; its parts then let
        // each thread encode whole row groups on its own.
        let (file_writer, factory) =
            ArrowWriter::try_new(out, Arc::clone(&arrow_schema), Some(props))
                .and_then(ArrowWriter::into_serialized_writer)
                .map_err(&fail)?;
        let factory = Arc::new(factory);
        let count = std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .clamp(1, MAX_ENCODERS);
        let mut encoders = Vec::with_capacity(count);
        let mut results = Vec::with_capacity(count);
        // Each encoder's queue holds a whole row group: the scan hands encoder `g` its group
        // and moves on to feed encoder `g + 1` while `g` is still building. With a queue of a
        // few pieces the scan waited on one encoder at a time and the others sat idle
        // (measured: one busy core out of two).
        let queue = group_rows
            .max(1)
            .div_ceil(super::columnar::CHUNK_ROWS)
            .saturating_add(PIECES_IN_FLIGHT);
        for index in 0..count {
            let (pieces, pieces_out) = sync_channel::<Piece>(queue);
            let (done, done_out) = sync_channel::<Vec<ArrowColumnChunk>>(1);
            let work = EncoderWork {
                builder: BatchBuilder::new(schema, group_rows),
                schema: Arc::clone(&arrow_schema),
                factory: Arc::clone(&factory),
                fail: fail.clone(),
            };
            let thread = std::thread::Builder::new()
                .name(format!("parquet-encoder-{index}"))
                .spawn(move || work.run(&pieces_out, &done))
                .map_err(|e| CliError::io("start an encoder thread for", path, e))?;
            encoders.push(Encoder {
                pieces: Some(pieces),
                thread: Some(thread),
            });
            results.push(done_out);
        }
        let appender = std::thread::Builder::new()
            .name("parquet-appender".to_owned())
            .spawn(move || append(file_writer, &results, &fail))
            .map_err(|e| CliError::io("start the writer thread for", path, e))?;
        Ok(Self {
            encoders,
            appender: Some(appender),
            current: 0,
            filled: 0,
            group_rows: group_rows.max(1),
            shown,
        })
    }

    /// Queues the rows of `chunk`, cut at row group boundaries; waits while the encoders are
    /// behind.
    pub fn send(&mut self, chunk: Arc<RowChunk>) -> std::result::Result<(), Stop> {
        let mut start = 0;
        while start < chunk.len() {
            let len = (chunk.len() - start).min(self.group_rows - self.filled);
            self.filled += len;
            let ends_group = self.filled == self.group_rows;
            self.queue(Piece {
                chunk: Some(Arc::clone(&chunk)),
                start,
                len,
                ends_group,
            })?;
            start += len;
        }
        Ok(())
    }

    fn queue(&mut self, piece: Piece) -> std::result::Result<(), Stop> {
        let ends_group = piece.ends_group;
        let sent = self
            .encoders
            .get(self.current)
            .and_then(|e| e.pieces.as_ref())
            .is_some_and(|pieces| pieces.send(piece).is_ok());
        if !sent {
            // The encoder stopped: its own result says why.
            return Err(Stop::ConsumerGone);
        }
        if ends_group {
            self.filled = 0;
            self.current = (self.current + 1) % self.encoders.len();
        }
        Ok(())
    }

    /// Encodes the last, partial row group, waits for every thread and writes the footer.
    pub fn finish(mut self) -> std::result::Result<(), Stop> {
        let ended = if self.filled > 0 {
            self.queue(Piece {
                chunk: None,
                start: 0,
                len: 0,
                ends_group: true,
            })
        } else {
            Ok(())
        };
        let file_writer = self.join(ended)?;
        file_writer
            .close()
            .map_err(|e| CliError::Io(format!("cannot write {}: {e}", self.shown)))?;
        Ok(())
    }

    /// Stops the threads after a failed pass, leaving the file without a footer; returns
    /// the most telling of `stop` and the threads' own reasons to stop.
    pub fn abort(mut self, stop: Stop) -> Stop {
        match self.join(Err(stop)) {
            Ok(_) => Stop::ConsumerGone,
            Err(stop) => stop,
        }
    }

    /// Stops feeding the threads, waits for them, and returns the file writer (its footer
    /// unwritten) or the most telling reason why some thread stopped; `fed` is how feeding
    /// ended.
    fn join(
        &mut self,
        fed: std::result::Result<(), Stop>,
    ) -> std::result::Result<FileWriter, Stop> {
        let mut outcome = fed;
        for encoder in &mut self.encoders {
            drop(encoder.pieces.take());
        }
        for encoder in &mut self.encoders {
            let joined = encoder.thread.take().map_or(Ok(()), |thread| {
                thread.join().unwrap_or_else(|_| {
                    Err(CliError::Io("a Parquet encoder thread panicked".to_owned()).into())
                })
            });
            outcome = worse_outcome(outcome, joined);
        }
        let appended = match self.appender.take().map(JoinHandle::join) {
            Some(Ok(Ok(file_writer))) => Ok(file_writer),
            Some(Ok(Err(err))) => Err(Stop::Failed(err)),
            Some(Err(_)) => {
                Err(CliError::Io("the Parquet writer thread panicked".to_owned()).into())
            }
            None => Err(Stop::ConsumerGone),
        };
        match appended {
            Ok(file_writer) => outcome.map(|()| file_writer),
            Err(stop) => Err(match outcome {
                Ok(()) => stop,
                Err(other) => worse(stop, other),
            }),
        }
    }
}

impl Drop for ParquetSink {
    fn drop(&mut self) {
        // Only an export that failed gets here with threads running: the file is left
        // without a footer, so no reader mistakes it for a whole export.
        if self.appender.is_some() {
            let _ = self.join(Ok(()));
        }
    }
}

/// Of two outcomes, the one that explains the most: a failure, then a schema miss (which
/// reruns the export), then a consumer that went away (which only echoes another stop).
fn worse_outcome(
    a: std::result::Result<(), Stop>,
    b: std::result::Result<(), Stop>,
) -> std::result::Result<(), Stop> {
    match (a, b) {
        (Ok(()), other) | (other, Ok(())) => other,
        (Err(a), Err(b)) => Err(worse(a, b)),
    }
}

/// Of two stops, the one that explains the most (see [`worse_outcome`]).
fn worse(a: Stop, b: Stop) -> Stop {
    let rank = |stop: &Stop| match stop {
        Stop::ConsumerGone => 0,
        Stop::SchemaMiss => 1,
        Stop::Failed(_) => 2,
    };
    if rank(&b) > rank(&a) { b } else { a }
}

/// What an encoder thread owns.
struct EncoderWork<F> {
    builder: BatchBuilder,
    schema: SchemaRef,
    factory: Arc<ArrowRowGroupWriterFactory>,
    fail: F,
}

impl<F: Fn(ParquetError) -> CliError> EncoderWork<F> {
    /// Builds and encodes the row groups whose pieces arrive on `pieces`, handing each to
    /// the appender through `done`. A row group whose last piece never comes (the scan
    /// failed) is dropped.
    fn run(
        mut self,
        pieces: &Receiver<Piece>,
        done: &SyncSender<Vec<ArrowColumnChunk>>,
    ) -> std::result::Result<(), Stop> {
        for piece in pieces {
            if let Some(chunk) = &piece.chunk {
                for row in chunk.rows().skip(piece.start).take(piece.len) {
                    self.builder.push(&row?)?;
                }
            }
            if piece.ends_group
                && let Some(batch) = self.builder.take_batch()?
            {
                let chunks = self.encode(&batch).map_err(&self.fail)?;
                done.send(chunks).map_err(|_| Stop::ConsumerGone)?;
            }
        }
        Ok(())
    }

    /// The column chunks of one row group.
    fn encode(&self, batch: &RecordBatch) -> parquet::errors::Result<Vec<ArrowColumnChunk>> {
        // The row group index only matters to encryption, which exports do not use.
        let mut writers = self.factory.create_column_writers(0)?.into_iter();
        let mut chunks = Vec::with_capacity(batch.num_columns());
        for (field, column) in self.schema.fields().iter().zip(batch.columns()) {
            // Export columns are flat: one leaf, one writer per field.
            for leaf in compute_leaves(field, column)? {
                let mut writer = writers
                    .next()
                    .ok_or_else(|| ParquetError::General("more leaves than writers".to_owned()))?;
                writer.write(&leaf)?;
                chunks.push(writer.close()?);
            }
        }
        Ok(chunks)
    }
}

/// The appender thread: writes the row groups to the file in order (row group `g` comes from
/// encoder `g % encoders`) until an encoder has no more.
fn append(
    mut file_writer: FileWriter,
    results: &[Receiver<Vec<ArrowColumnChunk>>],
    fail: &impl Fn(ParquetError) -> CliError,
) -> Result<FileWriter> {
    for results in results.iter().cycle() {
        let Ok(chunks) = results.recv() else {
            break;
        };
        let mut group = file_writer.next_row_group().map_err(fail)?;
        for chunk in chunks {
            chunk.append_to_row_group(&mut group).map_err(fail)?;
        }
        group.close().map_err(fail)?;
    }
    Ok(file_writer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_explains_more_than_a_schema_miss_which_explains_more_than_a_gone_consumer() {
        let failed = || Stop::Failed(CliError::Io("disk full".to_owned()));
        assert!(matches!(
            worse(Stop::ConsumerGone, failed()),
            Stop::Failed(_)
        ));
        assert!(matches!(worse(failed(), Stop::SchemaMiss), Stop::Failed(_)));
        assert!(matches!(
            worse(Stop::ConsumerGone, Stop::SchemaMiss),
            Stop::SchemaMiss
        ));
        assert!(matches!(
            worse_outcome(Ok(()), Err(Stop::ConsumerGone)),
            Err(Stop::ConsumerGone)
        ));
        assert!(matches!(
            worse_outcome(Err(Stop::SchemaMiss), Ok(())),
            Err(Stop::SchemaMiss)
        ));
        assert!(worse_outcome(Ok(()), Ok(())).is_ok());
    }
}
