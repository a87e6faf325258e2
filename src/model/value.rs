//! EDM property values.

use super::{DateTime, Guid};

/// The EDM type of a property value; the discriminant is the stable on-disk type tag.
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

/// One typed property value. Construction through the model's checked constructors keeps
/// String and Binary within their 64 KiB limits.
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
