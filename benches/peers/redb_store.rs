//! redb: one table of `&[u8] -> &[u8]`, one write transaction per batch.
//!
//! `Sync` = `Durability::Immediate`; `Buffered` = `Durability::None` (kept until the next
//! `Immediate` commit, which `sync` issues). redb runs one write transaction at a time, so
//! writer threads queue on `begin_write`. Reads share one read transaction per reader handle.

use std::path::Path;

use redb::{Database, ReadOnlyTable, ReadableDatabase, TableDefinition};

use crate::store::{BenchResult, Durability, KvReader, KvStore, StoreOptions};

const TABLE: TableDefinition<'static, &[u8], &[u8]> = TableDefinition::new("kv");

/// redb adapter.
pub struct RedbStore {
    db: Database,
}

impl RedbStore {
    /// Creates `dir/redb.db` with a cache of `options.cache_bytes`.
    pub fn open(dir: &Path, options: StoreOptions) -> BenchResult<Self> {
        let db = Database::builder()
            .set_cache_size(options.cache_bytes)
            .create(dir.join("redb.db"))?;
        let txn = db.begin_write()?;
        txn.open_table(TABLE)?;
        txn.commit()?;
        Ok(Self { db })
    }

    fn commit(&self, entries: &[(&[u8], &[u8])], durability: redb::Durability) -> BenchResult<()> {
        let mut txn = self.db.begin_write()?;
        txn.set_durability(durability)?;
        {
            let mut table = txn.open_table(TABLE)?;
            for (key, value) in entries {
                table.insert(*key, *value)?;
            }
        }
        txn.commit()?;
        Ok(())
    }
}

impl KvStore for RedbStore {
    fn write(&self, entries: &[(&[u8], &[u8])], durability: Durability) -> BenchResult<()> {
        let durability = match durability {
            Durability::Sync => redb::Durability::Immediate,
            Durability::Buffered => redb::Durability::None,
        };
        self.commit(entries, durability)
    }

    fn reader(&self) -> BenchResult<Box<dyn KvReader + '_>> {
        let table = self.db.begin_read()?.open_table(TABLE)?;
        Ok(Box::new(RedbReader { table }))
    }

    fn sync(&self) -> BenchResult<()> {
        self.commit(&[], redb::Durability::Immediate)
    }

    fn compact(&mut self) -> BenchResult<()> {
        while self.db.compact()? {}
        Ok(())
    }
}

/// A read-only table of one read transaction.
struct RedbReader {
    table: ReadOnlyTable<&'static [u8], &'static [u8]>,
}

impl KvReader for RedbReader {
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> BenchResult<bool> {
        match self.table.get(key)? {
            Some(value) => {
                visit(value.value());
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
        for entry in self.table.range(start..end)?.take(limit) {
            let (key, value) = entry?;
            visit(key.value(), value.value());
            visited += 1;
        }
        Ok(visited)
    }
}
