//! The write operations on one entity, shared by single calls and batches: condition checks
//! against the stored row and the new stored value.

use super::error::{Result, TableError};
use super::etag::{ETag, IfMatch};
use super::row;
use crate::codec::format::TICKS_LEN;
use crate::codec::property;
use crate::model::{DateTime, Entity, PartitionKey, RowKey};

/// What an operation does with the entity it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpKind {
    /// Fails if the entity exists.
    Insert,
    /// Replaces all properties; fails if missing or the ETag differs.
    Replace(IfMatch),
    /// Overwrites the given properties, keeps the others; fails if missing or the ETag differs.
    Merge(IfMatch),
    /// Removes the entity; fails if missing or the ETag differs.
    Delete(IfMatch),
    /// Writes the entity whether or not it exists.
    InsertOrReplace,
    /// Merges into the stored entity, or inserts it.
    InsertOrMerge,
}

impl OpKind {
    /// Whether the operation needs the stored row to decide or build its result.
    pub(crate) const fn reads_current(self) -> bool {
        !matches!(self, Self::InsertOrReplace)
    }
}

/// One operation: its kind and entity (for a delete, only the keys matter).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Operation<'a> {
    pub(crate) kind: OpKind,
    pub(crate) entity: &'a Entity,
    /// The entity's properties already encoded (property bytes, any Timestamp in them
    /// replaced when written), which the entity then lacks: it carries only the keys.
    pub(crate) row: Option<&'a [u8]>,
}

impl Operation<'_> {
    /// About how many bytes the operation writes: its entity's size, which is above the
    /// encoded length for ASCII-heavy entities, plus any bytes encoded ahead.
    pub(crate) fn size_hint(&self) -> usize {
        self.entity.size() + self.row.map_or(0, <[u8]>::len)
    }
}

/// The stored outcome of an operation.
#[derive(Debug)]
pub(crate) enum Outcome {
    /// The new stored value is in the caller's buffer.
    Put,
    /// The entity is removed.
    Delete,
}

/// Checks `op` against the stored row `current` (`None` if absent) and builds its outcome at
/// `timestamp`; a new stored value replaces the contents of `value`.
pub(crate) fn apply(
    table: &str,
    table_id: u32,
    engine_key: &[u8],
    op: &Operation<'_>,
    current: Option<&[u8]>,
    timestamp: DateTime,
    value: &mut Vec<u8>,
) -> Result<Outcome> {
    let entity = op.entity;
    let pk = entity.partition_key();
    let rk = entity.row_key();
    let if_match = match op.kind {
        OpKind::Insert => {
            if current.is_some() {
                return Err(TableError::EntityAlreadyExists {
                    table: table.to_owned(),
                    partition_key: pk.as_str().to_owned(),
                    row_key: rk.as_str().to_owned(),
                });
            }
            None
        }
        OpKind::Replace(if_match) | OpKind::Merge(if_match) | OpKind::Delete(if_match) => {
            Some(if_match)
        }
        OpKind::InsertOrReplace | OpKind::InsertOrMerge => None,
    };
    if let Some(if_match) = if_match {
        let Some(stored) = current else {
            return Err(not_found(table, pk, rk));
        };
        if let IfMatch::Etag(expected) = if_match {
            let actual = ETag::from_timestamp(row::stored_timestamp(table_id, engine_key, stored)?);
            if actual != expected {
                return Err(TableError::UpdateConditionNotSatisfied {
                    table: table.to_owned(),
                    partition_key: pk.as_str().to_owned(),
                    row_key: rk.as_str().to_owned(),
                    expected: expected.to_string(),
                    current: actual.to_string(),
                });
            }
        }
    }
    let merge_base = match (op.kind, current) {
        (OpKind::Delete(_), _) => return Ok(Outcome::Delete),
        (OpKind::Merge(_) | OpKind::InsertOrMerge, Some(stored)) => Some(stored),
        _ => None,
    };
    value.clear();
    // Room up front from the entity's size, known without a pass over its properties (above
    // the encoded length unless names are mostly non-ASCII, when the buffer still grows):
    // growing it while encoding cost more than the reservation.
    let corrupt = |source| row::corrupt(table_id, engine_key, source);
    match (merge_base, op.row) {
        (None, Some(encoded)) => {
            property::stamp_into(encoded, timestamp, value).map_err(corrupt)?
        }
        (None, None) => {
            value.reserve(entity.size() + TICKS_LEN);
            row::encode_into(entity, timestamp, value);
        }
        (Some(stored), None)
            if property::merge_stored_into(stored, entity, timestamp, value).is_some() => {}
        (Some(stored), encoded) => {
            value.clear();
            let mut merged =
                property::decode_stored(pk.clone(), rk.clone(), stored).map_err(corrupt)?;
            // Properties encoded ahead are read back for the merge (not a batch's insert).
            let decoded;
            let entity = match encoded {
                Some(encoded) => {
                    decoded = property::decode(pk.clone(), rk.clone(), encoded).map_err(corrupt)?;
                    &decoded
                }
                None => entity,
            };
            for (name, new_value) in entity.properties() {
                merged
                    .set(name.clone(), new_value.clone())
                    .map_err(|error| TableError::from_model(error, pk.as_str(), rk.as_str()))?;
            }
            value.reserve(merged.size() + TICKS_LEN);
            row::encode_into(&merged, timestamp, value);
        }
    }
    Ok(Outcome::Put)
}

pub(crate) fn not_found(table: &str, pk: &PartitionKey, rk: &RowKey) -> TableError {
    TableError::ResourceNotFound {
        table: table.to_owned(),
        partition_key: pk.as_str().to_owned(),
        row_key: rk.as_str().to_owned(),
    }
}
