//! `strata export`: one table, a filtered table or every table to JSON Lines, CSV or Parquet.
//!
//! CSV and Parquet need their columns before the first row: [`columnar`] takes them from a
//! sample of the rows (names and type tags only) and writes in one pass, rescanning the whole
//! table only when a later row brings a property type the sample missed. Columns are built
//! straight from the borrowed stored values (`Table::scan_row_chunks`, no entity is decoded),
//! and Parquet row groups are built and encoded on several threads ([`writer::ParquetSink`]). Memory is bounded by a
//! few row groups, whatever the table size. The file is opened read-only (a shared lock), so
//! no writer can change the rows between passes.

mod columnar;
mod columns;
mod csv_file;
mod parquet;
mod schema;
mod writer;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use strata::{Account, Query, StoredEntity, Table};

use super::error::{CliError, Result};
use super::json::entity_to_json;
use super::{Global, progress};

/// Rows per Parquet row group.
const DEFAULT_ROW_GROUP_ROWS: usize = 64 * 1024;
/// Rows between two updates of the progress bar.
const PROGRESS_EVERY: u64 = 4096;

/// Output format of `export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// One JSON object per line, with `@odata.type` annotations.
    Jsonl,
    /// CSV with a header row; values in their wire form.
    Csv,
    /// Apache Parquet (see docs/FORMAT.md, "Parquet export mapping").
    Parquet,
}

impl ExportFormat {
    fn extension(self) -> &'static str {
        match self {
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
            Self::Parquet => "parquet",
        }
    }
}

/// Arguments of `export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// `TABLE OUT`: the table and the output file; with --all-tables only `OUT`, a directory
    /// that receives one TABLE.EXT file per table.
    #[arg(value_name = "TABLE OUT", num_args = 1..=2, required = true)]
    targets: Vec<String>,
    /// Export every table of the account.
    #[arg(long)]
    all_tables: bool,
    /// Only the entities matching this OData filter.
    #[arg(long)]
    filter: Option<String>,
    /// Output format (default: from OUT's extension; JSON Lines if none).
    #[arg(long)]
    to: Option<ExportFormat>,
    /// Rows per Parquet row group (bounds memory).
    #[arg(long, default_value_t = DEFAULT_ROW_GROUP_ROWS)]
    row_group_rows: usize,
}

/// Runs `export`.
pub fn run(global: &Global, args: &ExportArgs) -> Result<()> {
    let (table, out) = match (args.all_tables, args.targets.as_slice()) {
        (true, [out]) => (None, PathBuf::from(out)),
        (false, [table, out]) => (Some(table.as_str()), PathBuf::from(out)),
        (true, _) => {
            return Err(CliError::Usage(
                "export --all-tables takes only the output directory".to_owned(),
            ));
        }
        (false, _) => {
            return Err(CliError::Usage(
                "export needs TABLE and OUT (or --all-tables OUT)".to_owned(),
            ));
        }
    };
    if args.row_group_rows == 0 {
        return Err(CliError::Usage(
            "--row-group-rows must be at least 1".to_owned(),
        ));
    }
    let account = global.open_read()?;
    let started = Instant::now();
    let mut total = 0;
    if args.all_tables {
        let format = args.to.unwrap_or(ExportFormat::Jsonl);
        std::fs::create_dir_all(&out).map_err(|e| CliError::io("create directory", &out, e))?;
        for name in account.list_tables() {
            let path = out.join(format!("{}.{}", name.as_str(), format.extension()));
            total += export_table(&account, name.as_str(), &path, format, args)?;
        }
    } else {
        let table = table.unwrap_or_default();
        let format = args.to.unwrap_or_else(|| format_of(&out));
        total += export_table(&account, table, &out, format, args)?;
    }
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "exported {total} entities to {} in {secs:.2} s ({:.0} entities/s)",
        out.display(),
        total as f64 / secs.max(f64::MIN_POSITIVE)
    );
    Ok(())
}

fn format_of(path: &Path) -> ExportFormat {
    match path.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("parquet") => ExportFormat::Parquet,
        Some(e) if e.eq_ignore_ascii_case("csv") => ExportFormat::Csv,
        _ => ExportFormat::Jsonl,
    }
}

/// Every matching entity of `table`, page by page.
fn rows(table: &Table, filter: Option<&String>) -> impl Iterator<Item = Result<StoredEntity>> {
    let query = Query {
        filter: filter.cloned(),
        ..Query::default()
    };
    table.query_all(query).map(|r| r.map_err(CliError::from))
}

/// Exports one table to `path`; returns the number of entities written.
fn export_table(
    account: &Account,
    name: &str,
    path: &Path,
    format: ExportFormat,
    args: &ExportArgs,
) -> Result<u64> {
    let table = account.table(name)?;
    let filter = args.filter.as_deref();
    // Resolve the table and parse the filter before creating the output file.
    table.query(&Query {
        filter: args.filter.clone(),
        top: Some(1),
        ..Query::default()
    })?;
    if format == ExportFormat::Jsonl {
        return write_jsonl(&table, args.filter.as_ref(), path);
    }
    let bar = progress::counter("exporting");
    let count = columnar::export(&table, filter, path, format, args.row_group_rows, &bar)?;
    bar.finish_and_clear();
    Ok(count)
}

/// Exports the rows of `table` matching `filter` to a Parquet file at `path`, without a
/// progress bar; returns the number of rows written.
pub fn export_parquet(
    table: &Table,
    filter: Option<&str>,
    path: &Path,
    group_rows: usize,
) -> Result<u64> {
    columnar::export(
        table,
        filter,
        path,
        ExportFormat::Parquet,
        group_rows,
        &indicatif::ProgressBar::hidden(),
    )
}

/// Moves the progress bar every [`PROGRESS_EVERY`] rows: cheaper than a tick per row.
fn progress_tick(bar: &indicatif::ProgressBar, rows: u64) {
    if rows.is_multiple_of(PROGRESS_EVERY) {
        bar.set_position(rows);
    }
}

fn write_jsonl(table: &Table, filter: Option<&String>, path: &Path) -> Result<u64> {
    let bar = progress::counter("exporting");
    let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
    let mut out = BufWriter::new(file);
    let mut count = 0;
    for row in rows(table, filter) {
        serde_json::to_writer(&mut out, &entity_to_json(&row?))
            .map_err(|e| CliError::io("write", path, e))?;
        out.write_all(b"\n")
            .map_err(|e| CliError::io("write", path, e))?;
        count += 1;
        progress_tick(&bar, count);
    }
    out.flush().map_err(|e| CliError::io("write", path, e))?;
    bar.finish_and_clear();
    Ok(count)
}
