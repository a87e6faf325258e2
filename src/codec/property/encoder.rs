//! Entity → bytes. Infallible: an [`Entity`] already satisfies every rule the decoder checks.

use crate::codec::CodecError;
use crate::codec::format::{
    BOOLEAN_LEN, DOUBLE_LEN, FLAG_HAS_TIMESTAMP, GUID_LEN, HEADER_FIXED_LEN, KNOWN_FLAGS,
    PROPERTY_FORMAT_VERSION, TICKS_LEN,
};
use crate::codec::varint;
use crate::model::{DateTime, EdmType, Entity, Value};

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
    put_header(out, timestamp);
    let properties = entity.properties();
    varint::put(out, properties.len() as u64);
    for (name, value) in properties {
        put_name(out, name.as_str(), value.edm_type());
        put_value(out, value);
    }
}

/// Appends a property's name and type tag, which its value follows.
pub(super) fn put_name(out: &mut Vec<u8>, name: &str, edm: EdmType) {
    varint::put(out, name.len() as u64);
    out.extend_from_slice(name.as_bytes());
    out.push(edm.tag());
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

/// Appends an entity's property bytes one property at a time, for a caller that holds the
/// properties but no [`Entity`] (a request body encoded straight into its stored form):
/// the bytes [`encode_stamped_into`] writes for an entity with the same properties in the
/// same order. The caller keeps the [`Entity`] rules (unique valid names, value limits,
/// count and size); this only lays the bytes out.
#[derive(Debug)]
pub struct PropertyWriter<'a> {
    out: &'a mut Vec<u8>,
    /// Where the property count goes: one byte is kept for it, a second inserted if needed.
    count_at: usize,
    count: u64,
}

impl<'a> PropertyWriter<'a> {
    /// Starts the bytes of an entity with Timestamp `timestamp` at the end of `out`.
    pub fn begin(out: &'a mut Vec<u8>, timestamp: Option<DateTime>) -> Self {
        put_header(out, timestamp);
        let count_at = out.len();
        out.push(0);
        Self {
            out,
            count_at,
            count: 0,
        }
    }

    /// Appends property `name` holding `value`.
    pub fn push(&mut self, name: &str, value: &Value) {
        self.name(name, value.edm_type());
        put_value(self.out, value);
    }

    /// Appends property `name` holding the String `text`, without building a [`Value`].
    pub fn push_str(&mut self, name: &str, text: &str) {
        self.name(name, EdmType::String);
        varint::put(self.out, text.len() as u64);
        self.out.extend_from_slice(text.as_bytes());
    }

    fn name(&mut self, name: &str, edm: EdmType) {
        self.count += 1;
        put_name(self.out, name, edm);
    }

    /// Writes the property count: the bytes are complete.
    pub fn finish(self) {
        match u8::try_from(self.count) {
            Ok(count) if count < 0x80 => {
                if let Some(slot) = self.out.get_mut(self.count_at) {
                    *slot = count;
                }
            }
            _ => {
                let mut count = Vec::with_capacity(2);
                varint::put(&mut count, self.count);
                self.out.splice(self.count_at..=self.count_at, count);
            }
        }
    }
}

/// Appends `bytes` (an entity's property bytes, with or without a Timestamp) with their
/// Timestamp set to `timestamp`: what a write stores for properties encoded before the
/// write's Timestamp was known.
///
/// # Errors
/// [`CodecError::Truncated`], [`CodecError::UnsupportedVersion`] or
/// [`CodecError::UnknownFlags`] for a header that is not one this version writes; `out` is
/// then unchanged.
pub fn stamp_into(bytes: &[u8], timestamp: DateTime, out: &mut Vec<u8>) -> Result<(), CodecError> {
    let (Some(&version), Some(&flags)) = (bytes.first(), bytes.get(1)) else {
        return Err(CodecError::Truncated {
            offset: 0,
            needed: HEADER_FIXED_LEN - bytes.len().min(HEADER_FIXED_LEN),
        });
    };
    if version != PROPERTY_FORMAT_VERSION {
        return Err(CodecError::UnsupportedVersion { offset: 0, version });
    }
    if flags & !KNOWN_FLAGS != 0 {
        return Err(CodecError::UnknownFlags { offset: 1, flags });
    }
    let skip = if flags & FLAG_HAS_TIMESTAMP == 0 {
        HEADER_FIXED_LEN
    } else {
        HEADER_FIXED_LEN + TICKS_LEN
    };
    let rest = bytes.get(skip..).ok_or_else(|| CodecError::Truncated {
        offset: HEADER_FIXED_LEN,
        needed: skip.saturating_sub(bytes.len()),
    })?;
    out.reserve(HEADER_FIXED_LEN + TICKS_LEN + rest.len());
    out.push(version);
    out.push(flags | FLAG_HAS_TIMESTAMP);
    out.extend_from_slice(&timestamp.ticks().to_le_bytes());
    out.extend_from_slice(rest);
    Ok(())
}

/// Appends a value in the form its type tag names.
pub(super) fn put_value(out: &mut Vec<u8>, value: &Value) {
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

/// The format version and the optional Timestamp that start an entity's bytes.
fn put_header(out: &mut Vec<u8>, timestamp: Option<DateTime>) {
    out.push(PROPERTY_FORMAT_VERSION);
    match timestamp {
        Some(timestamp) => {
            out.push(FLAG_HAS_TIMESTAMP);
            out.extend_from_slice(&timestamp.ticks().to_le_bytes());
        }
        None => out.push(0),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::{PropertyWriter, encode_stamped_into, stamp_into};
    use crate::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};

    fn entity(count: usize) -> Entity {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        for index in 0..count {
            let value = match index % 3 {
                0 => Value::String(format!("text {index}")),
                1 => Value::Int32(i32::try_from(index).unwrap()),
                _ => Value::Double(0.5),
            };
            entity
                .set(PropertyName::new(format!("P{index}")).unwrap(), value)
                .unwrap();
        }
        entity
    }

    #[test]
    fn property_writer_writes_what_the_entity_encoder_writes() {
        let timestamp = DateTime::from_ticks(638_000_000_000_000_123).unwrap();
        for count in [0, 1, 127, 128, 200, 252] {
            let entity = entity(count);
            for stamp in [None, Some(timestamp)] {
                let mut expected = vec![7];
                encode_stamped_into(&entity, stamp, &mut expected);
                let mut ours = vec![7];
                let mut writer = PropertyWriter::begin(&mut ours, stamp);
                for (name, value) in entity.properties() {
                    match value {
                        Value::String(text) => writer.push_str(name.as_str(), text),
                        value => writer.push(name.as_str(), value),
                    }
                }
                writer.finish();
                assert_eq!(ours, expected, "{count} properties, {stamp:?}");
            }
        }
    }

    #[test]
    fn stamping_sets_the_timestamp_of_either_header() {
        let (early, late) = (
            DateTime::from_ticks(630_000_000_000_000_000).unwrap(),
            DateTime::from_ticks(638_000_000_000_000_123).unwrap(),
        );
        let entity = entity(5);
        let mut expected = Vec::new();
        encode_stamped_into(&entity, Some(late), &mut expected);
        for stamp in [None, Some(early)] {
            let mut bytes = Vec::new();
            encode_stamped_into(&entity, stamp, &mut bytes);
            let mut out = Vec::new();
            stamp_into(&bytes, late, &mut out).unwrap();
            assert_eq!(out, expected);
        }
        for bad in [&[][..], &[1], &[2, 0], &[1, 0x80], &[1, 1, 0, 0]] {
            let mut out = Vec::new();
            assert!(stamp_into(bad, late, &mut out).is_err(), "{bad:?}");
            assert!(out.is_empty());
        }
    }
}
