//! Table handles and their single-entity operations.

use std::borrow::Cow;
use std::io::Write as _;
use std::sync::{Arc, OnceLock};

use super::account::Account;
use super::batch::Batch;
use super::catalog::TableState;
use super::error::{Result, TableError};
use super::etag::{ETag, IfMatch};
use super::limits::{ENGINE_KEY_STACK_BYTES, EXISTENCE_PROBE_MIN_OPERATIONS};
use super::ops::{self, OpKind, Operation, Outcome};
use super::row::{self, StoredEntity};
use crate::codec::format::KEY_SEPARATOR;
use crate::codec::key;
use crate::engine::{Engine, WriteBatch};
use crate::model::{Entity, PartitionKey, RowKey, TableName};

/// Value buffers larger than this (a rare huge entity) are freed rather than kept per thread.
pub(crate) const MAX_REUSED_GET_BUFFER: usize = 64 << 10;

thread_local! {
    pub(crate) static GET_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
    /// A write's engine key and new stored value, reused by the thread's next write: a
    /// single write otherwise allocates (and grows) both.
    pub(crate) static WRITE_BUFFERS: std::cell::Cell<(Vec<u8>, Vec<u8>)> =
        const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}

/// A handle on one table of an [`Account`], by name: operations resolve the name when they
/// run, so a handle outlives a delete and re-create of its table. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Table {
    pub(crate) account: Account,
    pub(crate) name: TableName,
    /// The table this handle last resolved to: while it is not deleted it is still the live
    /// table of that name, so each operation skips the locked, hashed catalog lookup.
    cached: OnceLock<Arc<TableState>>,
}

impl Table {
    pub(crate) const fn new(account: Account, name: TableName) -> Self {
        Self {
            account,
            name,
            cached: OnceLock::new(),
        }
    }

    /// The live state of the table: the cached one unless it has been deleted, else a fresh
    /// catalog lookup (borrowed, so the common path touches no shared reference count).
    pub(crate) fn state(&self) -> Result<Cow<'_, Arc<TableState>>> {
        if let Some(state) = self.cached.get()
            && !state.is_gone()
        {
            return Ok(Cow::Borrowed(state));
        }
        let state = self.account.inner.resolve(&self.name)?;
        // A handle whose cached table was deleted keeps resolving; that path is rare.
        let _ = self.cached.set(Arc::clone(&state));
        Ok(Cow::Owned(state))
    }

    /// Whether the handle has resolved its table and that table is still live, so its
    /// operations skip the catalog lookup.
    pub(crate) fn is_resolved(&self) -> bool {
        self.cached.get().is_some_and(|state| !state.is_gone())
    }

    /// The table's name as given to [`Account::table`].
    #[must_use]
    pub const fn name(&self) -> &TableName {
        &self.name
    }

    /// Inserts `entity`; its Timestamp is set by the account (a given one is ignored).
    ///
    /// # Errors
    /// [`TableError::EntityAlreadyExists`] if the key exists, [`TableError::TableNotFound`].
    pub fn insert(&self, entity: &Entity) -> Result<ETag> {
        self.write_one(OpKind::Insert, entity)
    }

    /// Replaces every property of the stored entity with those of `entity`.
    ///
    /// # Errors
    /// [`TableError::ResourceNotFound`] if it does not exist,
    /// [`TableError::UpdateConditionNotSatisfied`] if `if_match` names another ETag.
    pub fn replace(&self, entity: &Entity, if_match: IfMatch) -> Result<ETag> {
        self.write_one(OpKind::Replace(if_match), entity)
    }

    /// Overwrites the properties of the stored entity that `entity` has, keeping the others.
    ///
    /// # Errors
    /// As [`Table::replace`], plus [`TableError::TooManyProperties`] /
    /// [`TableError::EntityTooLarge`] if the merged entity breaks a limit.
    pub fn merge(&self, entity: &Entity, if_match: IfMatch) -> Result<ETag> {
        self.write_one(OpKind::Merge(if_match), entity)
    }

    /// Inserts `entity`, or replaces the stored one (no condition).
    ///
    /// # Errors
    /// [`TableError::TableNotFound`], engine failures.
    pub fn insert_or_replace(&self, entity: &Entity) -> Result<ETag> {
        self.write_one(OpKind::InsertOrReplace, entity)
    }

    /// Inserts `entity`, or merges it into the stored one (no condition).
    ///
    /// # Errors
    /// As [`Table::merge`], without the ETag and existence conditions.
    pub fn insert_or_merge(&self, entity: &Entity) -> Result<ETag> {
        self.write_one(OpKind::InsertOrMerge, entity)
    }

    /// Deletes the entity `(partition_key, row_key)`.
    ///
    /// # Errors
    /// Invalid keys, [`TableError::ResourceNotFound`],
    /// [`TableError::UpdateConditionNotSatisfied`].
    pub fn delete(&self, partition_key: &str, row_key: &str, if_match: IfMatch) -> Result<()> {
        let entity = Entity::new(PartitionKey::new(partition_key)?, RowKey::new(row_key)?);
        let op = Operation {
            kind: OpKind::Delete(if_match),
            entity: &entity,
            row: None,
        };
        self.commit(std::slice::from_ref(&op), false).map(|_| ())
    }

    /// The entity `(partition_key, row_key)`, with only the properties in `select` if given.
    ///
    /// # Errors
    /// Invalid keys, [`TableError::ResourceNotFound`], [`TableError::TableNotFound`].
    pub fn get(
        &self,
        partition_key: &str,
        row_key: &str,
        select: Option<&[&str]>,
    ) -> Result<StoredEntity> {
        let pk = PartitionKey::from_borrowed(partition_key)?;
        let rk = RowKey::from_borrowed(row_key)?;
        let state = self.state()?;
        // Typical keys fit a stack buffer, which saves an allocation per get.
        let mut stack = [0u8; ENGINE_KEY_STACK_BYTES];
        let heap;
        let engine_key: &[u8] = match encode_key_on_stack(state.id, &pk, &rk, &mut stack) {
            Some(len) => stack.get(..len).unwrap_or_default(),
            None => {
                heap = key::encode(state.id, &pk, &rk);
                &heap
            }
        };
        // One value buffer per thread: a get copies the stored value once, into memory
        // that is already there.
        let mut value = GET_BUFFER.take();
        let found = self.account.inner.engine.get_into(engine_key, &mut value);
        let out = match found {
            Ok(true) => row::decode(state.id, engine_key, pk, rk, &value, select),
            Ok(false) => Err(ops::not_found(self.name.as_str(), &pk, &rk)),
            Err(e) => Err(e.into()),
        };
        if value.capacity() <= MAX_REUSED_GET_BUFFER {
            GET_BUFFER.replace(value);
        }
        out
    }

    /// A batch (entity group transaction) on partition `partition_key`, committed by
    /// [`Batch::submit`].
    ///
    /// # Errors
    /// [`TableError::Model`] for an invalid PartitionKey.
    pub fn batch(&self, partition_key: &str) -> Result<Batch> {
        Ok(Batch::new(self.clone(), PartitionKey::new(partition_key)?))
    }

    /// Commits one write of `kind` on its own; its new ETag.
    pub(crate) fn write_one(&self, kind: OpKind, entity: &Entity) -> Result<ETag> {
        let op = Operation {
            kind,
            entity,
            row: None,
        };
        let etag = self.commit_ops(std::slice::from_ref(&op), false)?;
        etag.filter(|_| !matches!(kind, OpKind::Delete(_)))
            .ok_or_else(|| TableError::InvalidInput {
                reason: "a write produced no ETag".to_owned(),
            })
    }

    /// Checks and applies `ops` (all in one partition) as one engine batch, under the lock of
    /// that partition and the table's drop gate; returns each operation's new ETag (`None` for
    /// a delete). In a batch, an operation's error is wrapped with its index.
    pub(crate) fn commit(
        &self,
        ops: &[Operation<'_>],
        in_batch: bool,
    ) -> Result<Vec<Option<ETag>>> {
        let etag = self.commit_ops(ops, in_batch)?;
        // Every operation shares the batch's Timestamp; only a delete has no ETag.
        Ok(ops
            .iter()
            .map(|op| etag.filter(|_| !matches!(op.kind, OpKind::Delete(_))))
            .collect())
    }

    /// [`Table::commit`] without the per-operation list: the ETag every written entity got,
    /// `None` for no operations.
    fn commit_ops(&self, ops: &[Operation<'_>], in_batch: bool) -> Result<Option<ETag>> {
        let Some(first) = ops.first() else {
            return Ok(None);
        };
        let inner = &*self.account.inner;
        let state = self.state()?;
        let dropped = state.dropped.read();
        if *dropped {
            return Err(TableError::TableNotFound {
                table: self.name.as_str().to_owned(),
            });
        }
        let pk = first.entity.partition_key().as_str();
        let _partition = inner.locks.lock(state.id, pk);
        let timestamp = inner.clock.next(&inner.engine)?;
        let etag = ETag::from_timestamp(timestamp);
        // Room for every key and value up front: an entity's size (UTF-16 counted) is above
        // its encoded length for the ASCII-heavy common case.
        let estimate: usize = ops.iter().map(Operation::size_hint).sum();
        let mut batch = WriteBatch::with_capacity(ops.len(), estimate);
        // One key and one value buffer for every operation (the engine batch copies each),
        // this thread's own.
        let (mut engine_key, mut value) = WRITE_BUFFERS.take();
        // One buffer for every stored row read, this thread's own: reads copy into memory
        // that is already there.
        let mut current = GET_BUFFER.take();
        let all_absent = ops.len() >= EXISTENCE_PROBE_MIN_OPERATIONS
            && span_is_empty(&inner.engine, state.id, ops)?;
        for (index, op) in ops.iter().enumerate() {
            engine_key.clear();
            key::encode_into(
                state.id,
                op.entity.partition_key(),
                op.entity.row_key(),
                &mut engine_key,
            );
            let found = op.kind.reads_current()
                && !all_absent
                && inner.engine.get_into(&engine_key, &mut current)?;
            let outcome = ops::apply(
                state.name.as_str(),
                state.id,
                &engine_key,
                op,
                found.then_some(current.as_slice()),
                timestamp,
                &mut value,
            )
            .map_err(|source| {
                if in_batch {
                    TableError::BatchOperationFailed {
                        index,
                        source: Box::new(source),
                    }
                } else {
                    source
                }
            })?;
            match outcome {
                Outcome::Put => batch.put(&engine_key, &value),
                Outcome::Delete => batch.delete(&engine_key),
            };
        }
        if current.capacity() <= MAX_REUSED_GET_BUFFER {
            GET_BUFFER.replace(current);
        }
        if value.capacity() <= MAX_REUSED_GET_BUFFER
            && engine_key.capacity() <= MAX_REUSED_GET_BUFFER
        {
            WRITE_BUFFERS.replace((engine_key, value));
        }
        inner.engine.write_owned(batch, inner.options.durability)?;
        Ok(Some(etag))
    }
}

/// Writes the engine key of `(pk, rk)` into `buffer` in the layout of [`key::encode`]; its
/// length, or `None` if it does not fit.
fn encode_key_on_stack(
    table_id: u32,
    pk: &PartitionKey,
    rk: &RowKey,
    buffer: &mut [u8],
) -> Option<usize> {
    let capacity = buffer.len();
    let mut rest = buffer;
    rest.write_all(&table_id.to_be_bytes()).ok()?;
    rest.write_all(pk.as_str().as_bytes()).ok()?;
    rest.write_all(&[KEY_SEPARATOR]).ok()?;
    rest.write_all(rk.as_str().as_bytes()).ok()?;
    Some(capacity - rest.len())
}

/// Whether no stored row lies between the least and the greatest key of `ops` (one partition),
/// read by one seek. Called under the partition lock, so the answer holds until the batch is
/// written; when it is true, every operation of a batch sees its row absent without a point
/// read of its own.
fn span_is_empty(engine: &Engine, table_id: u32, ops: &[Operation<'_>]) -> Result<bool> {
    let mut keys = ops.iter().map(|op| op.entity);
    let Some(first) = keys.next() else {
        return Ok(true);
    };
    let (mut least, mut greatest) = (first.row_key(), first.row_key());
    for entity in keys {
        least = least.min(entity.row_key());
        greatest = greatest.max(entity.row_key());
    }
    let pk = first.partition_key();
    let start = key::encode(table_id, pk, least);
    let end = key::successor(&key::encode(table_id, pk, greatest));
    Ok(!engine.range(&start[..]..&end[..])?.advance()?)
}
