//! Entity group transactions: up to 100 operations on one partition, applied atomically.

use super::entities::Table;
use super::error::{Result, TableError};
use super::etag::{ETag, IfMatch};
use super::limits::{BATCH_MAX_OPERATIONS, BATCH_MAX_PAYLOAD_BYTES};
use super::ops::{OpKind, Operation};
use crate::model::{Entity, PartitionKey, RowKey};

/// A batch being built on one partition of a table. Nothing is checked or written until
/// [`Batch::submit`], which checks the batch rules (SPEC §5), then every operation's condition
/// against the stored entities, and only then writes all of them as one engine batch.
///
/// ```
/// use strata::{Account, IfMatch};
/// use strata::model::{Entity, PartitionKey, RowKey};
/// let dir = tempfile::tempdir()?;
/// let account = Account::open(dir.path().join("db.strata"))?;
/// account.create_table("People")?;
/// let people = account.table("People")?;
/// let pk = PartitionKey::new("sales")?;
/// let mut batch = people.batch("sales")?;
/// batch.insert(Entity::new(pk.clone(), RowKey::new("alice")?));
/// batch.insert(Entity::new(pk.clone(), RowKey::new("email:alice@example.com")?));
/// let etags = batch.submit()?;
/// assert_eq!(etags.len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
#[must_use = "a batch does nothing until submitted"]
pub struct Batch {
    table: Table,
    partition_key: PartitionKey,
    ops: Vec<(OpKind, Entity)>,
}

impl Batch {
    pub(crate) const fn new(table: Table, partition_key: PartitionKey) -> Self {
        Self {
            table,
            partition_key,
            ops: Vec::new(),
        }
    }

    /// The batch's PartitionKey.
    #[must_use]
    pub const fn partition_key(&self) -> &PartitionKey {
        &self.partition_key
    }

    /// Number of operations added so far.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether no operation has been added.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Adds an insert (fails at submit if the entity exists).
    pub fn insert(&mut self, entity: Entity) -> &mut Self {
        self.push(OpKind::Insert, entity)
    }

    /// Adds a replace under `if_match`.
    pub fn replace(&mut self, entity: Entity, if_match: IfMatch) -> &mut Self {
        self.push(OpKind::Replace(if_match), entity)
    }

    /// Adds a merge under `if_match`.
    pub fn merge(&mut self, entity: Entity, if_match: IfMatch) -> &mut Self {
        self.push(OpKind::Merge(if_match), entity)
    }

    /// Adds an insert-or-replace.
    pub fn insert_or_replace(&mut self, entity: Entity) -> &mut Self {
        self.push(OpKind::InsertOrReplace, entity)
    }

    /// Adds an insert-or-merge.
    pub fn insert_or_merge(&mut self, entity: Entity) -> &mut Self {
        self.push(OpKind::InsertOrMerge, entity)
    }

    /// Adds a delete of the entity with RowKey `row_key` under `if_match`.
    pub fn delete(&mut self, row_key: RowKey, if_match: IfMatch) -> &mut Self {
        let entity = Entity::new(self.partition_key.clone(), row_key);
        self.push(OpKind::Delete(if_match), entity)
    }

    fn push(&mut self, kind: OpKind, entity: Entity) -> &mut Self {
        if self.ops.capacity() == 0 {
            // A valid batch never outgrows this, so its entities are never moved again.
            self.ops.reserve(BATCH_MAX_OPERATIONS);
        }
        self.ops.push((kind, entity));
        self
    }

    /// Checks the batch rules and every operation's condition, then writes all operations
    /// atomically; returns each operation's new ETag (`None` for a delete), in order.
    ///
    /// # Errors
    /// [`TableError::InvalidInput`] for an empty batch or more than 100 operations,
    /// [`TableError::CommandsInBatchActOnDifferentPartitions`],
    /// [`TableError::InvalidDuplicateRow`], [`TableError::RequestBodyTooLarge`] (each naming
    /// the operation's index where there is one), and [`TableError::BatchOperationFailed`]
    /// with the index and cause of the first operation whose condition fails. On any error
    /// nothing is written.
    pub fn submit(self) -> Result<Vec<Option<ETag>>> {
        self.commit()
    }

    /// As [`Batch::submit`], handing back each operation's entity with its new ETag, in
    /// order, so a caller that answers with the entities needs no copy of its own.
    ///
    /// # Errors
    /// As [`Batch::submit`].
    pub fn submit_returning(self) -> Result<Vec<(Entity, Option<ETag>)>> {
        let etags = self.commit()?;
        Ok(self
            .ops
            .into_iter()
            .map(|(_, entity)| entity)
            .zip(etags)
            .collect())
    }

    fn commit(&self) -> Result<Vec<Option<ETag>>> {
        self.validate()?;
        let ops: Vec<Operation<'_>> = self
            .ops
            .iter()
            .map(|(kind, entity)| Operation {
                kind: *kind,
                entity,
            })
            .collect();
        self.table.commit(&ops, true)
    }

    fn validate(&self) -> Result<()> {
        if self.ops.is_empty() {
            return Err(TableError::InvalidInput {
                reason: "a batch must hold at least one operation".to_owned(),
            });
        }
        if self.ops.len() > BATCH_MAX_OPERATIONS {
            return Err(TableError::InvalidInput {
                reason: format!(
                    "{}:the batch holds {} operations, which exceeds the maximum {BATCH_MAX_OPERATIONS} changes per change set",
                    BATCH_MAX_OPERATIONS,
                    self.ops.len()
                ),
            });
        }
        let mut payload = 0_usize;
        for (index, (_, entity)) in self.ops.iter().enumerate() {
            if entity.partition_key() != &self.partition_key {
                // A repeated RowKey before this index is reported first, as the service
                // reads the operations in order.
                if let Some(error) = self.duplicate_row(index) {
                    return Err(error);
                }
                return Err(TableError::CommandsInBatchActOnDifferentPartitions {
                    index,
                    expected: self.partition_key.as_str().to_owned(),
                    found: entity.partition_key().as_str().to_owned(),
                });
            }
            payload = payload.saturating_add(entity.size());
        }
        if let Some(error) = self.duplicate_row(self.ops.len()) {
            return Err(error);
        }
        if payload >= BATCH_MAX_PAYLOAD_BYTES {
            return Err(TableError::RequestBodyTooLarge { size: payload });
        }
        Ok(())
    }

    /// The first repeated RowKey among the operations before `before`: the error names the
    /// lowest index whose RowKey an earlier operation already uses, and that earlier index.
    /// Sorting (at most 100 keys) costs less than hashing each key.
    fn duplicate_row(&self, before: usize) -> Option<TableError> {
        let ops = self.ops.get(..before).unwrap_or(&self.ops);
        let mut order: Vec<(&str, usize)> = ops
            .iter()
            .enumerate()
            .map(|(index, (_, entity))| (entity.row_key().as_str(), index))
            .collect();
        order.sort_unstable();
        order
            .windows(2)
            .filter_map(|pair| match pair {
                [(a, first), (b, index)] if a == b => Some((*index, *first)),
                _ => None,
            })
            .min()
            .map(|(index, first)| TableError::InvalidDuplicateRow {
                index,
                first,
                row_key: ops
                    .get(first)
                    .map(|(_, entity)| entity.row_key().as_str().to_owned())
                    .unwrap_or_default(),
            })
    }
}
