//! Zero-copy access to encoded properties: one property, a projection, or a walk.

use super::frame::{Frame, Header, read_frame, read_header};
use super::value_ref::{ValueRef, decode_value};
use super::walk::tag_of;
use crate::codec::cursor::Cursor;
use crate::codec::error::{CodecError, Result};
use crate::codec::format::{
    BOOLEAN_LEN, DOUBLE_LEN, FLAG_HAS_TIMESTAMP, GUID_LEN, HEADER_FIXED_LEN, KNOWN_FLAGS,
    PROPERTY_FORMAT_VERSION, TICKS_LEN,
};
use crate::codec::varint;
use crate::model::limits::MAX_CUSTOM_PROPERTIES;
use crate::model::{DateTime, EdmType, PropertyName, Value};

/// Reads encoded properties in place. Construction checks the header; each walk checks the
/// framing (bounds, tags, varints) of every property it passes and fully validates every value
/// and name it returns. Whole-input checks (no duplicate names, no trailing bytes, valid names
/// of skipped properties) belong to [`super::decode`].
#[derive(Debug, Clone, Copy)]
pub struct PropertyReader<'a> {
    bytes: &'a [u8],
    header: Header,
}

impl<'a> PropertyReader<'a> {
    /// A reader over `bytes`, after checking the header.
    ///
    /// # Errors
    /// A [`CodecError`] for a bad version, flags, Timestamp or property count.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let header = match header_fast(bytes) {
            Some(header) => header,
            None => read_header(&mut Cursor::new(bytes))?,
        };
        Ok(Self { bytes, header })
    }

    /// The stored Timestamp, if the entity had one when encoded.
    #[must_use]
    pub const fn timestamp(&self) -> Option<DateTime> {
        self.header.timestamp
    }

    /// The number of properties the header announces.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.header.count
    }

    /// Whether the header announces no properties.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.header.count == 0
    }

    /// The properties in stored order; yields at most one error, then ends.
    #[must_use]
    pub fn iter(&self) -> Properties<'a> {
        Properties {
            cursor: Cursor::at(self.bytes, self.header.body_offset),
            left: self.header.count,
        }
    }

    /// The properties in stored order with their names left as bytes: a walk that compares
    /// names against ones it already knows need not check them as UTF-8 ([`Self::iter`]
    /// does). Yields at most one error, then ends.
    #[must_use]
    pub fn frames(&self) -> RawFrames<'a> {
        RawFrames {
            bytes: self.bytes,
            rest: self
                .bytes
                .get(self.header.body_offset..)
                .unwrap_or_default(),
            left: self.header.count,
        }
    }

    /// The encoded frames after the header, and how many the header announces: for a
    /// writer that walks them itself and leaves any frame it does not take to
    /// [`Self::frames`] (nothing here checks their framing).
    #[must_use]
    pub fn frame_bytes(&self) -> (&'a [u8], usize) {
        (
            self.bytes
                .get(self.header.body_offset..)
                .unwrap_or_default(),
            self.header.count,
        )
    }

    /// The value of property `name` (case-sensitive), borrowed from the input. The 64 KiB
    /// limits of String and Binary are checked when the value is made owned
    /// ([`ValueRef::to_value`]), not here.
    ///
    /// # Errors
    /// A [`CodecError`] for bad framing before the property, or a bad value of the property.
    pub fn get_ref(&self, name: &str) -> Result<Option<ValueRef<'a>>> {
        match locate(self.bytes, self.header, name.as_bytes()) {
            Some(Some(frame)) => decode_value(&frame).map(Some),
            Some(None) => Ok(None),
            None => self.get_ref_checked(name),
        }
    }

    /// [`Self::get_ref`] through the checked frame reader, which names what is wrong.
    fn get_ref_checked(&self, name: &str) -> Result<Option<ValueRef<'a>>> {
        let mut cursor = Cursor::at(self.bytes, self.header.body_offset);
        for _ in 0..self.header.count {
            let frame = read_frame(&mut cursor)?;
            if frame.name == name.as_bytes() {
                return decode_value(&frame).map(Some);
            }
        }
        Ok(None)
    }

    /// The value of property `name` (case-sensitive), owned.
    ///
    /// # Errors
    /// As [`Self::get_ref`], plus the model's error for an oversized String or Binary.
    pub fn get(&self, name: &str) -> Result<Option<Value>> {
        let mut cursor = Cursor::at(self.bytes, self.header.body_offset);
        for _ in 0..self.header.count {
            let frame = read_frame(&mut cursor)?;
            if frame.name == name.as_bytes() {
                return owned_value(&frame).map(Some);
            }
        }
        Ok(None)
    }

    /// The properties named in `names` that are present, in stored order (`$select`). Names
    /// absent from the entity are simply missing from the result.
    ///
    /// # Errors
    /// A [`CodecError`] for bad framing, or a bad name or value of a selected property.
    pub fn project(&self, names: &[&str]) -> Result<Vec<(PropertyName, Value)>> {
        let mut out = Vec::with_capacity(names.len().min(self.header.count));
        let mut cursor = Cursor::at(self.bytes, self.header.body_offset);
        for _ in 0..self.header.count {
            if out.len() == names.len() {
                break;
            }
            let frame = read_frame(&mut cursor)?;
            if names.iter().any(|wanted| frame.name == wanted.as_bytes()) {
                out.push((property_name(&frame)?, owned_value(&frame)?));
            }
        }
        Ok(out)
    }
}

impl<'a> IntoIterator for &PropertyReader<'a> {
    type Item = Result<RawProperty<'a>>;
    type IntoIter = Properties<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

/// Iterator over the properties of a [`PropertyReader`].
#[derive(Debug, Clone)]
pub struct Properties<'a> {
    cursor: Cursor<'a>,
    left: usize,
}

impl<'a> Iterator for Properties<'a> {
    type Item = Result<RawProperty<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let item = read_frame(&mut self.cursor).and_then(|frame| {
            let name = utf8_name(&frame)?;
            Ok(RawProperty { frame, name })
        });
        if item.is_err() {
            self.left = 0;
        }
        Some(item)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// Iterator over the properties of a [`PropertyReader`], names unchecked.
#[derive(Debug, Clone)]
pub struct RawFrames<'a> {
    bytes: &'a [u8],
    /// The bytes after the frames returned so far.
    rest: &'a [u8],
    left: usize,
}

impl<'a> Iterator for RawFrames<'a> {
    type Item = Result<RawFrame<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        if let Some((frame, rest)) = frame_fast(self.bytes.len(), self.rest) {
            self.rest = rest;
            return Some(Ok(RawFrame { frame }));
        }
        // A framing check failed: the checked reader names it.
        let mut cursor = Cursor::at(self.bytes, self.bytes.len() - self.rest.len());
        match read_frame(&mut cursor) {
            Ok(frame) => {
                self.rest = self.bytes.get(cursor.offset()..).unwrap_or_default();
                Some(Ok(RawFrame { frame }))
            }
            Err(err) => {
                self.left = 0;
                Some(Err(err))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (0, Some(self.left))
    }
}

/// One property seen by [`RawFrames`]: its framing checked, its name not even as UTF-8.
#[derive(Debug, Clone, Copy)]
pub struct RawFrame<'a> {
    frame: Frame<'a>,
}

impl<'a> RawFrame<'a> {
    /// The stored name bytes, unchecked.
    #[must_use]
    pub const fn name_bytes(&self) -> &'a [u8] {
        self.frame.name
    }

    /// The EDM type of the value.
    #[must_use]
    pub const fn edm_type(&self) -> EdmType {
        self.frame.tag
    }

    /// The value, borrowed from the input.
    ///
    /// # Errors
    /// As [`RawProperty::value_ref`].
    #[inline]
    pub fn value_ref(&self) -> Result<ValueRef<'a>> {
        decode_value(&self.frame)
    }

    /// The stored value bytes, unchecked (String and Binary without their length prefix).
    #[must_use]
    pub const fn value_bytes(&self) -> &'a [u8] {
        self.frame.value
    }

    /// The property with its name checked as UTF-8.
    ///
    /// # Errors
    /// [`CodecError::InvalidUtf8`] for a name that is not UTF-8.
    pub fn property(&self) -> Result<RawProperty<'a>> {
        let name = utf8_name(&self.frame)?;
        Ok(RawProperty {
            frame: self.frame,
            name,
        })
    }
}

/// One property seen by [`Properties`]: its name (UTF-8, not yet checked against the naming
/// rules), type and still-encoded value.
#[derive(Debug, Clone, Copy)]
pub struct RawProperty<'a> {
    frame: Frame<'a>,
    name: &'a str,
}

impl<'a> RawProperty<'a> {
    /// The stored name.
    #[must_use]
    pub const fn name(&self) -> &'a str {
        self.name
    }

    /// The EDM type of the value.
    #[must_use]
    pub const fn edm_type(&self) -> EdmType {
        self.frame.tag
    }

    /// Offset of the name within the input.
    #[must_use]
    pub const fn offset(&self) -> usize {
        self.frame.name_offset
    }

    /// The value, borrowed from the input.
    ///
    /// # Errors
    /// A [`CodecError`] for a bad boolean byte, Int32 range, DateTime range or UTF-8.
    pub fn value_ref(&self) -> Result<ValueRef<'a>> {
        decode_value(&self.frame)
    }

    /// The value, owned.
    ///
    /// # Errors
    /// As [`Self::value_ref`], plus the model's error for an oversized String or Binary.
    pub fn value(&self) -> Result<Value> {
        owned_value(&self.frame)
    }

    /// The name, validated against the property naming rules.
    ///
    /// # Errors
    /// [`CodecError::Model`] for a name the model rejects.
    pub fn property_name(&self) -> Result<PropertyName> {
        property_name(&self.frame)
    }
}

/// The frame of property `name` (`Some(None)`: absent), found with plain byte reads that
/// make the same framing checks as [`read_frame`] on every frame up to it. `None` when any
/// check fails: the caller then walks again with [`read_frame`], which reports the failure,
/// so errors are unchanged. A filter on a property pays this walk on every row it examines.
#[inline]
fn locate<'a>(bytes: &'a [u8], header: Header, name: &[u8]) -> Option<Option<Frame<'a>>> {
    let mut rest = bytes.get(header.body_offset..)?;
    for _ in 0..header.count {
        let (frame, after) = frame_fast(bytes.len(), rest)?;
        if frame.name == name {
            return Some(Some(frame));
        }
        rest = after;
    }
    Some(None)
}

/// The frame at `*offset` of `bytes`, moving `*offset` past it: on the plain-byte path of
/// [`frame_fast`], or through [`read_frame`] (the same checks), which names what is wrong.
#[inline]
pub(super) fn next_frame<'a>(bytes: &'a [u8], offset: &mut usize) -> Result<Frame<'a>> {
    if let Some((frame, after)) = bytes
        .get(*offset..)
        .and_then(|rest| frame_fast(bytes.len(), rest))
    {
        *offset = bytes.len() - after.len();
        return Ok(frame);
    }
    let mut cursor = Cursor::at(bytes, *offset);
    let frame = read_frame(&mut cursor)?;
    *offset = cursor.offset();
    Ok(frame)
}

/// The frame at the start of `rest` (the tail of an input of `input_len` bytes) and the bytes
/// after it, read with plain byte reads making [`read_frame`]'s checks; `None` when one fails.
#[inline(always)]
pub(super) fn frame_fast(input_len: usize, rest: &[u8]) -> Option<(Frame<'_>, &[u8])> {
    let (name_len, after) = take_varint(rest)?;
    let (name, after_name) = after.split_at_checked(name_len)?;
    let (&byte, after) = after_name.split_first()?;
    let tag = tag_of(byte)?;
    let (value, after) = match tag {
        EdmType::Binary | EdmType::String => {
            let (len, after) = take_varint(after)?;
            after.split_at_checked(len)?
        }
        EdmType::Boolean => after.split_at_checked(BOOLEAN_LEN)?,
        EdmType::DateTime => after.split_at_checked(TICKS_LEN)?,
        EdmType::Double => after.split_at_checked(DOUBLE_LEN)?,
        EdmType::Guid => after.split_at_checked(GUID_LEN)?,
        EdmType::Int32 | EdmType::Int64 => {
            let (_, tail) = take_varint(after)?;
            after.split_at_checked(after.len() - tail.len())?
        }
    };
    let frame = Frame {
        name,
        name_offset: input_len - name.len() - after_name.len(),
        tag,
        value,
        value_offset: input_len - value.len() - after.len(),
    };
    Some((frame, after))
}

/// A shortest-form varint at the start of `bytes` as a length, and the bytes after it.
#[inline(always)]
fn take_varint(bytes: &[u8]) -> Option<(usize, &[u8])> {
    match bytes.split_first() {
        Some((&first, after)) if first < 0x80 => Some((usize::from(first), after)),
        _ => {
            let (value, len) = varint::get(bytes).ok()?;
            Some((usize::try_from(value).ok()?, bytes.get(len..)?))
        }
    }
}

/// The header, read with plain byte reads making [`read_header`]'s checks; `None` when one
/// fails, and [`read_header`] then names the failure. Scans build a reader per row.
#[inline]
fn header_fast(bytes: &[u8]) -> Option<Header> {
    let (&[version, flags], _) = bytes.split_first_chunk::<HEADER_FIXED_LEN>()?;
    if version != PROPERTY_FORMAT_VERSION || flags & !KNOWN_FLAGS != 0 {
        return None;
    }
    let mut pos = HEADER_FIXED_LEN;
    let timestamp = if flags & FLAG_HAS_TIMESTAMP == 0 {
        None
    } else {
        let (ticks, _) = bytes.get(pos..)?.split_first_chunk::<TICKS_LEN>()?;
        pos += TICKS_LEN;
        Some(DateTime::from_ticks(i64::from_le_bytes(*ticks)).ok()?)
    };
    let count = usize::try_from(varint_at(bytes, &mut pos)?)
        .ok()
        .filter(|&count| count <= MAX_CUSTOM_PROPERTIES)?;
    Some(Header {
        timestamp,
        count,
        body_offset: pos,
    })
}

/// The shortest-form varint at `pos`, advancing past it; `None` if malformed or truncated.
#[inline(always)]
fn varint_at(bytes: &[u8], pos: &mut usize) -> Option<u64> {
    let first = *bytes.get(*pos)?;
    if first < 0x80 {
        *pos += 1;
        return Some(u64::from(first));
    }
    let (value, len) = varint::get(bytes.get(*pos..)?).ok()?;
    *pos += len;
    Some(value)
}

pub(super) fn utf8_name<'a>(frame: &Frame<'a>) -> Result<&'a str> {
    super::frame::utf8(frame.name).map_err(|error| CodecError::InvalidUtf8 {
        offset: frame.name_offset + error.valid_up_to(),
    })
}

pub(super) fn property_name(frame: &Frame<'_>) -> Result<PropertyName> {
    checked_name(utf8_name(frame)?, frame)
}

/// `name` (already checked as UTF-8) validated against the property naming rules.
pub(super) fn checked_name(name: &str, frame: &Frame<'_>) -> Result<PropertyName> {
    PropertyName::from_borrowed(name).map_err(|source| CodecError::Model {
        offset: frame.name_offset,
        source,
    })
}

pub(super) fn owned_value(frame: &Frame<'_>) -> Result<Value> {
    decode_value(frame)?
        .to_value()
        .map_err(|source| CodecError::Model {
            offset: frame.value_offset,
            source,
        })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::*;
    use crate::codec::property::encode;
    use crate::model::{Entity, Guid, PartitionKey, RowKey};

    fn every_type() -> Vec<u8> {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        let values = [
            ("Bin", Value::binary(vec![1, 2, 3]).unwrap()),
            ("Flag", Value::Boolean(true)),
            ("At", Value::DateTime(DateTime::MIN)),
            ("Ratio", Value::Double(0.5)),
            ("Id", Value::Guid(Guid([7; 16]))),
            ("Small", Value::Int32(-300)),
            ("Big", Value::Int64(1 << 40)),
            ("Text", Value::string("héllo".to_owned()).unwrap()),
        ];
        for (name, value) in values {
            entity.set(PropertyName::new(name).unwrap(), value).unwrap();
        }
        encode(&entity)
    }

    #[test]
    fn raw_frames_walk_what_the_checked_walk_walks() {
        let bytes = every_type();
        let reader = PropertyReader::new(&bytes).unwrap();
        let checked: Vec<_> = reader.iter().map(Result::unwrap).collect();
        let raw: Vec<_> = reader.frames().map(Result::unwrap).collect();
        assert_eq!(raw.len(), checked.len());
        for (raw, checked) in raw.iter().zip(&checked) {
            assert_eq!(raw.name_bytes(), checked.name().as_bytes());
            assert_eq!(raw.edm_type(), checked.edm_type());
            assert_eq!(
                raw.value_ref().unwrap().to_value().unwrap(),
                checked.value().unwrap()
            );
            assert_eq!(raw.property().unwrap().offset(), checked.offset());
        }
    }

    #[test]
    fn raw_frames_leave_names_unchecked_until_asked() {
        // One Boolean property named 0xFF.
        let bytes = [1, 0, 1, 1, 0xFF, EdmType::Boolean.tag(), 1];
        let reader = PropertyReader::new(&bytes).unwrap();
        let frame = reader.frames().next().unwrap().unwrap();
        assert_eq!(frame.name_bytes(), [0xFF]);
        assert!(matches!(
            frame.value_ref().unwrap(),
            ValueRef::Boolean(true)
        ));
        assert_eq!(
            frame.property().unwrap_err(),
            CodecError::InvalidUtf8 { offset: 4 }
        );
        assert!(reader.iter().next().unwrap().is_err());
    }

    #[test]
    fn raw_frames_report_the_checked_error_once_on_damaged_bytes() {
        let bytes = every_type();
        let header_len = PropertyReader::new(&bytes).unwrap().header.body_offset;
        for len in header_len..bytes.len() {
            let reader = PropertyReader::new(&bytes[..len]).unwrap();
            let raw: Vec<_> = reader.frames().collect();
            let checked: Vec<_> = reader.iter().collect();
            assert_eq!(raw.len(), checked.len(), "prefix of {len} bytes");
            assert_eq!(
                raw.last().unwrap().as_ref().unwrap_err(),
                checked.last().unwrap().as_ref().unwrap_err(),
                "prefix of {len} bytes"
            );
        }
        let mut bad_tag = bytes.clone();
        // The first frame: a one-byte name length, the name, then the tag.
        let tag_at = header_len + 1 + usize::from(bytes[header_len]);
        bad_tag[tag_at] = 0xEE;
        let reader = PropertyReader::new(&bad_tag).unwrap();
        assert_eq!(
            reader.frames().next().unwrap().unwrap_err(),
            CodecError::BadTypeTag {
                offset: tag_at,
                tag: 0xEE
            }
        );
        assert_eq!(reader.frames().count(), 1);
    }
}
