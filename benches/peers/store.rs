//! The operations every engine under comparison offers, in the engine's own idiom.

use std::error::Error as StdError;
use std::path::Path;

/// Any adapter error; the bench reports it and stops.
pub type BenchError = Box<dyn StdError + Send + Sync>;

/// Result of an adapter operation.
pub type BenchResult<T> = Result<T, BenchError>;

/// How far a write must get before it is acknowledged, mapped to each engine's closest setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// On stable storage when the call returns (fsync or equivalent).
    Sync,
    /// In the OS page cache when the call returns; a later sync makes it durable.
    Buffered,
}

/// Options shared by every adapter so that they run under the same memory budget.
#[derive(Debug, Clone, Copy)]
pub struct StoreOptions {
    /// Bytes of block/page cache the engine may use.
    pub cache_bytes: usize,
    /// strata only: zstd level of level-1+ SST blocks (`Some(0)` = uncompressed, `None` = default).
    pub strata_zstd: Option<i32>,
}

/// A key-value engine under comparison. Shared between writer threads, hence `Sync`.
pub trait KvStore: Send + Sync {
    /// Applies `entries` atomically (one transaction / write batch) with `durability`.
    fn write(&self, entries: &[(&[u8], &[u8])], durability: Durability) -> BenchResult<()>;
    /// A read handle; engines with read transactions keep one open for the handle's lifetime.
    fn reader(&self) -> BenchResult<Box<dyn KvReader + '_>>;
    /// Makes every acknowledged write durable.
    fn sync(&self) -> BenchResult<()>;
    /// Compacts the store as far as the engine can (drops overwritten versions, frees space).
    fn compact(&mut self) -> BenchResult<()>;
}

/// Point and range reads.
pub trait KvReader {
    /// Calls `visit` with the value of `key` and returns `true`, or returns `false` if absent.
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> BenchResult<bool>;
    /// Visits at most `limit` entries of `start..end` in key order; returns how many it visited.
    fn scan(
        &mut self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> BenchResult<usize>;
}

/// Opens a fresh store of engine `name` inside the empty directory `dir`.
pub fn open(name: &str, dir: &Path, options: StoreOptions) -> BenchResult<Box<dyn KvStore>> {
    match name {
        "sqlite" => Ok(Box::new(crate::sqlite_store::SqliteStore::open(
            dir, options,
        )?)),
        "redb" => Ok(Box::new(crate::redb_store::RedbStore::open(dir, options)?)),
        "fjall" => Ok(Box::new(crate::fjall_store::FjallStore::open(
            dir, options,
        )?)),
        "strata" => Ok(Box::new(crate::strata_store::StrataStore::open(
            dir, options,
        )?)),
        other => {
            Err(format!("unknown engine {other:?} (expected strata, sqlite, redb or fjall)").into())
        }
    }
}
