//! Borrowed views of property values, decoded in place without allocating.

use super::frame::Frame;
use crate::codec::error::{CodecError, Result};
use crate::codec::varint;
use crate::model::{DateTime, EdmType, Guid, ModelError, Value};

/// A property value borrowed from the encoded bytes (or from a [`Value`]): the same variants as
/// [`Value`], with String and Binary as slices. Lets a filter compare without allocating.
#[derive(Debug, Clone, Copy)]
pub enum ValueRef<'a> {
    /// `Edm.Binary` bytes.
    Binary(&'a [u8]),
    /// `Edm.Boolean`.
    Boolean(bool),
    /// `Edm.DateTime`, range-checked.
    DateTime(DateTime),
    /// `Edm.Double`, bit-exact.
    Double(f64),
    /// `Edm.Guid`.
    Guid(Guid),
    /// `Edm.Int32`.
    Int32(i32),
    /// `Edm.Int64`.
    Int64(i64),
    /// `Edm.String`, valid UTF-8.
    String(&'a str),
}

impl ValueRef<'_> {
    /// The EDM type of the value.
    #[must_use]
    pub const fn edm_type(&self) -> EdmType {
        match self {
            Self::Binary(_) => EdmType::Binary,
            Self::Boolean(_) => EdmType::Boolean,
            Self::DateTime(_) => EdmType::DateTime,
            Self::Double(_) => EdmType::Double,
            Self::Guid(_) => EdmType::Guid,
            Self::Int32(_) => EdmType::Int32,
            Self::Int64(_) => EdmType::Int64,
            Self::String(_) => EdmType::String,
        }
    }

    /// An owned [`Value`], through the model's checked constructors.
    ///
    /// # Errors
    /// The model's error for a String or Binary above its 64 KiB limit.
    pub fn to_value(&self) -> Result<Value, ModelError> {
        Ok(match *self {
            Self::Binary(bytes) => Value::binary(bytes)?,
            Self::Boolean(flag) => Value::Boolean(flag),
            Self::DateTime(instant) => Value::DateTime(instant),
            Self::Double(number) => Value::Double(number),
            Self::Guid(guid) => Value::Guid(guid),
            Self::Int32(number) => Value::Int32(number),
            Self::Int64(number) => Value::Int64(number),
            Self::String(text) => Value::string(text)?,
        })
    }
}

impl<'a> From<&'a Value> for ValueRef<'a> {
    fn from(value: &'a Value) -> Self {
        match value {
            Value::Binary(bytes) => Self::Binary(bytes),
            Value::Boolean(flag) => Self::Boolean(*flag),
            Value::DateTime(instant) => Self::DateTime(*instant),
            Value::Double(number) => Self::Double(*number),
            Value::Guid(guid) => Self::Guid(*guid),
            Value::Int32(number) => Self::Int32(*number),
            Value::Int64(number) => Self::Int64(*number),
            Value::String(text) => Self::String(text),
        }
    }
}

/// Bit-exact like [`Value`]'s equality: Doubles compare by their bits.
impl PartialEq for ValueRef<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Binary(a), Self::Binary(b)) => a == b,
            (Self::Boolean(a), Self::Boolean(b)) => a == b,
            (Self::DateTime(a), Self::DateTime(b)) => a == b,
            (Self::Double(a), Self::Double(b)) => a.to_bits() == b.to_bits(),
            (Self::Guid(a), Self::Guid(b)) => a == b,
            (Self::Int32(a), Self::Int32(b)) => a == b,
            (Self::Int64(a), Self::Int64(b)) => a == b,
            (Self::String(a), Self::String(b)) => a == b,
            _ => false,
        }
    }
}

/// Decodes a frame's value: checks the boolean byte, Int32 range, DateTime range and UTF-8.
pub(super) fn decode_value<'a>(frame: &Frame<'a>) -> Result<ValueRef<'a>> {
    let offset = frame.value_offset;
    let bytes = frame.value;
    Ok(match frame.tag {
        EdmType::Binary => ValueRef::Binary(bytes),
        EdmType::Boolean => match bytes {
            [0] => ValueRef::Boolean(false),
            [1] => ValueRef::Boolean(true),
            [byte, ..] => {
                return Err(CodecError::BadBoolean {
                    offset,
                    byte: *byte,
                });
            }
            [] => return Err(CodecError::Truncated { offset, needed: 1 }),
        },
        EdmType::DateTime => {
            let ticks = i64::from_le_bytes(fixed(bytes, offset)?);
            let instant = DateTime::from_ticks(ticks)
                .map_err(|source| CodecError::Model { offset, source })?;
            ValueRef::DateTime(instant)
        }
        EdmType::Double => {
            ValueRef::Double(f64::from_bits(u64::from_le_bytes(fixed(bytes, offset)?)))
        }
        EdmType::Guid => ValueRef::Guid(Guid(fixed(bytes, offset)?)),
        EdmType::Int32 => {
            let zigzag = zigzag_of(bytes, offset)?;
            match u32::try_from(zigzag)
                .ok()
                .and_then(|small| i32::try_from(varint::unzigzag(u64::from(small))).ok())
            {
                Some(number) => ValueRef::Int32(number),
                None => return Err(CodecError::Int32OutOfRange { offset, zigzag }),
            }
        }
        EdmType::Int64 => ValueRef::Int64(varint::unzigzag(zigzag_of(bytes, offset)?)),
        EdmType::String => match super::frame::utf8(bytes) {
            Ok(text) => ValueRef::String(text),
            Err(error) => {
                return Err(CodecError::InvalidUtf8 {
                    offset: offset + error.valid_up_to(),
                });
            }
        },
    })
}

fn fixed<const N: usize>(bytes: &[u8], offset: usize) -> Result<[u8; N]> {
    <[u8; N]>::try_from(bytes).map_err(|_| CodecError::Truncated {
        offset,
        needed: N.saturating_sub(bytes.len()),
    })
}

fn zigzag_of(bytes: &[u8], offset: usize) -> Result<u64> {
    // Shortest-form one- and two-byte varints (|n| < 8192), the common case, without a loop.
    match *bytes {
        [low] if low < 0x80 => return Ok(u64::from(low)),
        [low, high] if low >= 0x80 && (1..0x80).contains(&high) => {
            return Ok(u64::from(low & 0x7F) | (u64::from(high) << 7));
        }
        _ => {}
    }
    match varint::get(bytes) {
        Ok((value, len)) if len == bytes.len() => Ok(value),
        _ => Err(CodecError::BadVarint { offset }),
    }
}
