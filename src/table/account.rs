//! Accounts: one database file, its catalog of tables and its clock.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};

use super::catalog::{self, TableState};
use super::clock::Clock;
use super::entities::Table;
use super::error::{Result, TableError};
use super::locks::PartitionLocks;
use super::options::Options;
use crate::codec::key::{self, PartitionPrefixExtractor};
use crate::engine::{Engine, WriteBatch};
use crate::model::TableName;
use crate::query::{Filter, TableRow};

/// An account: the tables of one database file. Cheap to clone and share between threads
/// (`Send + Sync`, an `Arc` inside).
///
/// ```
/// use strata::Account;
/// use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
/// let dir = tempfile::tempdir()?;
/// let account = Account::open(dir.path().join("db.strata"))?;
/// account.create_table("Orders")?;
/// let orders = account.table("orders")?;
/// let mut entity = Entity::new(PartitionKey::new("2024")?, RowKey::new("0001")?);
/// entity.set(PropertyName::new("Total")?, Value::Double(9.5))?;
/// let etag = orders.insert(&entity)?;
/// let stored = orders.get("2024", "0001", None)?;
/// assert_eq!(stored.etag, etag);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Account {
    pub(crate) inner: Arc<AccountInner>,
}

#[derive(Debug)]
pub(crate) struct AccountInner {
    pub(crate) engine: Engine,
    pub(crate) options: Options,
    pub(crate) clock: Clock,
    pub(crate) locks: PartitionLocks,
    /// Live tables by name (case-insensitive: `TableName` hashes and compares folded).
    pub(crate) tables: RwLock<HashMap<TableName, Arc<TableState>>>,
    /// Serialises catalog changes; holds the next table id to hand out.
    next_id: Mutex<u32>,
}

impl Account {
    /// Opens (creating if absent) the account file at `path` with default options.
    ///
    /// # Errors
    /// [`TableError::Engine`] if the file cannot be opened (locked, not a database, I/O), and
    /// [`TableError::CorruptRow`] / [`TableError::CorruptCatalog`] for a bad catalog.
    pub fn open(path: impl AsRef<Path>) -> Result<Self> {
        Self::open_with(path, Options::default())
    }

    /// Opens (creating if absent) the account file at `path`.
    ///
    /// # Errors
    /// As [`Account::open`].
    pub fn open_with(path: impl AsRef<Path>, mut options: Options) -> Result<Self> {
        options.engine.prefix_extractor = Some(Arc::new(PartitionPrefixExtractor));
        let engine = Engine::open(path, options.engine.clone())?;
        Self::from_engine(engine, options)
    }

    /// Opens an existing account file read-only; every write fails with the engine's
    /// read-only error.
    ///
    /// # Errors
    /// As [`Account::open`].
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let engine = Engine::open_read_only(path)?;
        Self::from_engine(engine, Options::default())
    }

    fn from_engine(engine: Engine, options: Options) -> Result<Self> {
        let loaded = catalog::load(&engine)?;
        let clock = Clock::new(options.time_source.clone(), loaded.clock_reserved);
        Ok(Self {
            inner: Arc::new(AccountInner {
                engine,
                options,
                clock,
                locks: PartitionLocks::new(),
                tables: RwLock::new(loaded.tables),
                next_id: Mutex::new(loaded.next_id),
            }),
        })
    }

    /// Creates table `name`; returns its name as created.
    ///
    /// # Errors
    /// [`TableError::Model`] for an invalid or reserved name, [`TableError::TableAlreadyExists`]
    /// if a table of that name exists in any letter case.
    pub fn create_table(&self, name: &str) -> Result<TableName> {
        let name = TableName::new(name)?;
        let inner = &*self.inner;
        let mut next_id = inner.next_id.lock();
        if inner.tables.read().contains_key(&name) {
            return Err(TableError::TableAlreadyExists {
                table: name.into_string(),
            });
        }
        let id = *next_id;
        let following = id
            .checked_add(1)
            .ok_or_else(|| TableError::OutOfRangeInput {
                reason: "all 2^32 table ids of this account have been used".to_owned(),
            })?;
        let created = inner.clock.next(&inner.engine)?;
        let mut batch = WriteBatch::new();
        let (row_key, row) = catalog::table_record(&name, id, created)?;
        let (counter_key, counter) = catalog::next_id_record(following)?;
        batch.put(&row_key, &row).put(&counter_key, &counter);
        inner.engine.write(&batch, inner.options.durability)?;
        *next_id = following;
        let state = TableState::new(id, name.clone());
        inner.tables.write().insert(name.clone(), Arc::new(state));
        Ok(name)
    }

    /// Deletes table `name` and all its entities: one catalog delete and one range delete in
    /// one engine batch, whatever the table's size; the space is reclaimed by compaction.
    ///
    /// # Errors
    /// [`TableError::TableNotFound`] if no such table exists.
    pub fn delete_table(&self, name: &str) -> Result<()> {
        let name = TableName::new(name)?;
        let inner = &*self.inner;
        let _catalog = inner.next_id.lock();
        let state =
            inner
                .tables
                .read()
                .get(&name)
                .cloned()
                .ok_or_else(|| TableError::TableNotFound {
                    table: name.as_str().to_owned(),
                })?;
        // Waits for writes in flight; later ones see the flag and report TableNotFound.
        let mut dropped = state.dropped.write();
        let (start, end) = key::table_range(state.id);
        let mut batch = WriteBatch::new();
        batch
            .delete(&catalog::table_key(&state.name)?)
            .delete_range(&start, &end);
        inner.engine.write(&batch, inner.options.durability)?;
        *dropped = true;
        state.mark_gone();
        inner.tables.write().remove(&name);
        Ok(())
    }

    /// Whether table `name` exists.
    #[must_use]
    pub fn table_exists(&self, name: &str) -> bool {
        TableName::new(name).is_ok_and(|name| self.inner.tables.read().contains_key(&name))
    }

    /// Every table, ordered by name as the service orders them (case-insensitively).
    #[must_use]
    pub fn list_tables(&self) -> Vec<TableName> {
        let mut names: Vec<TableName> = self.inner.tables.read().keys().cloned().collect();
        names.sort();
        names
    }

    /// The tables whose name satisfies `filter` (a `$filter` on the property `TableName`,
    /// e.g. `TableName ge 'a' and TableName lt 'b'`), ordered as [`Account::list_tables`], all
    /// at once; [`Account::query_tables_page`] returns them a page at a time.
    ///
    /// # Errors
    /// [`TableError::InvalidFilter`] for a bad filter.
    pub fn query_tables(&self, filter: Option<&str>) -> Result<Vec<TableName>> {
        let filter = filter.map(Filter::parse).transpose()?;
        let mut names = self.list_tables();
        if let Some(filter) = filter {
            // A table-name row holds no stored bytes, so evaluating it cannot fail.
            names.retain(|name| filter.matches(&TableRow(name.as_str())).unwrap_or(false));
        }
        Ok(names)
    }

    /// A handle on table `name`. The table need not exist yet: operations on a missing table
    /// fail with [`TableError::TableNotFound`].
    ///
    /// # Errors
    /// [`TableError::Model`] for an invalid table name.
    pub fn table(&self, name: &str) -> Result<Table> {
        Ok(Table::new(self.clone(), TableName::new(name)?))
    }

    /// Flushes the memtable and compacts the file, reclaiming the space of deleted tables.
    ///
    /// # Errors
    /// [`TableError::Engine`] if the engine fails.
    pub fn compact(&self) -> Result<()> {
        self.inner.engine.flush()?;
        self.inner.engine.compact()?;
        Ok(())
    }

    /// The engine underneath, for statistics and maintenance.
    #[must_use]
    pub fn engine(&self) -> &Engine {
        &self.inner.engine
    }
}

impl AccountInner {
    /// The live state of table `name`.
    pub(crate) fn resolve(&self, name: &TableName) -> Result<Arc<TableState>> {
        self.tables
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| TableError::TableNotFound {
                table: name.as_str().to_owned(),
            })
    }
}
