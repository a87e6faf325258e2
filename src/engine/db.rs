//! The engine handle.

use std::ops::Range;
use std::path::Path;

use super::{Durability, Options, Result, Seq, Snapshot, Stats, WriteBatch};
use super::iter::RangeIter;

/// An open database file. `Send + Sync`: share it between threads behind an `Arc`.
#[derive(Debug)]
pub struct Engine {}

impl Engine {
    /// Opens (creating if absent) the database file at `path` for writing.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        let _ = (path, options);
        todo!()
    }
    /// Opens an existing database file read-only (shared lock).
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let _ = path;
        todo!()
    }
    /// Applies `batch` atomically; returns its sequence number once `durability` holds.
    pub fn write(&self, batch: &WriteBatch, durability: Durability) -> Result<Seq> {
        let _ = (batch, durability);
        todo!()
    }
    /// The current value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let _ = key;
        todo!()
    }
    /// A consistent read view at the latest committed sequence number.
    pub fn snapshot(&self) -> Snapshot {
        todo!()
    }
    /// Iterates live keys in `range` in ascending order at the latest sequence number.
    pub fn range(&self, range: Range<&[u8]>) -> Result<RangeIter> {
        let _ = range;
        todo!()
    }
    /// Writes the memtable to an SST and makes everything durable.
    pub fn flush(&self) -> Result<()> {
        todo!()
    }
    /// Compacts everything into the last level, dropping overwritten and deleted data.
    pub fn compact(&self) -> Result<()> {
        todo!()
    }
    /// Writes a consistent, fully compacted copy of the database to a new file at `path`.
    pub fn checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        let _ = path;
        todo!()
    }
    /// Levels, files, live and total bytes, amplification.
    pub fn stats(&self) -> Result<Stats> {
        todo!()
    }
    /// Flushes, waits for background work and releases the file.
    pub fn close(self) -> Result<()> {
        todo!()
    }
}
