//! Zero-copy access to encoded properties: one property, a projection, or a walk.

use super::frame::{Frame, Header, read_frame, read_header};
use super::value_ref::{ValueRef, decode_value};
use crate::codec::cursor::Cursor;
use crate::codec::error::{CodecError, Result};
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
        let header = read_header(&mut Cursor::new(bytes))?;
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

    /// The value of property `name` (case-sensitive), borrowed from the input. The 64 KiB
    /// limits of String and Binary are checked when the value is made owned
    /// ([`ValueRef::to_value`]), not here.
    ///
    /// # Errors
    /// A [`CodecError`] for bad framing before the property, or a bad value of the property.
    pub fn get_ref(&self, name: &str) -> Result<Option<ValueRef<'a>>> {
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

pub(super) fn utf8_name<'a>(frame: &Frame<'a>) -> Result<&'a str> {
    std::str::from_utf8(frame.name).map_err(|error| CodecError::InvalidUtf8 {
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
