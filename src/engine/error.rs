//! Errors of the engine layer.

use std::path::PathBuf;

/// Result alias of the engine layer.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong below the table layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed; `op` says which (e.g. "write WAL record", "sync superblock").
    #[error("I/O error during {op}: {source}")]
    Io {
        /// The operation that failed.
        op: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Bytes on disk failed a checksum or an invariant; never returned as data.
    #[error("corruption at file offset {offset}: {what}")]
    Corruption {
        /// Byte offset in the database file where the bad structure starts.
        offset: u64,
        /// What was wrong.
        what: String,
    },
    /// Another process holds the write lock on the file.
    #[error("database file {path} is locked by another process (only one writer may open it)")]
    Locked {
        /// The file that is locked.
        path: PathBuf,
    },
    /// The file is not a strata database (bad magic) or has an unsupported format version.
    #[error("{path} is not a strata database: {what}")]
    NotADatabase {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        what: String,
    },
    /// A write was attempted on a handle opened read-only.
    #[error("the database was opened read-only")]
    ReadOnly,
    /// An earlier write or sync failed; the engine refuses writes until it is reopened, because
    /// a retried fsync can report success for data the kernel already dropped.
    #[error(
        "the engine refuses writes after an earlier I/O failure ({cause}); reopen the database"
    )]
    Poisoned {
        /// The failure that poisoned the engine.
        cause: String,
    },
    /// The engine has been closed.
    #[error("the engine is closed")]
    Closed,
    /// An argument was invalid (e.g. an empty range, a key over the size limit).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    /// An `Options` field is out of range or inconsistent with another.
    #[error("invalid option {name}: {reason}")]
    InvalidOption {
        /// The field at fault.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}
