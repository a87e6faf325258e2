//! Parquet encoding on its own thread: the scan thread builds record batches while this one
//! encodes, compresses and writes the previous ones. A bounded channel keeps at most
//! [`BATCHES_IN_FLIGHT`] batches waiting, so memory stays a few row groups whatever the table.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};
use parquet::schema::types::ColumnPath;

use crate::cli::error::{CliError, Result};

/// Batches queued between the two threads: one being encoded, one ready, one being built.
const BATCHES_IN_FLIGHT: usize = 1;
/// Output buffer of the Parquet file.
const FILE_BUFFER_BYTES: usize = 1 << 20;

/// The writer properties of every export (docs/PERFORMANCE.md, "Parquet export", explains
/// the choices): Snappy, dictionaries on (keys and low-cardinality strings shrink a lot) but
/// for `plain_columns`, whose values are mostly distinct so a dictionary only costs time,
/// statistics per column chunk only (page statistics cost time and readers rarely use them).
fn properties(group_rows: usize, plain_columns: &[String]) -> WriterProperties {
    plain_columns
        .iter()
        .fold(WriterProperties::builder(), |builder, column| {
            builder.set_column_dictionary_enabled(ColumnPath::from(column.as_str()), false)
        })
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_size(group_rows)
        .set_statistics_enabled(EnabledStatistics::Chunk)
        .build()
}

/// A Parquet file being written by a background thread.
pub struct ParquetWriter {
    sender: Option<SyncSender<RecordBatch>>,
    thread: Option<JoinHandle<Result<()>>>,
    /// Set when the export failed: the thread then leaves the file without a footer, so no
    /// reader mistakes a partial export for a whole one.
    aborted: Arc<AtomicBool>,
}

impl ParquetWriter {
    /// Creates `path` and starts the writer thread; `plain_columns` are written without a
    /// dictionary.
    pub fn create(
        path: &Path,
        schema: SchemaRef,
        group_rows: usize,
        plain_columns: &[String],
    ) -> Result<Self> {
        let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
        let out = BufWriter::with_capacity(FILE_BUFFER_BYTES, file);
        let mut writer =
            ArrowWriter::try_new(out, schema, Some(properties(group_rows, plain_columns)))
                .map_err(|e| CliError::io("write Parquet to", path, e))?;
        let (sender, receiver) = sync_channel::<RecordBatch>(BATCHES_IN_FLIGHT);
        let shown = path.display().to_string();
        let aborted = Arc::new(AtomicBool::new(false));
        let abort = Arc::clone(&aborted);
        let thread = std::thread::Builder::new()
            .name("parquet-writer".to_owned())
            .spawn(move || {
                let fail = |e: parquet::errors::ParquetError| {
                    CliError::Io(format!("cannot write {shown}: {e}"))
                };
                for batch in receiver {
                    writer.write(&batch).map_err(fail)?;
                    // Each batch is one row group: encode it now so it leaves memory.
                    writer.flush().map_err(fail)?;
                }
                if !abort.load(Ordering::Acquire) {
                    writer.close().map_err(fail)?;
                }
                Ok(())
            })
            .map_err(|e| CliError::io("start the writer thread for", path, e))?;
        Ok(Self {
            sender: Some(sender),
            thread: Some(thread),
            aborted,
        })
    }

    /// Queues one batch; waits while the writer is [`BATCHES_IN_FLIGHT`] batches behind.
    pub fn send(&mut self, batch: RecordBatch) -> Result<()> {
        let sent = self.sender.as_ref().is_some_and(|s| s.send(batch).is_ok());
        if sent {
            return Ok(());
        }
        // The thread stopped early: its error says why.
        self.join()?;
        Err(CliError::Io("the Parquet writer stopped early".to_owned()))
    }

    /// Writes the footer and waits for the thread.
    pub fn finish(mut self) -> Result<()> {
        self.join()
    }

    fn join(&mut self) -> Result<()> {
        drop(self.sender.take());
        match self.thread.take().map(JoinHandle::join) {
            None => Ok(()),
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(CliError::Io(
                "the Parquet writer thread panicked".to_owned(),
            )),
        }
    }
}

impl Drop for ParquetWriter {
    fn drop(&mut self) {
        // Only a finished export reaches here with the thread already joined.
        self.aborted.store(true, Ordering::Release);
        let _ = self.join();
    }
}
