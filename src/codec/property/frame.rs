//! The framing shared by the decoder and the reader: the header, and one property at a time
//! with its value left as raw bytes until someone asks for it.

use crate::codec::cursor::Cursor;
use crate::codec::error::{CodecError, Result};
use crate::codec::format::{
    BOOLEAN_LEN, DOUBLE_LEN, FLAG_HAS_TIMESTAMP, GUID_LEN, KNOWN_FLAGS, PROPERTY_FORMAT_VERSION,
    TICKS_LEN,
};
use crate::model::limits::MAX_CUSTOM_PROPERTIES;
use crate::model::{DateTime, EdmType};

/// The decoded header: Timestamp and property count, and where the properties start.
#[derive(Debug, Clone, Copy)]
pub(super) struct Header {
    pub(super) timestamp: Option<DateTime>,
    pub(super) count: usize,
    pub(super) body_offset: usize,
}

/// One property with its name and value still as the bytes of the input.
#[derive(Debug, Clone, Copy)]
pub(super) struct Frame<'a> {
    pub(super) name: &'a [u8],
    pub(super) name_offset: usize,
    pub(super) tag: EdmType,
    /// The value's payload: for String and Binary without the length prefix.
    pub(super) value: &'a [u8],
    pub(super) value_offset: usize,
}

/// Reads version, flags, Timestamp and property count.
pub(super) fn read_header(cursor: &mut Cursor<'_>) -> Result<Header> {
    let offset = cursor.offset();
    let version = cursor.byte()?;
    if version != PROPERTY_FORMAT_VERSION {
        return Err(CodecError::UnsupportedVersion { offset, version });
    }
    let offset = cursor.offset();
    let flags = cursor.byte()?;
    if flags & !KNOWN_FLAGS != 0 {
        return Err(CodecError::UnknownFlags { offset, flags });
    }
    let timestamp = if flags & FLAG_HAS_TIMESTAMP == 0 {
        None
    } else {
        let offset = cursor.offset();
        let ticks = i64::from_le_bytes(cursor.array::<TICKS_LEN>()?);
        Some(DateTime::from_ticks(ticks).map_err(|source| CodecError::Model { offset, source })?)
    };
    let offset = cursor.offset();
    let count = cursor.varint()?;
    let count = match usize::try_from(count) {
        Ok(count) if count <= MAX_CUSTOM_PROPERTIES => count,
        _ => {
            return Err(CodecError::TooManyProperties {
                offset,
                count,
                limit: MAX_CUSTOM_PROPERTIES,
            });
        }
    };
    Ok(Header {
        timestamp,
        count,
        body_offset: cursor.offset(),
    })
}

/// Reads one property's name, tag and value framing. Checks bounds, the tag and varint form;
/// leaves UTF-8, name rules and value ranges to whoever uses the frame.
#[inline]
pub(super) fn read_frame<'a>(cursor: &mut Cursor<'a>) -> Result<Frame<'a>> {
    let name = cursor.length_prefixed()?;
    let name_offset = cursor.offset() - name.len();
    let tag_offset = cursor.offset();
    let byte = cursor.byte()?;
    let Some(tag) = EdmType::from_tag(byte) else {
        return Err(CodecError::BadTypeTag {
            offset: tag_offset,
            tag: byte,
        });
    };
    let start = cursor.offset();
    let value = match tag {
        EdmType::Binary | EdmType::String => cursor.length_prefixed()?,
        EdmType::Boolean => cursor.take(BOOLEAN_LEN)?,
        EdmType::DateTime => cursor.take(TICKS_LEN)?,
        EdmType::Double => cursor.take(DOUBLE_LEN)?,
        EdmType::Guid => cursor.take(GUID_LEN)?,
        EdmType::Int32 | EdmType::Int64 => {
            cursor.varint()?;
            cursor.since(start)
        }
    };
    Ok(Frame {
        name,
        name_offset,
        tag,
        value,
        value_offset: cursor.offset() - value.len(),
    })
}

/// `bytes` as text, as [`std::str::from_utf8`] but cheaper on the common all-ASCII case.
///
/// Names and string values are mostly short ASCII, where the std validator's setup costs
/// more than the check itself (about a third of the instructions of a point get's decode).
#[inline]
pub(super) fn utf8(bytes: &[u8]) -> std::result::Result<&str, std::str::Utf8Error> {
    if bytes.is_ascii() {
        // SAFETY: every ASCII byte sequence is valid UTF-8.
        return Ok(unsafe { std::str::from_utf8_unchecked(bytes) });
    }
    std::str::from_utf8(bytes)
}
