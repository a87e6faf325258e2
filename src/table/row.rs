//! Entity rows as the table layer stores and returns them.

use super::error::{Result, TableError};
use super::etag::ETag;
use crate::codec::format::{HEADER_FIXED_LEN, KEY_SEPARATOR, TABLE_ID_LEN, TICKS_LEN};
use crate::codec::property::{self, PropertyReader};
use crate::codec::{CodecError, key};
use crate::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};

/// An entity as read back: its properties, Timestamp and ETag.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredEntity {
    /// The entity, with its Timestamp set.
    pub entity: Entity,
    /// The ETag to pass to a conditional update or delete.
    pub etag: ETag,
}

impl StoredEntity {
    /// The Timestamp of the entity's last write.
    #[must_use]
    pub fn timestamp(&self) -> DateTime {
        self.etag.timestamp()
    }
}

/// Appends the stored value of `entity` written at `timestamp`: the property codec with the
/// Timestamp replaced, without cloning the entity.
pub(crate) fn encode_into(entity: &Entity, timestamp: DateTime, out: &mut Vec<u8>) {
    property::encode_stamped_into(entity, Some(timestamp), out);
}

/// The Timestamp stored in a row value.
pub(crate) fn stored_timestamp(table_id: u32, engine_key: &[u8], value: &[u8]) -> Result<DateTime> {
    PropertyReader::new(value)
        .map_err(|source| corrupt(table_id, engine_key, source))?
        .timestamp()
        .ok_or_else(|| {
            corrupt(
                table_id,
                engine_key,
                CodecError::Truncated {
                    offset: HEADER_FIXED_LEN,
                    needed: TICKS_LEN,
                },
            )
        })
}

/// Decodes a stored row into the entity `(pk, rk)`, keeping only `select` when given
/// (keys and Timestamp are always kept).
pub(crate) fn decode(
    table_id: u32,
    engine_key: &[u8],
    pk: PartitionKey,
    rk: RowKey,
    value: &[u8],
    select: Option<&[&str]>,
) -> Result<StoredEntity> {
    let fail = |source| corrupt(table_id, engine_key, source);
    let entity = match select {
        None => property::decode_stored(pk, rk, value).map_err(fail)?,
        Some(names) => {
            let reader = PropertyReader::new(value).map_err(fail)?;
            let properties: Vec<(PropertyName, Value)> = reader.project(names).map_err(fail)?;
            let mut entity = Entity::with_properties(pk, rk, properties)
                .map_err(|source| fail(CodecError::Model { offset: 0, source }))?;
            if let Some(timestamp) = reader.timestamp() {
                entity.set_timestamp(timestamp);
            }
            entity
        }
    };
    let timestamp = entity.timestamp().ok_or_else(|| {
        fail(CodecError::Truncated {
            offset: HEADER_FIXED_LEN,
            needed: TICKS_LEN,
        })
    })?;
    Ok(StoredEntity {
        entity,
        etag: ETag::from_timestamp(timestamp),
    })
}

/// Splits an engine key into its PartitionKey and RowKey text without the
/// model's validation (for the scan path); `None` if it is not such a key.
pub(crate) fn split_key(engine_key: &[u8]) -> Option<(&str, &str)> {
    let rest = engine_key.get(TABLE_ID_LEN..)?;
    let separator = rest.iter().position(|&byte| byte == KEY_SEPARATOR)?;
    let pk = std::str::from_utf8(rest.get(..separator)?).ok()?;
    let rk = std::str::from_utf8(rest.get(separator + 1..)?).ok()?;
    Some((pk, rk))
}

/// Validated keys of an engine key of table `table_id`.
pub(crate) fn decode_key(table_id: u32, engine_key: &[u8]) -> Result<(PartitionKey, RowKey)> {
    let (_, pk, rk) =
        key::decode(engine_key).map_err(|source| corrupt(table_id, engine_key, source))?;
    Ok((pk, rk))
}

pub(crate) fn corrupt(table_id: u32, engine_key: &[u8], source: CodecError) -> TableError {
    TableError::CorruptRow {
        table_id,
        key: String::from_utf8_lossy(engine_key).into_owned(),
        source,
    }
}
