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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;

use indicatif::ProgressBar;
use strata::{RowChunk, RowRef, Table};

use super::ExportFormat;
use super::csv_file::CsvFile;
use super::parquet::{self, BatchBuilder};
use super::schema::{ExportSchema, SchemaScan, Stop};
use super::writer::ParquetWriter;
use crate::cli::error::{CliError, Result};

/// Rows per chunk handed from the scanning thread to the building one.
const CHUNK_ROWS: usize = 4096;
/// Chunks queued between the two.
const CHUNKS_IN_FLIGHT: usize = 2;

/// A file receiving rows.
enum Sink {
    Csv(CsvFile),
    Parquet(BatchBuilder, ParquetWriter),
}

impl Sink {
    fn create(
        format: ExportFormat,
        path: &Path,
        schema: &ExportSchema,
        group_rows: usize,
    ) -> Result<Self> {
        Ok(match format {
            ExportFormat::Parquet => Self::Parquet(
                BatchBuilder::new(schema, group_rows),
                ParquetWriter::create(
                    path,
                    parquet::arrow_schema(schema),
                    group_rows,
                    &parquet::plain_columns(schema),
                )?,
            ),
            ExportFormat::Csv | ExportFormat::Jsonl => Self::Csv(CsvFile::create(path, schema)?),
        })
    }

    fn push(&mut self, row: &RowRef<'_>) -> std::result::Result<(), Stop> {
        match self {
            Self::Csv(csv) => csv.push(row),
            Self::Parquet(batches, writer) => {
                if let Some(batch) = batches.push(row)? {
                    writer.send(batch)?;
                }
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            Self::Csv(csv) => csv.finish(),
            Self::Parquet(batches, mut writer) => {
                if let Some(batch) = batches.finish()? {
                    writer.send(batch)?;
                }
                writer.finish()
            }
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
    let sample_rows = u64::try_from(group_rows).unwrap_or(u64::MAX);
    let (sample, complete) = schema_of(table, filter, Some(sample_rows))?;
    let schema = if complete {
        sample
    } else {
        match write(table, filter, path, format, &sample, group_rows, bar) {
            Err(Stop::SchemaMiss) => {}
            other => return finished(other),
        }
        bar.set_message("rescanning: later rows hold more property types");
        bar.set_position(0);
        schema_of(table, filter, None)?.0
    };
    finished(write(table, filter, path, format, &schema, group_rows, bar))
}

fn finished(outcome: std::result::Result<u64, Stop>) -> Result<u64> {
    match outcome {
        Ok(rows) => Ok(rows),
        Err(Stop::Failed(err)) => Err(err),
        Err(Stop::SchemaMiss | Stop::SampleFull | Stop::ConsumerGone) => Err(CliError::Corrupt(
            "the rows changed between the schema scan and the export".to_owned(),
        )),
    }
}

/// The schema of the first `limit` rows (all with `None`), and whether it saw every row.
fn schema_of(
    table: &Table,
    filter: Option<&str>,
    limit: Option<u64>,
) -> Result<(ExportSchema, bool)> {
    let mut scan = SchemaScan::default();
    let scanned = table.scan_rows(filter, |row| {
        if limit.is_some_and(|limit| scan.rows() >= limit) {
            return Err(Stop::SampleFull);
        }
        scan.add(row).map_err(Stop::from)
    });
    let complete = match scanned {
        Ok(_) => true,
        Err(Stop::SampleFull) => false,
        Err(Stop::Failed(err)) => return Err(err),
        Err(Stop::SchemaMiss | Stop::ConsumerGone) => {
            return Err(CliError::Data(
                "the schema sample stopped for no reason".to_owned(),
            ));
        }
    };
    Ok((scan.finish(), complete))
}

/// One write pass with `schema`, on up to three threads: this one scans and copies the rows
/// out in chunks, a builder thread turns them into the output (for Parquet, record batches),
/// and the Parquet writer's thread encodes them. The stages are of similar cost, so two
/// cores stay busy; bounded channels between them bound memory.
fn write(
    table: &Table,
    filter: Option<&str>,
    path: &Path,
    format: ExportFormat,
    schema: &ExportSchema,
    group_rows: usize,
    bar: &ProgressBar,
) -> std::result::Result<u64, Stop> {
    let mut sink = Sink::create(format, path, schema, group_rows)?;
    let scan_failed = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (sender, receiver) = sync_channel::<RowChunk>(CHUNKS_IN_FLIGHT);
        let scan_failed = &scan_failed;
        let builder = scope.spawn(move || -> std::result::Result<u64, Stop> {
            let mut count = 0u64;
            for chunk in receiver {
                for row in chunk.rows() {
                    sink.push(&row?)?;
                }
                count += chunk.len() as u64;
                bar.set_position(count);
            }
            // A scan that failed must not leave a file that looks complete: dropping the
            // sink unfinished leaves a Parquet file without its footer.
            if !scan_failed.load(Ordering::Acquire) {
                sink.finish()?;
            }
            Ok(count)
        });
        let scanned = table.scan_row_chunks(filter, CHUNK_ROWS, |chunk| {
            sender.send(chunk).map_err(|_| Stop::ConsumerGone)
        });
        if scanned.is_err() {
            scan_failed.store(true, Ordering::Release);
        }
        drop(sender);
        let built = builder
            .join()
            .unwrap_or_else(|_| Err(CliError::Io("the export thread panicked".to_owned()).into()));
        match (scanned, built) {
            (Ok(_) | Err(Stop::ConsumerGone), built) => built,
            (Err(stop), _) => Err(stop),
        }
    })
}
