//! fjall: one keyspace, one `OwnedWriteBatch` per batch.
//!
//! `Sync` = `PersistMode::SyncAll` at commit; `Buffered` = `PersistMode::Buffer` (the journal is
//! flushed to the OS, as fjall's own single `insert` does). fjall's journal writer is a mutex
//! held across the fsync, so concurrent `Sync` writers queue rather than share an fsync.

use std::path::Path;

use fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode};

use crate::store::{BenchResult, Durability, KvReader, KvStore, StoreOptions};

/// fjall adapter.
pub struct FjallStore {
    db: Database,
    keyspace: Keyspace,
}

impl FjallStore {
    /// Creates a database in `dir/fjall` with a block cache of `options.cache_bytes`.
    pub fn open(dir: &Path, options: StoreOptions) -> BenchResult<Self> {
        let db = Database::builder(dir.join("fjall"))
            .cache_size(u64::try_from(options.cache_bytes)?)
            .open()?;
        let keyspace = db.keyspace("kv", KeyspaceCreateOptions::default)?;
        Ok(Self { db, keyspace })
    }
}

impl KvStore for FjallStore {
    fn write(&self, entries: &[(&[u8], &[u8])], durability: Durability) -> BenchResult<()> {
        let mode = match durability {
            Durability::Sync => PersistMode::SyncAll,
            Durability::Buffered => PersistMode::Buffer,
        };
        let mut batch = self.db.batch().durability(Some(mode));
        for (key, value) in entries {
            batch.insert(&self.keyspace, *key, *value);
        }
        batch.commit()?;
        Ok(())
    }

    fn reader(&self) -> BenchResult<Box<dyn KvReader + '_>> {
        Ok(Box::new(FjallReader {
            keyspace: &self.keyspace,
        }))
    }

    fn sync(&self) -> BenchResult<()> {
        self.db.persist(PersistMode::SyncAll)?;
        Ok(())
    }

    fn compact(&mut self) -> BenchResult<()> {
        self.keyspace.rotate_memtable_and_wait()?;
        self.keyspace.major_compact()?;
        self.db.persist(PersistMode::SyncAll)?;
        Ok(())
    }
}

/// Reads straight from the keyspace (each read sees the latest data).
struct FjallReader<'k> {
    keyspace: &'k Keyspace,
}

impl KvReader for FjallReader<'_> {
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> BenchResult<bool> {
        match self.keyspace.get(key)? {
            Some(value) => {
                visit(&value);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    fn scan(
        &mut self,
        start: &[u8],
        end: &[u8],
        limit: usize,
        visit: &mut dyn FnMut(&[u8], &[u8]),
    ) -> BenchResult<usize> {
        let mut visited = 0;
        for guard in self.keyspace.range(start..end).take(limit) {
            let (key, value) = guard.into_inner()?;
            visit(&key, &value);
            visited += 1;
        }
        Ok(visited)
    }
}
