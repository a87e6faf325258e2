//! Entity group transactions: up to 100 operations on one partition, applied atomically.

use super::entities::Table;
use super::error::{Result, TableError};
use super::etag::{ETag, IfMatch};
use super::limits::{BATCH_MAX_OPERATIONS, BATCH_MAX_PAYLOAD_BYTES};
use super::ops::{OpKind, Operation};
use crate::model::{Entity, PartitionKey, RowKey};

/// Bytes reserved per operation for rows added encoded (an SDK row is ~150).
const ROW_GUESS_BYTES: usize = 256;

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
    ops: Vec<BatchOp>,
    /// The property bytes of the operations added already encoded, one after another.
    rows: Vec<u8>,
}

/// One operation of a batch.
#[derive(Debug)]
struct BatchOp {
    kind: OpKind,
    /// The entity; only its keys when its properties were added encoded (`row`).
    entity: Entity,
    row: Option<EncodedRow>,
}

/// Where an operation's encoded properties lie in [`Batch::rows`], and its entity's size.
#[derive(Debug, Clone, Copy)]
struct EncodedRow {
    start: usize,
    end: usize,
    size: usize,
}

impl BatchOp {
    /// The entity's size (SPEC §2), counted toward the batch payload.
    fn size(&self) -> usize {
        self.row.map_or_else(|| self.entity.size(), |row| row.size)
    }
}

/// The operations of a submitted batch, in order, as written.
#[derive(Debug)]
pub struct Submitted {
    ops: Vec<BatchOp>,
    rows: Vec<u8>,
    etags: Vec<Option<ETag>>,
}

/// One operation of a [`Submitted`] batch.
#[derive(Debug, Clone, Copy)]
pub struct Written<'a> {
    /// The entity as added; only its keys when its properties were added encoded.
    pub entity: &'a Entity,
    /// The properties added encoded, without the write's Timestamp.
    pub row: Option<&'a [u8]>,
    /// The new ETag; `None` for a delete.
    pub etag: Option<ETag>,
}

impl Submitted {
    /// The operations in order.
    pub fn iter(&self) -> impl Iterator<Item = Written<'_>> {
        self.ops.iter().zip(&self.etags).map(|(op, etag)| Written {
            entity: &op.entity,
            row: op.row.and_then(|row| self.rows.get(row.start..row.end)),
            etag: *etag,
        })
    }

    /// How many operations there were.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether there were none (a submitted batch always has one).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
}

impl Batch {
    pub(crate) const fn new(table: Table, partition_key: PartitionKey) -> Self {
        Self {
            table,
            partition_key,
            ops: Vec::new(),
            rows: Vec::new(),
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

    /// Adds an operation of `kind` on the entity with keys `keys` (its properties are
    /// ignored) whose properties are `row`: property bytes as
    /// [`crate::codec::property::encode`] writes them, Timestamp or not (the write sets
    /// it), with every [`Entity`] rule already checked by the caller; `size` is the
    /// entity's size (SPEC §2). Saves building the entity only to encode it; a caller
    /// encoding many rows reuses one buffer for `row`.
    pub(crate) fn push_encoded(
        &mut self,
        kind: OpKind,
        keys: Entity,
        row: &[u8],
        size: usize,
    ) -> &mut Self {
        if self.rows.capacity() == 0 {
            // Room for a batch of typical SDK rows (~150 bytes), so it rarely regrows.
            self.rows.reserve(BATCH_MAX_OPERATIONS * ROW_GUESS_BYTES);
        }
        let start = self.rows.len();
        self.rows.extend_from_slice(row);
        let row = EncodedRow {
            start,
            end: self.rows.len(),
            size,
        };
        self.push_op(BatchOp {
            kind,
            entity: keys,
            row: Some(row),
        })
    }

    fn push(&mut self, kind: OpKind, entity: Entity) -> &mut Self {
        self.push_op(BatchOp {
            kind,
            entity,
            row: None,
        })
    }

    fn push_op(&mut self, op: BatchOp) -> &mut Self {
        if self.ops.capacity() == 0 {
            // A valid batch never outgrows this, so its entities are never moved again.
            self.ops.reserve(BATCH_MAX_OPERATIONS);
        }
        self.ops.push(op);
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

    /// As [`Batch::submit`], handing back each operation as written (its entity, any
    /// properties added encoded, its new ETag), in order, so a caller that answers with the
    /// entities needs no copy of its own.
    ///
    /// # Errors
    /// As [`Batch::submit`].
    pub fn submit_returning(self) -> Result<Submitted> {
        let etags = self.commit()?;
        Ok(Submitted {
            ops: self.ops,
            rows: self.rows,
            etags,
        })
    }

    fn commit(&self) -> Result<Vec<Option<ETag>>> {
        self.validate()?;
        let ops: Vec<Operation<'_>> = self
            .ops
            .iter()
            .map(|op| Operation {
                kind: op.kind,
                entity: &op.entity,
                row: op.row.and_then(|row| self.rows.get(row.start..row.end)),
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
        for (index, op) in self.ops.iter().enumerate() {
            let entity = &op.entity;
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
            payload = payload.saturating_add(op.size());
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
            .map(|(index, op)| (op.entity.row_key().as_str(), index))
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
                    .map(|op| op.entity.row_key().as_str().to_owned())
                    .unwrap_or_default(),
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::OpKind;
    use crate::Account;
    use crate::codec::property;
    use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
    use crate::table::TableError;

    fn entity(rk: &str, n: i32) -> Entity {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap());
        entity
            .set(PropertyName::new("N").unwrap(), Value::Int32(n))
            .unwrap();
        entity
            .set(PropertyName::new("S").unwrap(), Value::String(rk.repeat(3)))
            .unwrap();
        entity
    }

    fn keys(entity: &Entity) -> Entity {
        Entity::new(entity.partition_key().clone(), entity.row_key().clone())
    }

    #[test]
    fn batch_encoded_rows_are_stored_and_handed_back_as_the_entities_would_be() {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db.strata")).unwrap();
        account.create_table("things").unwrap();
        let table = account.table("things").unwrap();
        table.insert(&entity("m", 1)).unwrap();
        let mut batch = table.batch("p").unwrap();
        let (a, b) = (entity("a", 2), entity("b", 3));
        batch.insert(a.clone());
        batch.push_encoded(OpKind::Insert, keys(&b), &property::encode(&b), b.size());
        // A merge of properties added encoded reads them back.
        let mut merge = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("m").unwrap());
        merge
            .set(PropertyName::new("X").unwrap(), Value::Boolean(true))
            .unwrap();
        batch.push_encoded(
            OpKind::InsertOrMerge,
            keys(&merge),
            &property::encode(&merge),
            merge.size(),
        );
        let written = batch.submit_returning().unwrap();
        assert_eq!(written.len(), 3);
        let ops: Vec<_> = written.iter().collect();
        assert_eq!((ops[0].entity, ops[0].row), (&a, None));
        assert_eq!(ops[1].row, Some(&property::encode(&b)[..]));
        for op in &ops {
            assert!(op.etag.is_some());
        }
        let stored = table.get("p", "b", None).unwrap();
        assert_eq!(stored.entity.properties(), b.properties());
        assert_eq!(Some(stored.etag), ops[1].etag);
        let merged = table.get("p", "m", None).unwrap().entity;
        assert_eq!(merged.get("N"), Some(&Value::Int32(1)));
        assert_eq!(merged.get("X"), Some(&Value::Boolean(true)));
    }

    #[test]
    fn batch_payload_limit_counts_the_size_given_with_an_encoded_row() {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db.strata")).unwrap();
        account.create_table("things").unwrap();
        let table = account.table("things").unwrap();
        let mut batch = table.batch("p").unwrap();
        let a = entity("a", 1);
        batch.push_encoded(OpKind::Insert, keys(&a), &property::encode(&a), 4 << 20);
        let error = batch.submit().unwrap_err();
        assert!(
            matches!(error, TableError::RequestBodyTooLarge { size } if size == 4 << 20),
            "{error:?}"
        );
        assert!(table.get("p", "a", None).is_err());
    }
}
