//! `strata export`: one table, a filtered table or every table to JSON Lines, CSV or Parquet.
//!
//! CSV and Parquet need their columns before the first row, so they read the rows twice: a
//! first pass collects the union of property names and types ([`schema::SchemaScan`]), the
//! second writes. Both passes stream page by page, so memory is bounded by one page plus one
//! Parquet row group, whatever the table size. The file is opened read-only (a shared lock),
//! so no writer can change the rows between the passes.

mod parquet;
mod schema;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use strata::model::Value;
use strata::{Account, Query, StoredEntity, Table};

use super::error::{CliError, Result};
use super::json::{PARTITION_KEY, ROW_KEY, TIMESTAMP, entity_to_json};
use super::{Global, progress};
pub use parquet::ParquetSink;
use schema::ExportSchema;
pub use schema::SchemaScan;

/// Rows per Parquet row group.
const DEFAULT_ROW_GROUP_ROWS: usize = 64 * 1024;

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
    let filter = args.filter.as_ref();
    // Parse the filter before creating the output file.
    table.query(&Query {
        filter: filter.cloned(),
        top: Some(1),
        ..Query::default()
    })?;
    let schema = match format {
        ExportFormat::Jsonl => None,
        ExportFormat::Csv | ExportFormat::Parquet => {
            let bar = progress::counter("scanning");
            let mut scan = SchemaScan::default();
            for row in rows(&table, filter) {
                scan.add(&row?);
                bar.inc(1);
            }
            bar.finish_and_clear();
            Some(scan.finish())
        }
    };
    let bar = match &schema {
        Some(s) => progress::bar(s.rows, "exporting"),
        None => progress::counter("exporting"),
    };
    let mut count = 0;
    match (format, schema) {
        (ExportFormat::Parquet, Some(schema)) => {
            let mut sink = parquet::ParquetSink::create(path, &schema, args.row_group_rows)?;
            for row in rows(&table, filter) {
                sink.push(&row?)?;
                count += 1;
                bar.inc(1);
            }
            sink.finish()?;
        }
        (ExportFormat::Csv, Some(schema)) => {
            count = write_csv(&table, filter, path, &schema, &bar)?;
        }
        _ => {
            let file = File::create(path).map_err(|e| CliError::io("create", path, e))?;
            let mut out = BufWriter::new(file);
            for row in rows(&table, filter) {
                serde_json::to_writer(&mut out, &entity_to_json(&row?))
                    .map_err(|e| CliError::io("write", path, e))?;
                out.write_all(b"\n")
                    .map_err(|e| CliError::io("write", path, e))?;
                count += 1;
                bar.inc(1);
            }
            out.flush().map_err(|e| CliError::io("write", path, e))?;
        }
    }
    bar.finish_and_clear();
    Ok(count)
}

fn write_csv(
    table: &Table,
    filter: Option<&String>,
    path: &Path,
    schema: &ExportSchema,
    bar: &indicatif::ProgressBar,
) -> Result<u64> {
    let mut w = csv::Writer::from_path(path).map_err(|e| CliError::io("create", path, e))?;
    let mut header = vec![PARTITION_KEY, ROW_KEY, TIMESTAMP];
    header.extend(schema.columns.iter().map(|c| c.name.as_str()));
    w.write_record(&header)
        .map_err(|e| CliError::io("write", path, e))?;
    let mut count = 0;
    let mut record: Vec<String> = Vec::with_capacity(header.len());
    for row in rows(table, filter) {
        let row = row?;
        let e = &row.entity;
        record.clear();
        record.push(e.partition_key().as_str().to_owned());
        record.push(e.row_key().as_str().to_owned());
        record.push(row.timestamp().to_iso8601());
        for c in &schema.columns {
            record.push(
                e.get(&c.property)
                    .filter(|v| v.edm_type() == c.edm)
                    .map(Value::to_wire)
                    .unwrap_or_default(),
            );
        }
        w.write_record(&record)
            .map_err(|e| CliError::io("write", path, e))?;
        count += 1;
        bar.inc(1);
    }
    w.flush().map_err(|e| CliError::io("write", path, e))?;
    Ok(count)
}
