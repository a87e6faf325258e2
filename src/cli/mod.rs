//! Argument parsing (clap) and dispatch of the `strata` subcommands.

mod demo;
mod entities;
mod error;
mod export;
mod import;
mod inspect;
mod json;
mod output;
mod progress;
mod serve;
mod tables;

use std::path::{Path, PathBuf};

use clap::{Parser, Subcommand};
use strata::Account;

pub use error::CliError;
use error::{EXIT_HELP, Result};
use output::Format;

/// Default database file of every command but `demo`.
const DEFAULT_DB: &str = "./strata.db";

/// strata: an embedded single-file database with the Azure Table data model.
#[derive(Debug, Parser)]
#[command(
    name = "strata",
    version,
    about,
    after_help = EXIT_HELP,
    after_long_help = EXIT_HELP,
)]
pub struct Cli {
    /// Database file (default ./strata.db; ./demo.strata for `demo`).
    #[arg(long, global = true, value_name = "FILE")]
    db: Option<PathBuf>,
    /// Open the file read-only (a shared lock): writes are refused, many readers may share it.
    #[arg(long, global = true)]
    read_only: bool,
    /// Output format.
    #[arg(long, global = true, value_enum, default_value_t = Format::Json)]
    format: Format,
    /// The command.
    #[command(subcommand)]
    command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Build a 1,000,000-entity IoT database and tour every query kind with timings.
    #[command(after_help = "Example: strata demo --db ./demo.strata")]
    Demo(demo::DemoArgs),
    /// List, create or delete tables.
    #[command(
        subcommand,
        after_help = "Examples:\n  strata tables create Readings\n  strata tables list --format table\n  strata tables delete Readings"
    )]
    Tables(tables::TablesCommand),
    /// Insert or update one entity given as JSON (`Prop@odata.type` annotations allowed).
    #[command(
        after_help = "Example: strata put Readings '{\"PartitionKey\":\"dev1\",\"RowKey\":\"0001\",\"Temp\":21.5,\"Count\":\"7\",\"Count@odata.type\":\"Edm.Int64\"}'\n         strata put Readings '{\"PartitionKey\":\"a\",\"RowKey\":\"b\",\"N\":\"5\"}' --type N=Edm.Int64 --mode merge"
    )]
    Put(entities::PutArgs),
    /// Read one entity by its keys.
    #[command(after_help = "Example: strata get Readings dev1 0001 --select Temp,Count")]
    Get(entities::GetArgs),
    /// Query a table with an OData $filter, paged by continuation tokens.
    #[command(
        after_help = "Examples:\n  strata query Readings --filter \"PartitionKey eq 'dev1' and Temp gt 20.0\" --top 10\n  strata query Readings --all --format csv\n  strata query Readings --continue <TOKEN>"
    )]
    Query(entities::QueryArgs),
    /// Delete one entity by its keys.
    #[command(after_help = "Example: strata delete Readings dev1 0001")]
    Delete(entities::DeleteArgs),
    /// Apply a JSON Lines file as one atomic batch (one PartitionKey, at most 100 lines).
    #[command(
        after_help = "Each line is an entity object; \"@op\" picks insert (default), replace, merge, upsert, \
upsert-merge or delete, and \"@etag\" an If-Match ETag.\nExample: strata batch Readings ops.jsonl"
    )]
    Batch(entities::BatchArgs),
    /// Import JSON Lines or CSV into a table, in batches, reporting bad rows by line number.
    #[command(
        after_help = "Examples:\n  strata import Readings readings.jsonl\n  strata import Readings readings.csv --type Temp=Edm.Double --partition-key-column device --row-key-column ts\n  cat rows.jsonl | strata import Readings - --input jsonl --strict"
    )]
    Import(import::ImportArgs),
    /// Export a table (or every table) to JSON Lines, CSV or Parquet with bounded memory.
    #[command(
        after_help = "Examples:\n  strata export Readings readings.parquet\n  strata export Readings hot.jsonl --filter \"Temp gt 30.0\"\n  strata export --all-tables out/ --to csv"
    )]
    Export(export::ExportArgs),
    /// Write a consistent, compacted copy of the database to a new file.
    #[command(
        after_help = "Example: strata snapshot backup.strata && strata --db backup.strata --read-only tables list"
    )]
    Snapshot(inspect::SnapshotArgs),
    /// Show levels, files, live vs file bytes, amplification and per-table counts.
    #[command(after_help = "Example: strata stats --format table")]
    Stats,
    /// Verify every checksum and invariant of the file (exit 0 clean, 5 corrupt).
    #[command(after_help = "Example: strata check --db ./strata.db")]
    Check,
    /// Compact the database (merge levels, drop deleted tables, shrink the file).
    #[command(after_help = "Example: strata compact")]
    Compact,
    /// Print raw keys and decoded values of a key range, for debugging.
    #[command(after_help = "Example: strata dump --table Readings --from dev1 --limit 20")]
    Dump(inspect::DumpArgs),
    /// Serve the Azure Table REST API on the database file.
    #[command(
        disable_help_flag = true,
        after_help = "Example: strata serve --db ./strata.db --addr 127.0.0.1:10002"
    )]
    Serve {
        /// Arguments of the server (see `strata serve --help`).
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
}

/// Global options every command receives.
#[derive(Debug, Clone)]
pub struct Global {
    /// The database file.
    pub db: PathBuf,
    /// `--read-only`.
    pub read_only: bool,
    /// `--format`.
    pub format: Format,
}

impl Global {
    /// Opens the account for writing (creating the file), or read-only with `--read-only`.
    pub fn open_write(&self) -> Result<Account> {
        if self.read_only {
            return self.open_read();
        }
        Account::open(&self.db)
            .map_err(|e| CliError::from(e).context(&self.db.display().to_string()))
    }

    /// Opens the account for a bulk load: writes are buffered and made durable by
    /// [`finish_bulk`] at the end, not synced one by one.
    pub fn open_bulk(&self) -> Result<Account> {
        if self.read_only {
            return self.open_read();
        }
        let options = strata::Options {
            durability: strata::engine::Durability::Buffered,
            ..strata::Options::default()
        };
        Account::open_with(&self.db, options)
            .map_err(|e| CliError::from(e).context(&self.db.display().to_string()))
    }

    /// Opens an existing account read-only (a shared lock, so readers do not exclude each
    /// other).
    pub fn open_read(&self) -> Result<Account> {
        require_file(&self.db)?;
        Account::open_read_only(&self.db)
            .map_err(|e| CliError::from(e).context(&self.db.display().to_string()))
    }
}

/// Makes every buffered write of a bulk load durable.
pub fn finish_bulk(account: &Account) -> Result<()> {
    account.engine().flush()?;
    Ok(())
}

/// Fails with a helpful I/O error when `path` does not exist.
fn require_file(path: &Path) -> Result<()> {
    if path.exists() {
        Ok(())
    } else {
        Err(CliError::Io(format!(
            "no database file at {}\nhint: pass --db FILE, or create it with `strata --db {} tables create NAME`",
            path.display(),
            path.display()
        )))
    }
}

/// Parses `args` (without the program name) and runs the command.
pub fn run(cli: Cli) -> Result<()> {
    let global = Global {
        db: cli.db.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_DB)),
        read_only: cli.read_only,
        format: cli.format,
    };
    match cli.command {
        Command::Demo(args) => demo::run(cli.db, &args),
        Command::Tables(cmd) => tables::run(&global, cmd),
        Command::Put(args) => entities::put(&global, &args),
        Command::Get(args) => entities::get(&global, &args),
        Command::Query(args) => entities::query(&global, &args),
        Command::Delete(args) => entities::delete(&global, &args),
        Command::Batch(args) => entities::batch(&global, &args),
        Command::Import(args) => import::run(&global, &args),
        Command::Export(args) => export::run(&global, &args),
        Command::Snapshot(args) => inspect::snapshot(&global, &args),
        Command::Stats => inspect::stats(&global),
        Command::Check => inspect::check(&global),
        Command::Compact => inspect::compact(&global),
        Command::Dump(args) => inspect::dump(&global, &args),
        Command::Serve { mut args } => {
            if let Some(db) = cli.db {
                args.splice(0..0, ["--db".to_owned(), db.display().to_string()]);
            }
            serve::run(&args)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
