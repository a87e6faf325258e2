//! Errors of the codec layer.

use crate::model::ModelError;

/// Bytes that are not a valid encoding, with the offset (from the start of the input) where
/// decoding failed and what was wrong there.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum CodecError {
    /// The input ended `needed` bytes short of a field starting at `offset`.
    #[error("truncated input: {needed} more byte(s) needed at offset {offset}")]
    Truncated {
        /// Offset of the field that does not fit.
        offset: usize,
        /// How many bytes the field needs beyond the end of the input.
        needed: usize,
    },
    /// The property value was written by an unknown format version.
    #[error("unsupported property format version {version} at offset {offset}")]
    UnsupportedVersion {
        /// Offset of the version byte.
        offset: usize,
        /// The version found.
        version: u8,
    },
    /// The header sets flag bits this version does not define.
    #[error("unknown header flags {flags:#04x} at offset {offset}")]
    UnknownFlags {
        /// Offset of the flags byte.
        offset: usize,
        /// The flags byte found.
        flags: u8,
    },
    /// A varint is longer than 10 bytes, overflows 64 bits, or is not in its shortest form.
    #[error("malformed varint at offset {offset}")]
    BadVarint {
        /// Offset of the varint's first byte.
        offset: usize,
    },
    /// A byte that is not the tag of an EDM type.
    #[error("unknown EDM type tag {tag} at offset {offset}")]
    BadTypeTag {
        /// Offset of the tag byte.
        offset: usize,
        /// The tag found.
        tag: u8,
    },
    /// An `Edm.Boolean` byte other than 0 or 1.
    #[error("invalid boolean byte {byte:#04x} at offset {offset}")]
    BadBoolean {
        /// Offset of the boolean byte.
        offset: usize,
        /// The byte found.
        byte: u8,
    },
    /// A zigzag `Edm.Int32` whose decoded value does not fit in 32 bits.
    #[error("Int32 out of range (zigzag {zigzag}) at offset {offset}")]
    Int32OutOfRange {
        /// Offset of the varint.
        offset: usize,
        /// The zigzag-encoded value found.
        zigzag: u64,
    },
    /// A length prefix larger than the bytes that remain.
    #[error("length {len} at offset {offset} exceeds the {remaining} byte(s) that remain")]
    LengthTooLarge {
        /// Offset of the length varint.
        offset: usize,
        /// The length found.
        len: u64,
        /// Bytes remaining after the length.
        remaining: usize,
    },
    /// Bytes that are not UTF-8 where text is required.
    #[error("invalid UTF-8 at offset {offset}")]
    InvalidUtf8 {
        /// Offset of the first invalid byte.
        offset: usize,
    },
    /// A property count above the model's limit of custom properties.
    #[error("property count {count} at offset {offset} exceeds the limit of {limit}")]
    TooManyProperties {
        /// Offset of the count varint.
        offset: usize,
        /// The count found.
        count: u64,
        /// The model's limit.
        limit: usize,
    },
    /// The same property name appears twice.
    #[error("duplicate property {name:?} at offset {offset}")]
    DuplicateProperty {
        /// Offset of the second occurrence's name.
        offset: usize,
        /// The repeated name.
        name: String,
    },
    /// An engine key without the 0x00 byte that ends its PartitionKey.
    #[error("engine key has no PartitionKey terminator after offset {offset}")]
    MissingSeparator {
        /// Offset where the PartitionKey starts.
        offset: usize,
    },
    /// Well-formed bytes whose content breaks a rule of the data model.
    #[error("at offset {offset}: {source}")]
    Model {
        /// Offset of the field that breaks the rule.
        offset: usize,
        /// The rule broken.
        source: ModelError,
    },
    /// Bytes left over after a complete encoding.
    #[error("{len} trailing byte(s) at offset {offset}")]
    TrailingBytes {
        /// Offset of the first byte past the encoding.
        offset: usize,
        /// How many bytes are left over.
        len: usize,
    },
}

/// Result alias of the codec layer.
pub type Result<T, E = CodecError> = std::result::Result<T, E>;
