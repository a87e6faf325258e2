//! The command line's error type and its exit statuses.

use strata::TableError;
use strata::engine;

/// Exit status of a usage error (bad arguments, unknown option, malformed token).
pub const EXIT_USAGE: u8 = 2;
/// Exit status of a data error (bad entity, bad row, unknown table, invalid filter, conflict).
pub const EXIT_DATA: u8 = 3;
/// Exit status of an I/O error (cannot read/write a file, file locked, read-only, not a database).
pub const EXIT_IO: u8 = 4;
/// Exit status when stored bytes are corrupt (`check` found problems, a bad checksum on read).
pub const EXIT_CORRUPT: u8 = 5;

/// The exit status table printed by `--help`.
pub const EXIT_HELP: &str = "Exit status: 0 success, 2 usage error, 3 data error (bad input, unknown table or \
entity, invalid filter, failed condition), 4 I/O error (file missing, locked by another writer, read-only), \
5 corruption found.";

/// A failure of a subcommand, with the exit status it maps to.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The command line itself was wrong.
    #[error("{0}")]
    Usage(String),
    /// Input data (an entity, a row, a filter, a table name) was invalid or conflicted.
    #[error("{0}")]
    Data(String),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// Stored bytes failed a checksum or invariant.
    #[error("{0}")]
    Corrupt(String),
}

impl CliError {
    /// The process exit status of this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Self::Usage(_) => EXIT_USAGE,
            Self::Data(_) => EXIT_DATA,
            Self::Io(_) => EXIT_IO,
            Self::Corrupt(_) => EXIT_CORRUPT,
        }
    }

    /// An I/O error on `path` while doing `what`.
    pub fn io(what: &str, path: &std::path::Path, err: impl std::fmt::Display) -> Self {
        Self::Io(format!("cannot {what} {}: {err}", path.display()))
    }

    /// Prefixes the message with `context` (e.g. the file and line of a row).
    pub fn context(self, context: &str) -> Self {
        match self {
            Self::Usage(m) => Self::Usage(format!("{context}: {m}")),
            Self::Data(m) => Self::Data(format!("{context}: {m}")),
            Self::Io(m) => Self::Io(format!("{context}: {m}")),
            Self::Corrupt(m) => Self::Corrupt(format!("{context}: {m}")),
        }
    }
}

impl From<engine::Error> for CliError {
    fn from(err: engine::Error) -> Self {
        match &err {
            engine::Error::Corruption { .. } => Self::Corrupt(format!(
                "{err}\nhint: run `strata check` for a full report; restore from a snapshot if it persists"
            )),
            engine::Error::Locked { .. } => Self::Io(format!(
                "{err}\nhint: stop the other strata process, or use --read-only to read a snapshot"
            )),
            engine::Error::ReadOnly => Self::Io(format!(
                "{err}\nhint: drop --read-only, or check the file's permissions"
            )),
            engine::Error::InvalidArgument(_) => Self::Data(err.to_string()),
            _ => Self::Io(err.to_string()),
        }
    }
}

impl From<TableError> for CliError {
    fn from(err: TableError) -> Self {
        match err {
            TableError::Engine(inner) => inner.into(),
            TableError::CorruptRow { .. } | TableError::CorruptCatalog { .. } => {
                Self::Corrupt(err.to_string())
            }
            TableError::TableNotFound { ref table } => Self::Data(format!(
                "{err}\nhint: `strata tables list` shows the tables; `strata tables create {table}` makes it"
            )),
            TableError::InvalidFilter(ref q) => Self::Data(format!(
                "invalid --filter: {q}\nhint: e.g. --filter \"PartitionKey eq 'a' and Value gt 10\""
            )),
            TableError::InvalidContinuationToken { .. } => Self::Usage(err.to_string()),
            other => Self::Data(format!("{other} [{}]", other.azure_code())),
        }
    }
}

impl From<strata::model::ModelError> for CliError {
    fn from(err: strata::model::ModelError) -> Self {
        Self::Data(err.to_string())
    }
}

/// Result alias of the command line.
pub type Result<T, E = CliError> = std::result::Result<T, E>;
