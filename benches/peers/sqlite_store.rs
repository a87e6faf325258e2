//! SQLite (rusqlite, bundled): one `WITHOUT ROWID` table in WAL mode, one transaction per batch.
//!
//! `Sync` = `synchronous=FULL` (the WAL is fsynced at every commit); `Buffered` =
//! `synchronous=NORMAL` (commits reach the OS, the WAL is fsynced at checkpoints), which is
//! SQLite's own equivalent of an acknowledged-but-not-yet-durable write. SQLite connections are
//! not `Sync`, and SQLite serialises writers on its database lock anyway, so writer threads share
//! one connection behind a mutex (cheaper for it than `SQLITE_BUSY` retries between connections).

use std::path::Path;

use parking_lot::{Mutex, MutexGuard};
use rusqlite::{Connection, params};

use crate::store::{BenchResult, Durability, KvReader, KvStore, StoreOptions};

const SCHEMA: &str = "CREATE TABLE kv (k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID";
const PUT: &str = "INSERT OR REPLACE INTO kv (k, v) VALUES (?1, ?2)";
const GET: &str = "SELECT v FROM kv WHERE k = ?1";
const SCAN: &str = "SELECT k, v FROM kv WHERE k >= ?1 AND k < ?2 ORDER BY k LIMIT ?3";

/// The connection and the `synchronous` level it is currently set to.
struct Session {
    conn: Connection,
    durability: Durability,
}

/// SQLite adapter.
pub struct SqliteStore {
    session: Mutex<Session>,
}

impl SqliteStore {
    /// Creates `dir/sqlite.db` in WAL mode with a page cache of `options.cache_bytes`.
    pub fn open(dir: &Path, options: StoreOptions) -> BenchResult<Self> {
        let conn = Connection::open(dir.join("sqlite.db"))?;
        let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |row| row.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            return Err(format!("sqlite refused WAL mode (got {mode:?})").into());
        }
        // A negative cache_size is in KiB rather than pages.
        let cache_kib = options.cache_bytes / 1024;
        conn.execute_batch(&format!(
            "PRAGMA synchronous=NORMAL; PRAGMA cache_size=-{cache_kib}; {SCHEMA};"
        ))?;
        Ok(Self {
            session: Mutex::new(Session {
                conn,
                durability: Durability::Buffered,
            }),
        })
    }

    fn session(&self) -> MutexGuard<'_, Session> {
        self.session.lock()
    }
}

impl Session {
    fn set_durability(&mut self, durability: Durability) -> BenchResult<()> {
        if self.durability != durability {
            let level = match durability {
                Durability::Sync => "FULL",
                Durability::Buffered => "NORMAL",
            };
            self.conn
                .execute_batch(&format!("PRAGMA synchronous={level}"))?;
            self.durability = durability;
        }
        Ok(())
    }

    fn put_all(&self, entries: &[(&[u8], &[u8])]) -> BenchResult<()> {
        let mut stmt = self.conn.prepare_cached(PUT)?;
        for (key, value) in entries {
            stmt.execute(params![key, value])?;
        }
        Ok(())
    }
}

impl KvStore for SqliteStore {
    fn write(&self, entries: &[(&[u8], &[u8])], durability: Durability) -> BenchResult<()> {
        let mut session = self.session();
        session.set_durability(durability)?;
        if entries.len() == 1 {
            // Autocommit: the single statement is its own transaction.
            return session.put_all(entries);
        }
        session.conn.execute_batch("BEGIN")?;
        match session.put_all(entries) {
            Ok(()) => Ok(session.conn.execute_batch("COMMIT")?),
            Err(err) => {
                session.conn.execute_batch("ROLLBACK")?;
                Err(err)
            }
        }
    }

    fn reader(&self) -> BenchResult<Box<dyn KvReader + '_>> {
        Ok(Box::new(SqliteReader {
            session: self.session(),
        }))
    }

    fn sync(&self) -> BenchResult<()> {
        // A checkpoint fsyncs the WAL (making every commit durable) and then the database file.
        let session = self.session();
        let _busy: i64 = session
            .conn
            .query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |row| row.get(0))?;
        Ok(())
    }

    fn compact(&mut self) -> BenchResult<()> {
        let session = self.session();
        session.conn.execute_batch("VACUUM")?;
        let _busy: i64 = session
            .conn
            .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))?;
        Ok(())
    }
}

/// Reads through the shared connection with cached prepared statements.
struct SqliteReader<'s> {
    session: MutexGuard<'s, Session>,
}

impl KvReader for SqliteReader<'_> {
    fn get(&mut self, key: &[u8], visit: &mut dyn FnMut(&[u8])) -> BenchResult<bool> {
        let mut stmt = self.session.conn.prepare_cached(GET)?;
        let mut rows = stmt.query(params![key])?;
        match rows.next()? {
            Some(row) => {
                visit(row.get_ref(0)?.as_blob()?);
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
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut stmt = self.session.conn.prepare_cached(SCAN)?;
        let mut rows = stmt.query(params![start, end, limit])?;
        let mut visited = 0;
        while let Some(row) = rows.next()? {
            visit(row.get_ref(0)?.as_blob()?, row.get_ref(1)?.as_blob()?);
            visited += 1;
        }
        Ok(visited)
    }
}
