//! CSV and Parquet exports, which need every column before the first row.
//!
//! The schema comes from a sample: the first row group's worth of rows, names and type tags
//! only. The export then makes one pass, trusting the sample. A table whose first rows show
//! every property type (the usual case, and always when the sample saw the whole table) is
//! exported in that single pass. When a later row holds a property type the sample missed, or
//! a DateTime outside the nanosecond range the sample chose, the pass stops, the partial file
//! is abandoned, and the export runs again on the schema of a full scan. Either way the file
//! is exactly what a full schema scan followed by one write pass produces.

use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{Sender, SyncSender, channel, sync_channel};
use std::thread::JoinHandle;

use indicatif::ProgressBar;
use strata::{RowChunk, Table};

use super::ExportFormat;
use super::csv_file::CsvFile;
use super::schema::{ExportSchema, SchemaScan, Stop};
use super::writer::ParquetSink;
use crate::cli::error::{CliError, Result};

/// Rows per chunk handed from the scanning thread to the others.
pub(super) const CHUNK_ROWS: usize = 4096;
/// Chunks queued for the CSV thread.
const CHUNKS_IN_FLIGHT: usize = 2;

/// CSV written by a thread of its own, fed chunks of rows.
struct CsvSink {
    chunks: Option<SyncSender<Arc<RowChunk>>>,
    thread: Option<JoinHandle<std::result::Result<CsvFile, Stop>>>,
}

impl CsvSink {
    fn create(path: &Path, schema: &ExportSchema) -> Result<Self> {
        let mut csv = CsvFile::create(path, schema)?;
        let (chunks, receiver) = sync_channel::<Arc<RowChunk>>(CHUNKS_IN_FLIGHT);
        let thread = std::thread::Builder::new()
            .name("csv-writer".to_owned())
            .spawn(move || {
                for chunk in receiver {
                    for row in chunk.rows() {
                        csv.push(&row?)?;
                    }
                }
                Ok(csv)
            })
            .map_err(|e| CliError::io("start the writer thread for", path, e))?;
        Ok(Self {
            chunks: Some(chunks),
            thread: Some(thread),
        })
    }

    fn send(&mut self, chunk: Arc<RowChunk>) -> std::result::Result<(), Stop> {
        let sent = self.chunks.as_ref().is_some_and(|c| c.send(chunk).is_ok());
        if sent {
            Ok(())
        } else {
            Err(Stop::ConsumerGone)
        }
    }

    /// Waits for the thread; the file is flushed only when every row was written.
    fn finish(mut self, fed: std::result::Result<(), Stop>) -> std::result::Result<(), Stop> {
        let written = self.join();
        match (fed, written) {
            (Ok(()), Ok(csv)) => Ok(csv.finish()?),
            (Ok(()) | Err(Stop::ConsumerGone), Err(stop)) | (Err(stop), _) => Err(stop),
        }
    }

    fn join(&mut self) -> std::result::Result<CsvFile, Stop> {
        drop(self.chunks.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(written)) => written,
            Some(Err(_)) => Err(CliError::Io("the CSV writer thread panicked".to_owned()).into()),
            None => Err(Stop::ConsumerGone),
        }
    }
}

impl Drop for CsvSink {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// A file receiving chunks of rows.
enum Sink {
    Csv(CsvSink),
    Parquet(ParquetSink),
}

impl Sink {
    fn create(
        format: ExportFormat,
        path: &Path,
        schema: &ExportSchema,
        group_rows: usize,
    ) -> Result<Self> {
        Ok(match format {
            ExportFormat::Parquet => Self::Parquet(ParquetSink::create(path, schema, group_rows)?),
            ExportFormat::Csv | ExportFormat::Jsonl => Self::Csv(CsvSink::create(path, schema)?),
        })
    }

    fn send(&mut self, chunk: Arc<RowChunk>) -> std::result::Result<(), Stop> {
        match self {
            Self::Csv(csv) => csv.send(chunk),
            Self::Parquet(parquet) => parquet.send(chunk),
        }
    }

    /// Completes the file if `fed` is `Ok` (every row was sent); otherwise stops the
    /// threads and leaves the file incomplete. Returns why the pass stopped, if it did.
    fn finish(self, fed: std::result::Result<(), Stop>) -> std::result::Result<(), Stop> {
        match (self, fed) {
            (Self::Csv(csv), fed) => csv.finish(fed),
            (Self::Parquet(parquet), Ok(())) => parquet.finish(),
            (Self::Parquet(parquet), Err(stop)) => Err(parquet.abort(stop)),
        }
    }
}

/// Exports the rows of `table` matching `filter` to `path` as CSV or Parquet; returns the
/// number of rows written.
pub fn export(
    table: &Table,
    filter: Option<&str>,
    path: &Path,
    format: ExportFormat,
    group_rows: usize,
    bar: &ProgressBar,
) -> Result<u64> {
    let group_rows = group_rows.max(1);
    match write(table, filter, path, format, None, group_rows, bar) {
        Err(Stop::SchemaMiss) => {}
        other => return finished(other),
    }
    bar.set_message("rescanning: later rows hold more property types");
    bar.set_position(0);
    let schema = schema_of(table, filter)?;
    finished(write(
        table,
        filter,
        path,
        format,
        Some(schema),
        group_rows,
        bar,
    ))
}

fn finished(outcome: std::result::Result<u64, Stop>) -> Result<u64> {
    match outcome {
        Ok(rows) => Ok(rows),
        Err(Stop::Failed(err)) => Err(err),
        Err(Stop::SchemaMiss | Stop::ConsumerGone) => Err(CliError::Corrupt(
            "the rows changed between the schema scan and the export".to_owned(),
        )),
    }
}

/// The schema of every row.
fn schema_of(table: &Table, filter: Option<&str>) -> Result<ExportSchema> {
    let mut scan = SchemaScan::default();
    match table.scan_rows(filter, |row| scan.add(row).map_err(Stop::from)) {
        Ok(_) => Ok(scan.finish()),
        Err(Stop::Failed(err)) => Err(err),
        Err(Stop::SchemaMiss | Stop::ConsumerGone) => Err(CliError::Data(
            "the schema scan stopped for no reason".to_owned(),
        )),
    }
}

/// The rows of a pass before its schema is known: the sample, taken on a thread of its own so
/// that it overlaps the scan (the encoders wait for it), and the chunks that hold it, replayed
/// into the file once the schema is made.
struct Sample {
    chunks: Option<Sender<Arc<RowChunk>>>,
    thread: Option<JoinHandle<std::result::Result<SchemaScan, Stop>>>,
    held: Vec<Arc<RowChunk>>,
    /// Rows held.
    rows: u64,
    limit: u64,
}

impl Sample {
    /// Starts sampling the first `limit` rows.
    fn start(limit: u64) -> Result<Self> {
        let (chunks, receiver) = channel::<Arc<RowChunk>>();
        let thread = std::thread::Builder::new()
            .name("export-sample".to_owned())
            .spawn(move || {
                let mut scan = SchemaScan::default();
                for chunk in receiver {
                    for row in chunk.rows() {
                        if scan.rows() >= limit {
                            break;
                        }
                        scan.add(&row?)?;
                    }
                }
                Ok(scan)
            })
            .map_err(|e| CliError::Io(format!("cannot start the schema sample thread: {e}")))?;
        Ok(Self {
            chunks: Some(chunks),
            thread: Some(thread),
            held: Vec::new(),
            rows: 0,
            limit,
        })
    }

    /// Holds `chunk` and samples it; true once the sample has all its rows.
    fn add(&mut self, chunk: RowChunk) -> bool {
        let chunk = Arc::new(chunk);
        self.rows += chunk.len() as u64;
        // A sample thread that stopped early has an error for `finish`.
        if let Some(chunks) = &self.chunks {
            let _ = chunks.send(Arc::clone(&chunk));
        }
        self.held.push(chunk);
        self.rows >= self.limit
    }

    /// The schema of the sampled rows, and the chunks that hold them.
    fn finish(mut self) -> std::result::Result<(ExportSchema, Vec<Arc<RowChunk>>), Stop> {
        let scan = self.join()?;
        Ok((scan.finish(), std::mem::take(&mut self.held)))
    }

    fn join(&mut self) -> std::result::Result<SchemaScan, Stop> {
        drop(self.chunks.take());
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(scanned)) => scanned,
            Some(Err(_)) => {
                Err(CliError::Io("the schema sample thread panicked".to_owned()).into())
            }
            None => Err(Stop::ConsumerGone),
        }
    }
}

impl Drop for Sample {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.join();
        }
    }
}

/// One write pass: its schema (or the sample that will make it) and its output.
struct Pass<'a> {
    format: ExportFormat,
    path: &'a Path,
    group_rows: usize,
    bar: &'a ProgressBar,
    sample: Option<Sample>,
    sink: Option<Sink>,
    rows: u64,
}

impl Pass<'_> {
    /// Takes the next chunk of the scan.
    fn take(&mut self, chunk: RowChunk) -> std::result::Result<(), Stop> {
        self.rows += chunk.len() as u64;
        self.bar.set_position(self.rows);
        let Some(sample) = &mut self.sample else {
            return self.send(Arc::new(chunk));
        };
        if sample.add(chunk) {
            self.start()?;
        }
        Ok(())
    }

    /// Makes the schema of the sample, opens the file, and sends it the held chunks.
    fn start(&mut self) -> std::result::Result<(), Stop> {
        let Some(sample) = self.sample.take() else {
            return Ok(());
        };
        let (schema, held) = sample.finish()?;
        self.sink = Some(Sink::create(
            self.format,
            self.path,
            &schema,
            self.group_rows,
        )?);
        held.into_iter().try_for_each(|chunk| self.send(chunk))
    }

    fn send(&mut self, chunk: Arc<RowChunk>) -> std::result::Result<(), Stop> {
        match &mut self.sink {
            Some(sink) => sink.send(chunk),
            None => Err(Stop::ConsumerGone),
        }
    }

    /// Ends the pass after a scan that ended with `scanned`.
    fn end(mut self, scanned: std::result::Result<u64, Stop>) -> std::result::Result<u64, Stop> {
        // A sample that never filled saw every row: its schema is the table's.
        let fed = scanned.and_then(|rows| self.start().map(|()| rows));
        let Some(sink) = self.sink.take() else {
            return fed;
        };
        match fed {
            Ok(rows) => sink.finish(Ok(())).map(|()| rows),
            Err(stop) => sink.finish(Err(stop)).map(|()| 0),
        }
    }
}

/// One write pass, with `schema` or, without, with the schema of a sample of the first
/// `group_rows` rows. This thread scans and copies the rows out in chunks (holding back the
/// sampled ones until the schema is made); the sink's threads build and encode them.
fn write(
    table: &Table,
    filter: Option<&str>,
    path: &Path,
    format: ExportFormat,
    schema: Option<ExportSchema>,
    group_rows: usize,
    bar: &ProgressBar,
) -> std::result::Result<u64, Stop> {
    let mut pass = Pass {
        format,
        path,
        group_rows,
        bar,
        sample: None,
        sink: None,
        rows: 0,
    };
    match schema {
        Some(schema) => pass.sink = Some(Sink::create(format, path, &schema, group_rows)?),
        None => {
            let limit = u64::try_from(group_rows).unwrap_or(u64::MAX);
            pass.sample = Some(Sample::start(limit)?);
        }
    }
    let chunk_rows = CHUNK_ROWS.min(group_rows);
    let scanned = table.scan_row_chunks(filter, chunk_rows, |chunk| pass.take(chunk));
    pass.end(scanned)
}
