//! Bytes → Entity, validating everything.

use super::frame::read_header;
use super::reader::{checked_name, next_frame, owned_value, utf8_name};
use crate::codec::cursor::Cursor;
use crate::codec::error::{CodecError, Result};
use crate::codec::format::MIN_PROPERTY_LEN;
use crate::model::PropertyName;
use crate::model::{Entity, PartitionKey, RowKey};

/// The entity `(pk, rk)` whose property value bytes are `bytes`. Total: any input gives an
/// entity or an error, and nothing is allocated beyond what the input's length justifies
/// (the property vector is reserved from the count only as far as the remaining bytes can
/// hold that many properties).
///
/// Checks the version, flags, Timestamp range, property count (<= 252), every varint's
/// shortest form, every tag, UTF-8 and the naming rules of every name, no duplicate names,
/// every value's range and limit, the entity size limit (reported at the name of the property
/// that crosses it), and that no bytes trail the last property.
///
/// # Errors
/// The first [`CodecError`] found, with its offset.
pub fn decode(pk: PartitionKey, rk: RowKey, bytes: &[u8]) -> Result<Entity> {
    let mut cursor = Cursor::new(bytes);
    let header = read_header(&mut cursor)?;
    let mut entity = Entity::new(pk, rk);
    // Bounded by what the remaining input can hold, so a lying count allocates nothing extra.
    entity.reserve_properties(header.count.min(cursor.remaining() / MIN_PROPERTY_LEN));
    let mut offset = cursor.offset();
    for _ in 0..header.count {
        let frame = next_frame(bytes, &mut offset)?;
        let name = utf8_name(&frame)?;
        // Entity::set would silently replace a repeated name; the format forbids repeats.
        if entity.get(name).is_some() {
            return Err(CodecError::DuplicateProperty {
                offset: frame.name_offset,
                name: name.to_owned(),
            });
        }
        entity
            .push_unique(checked_name(name, &frame)?, owned_value(&frame)?)
            .map_err(|source| CodecError::Model {
                offset: frame.name_offset,
                source,
            })?;
    }
    Cursor::at(bytes, offset).finish()?;
    if let Some(timestamp) = header.timestamp {
        entity.set_timestamp(timestamp);
    }
    Ok(entity)
}

/// The entity `(pk, rk)` of a row this crate encoded, read back through the engine's
/// checksums: for the table layer's reads. Still total (the framing, UTF-8, value ranges,
/// property count and entity size are checked, so bad bytes give an error, never a panic or
/// an entity breaking its invariants), but it skips what [`encode`](super::encode) guarantees
/// and a checksum keeps: the naming rules and the uniqueness of names. Bytes from anywhere
/// else go through [`decode`].
///
/// # Errors
/// The first [`CodecError`] found, with its offset.
pub fn decode_stored(pk: PartitionKey, rk: RowKey, bytes: &[u8]) -> Result<Entity> {
    let mut cursor = Cursor::new(bytes);
    let header = read_header(&mut cursor)?;
    let mut entity = Entity::new(pk, rk);
    entity.reserve_properties(header.count.min(cursor.remaining() / MIN_PROPERTY_LEN));
    let mut offset = cursor.offset();
    for _ in 0..header.count {
        let frame = next_frame(bytes, &mut offset)?;
        let name = PropertyName::from_stored(utf8_name(&frame)?);
        entity
            .push_unique(name, owned_value(&frame)?)
            .map_err(|source| CodecError::Model {
                offset: frame.name_offset,
                source,
            })?;
    }
    Cursor::at(bytes, offset).finish()?;
    if let Some(timestamp) = header.timestamp {
        entity.set_timestamp(timestamp);
    }
    Ok(entity)
}
