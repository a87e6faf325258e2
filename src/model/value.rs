//! EDM property values.

use std::hash::{Hash, Hasher};

use super::limits::{
    BINARY_MAX_BYTES, BOOLEAN_VALUE_BYTES, EIGHT_BYTE_VALUE_BYTES, GUID_VALUE_BYTES,
    INT32_VALUE_BYTES, STRING_MAX_BYTES, UTF16_UNIT_BYTES, VARIABLE_VALUE_OVERHEAD,
};
use super::names::utf16_bytes;
use super::{DateTime, Guid, ModelError, Result};

/// The EDM type of a property value; the discriminant is the stable on-disk type tag.
///
/// ```
/// use strata::model::EdmType;
/// assert_eq!(EdmType::from_name("Edm.Int64"), Some(EdmType::Int64));
/// assert_eq!(EdmType::Int64.name(), "Edm.Int64");
/// assert_eq!(EdmType::from_tag(EdmType::Guid.tag()), Some(EdmType::Guid));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum EdmType {
    /// `Edm.Binary`
    Binary = 1,
    /// `Edm.Boolean`
    Boolean = 2,
    /// `Edm.DateTime`
    DateTime = 3,
    /// `Edm.Double`
    Double = 4,
    /// `Edm.Guid`
    Guid = 5,
    /// `Edm.Int32`
    Int32 = 6,
    /// `Edm.Int64`
    Int64 = 7,
    /// `Edm.String`
    String = 8,
}

impl EdmType {
    /// Every type, in tag order.
    pub const ALL: [Self; 8] = [
        Self::Binary,
        Self::Boolean,
        Self::DateTime,
        Self::Double,
        Self::Guid,
        Self::Int32,
        Self::Int64,
        Self::String,
    ];

    /// The type of a value written without a type annotation.
    pub const UNTYPED: Self = Self::String;

    /// The OData name, e.g. `"Edm.Int64"`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::Binary => "Edm.Binary",
            Self::Boolean => "Edm.Boolean",
            Self::DateTime => "Edm.DateTime",
            Self::Double => "Edm.Double",
            Self::Guid => "Edm.Guid",
            Self::Int32 => "Edm.Int32",
            Self::Int64 => "Edm.Int64",
            Self::String => "Edm.String",
        }
    }

    /// The type with OData name `name` (exact spelling, e.g. `"Edm.Guid"`).
    #[must_use]
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.name() == name)
    }

    /// The type named by an optional annotation: none means [`EdmType::UNTYPED`] (`Edm.String`).
    ///
    /// # Errors
    /// [`ModelError::UnknownEdmType`] for a name that is not one of the eight.
    pub fn from_annotation(name: Option<&str>) -> Result<Self> {
        match name {
            None => Ok(Self::UNTYPED),
            Some(name) => Self::from_name(name).ok_or_else(|| ModelError::UnknownEdmType {
                name: super::error::excerpt(name),
            }),
        }
    }

    /// The type with on-disk tag `tag`.
    #[must_use]
    pub fn from_tag(tag: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.tag() == tag)
    }

    /// The stable on-disk tag.
    #[must_use]
    pub const fn tag(self) -> u8 {
        self as u8
    }
}

impl std::fmt::Display for EdmType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One typed property value. Construction through the model's checked constructors keeps
/// String and Binary within their 64 KiB limits; [`Entity`](super::Entity) re-checks values
/// built directly from the variants.
///
/// Equality is exact: `Double`s compare by bit pattern, so a NaN equals the same NaN payload
/// and `-0.0 != 0.0` — what was stored is what compares equal on read.
///
/// ```
/// use strata::model::{EdmType, Value};
/// let v = Value::string("héllo")?;
/// assert_eq!(v.edm_type(), EdmType::String);
/// assert_eq!(v.size(), 4 + 5 * 2);
/// assert_eq!(Value::Double(f64::NAN), Value::Double(f64::NAN));
/// assert_ne!(Value::Double(-0.0), Value::Double(0.0));
/// # Ok::<(), strata::model::ModelError>(())
/// ```
#[derive(Debug, Clone)]
pub enum Value {
    /// Up to 64 KiB of bytes.
    Binary(Vec<u8>),
    /// A boolean.
    Boolean(bool),
    /// A UTC instant at 100 ns resolution.
    DateTime(DateTime),
    /// An IEEE 754 double; NaN payloads, infinities and -0.0 are kept bit-exactly.
    Double(f64),
    /// A 128-bit GUID.
    Guid(Guid),
    /// A 32-bit signed integer.
    Int32(i32),
    /// A 64-bit signed integer.
    Int64(i64),
    /// A string of at most 64 KiB when counted as UTF-16.
    String(String),
}

impl Value {
    /// An `Edm.String` of at most 64 KiB counted as UTF-16 code units × 2.
    ///
    /// # Errors
    /// [`ModelError::StringTooLarge`].
    pub fn string(s: impl Into<String>) -> Result<Self> {
        let value = Self::String(s.into());
        value.validate()?;
        Ok(value)
    }

    /// An `Edm.Binary` of at most 64 KiB.
    ///
    /// # Errors
    /// [`ModelError::BinaryTooLarge`].
    pub fn binary(bytes: impl Into<Vec<u8>>) -> Result<Self> {
        let value = Self::Binary(bytes.into());
        value.validate()?;
        Ok(value)
    }

    /// Checks the size limits of String and Binary (other types are valid by construction).
    ///
    /// # Errors
    /// [`ModelError::StringTooLarge`] or [`ModelError::BinaryTooLarge`].
    pub fn validate(&self) -> Result<()> {
        match self {
            Self::String(s) => {
                // A char never has more UTF-16 units than UTF-8 bytes, so a string short in
                // UTF-8 needs no counting.
                if s.len() <= STRING_MAX_BYTES / UTF16_UNIT_BYTES {
                    return Ok(());
                }
                let len_bytes = utf16_bytes(s);
                if len_bytes > STRING_MAX_BYTES {
                    return Err(ModelError::StringTooLarge { len_bytes });
                }
                Ok(())
            }
            Self::Binary(b) if b.len() > BINARY_MAX_BYTES => {
                Err(ModelError::BinaryTooLarge { len_bytes: b.len() })
            }
            _ => Ok(()),
        }
    }

    /// The EDM type of this value.
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

    /// Bytes this value counts toward the entity size limit, as the service estimates them:
    /// String: UTF-16 code units × 2 + 4; Binary: length + 4; DateTime, Int64, Double: 8;
    /// Guid: 16; Int32: 4; Boolean: 1.
    #[must_use]
    pub fn size(&self) -> usize {
        match self {
            Self::String(s) => utf16_bytes(s) + VARIABLE_VALUE_OVERHEAD,
            Self::Binary(b) => b.len() + VARIABLE_VALUE_OVERHEAD,
            Self::DateTime(_) | Self::Int64(_) | Self::Double(_) => EIGHT_BYTE_VALUE_BYTES,
            Self::Guid(_) => GUID_VALUE_BYTES,
            Self::Int32(_) => INT32_VALUE_BYTES,
            Self::Boolean(_) => BOOLEAN_VALUE_BYTES,
        }
    }
}

impl PartialEq for Value {
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

// Bit-exact equality of doubles is reflexive, so `Eq` holds.
impl Eq for Value {}

impl Hash for Value {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u8(self.edm_type().tag());
        match self {
            Self::Binary(b) => b.hash(state),
            Self::Boolean(b) => b.hash(state),
            Self::DateTime(d) => d.hash(state),
            Self::Double(d) => d.to_bits().hash(state),
            Self::Guid(g) => g.hash(state),
            Self::Int32(i) => i.hash(state),
            Self::Int64(i) => i.hash(state),
            Self::String(s) => s.hash(state),
        }
    }
}

/// Infallible conversions for the types without a size limit.
macro_rules! value_from {
    ($($ty:ty => $variant:ident),* $(,)?) => {
        $(
            impl From<$ty> for Value {
                fn from(v: $ty) -> Self {
                    Self::$variant(v)
                }
            }
        )*
    };
}

value_from!(
    bool => Boolean,
    DateTime => DateTime,
    f64 => Double,
    Guid => Guid,
    i32 => Int32,
    i64 => Int64,
);
