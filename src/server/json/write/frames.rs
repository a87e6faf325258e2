//! The usual row's properties written straight from their stored frames: String values and
//! Int32 values of up to two varint bytes, under plain names, each frame read with a few byte
//! loads and its JSON written into room reserved once for the whole row. A scan page writes
//! a thousand rows of this shape; the general writer's per-frame reader (offsets, a `Result`
//! per frame, a decoded value, a reserve per piece) cost ~4x as much.
//!
//! Any other frame (another type, a longer varint, a name or text needing escapes, bytes the
//! codec's checked reader should report on) ends the walk with nothing appended, and the
//! caller writes the row's properties by the general path: the bytes of a row this walk
//! writes are those the general path writes for it.

use super::int::format_int;
use super::plain::copy_plain;
use crate::model::EdmType;

/// The tags of the frames this walk writes.
const STRING: u8 = EdmType::String.tag();
const INT32: u8 = EdmType::Int32.tag();

/// Most bytes a frame's JSON takes beyond its stored bytes. A String frame (name length,
/// name, tag, length of at least one byte, text) becomes `,"name":"text"`: 4 more. An Int32
/// frame (name length, name, tag, one or two varint bytes) becomes `,"name":` and at most 11
/// characters (`-2147483648`): 12 more.
const FRAME_SLACK: usize = 12;

/// Appends `,"name":value` for each of the `count` frames at the start of `frames`, when
/// every one is of a shape this walk writes; otherwise leaves `out` unchanged and returns
/// false.
pub(super) fn push_usual_frames(out: &mut String, frames: &[u8], count: usize) -> bool {
    // SAFETY: the length moves only at the end, over bytes written here, all of them ASCII
    // (constants, digits, and names and texts `copy_plain` found plain), so the string
    // stays UTF-8; on a refusal it does not move.
    let bytes = unsafe { out.as_mut_vec() };
    let Some(room) = count
        .checked_mul(FRAME_SLACK)
        .and_then(|slack| slack.checked_add(frames.len()))
    else {
        return false;
    };
    bytes.reserve(room);
    let start = bytes.len();
    // SAFETY: `reserve` made room for `room` bytes past `start`; each frame's writes stay
    // within its stored length plus `FRAME_SLACK` past the previous frame's end (see
    // `FRAME_SLACK`), and the frames read are at most `frames`, so every write lies in
    // `[start, start + room)`.
    let written = unsafe { write_frames(bytes.as_mut_ptr().add(start), frames, count) };
    match written {
        Some(len) => {
            // SAFETY: `len` bytes past `start` were written above (at most `room`).
            unsafe { bytes.set_len(start + len) };
            true
        }
        None => false,
    }
}

/// Writes the JSON of the `count` frames of `frames` at `to`; their length, or `None` at the
/// first frame of another shape.
///
/// # Safety
/// `to` must be valid for writes of `frames.len() + count * FRAME_SLACK` bytes.
#[inline(always)]
unsafe fn write_frames(to: *mut u8, frames: &[u8], count: usize) -> Option<usize> {
    let mut rest = frames;
    let mut at = 0;
    for _ in 0..count {
        let (&name_len, after) = rest.split_first()?;
        // A one-byte name length (names are at most 255 bytes, mostly far shorter).
        if name_len >= 0x80 {
            return None;
        }
        let (name, after) = after.split_at_checked(usize::from(name_len))?;
        let (&tag, after) = after.split_first()?;
        // SAFETY (all writes): `at` is the JSON written so far, at most the stored bytes of
        // the frames before plus `FRAME_SLACK` each; this frame's writes add at most its
        // own stored bytes plus `FRAME_SLACK` (see the constant).
        unsafe {
            let here = to.add(at);
            here.cast::<[u8; 2]>().write_unaligned(*b",\"");
            if !copy_plain(name, here.add(2)) {
                return None;
            }
            let value = here.add(2 + name.len());
            match tag {
                STRING => {
                    let (len, after) = short_varint(after)?;
                    let (text, after) = after.split_at_checked(len)?;
                    value.cast::<[u8; 3]>().write_unaligned(*b"\":\"");
                    if !copy_plain(text, value.add(3)) {
                        return None;
                    }
                    value.add(3 + text.len()).write(b'"');
                    at += 2 + name.len() + 3 + text.len() + 1;
                    rest = after;
                }
                INT32 => {
                    let (zigzag, after) = short_varint(after)?;
                    let number = unzigzag(zigzag);
                    let (digits, from) = format_int(number);
                    let digits = digits.get(from..)?;
                    value.cast::<[u8; 2]>().write_unaligned(*b"\":");
                    let mut end = value.add(2);
                    if number < 0 {
                        end.write(b'-');
                        end = end.add(1);
                    }
                    std::ptr::copy_nonoverlapping(digits.as_ptr(), end, digits.len());
                    at += 2 + name.len() + 2 + usize::from(number < 0) + digits.len();
                    rest = after;
                }
                _ => return None,
            }
        }
    }
    Some(at)
}

/// A shortest-form varint of one or two bytes at the start of `bytes`, and the bytes after
/// it; `None` for a longer one (or a two-byte form with a zero high byte, which the codec
/// refuses).
#[inline(always)]
fn short_varint(bytes: &[u8]) -> Option<(usize, &[u8])> {
    let (&low, after) = bytes.split_first()?;
    if low < 0x80 {
        return Some((usize::from(low), after));
    }
    let (&high, after) = after.split_first()?;
    (1..0x80)
        .contains(&high)
        .then(|| (usize::from(low & 0x7F) | usize::from(high) << 7, after))
}

/// The number a zigzag varint of at most two bytes stands for (|n| < 8,192: an Int32).
#[inline(always)]
fn unzigzag(zigzag: usize) -> i64 {
    // At most 14 bits: exact in an i64.
    let value = i64::try_from(zigzag).unwrap_or(0);
    (value >> 1) ^ -(value & 1)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::push_usual_frames;
    use crate::codec::property::{self, PropertyReader};
    use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
    use crate::server::json::write::EntityWriter;
    use crate::server::json::{Links, Metadata};
    use crate::table::RowRef;

    /// The row's properties as the general path writes them.
    fn general(bytes: &[u8]) -> Option<String> {
        let properties = PropertyReader::new(bytes).ok()?;
        let row = RowRef {
            partition_key: "p",
            row_key: "r",
            timestamp: crate::model::DateTime::from_ticks(638_000_000_000_000_123).unwrap(),
            properties,
        };
        let links = Links {
            base: "http://h/a",
            account: "a",
            table: "t",
        };
        let mut out = String::new();
        // A `$select` of every name takes the general path for every frame; naming the
        // Timestamp too ends the head with its member, as without a `$select`.
        let names: Vec<String> = properties
            .frames()
            .filter_map(Result::ok)
            .map(|frame| String::from_utf8_lossy(frame.name_bytes()).into_owned())
            .chain(["Timestamp".to_owned()])
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        EntityWriter::new(Metadata::Minimal, &links, true, Some(&names))
            .write_row(&mut out, &row)
            .ok()?;
        // The properties follow the head, which ends with the Timestamp member.
        let head_end = out.find(",\"Timestamp\":\"")? + ",\"Timestamp\":\"".len();
        let head_end = head_end + out.get(head_end..)?.find('"')? + 1;
        Some(out.get(head_end..out.len() - 1)?.to_owned())
    }

    #[test]
    fn usual_frames_are_written_as_the_general_path_writes_them() {
        let mut numbers: Vec<i32> = (-9000..9000).step_by(7).collect();
        numbers.extend([
            0,
            1,
            -1,
            63,
            -64,
            64,
            -65,
            8191,
            -8192,
            8192,
            i32::MAX,
            i32::MIN,
        ]);
        let texts = [
            String::new(),
            "g1".to_owned(),
            "x".repeat(100),
            "y".repeat(200),
            "quote\"d".to_owned(),
            "back\\slash".to_owned(),
            "tab\t".to_owned(),
            "naïve".to_owned(),
        ];
        let mut rows = Vec::new();
        for (i, number) in numbers.iter().enumerate() {
            let text = &texts[i % texts.len()];
            let mut entity =
                Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
            entity
                .set(PropertyName::new("N").unwrap(), Value::Int32(*number))
                .unwrap();
            entity
                .set(
                    PropertyName::new("Group").unwrap(),
                    Value::string(text.as_str()).unwrap(),
                )
                .unwrap();
            if i % 3 == 0 {
                entity
                    .set(PropertyName::new("Flag").unwrap(), Value::Boolean(true))
                    .unwrap();
            }
            if i % 5 == 0 {
                entity
                    .set(PropertyName::new("Ünïcode").unwrap(), Value::Int32(1))
                    .unwrap();
            }
            rows.push(property::encode(&entity));
        }
        let (mut fast, mut fallback) = (0, 0);
        for bytes in &rows {
            let reader = PropertyReader::new(bytes).unwrap();
            let (frames, count) = reader.frame_bytes();
            let mut out = String::from("head");
            if push_usual_frames(&mut out, frames, count) {
                fast += 1;
                assert_eq!(out.strip_prefix("head").unwrap(), general(bytes).unwrap());
            } else {
                fallback += 1;
                assert_eq!(out, "head");
            }
            // Cut anywhere, the walk refuses the row.
            for cut in 0..frames.len() {
                let mut out = String::from("head");
                assert!(
                    !push_usual_frames(&mut out, &frames[..cut], count),
                    "cut at {cut}"
                );
                assert_eq!(out, "head");
            }
        }
        assert!(fast > 100 && fallback > 100, "{fast} {fallback}");
    }
}
