//! Entity → bytes. Infallible: an [`Entity`] already satisfies every rule the decoder checks.

use crate::codec::format::{
    BOOLEAN_LEN, DOUBLE_LEN, FLAG_HAS_TIMESTAMP, GUID_LEN, HEADER_FIXED_LEN,
    PROPERTY_FORMAT_VERSION, TICKS_LEN,
};
use crate::codec::varint;
use crate::model::{DateTime, Entity, Value};

/// The property value bytes of `entity` (header, Timestamp, properties in insertion order).
#[must_use]
pub fn encode(entity: &Entity) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(entity));
    encode_into(entity, &mut out);
    out
}

/// Appends the property value bytes of `entity` to `out`.
pub fn encode_into(entity: &Entity, out: &mut Vec<u8>) {
    out.reserve(encoded_len(entity));
    encode_stamped_into(entity, entity.timestamp(), out);
}

/// Appends the property value bytes of `entity` as if its Timestamp were `timestamp` (the
/// entity's own is ignored): what a write stores, without cloning the entity. Reserves nothing
/// up front, for callers that reuse one buffer.
pub fn encode_stamped_into(entity: &Entity, timestamp: Option<DateTime>, out: &mut Vec<u8>) {
    out.push(PROPERTY_FORMAT_VERSION);
    match timestamp {
        Some(timestamp) => {
            out.push(FLAG_HAS_TIMESTAMP);
            out.extend_from_slice(&timestamp.ticks().to_le_bytes());
        }
        None => out.push(0),
    }
    let properties = entity.properties();
    varint::put(out, properties.len() as u64);
    for (name, value) in properties {
        let name = name.as_str().as_bytes();
        varint::put(out, name.len() as u64);
        out.extend_from_slice(name);
        out.push(value.edm_type().tag());
        put_value(out, value);
    }
}

/// Exact length of [`encode`]`(entity)`.
#[must_use]
pub fn encoded_len(entity: &Entity) -> usize {
    let properties = entity.properties();
    let timestamp = if entity.timestamp().is_some() {
        TICKS_LEN
    } else {
        0
    };
    let mut len = HEADER_FIXED_LEN + timestamp + varint::len(properties.len() as u64);
    for (name, value) in properties {
        let name = name.as_str().len();
        len += varint::len(name as u64) + name + 1 + value_len(value);
    }
    len
}

fn put_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::Binary(bytes) => {
            varint::put(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }
        Value::Boolean(flag) => out.push(u8::from(*flag)),
        Value::DateTime(instant) => out.extend_from_slice(&instant.ticks().to_le_bytes()),
        Value::Double(number) => out.extend_from_slice(&number.to_bits().to_le_bytes()),
        Value::Guid(guid) => out.extend_from_slice(&guid.0),
        Value::Int32(number) => varint::put(out, varint::zigzag(i64::from(*number))),
        Value::Int64(number) => varint::put(out, varint::zigzag(*number)),
        Value::String(text) => {
            varint::put(out, text.len() as u64);
            out.extend_from_slice(text.as_bytes());
        }
    }
}

fn value_len(value: &Value) -> usize {
    match value {
        Value::Binary(bytes) => varint::len(bytes.len() as u64) + bytes.len(),
        Value::Boolean(_) => BOOLEAN_LEN,
        Value::DateTime(_) => TICKS_LEN,
        Value::Double(_) => DOUBLE_LEN,
        Value::Guid(_) => GUID_LEN,
        Value::Int32(number) => varint::len(varint::zigzag(i64::from(*number))),
        Value::Int64(number) => varint::len(varint::zigzag(*number)),
        Value::String(text) => varint::len(text.len() as u64) + text.len(),
    }
}
