//! `strata tables list|create|delete`.

use clap::Subcommand;
use serde_json::Value as Json;

use super::Global;
use super::error::Result;
use super::output::print_records;

/// Table management.
#[derive(Debug, Subcommand)]
pub enum TablesCommand {
    /// List the tables, optionally filtered (`--filter "TableName ge 'A'"`).
    #[command(after_help = "Example: strata tables list --filter \"TableName eq 'Readings'\"")]
    List {
        /// An OData filter over `TableName`.
        #[arg(long)]
        filter: Option<String>,
    },
    /// Create a table (name: a letter then 2..=62 letters or digits).
    #[command(after_help = "Example: strata tables create Readings")]
    Create {
        /// The table name.
        name: String,
    },
    /// Delete a table and all its entities (O(1); space is reclaimed by compaction).
    #[command(after_help = "Example: strata tables delete Readings")]
    Delete {
        /// The table name.
        name: String,
    },
}

/// Runs a `tables` subcommand.
pub fn run(global: &Global, cmd: TablesCommand) -> Result<()> {
    match cmd {
        TablesCommand::List { filter } => {
            let account = global.open_read()?;
            let names = account.query_tables(filter.as_deref())?;
            let rows: Vec<Vec<Json>> = names
                .iter()
                .map(|n| vec![Json::String(n.as_str().to_owned())])
                .collect();
            print_records(global.format, &["TableName"], &rows)
        }
        TablesCommand::Create { name } => {
            let account = global.open_write()?;
            let created = account.create_table(&name)?;
            eprintln!("created table {}", created.as_str());
            Ok(())
        }
        TablesCommand::Delete { name } => {
            let account = global.open_write()?;
            account.delete_table(&name)?;
            eprintln!("deleted table {name}");
            Ok(())
        }
    }
}
