//! A fast walk over an encoded value's property frames by their lengths alone (no name
//! checked as text, no value decoded), for tests that must look at many rows cheaply, such as
//! a query's prefilter. Every step is bounds-checked and returns `None` on bytes the encoder
//! would not write; callers fall back to the full [`super::PropertyReader`], which reports why.

use crate::codec::format::{
    BOOLEAN_LEN, DOUBLE_LEN, FLAG_HAS_TIMESTAMP, GUID_LEN, MAX_VARINT_LEN, PROPERTY_FORMAT_VERSION,
    TICKS_LEN,
};
use crate::model::EdmType;

/// What follows the Timestamp in an encoded value: the property count, then the frames.
pub(crate) fn frames_of(encoded: &[u8]) -> Option<&[u8]> {
    let (&version, rest) = encoded.split_first()?;
    let (&flags, rest) = rest.split_first()?;
    if version != PROPERTY_FORMAT_VERSION {
        return None;
    }
    if flags & FLAG_HAS_TIMESTAMP == 0 {
        Some(rest)
    } else {
        rest.get(TICKS_LEN..)
    }
}

/// A shortest-form varint at the start of `bytes` as a length, and the bytes after it.
#[inline(always)]
pub(crate) fn take_varint(bytes: &[u8]) -> Option<(usize, &[u8])> {
    if let Some((&first, rest)) = bytes.split_first()
        && first < 0x80
    {
        return Some((usize::from(first), rest));
    }
    // Two bytes (a longer string, a number up to 8,191) without the loop; a zero second
    // byte is a longer form than the encoder writes, which the loop refuses.
    if let Some((&[first, second], rest)) = bytes.split_first_chunk::<2>()
        && second.wrapping_sub(1) < 0x7F
    {
        return Some((usize::from(first & 0x7F) | usize::from(second) << 7, rest));
    }
    let mut value: u64 = 0;
    for (index, &byte) in bytes.iter().enumerate().take(MAX_VARINT_LEN) {
        value |= u64::from(byte & 0x7F).checked_shl(7 * u32::try_from(index).ok()?)?;
        if byte < 0x80 {
            // A zero last byte after the first is a longer form than the encoder writes.
            if byte == 0 && index > 0 {
                return None;
            }
            return Some((usize::try_from(value).ok()?, bytes.get(index + 1..)?));
        }
    }
    None
}

/// The bytes after the property frame at the start of `bytes`.
#[inline(always)]
pub(crate) fn skip_frame(bytes: &[u8]) -> Option<&[u8]> {
    let (name_len, rest) = take_varint(bytes)?;
    let (&tag, rest) = rest.get(name_len..)?.split_first()?;
    let width = match tag_of(tag)? {
        EdmType::Binary | EdmType::String => {
            let (len, rest) = take_varint(rest)?;
            return rest.get(len..);
        }
        EdmType::Int32 | EdmType::Int64 => return take_varint(rest).map(|(_, rest)| rest),
        EdmType::Boolean => BOOLEAN_LEN,
        EdmType::DateTime => TICKS_LEN,
        EdmType::Double => DOUBLE_LEN,
        EdmType::Guid => GUID_LEN,
    };
    rest.get(width..)
}

/// The type of a tag byte, by a jump instead of `EdmType::from_tag`'s search.
#[inline(always)]
pub(crate) fn tag_of(byte: u8) -> Option<EdmType> {
    const BINARY: u8 = EdmType::Binary.tag();
    const STRING: u8 = EdmType::String.tag();
    const BOOLEAN: u8 = EdmType::Boolean.tag();
    const DATE_TIME: u8 = EdmType::DateTime.tag();
    const DOUBLE: u8 = EdmType::Double.tag();
    const GUID: u8 = EdmType::Guid.tag();
    const INT32: u8 = EdmType::Int32.tag();
    const INT64: u8 = EdmType::Int64.tag();
    Some(match byte {
        BINARY => EdmType::Binary,
        STRING => EdmType::String,
        BOOLEAN => EdmType::Boolean,
        DATE_TIME => EdmType::DateTime,
        DOUBLE => EdmType::Double,
        GUID => EdmType::Guid,
        INT32 => EdmType::Int32,
        INT64 => EdmType::Int64,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::take_varint;
    use crate::codec::varint;

    #[test]
    fn a_walk_reads_short_varints_as_the_codec_does() {
        for first in 0..=u8::MAX {
            for second in 0..=u8::MAX {
                for input in [&[first, second][..], &[first, second, 0x01]] {
                    let expected = varint::get(input)
                        .ok()
                        .map(|(value, len)| (usize::try_from(value).unwrap(), &input[len..]));
                    assert_eq!(take_varint(input), expected, "{input:?}");
                }
            }
        }
    }
}
