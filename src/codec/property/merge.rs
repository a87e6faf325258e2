//! A Merge written straight from the stored bytes: the stored properties the update does not
//! name are copied as they are, without decoding them into an [`Entity`] and encoding them
//! again (most of a single upsert's merge cost).

use super::encoder::{put_name, put_value};
use super::frame::{Frame, read_header, utf8};
use super::reader::frame_fast;
use super::value_ref::{ValueRef, decode_value};
use crate::codec::cursor::Cursor;
use crate::codec::format::{FLAG_HAS_TIMESTAMP, PROPERTY_FORMAT_VERSION};
use crate::codec::varint;
use crate::model::limits::{
    BINARY_MAX_BYTES, BOOLEAN_VALUE_BYTES, EIGHT_BYTE_VALUE_BYTES, ENTITY_MAX_BYTES,
    GUID_VALUE_BYTES, INT32_VALUE_BYTES, MAX_CUSTOM_PROPERTIES, PROPERTY_SIZE_OVERHEAD,
    STRING_MAX_BYTES, VARIABLE_VALUE_OVERHEAD,
};
use crate::model::{DateTime, Entity, PropertyName, Value, utf16_bytes};

/// Most update properties merged here; a larger update takes the [`Entity`] path, whose
/// per-name lookups cost the same.
const MAX_MERGED_UPDATES: usize = 32;

/// Appends to `out` the bytes of the stored row `stored` with `update`'s properties merged
/// in and Timestamp `timestamp`: exactly what decoding `stored` into an [`Entity`], setting
/// each of `update`'s properties in order and encoding the result writes.
///
/// `None` (and whatever was appended to `out` is to be discarded) whenever that path could end in an error or needs more than a
/// plain walk: bytes that do not decode as the decoder would take them, a merged entity that
/// breaks the count or size limit at any step, or an update with many properties. The caller
/// then takes the [`Entity`] path, which reports the error.
#[must_use]
pub fn merge_stored_into(
    stored: &[u8],
    update: &Entity,
    timestamp: DateTime,
    out: &mut Vec<u8>,
) -> Option<()> {
    let updates = update.properties();
    if updates.len() > MAX_MERGED_UPDATES {
        return None;
    }
    let mut cursor = Cursor::new(stored);
    let header = read_header(&mut cursor).ok()?;
    let frames = stored.get(header.body_offset..)?;

    // The stored entity's size as `Entity::size` counts it, and each updated name's old size.
    let mut new_sizes = [0_usize; MAX_MERGED_UPDATES];
    for ((name, value), slot) in updates.iter().zip(new_sizes.iter_mut()) {
        *slot = property_size(name.as_str(), value.size());
    }
    let mut size = update.size() - new_sizes.iter().sum::<usize>();
    // Per update property: the size and the span (in `frames`) of the stored one it replaces.
    let mut replaced = [None::<Replaced>; MAX_MERGED_UPDATES];
    let mut rest = frames;
    for _ in 0..header.count {
        let (frame, after) = frame_fast(stored.len(), rest)?;
        let name = utf8(frame.name).ok()?;
        let stored_size = property_size(name, value_size(&frame)?);
        size += stored_size;
        if let Some(index) = position(updates, name) {
            let slot = replaced.get_mut(index)?;
            // A name stored twice (never written so) is left to the Entity path.
            if slot.is_some() {
                return None;
            }
            *slot = Some(Replaced {
                size: stored_size,
                start: frames.len() - rest.len(),
                end: frames.len() - after.len(),
            });
        }
        rest = after;
    }
    if !rest.is_empty() || size > ENTITY_MAX_BYTES {
        return None;
    }

    // The limits as `Entity::set` checks them, one update property after another.
    let mut count = header.count;
    for (&new, old) in new_sizes.iter().zip(replaced).take(updates.len()) {
        size = match old {
            Some(old) => size - old.size + new,
            None => {
                count += 1;
                size + new
            }
        };
        if count > MAX_CUSTOM_PROPERTIES || size > ENTITY_MAX_BYTES {
            return None;
        }
    }

    out.reserve(stored.len() + update.size());
    out.push(PROPERTY_FORMAT_VERSION);
    out.push(FLAG_HAS_TIMESTAMP);
    out.extend_from_slice(&timestamp.ticks().to_le_bytes());
    varint::put(out, count as u64);
    // The stored frames in order, each replaced one swapped for its update: the runs of
    // kept frames between them are copied whole.
    let mut spans = [(0_usize, 0_usize, 0_usize); MAX_MERGED_UPDATES];
    let mut spans_len = 0;
    for (index, old) in replaced.iter().enumerate().take(updates.len()) {
        if let Some(old) = old {
            *spans.get_mut(spans_len)? = (old.start, old.end, index);
            spans_len += 1;
        }
    }
    let spans = spans.get_mut(..spans_len)?;
    spans.sort_unstable();
    let mut copied = 0;
    for &(start, end, index) in &*spans {
        out.extend_from_slice(frames.get(copied..start)?);
        let (name, value) = updates.get(index)?;
        put_name(out, name.as_str(), value.edm_type());
        put_value(out, value);
        copied = end;
    }
    out.extend_from_slice(frames.get(copied..)?);
    for ((name, value), old) in updates.iter().zip(replaced) {
        if old.is_none() {
            put_name(out, name.as_str(), value.edm_type());
            put_value(out, value);
        }
    }
    Some(())
}

/// A stored property an update replaces: its size as `Entity::size` counts it and where its
/// frame lies.
#[derive(Debug, Clone, Copy)]
struct Replaced {
    size: usize,
    start: usize,
    end: usize,
}

/// Index of property `name` among `updates`.
fn position(updates: &[(PropertyName, Value)], name: &str) -> Option<usize> {
    updates.iter().position(|(n, _)| n.as_str() == name)
}

/// Bytes one property counts toward the entity size, as `Entity::size` counts them.
fn property_size(name: &str, value_size: usize) -> usize {
    PROPERTY_SIZE_OVERHEAD + utf16_bytes(name) + value_size
}

/// `Value::size` of a stored value, decoded in place with the decoder's checks (and the
/// String and Binary limits of the value it would build); `None` where the decoder fails.
fn value_size(frame: &Frame<'_>) -> Option<usize> {
    Some(match decode_value(frame).ok()? {
        ValueRef::String(text) => {
            let len_bytes = utf16_bytes(text);
            if len_bytes > STRING_MAX_BYTES {
                return None;
            }
            len_bytes + VARIABLE_VALUE_OVERHEAD
        }
        ValueRef::Binary(bytes) => {
            if bytes.len() > BINARY_MAX_BYTES {
                return None;
            }
            bytes.len() + VARIABLE_VALUE_OVERHEAD
        }
        ValueRef::DateTime(_) | ValueRef::Int64(_) | ValueRef::Double(_) => EIGHT_BYTE_VALUE_BYTES,
        ValueRef::Guid(_) => GUID_VALUE_BYTES,
        ValueRef::Int32(_) => INT32_VALUE_BYTES,
        ValueRef::Boolean(_) => BOOLEAN_VALUE_BYTES,
    })
}
