//! Bytes → Entity, validating everything.

use super::frame::{read_frame, read_header};
use super::reader::{owned_value, property_name, utf8_name};
use crate::codec::cursor::Cursor;
use crate::codec::error::{CodecError, Result};
use crate::codec::format::MIN_PROPERTY_LEN;
use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};

/// The entity `(pk, rk)` whose property value bytes are `bytes`. Total: any input gives an
/// entity or an error, and nothing is allocated beyond what the input's length justifies.
///
/// Checks the version, flags, Timestamp range, property count (<= 252), every varint's
/// shortest form, every tag, UTF-8 and the naming rules of every name, no duplicate names,
/// every value's range and limit, the entity size limit, and that no bytes trail the last
/// property. Entity-level limits are reported at the offset where the properties start.
///
/// # Errors
/// The first [`CodecError`] found, with its offset.
pub fn decode(pk: PartitionKey, rk: RowKey, bytes: &[u8]) -> Result<Entity> {
    let mut cursor = Cursor::new(bytes);
    let header = read_header(&mut cursor)?;
    // An untrusted count only sizes the vector as far as the remaining bytes can back it.
    let capacity = header.count.min(cursor.remaining() / MIN_PROPERTY_LEN);
    let mut properties: Vec<(PropertyName, Value)> = Vec::with_capacity(capacity);
    for _ in 0..header.count {
        let frame = read_frame(&mut cursor)?;
        let name = utf8_name(&frame)?;
        if properties.iter().any(|(seen, _)| seen.as_str() == name) {
            return Err(CodecError::DuplicateProperty {
                offset: frame.name_offset,
                name: name.to_owned(),
            });
        }
        properties.push((property_name(&frame)?, owned_value(&frame)?));
    }
    cursor.finish()?;
    let mut entity =
        Entity::with_properties(pk, rk, properties).map_err(|source| CodecError::Model {
            offset: header.body_offset,
            source,
        })?;
    if let Some(timestamp) = header.timestamp {
        entity.set_timestamp(timestamp);
    }
    Ok(entity)
}
