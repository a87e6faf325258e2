//! `strata import TABLE FILE`: JSON Lines or CSV, streamed in per-partition batches.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::{Args, ValueEnum};
use strata::model::{EdmType, Entity, PartitionKey, PropertyName, RowKey, Value};
use strata::{Account, Table, TableError};

use super::error::{CliError, Result};
use super::json::{KeyColumns, TypeOverrides, entity_from_json};
use super::{Global, finish_bulk, progress};

/// Most operations in one batch (SPEC §5).
const BATCH_MAX_OPS: usize = 100;
/// Entity bytes per batch, kept well under the 4 MiB batch payload limit.
const BATCH_MAX_BYTES: usize = 3 << 20;
/// Rejected rows listed in the summary; the rest are counted.
const REJECTS_SHOWN: usize = 20;

/// Input format of `import`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
}

/// Arguments of `import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The table (created if missing).
    table: String,
    /// The input file (`-` for standard input).
    file: PathBuf,
    /// Input format (default: from the file extension, `.csv` or else JSON Lines).
    #[arg(long)]
    input: Option<InputFormat>,
    /// Give a column's type, e.g. `--type Temp=Edm.Double` (repeatable). CSV cells without
    /// one are inferred: integers Int32 (Int64 beyond its range), decimals Double,
    /// true/false Boolean, empty = absent, else String.
    #[arg(long = "type", value_name = "PROP=EDM")]
    types: Vec<String>,
    /// Column holding the PartitionKey.
    #[arg(long, default_value = "PartitionKey")]
    partition_key_column: String,
    /// Column holding the RowKey.
    #[arg(long, default_value = "RowKey")]
    row_key_column: String,
    /// Stop at the first bad row (exit 3) instead of reporting it and going on.
    #[arg(long)]
    strict: bool,
}

/// Opens a file, or standard input for `-`.
pub fn open_input(path: &Path) -> Result<Box<dyn BufRead>> {
    if path.as_os_str() == "-" {
        return Ok(Box::new(BufReader::new(std::io::stdin())));
    }
    let file = File::open(path).map_err(|e| CliError::io("open", path, e))?;
    Ok(Box::new(BufReader::new(file)))
}

/// A row that could not be imported.
struct Reject {
    line: u64,
    reason: String,
}

/// Entities of one partition waiting to be written as one batch.
struct Pending {
    rows: Vec<(u64, Entity)>,
    bytes: usize,
}

struct Importer {
    table: Table,
    pending: Pending,
    imported: u64,
    rejects: Vec<Reject>,
    rejected: u64,
    strict: bool,
    source: String,
}

impl Importer {
    fn reject(&mut self, line: u64, reason: String) -> Result<()> {
        if self.strict {
            return Err(CliError::Data(format!(
                "{} line {line}: {reason}\n(--strict: nothing after this row was imported)",
                self.source
            )));
        }
        self.rejected += 1;
        if self.rejects.len() < REJECTS_SHOWN {
            self.rejects.push(Reject { line, reason });
        }
        Ok(())
    }

    fn add(&mut self, line: u64, entity: Entity) -> Result<()> {
        let same_partition = self
            .pending
            .rows
            .first()
            .is_none_or(|(_, e)| e.partition_key() == entity.partition_key());
        let repeats_row = self
            .pending
            .rows
            .iter()
            .any(|(_, e)| e.row_key() == entity.row_key());
        if !same_partition
            || repeats_row
            || self.pending.rows.len() >= BATCH_MAX_OPS
            || self.pending.bytes + entity.size() > BATCH_MAX_BYTES
        {
            self.flush()?;
        }
        self.pending.bytes += entity.size();
        self.pending.rows.push((line, entity));
        Ok(())
    }

    /// Writes the pending rows as one batch; if it fails, writes them one by one so that
    /// only the bad rows are rejected, each with its own line number.
    fn flush(&mut self) -> Result<()> {
        let rows = std::mem::take(&mut self.pending.rows);
        self.pending.bytes = 0;
        let Some((_, first)) = rows.first() else {
            return Ok(());
        };
        let mut batch = self.table.batch(first.partition_key().as_str())?;
        for (_, e) in &rows {
            batch.insert_or_replace(e.clone());
        }
        match batch.submit() {
            Ok(_) => {
                self.imported += rows.len() as u64;
                Ok(())
            }
            Err(err) if is_fatal(&err) => Err(err.into()),
            Err(_) => {
                for (line, e) in rows {
                    match self.table.insert_or_replace(&e) {
                        Ok(_) => self.imported += 1,
                        Err(err) if is_fatal(&err) => return Err(err.into()),
                        Err(err) => self.reject(line, err.to_string())?,
                    }
                }
                Ok(())
            }
        }
    }
}

/// Errors of the file or the engine, not of one row: they end the import.
fn is_fatal(err: &TableError) -> bool {
    matches!(
        err,
        TableError::Engine(_)
            | TableError::CorruptRow { .. }
            | TableError::CorruptCatalog { .. }
            | TableError::TableNotFound { .. }
    )
}

/// Runs `import`.
pub fn run(global: &Global, args: &ImportArgs) -> Result<()> {
    let format = args.input.unwrap_or_else(|| {
        if args
            .file
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
        {
            InputFormat::Csv
        } else {
            InputFormat::Jsonl
        }
    });
    let types = TypeOverrides::parse(&args.types)?;
    let keys = KeyColumns {
        partition_key: args.partition_key_column.clone(),
        row_key: args.row_key_column.clone(),
    };
    let input = open_input(&args.file)?;
    let account = global.open_bulk()?;
    let table = table_or_create(&account, &args.table)?;
    let started = Instant::now();
    let bar = progress::counter("importing");
    let mut importer = Importer {
        table,
        pending: Pending {
            rows: Vec::new(),
            bytes: 0,
        },
        imported: 0,
        rejects: Vec::new(),
        rejected: 0,
        strict: args.strict,
        source: args.file.display().to_string(),
    };
    let result = match format {
        InputFormat::Jsonl => import_jsonl(&mut importer, input, &types, &keys, &bar),
        InputFormat::Csv => import_csv(&mut importer, input, &types, &keys, &bar),
    }
    .and_then(|()| importer.flush());
    bar.finish_and_clear();
    // Whatever was written before a failure is kept and made durable.
    finish_bulk(&account)?;
    result?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "imported {} rows into {} in {secs:.2} s; rejected {}",
        importer.imported, args.table, importer.rejected
    );
    for r in &importer.rejects {
        eprintln!("  {} line {}: {}", importer.source, r.line, r.reason);
    }
    if importer.rejected > importer.rejects.len() as u64 {
        eprintln!(
            "  ... and {} more",
            importer.rejected - importer.rejects.len() as u64
        );
    }
    Ok(())
}

/// The table, created first if it does not exist.
fn table_or_create(account: &Account, name: &str) -> Result<Table> {
    if !account.table_exists(name) {
        account.create_table(name)?;
    }
    Ok(account.table(name)?)
}

fn import_jsonl(
    importer: &mut Importer,
    input: Box<dyn BufRead>,
    types: &TypeOverrides,
    keys: &KeyColumns,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    for (index, line) in input.lines().enumerate() {
        let number = index as u64 + 1;
        let line = line.map_err(|e| CliError::Io(format!("cannot read line {number}: {e}")))?;
        bar.inc(1);
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str(&line)
            .map_err(|e| CliError::Data(format!("not valid JSON: {e}")))
            .and_then(|json| entity_from_json(&json, types, keys));
        match parsed {
            Ok(entity) => importer.add(number, entity)?,
            Err(err) => importer.reject(number, err.to_string())?,
        }
    }
    Ok(())
}

fn import_csv(
    importer: &mut Importer,
    input: impl Read,
    types: &TypeOverrides,
    keys: &KeyColumns,
    bar: &indicatif::ProgressBar,
) -> Result<()> {
    let mut reader = csv::ReaderBuilder::new().flexible(true).from_reader(input);
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| CliError::Data(format!("{} line 1: bad CSV header: {e}", importer.source)))?
        .iter()
        .map(str::to_owned)
        .collect();
    let find = |name: &str| {
        header.iter().position(|h| h == name).ok_or_else(|| {
            CliError::Usage(format!(
                "the CSV header has no column {name:?} (columns: {}); name the key columns with --partition-key-column/--row-key-column",
                header.join(", ")
            ))
        })
    };
    let pk_col = find(&keys.partition_key)?;
    let rk_col = find(&keys.row_key)?;
    let mut columns = Vec::with_capacity(header.len());
    for (i, name) in header.iter().enumerate() {
        if i == pk_col || i == rk_col || name == super::json::TIMESTAMP {
            columns.push(None);
        } else {
            let prop = PropertyName::new(name.clone())
                .map_err(|e| CliError::Data(format!("CSV column {name:?}: {e}")))?;
            columns.push(Some((prop, types.get(name))));
        }
    }
    let mut record = csv::StringRecord::new();
    loop {
        let line = reader.position().line();
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                importer.reject(line, format!("bad CSV: {e}"))?;
                continue;
            }
        }
        bar.inc(1);
        match csv_entity(&record, pk_col, rk_col, &columns) {
            Ok(entity) => importer.add(line, entity)?,
            Err(err) => importer.reject(line, err.to_string())?,
        }
    }
    Ok(())
}

fn csv_entity(
    record: &csv::StringRecord,
    pk_col: usize,
    rk_col: usize,
    columns: &[Option<(PropertyName, Option<EdmType>)>],
) -> Result<Entity> {
    if record.len() != columns.len() {
        return Err(CliError::Data(format!(
            "{} fields, but the header has {}",
            record.len(),
            columns.len()
        )));
    }
    let cell = |i: usize| record.get(i).unwrap_or_default();
    let mut entity = Entity::new(PartitionKey::new(cell(pk_col))?, RowKey::new(cell(rk_col))?);
    for (text, column) in record.iter().zip(columns) {
        let Some((name, edm)) = column else { continue };
        if text.is_empty() && *edm != Some(EdmType::String) {
            continue;
        }
        let value = match edm {
            Some(t) => Value::from_wire(*t, text),
            None => infer_cell(text),
        }
        .map_err(|e| CliError::Data(format!("column {}: {e}", name.as_str())))?;
        entity.set(name.clone(), value)?;
    }
    Ok(entity)
}

/// The type of an untyped CSV cell: Int32, Int64, Double, Boolean, else String.
fn infer_cell(text: &str) -> Result<Value, strata::model::ModelError> {
    if let Ok(i) = text.parse::<i32>() {
        return Ok(Value::Int32(i));
    }
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Value::Int64(i));
    }
    let numeric = text
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'));
    if numeric && let Ok(d) = text.parse::<f64>() {
        return Ok(Value::Double(d));
    }
    match text {
        "true" => Ok(Value::Boolean(true)),
        "false" => Ok(Value::Boolean(false)),
        _ => Value::string(text),
    }
}
