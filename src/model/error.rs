//! Errors of the model layer.

use super::EdmType;
use super::limits::ERROR_INPUT_MAX_CHARS;

/// Which of the two keys of an entity an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// The `PartitionKey`.
    PartitionKey,
    /// The `RowKey`.
    RowKey,
}

impl KeyKind {
    /// The system property name of this key.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::PartitionKey => "PartitionKey",
            Self::RowKey => "RowKey",
        }
    }
}

impl std::fmt::Display for KeyKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A violated rule of the data model, naming the rule and the offending input.
///
/// Inputs kept in an error are cut to their first
/// [`ERROR_INPUT_MAX_CHARS`](super::limits::ERROR_INPUT_MAX_CHARS) characters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// A table name does not match `^[A-Za-z][A-Za-z0-9]{2,62}$`.
    #[error("table name {name:?} is invalid: {reason}")]
    TableNameInvalid {
        /// The offending name.
        name: String,
        /// Which part of the rule it breaks.
        reason: &'static str,
    },
    /// The table name is shorter than 3 or longer than 63 characters.
    #[error("table name {name:?} is {len} characters long, not 3 to 63")]
    TableNameLength {
        /// The offending name (cut short).
        name: String,
        /// Its length in characters.
        len: usize,
    },
    /// The table name is the reserved `tables` (in any case).
    #[error("table name {name:?} is reserved")]
    TableNameReserved {
        /// The offending name, as given.
        name: String,
    },
    /// A key contains a forbidden character (`/ \ # ?`, U+0000–U+001F or U+007F–U+009F).
    #[error("{which} {key:?} contains forbidden character {ch:?} at byte offset {index}")]
    KeyInvalidChar {
        /// Which key.
        which: KeyKind,
        /// The offending key.
        key: String,
        /// The forbidden character.
        ch: char,
        /// Its byte offset in the key's UTF-8 form.
        index: usize,
    },
    /// A key is larger than 1 KiB (UTF-16 code units × 2).
    #[error("{which} is {len_bytes} bytes as UTF-16, over the 1024-byte limit")]
    KeyTooLarge {
        /// Which key.
        which: KeyKind,
        /// Its size in bytes as UTF-16.
        len_bytes: usize,
    },
    /// A property name is empty or not a C# identifier.
    #[error("property name {name:?} is invalid: {reason}")]
    PropertyNameInvalid {
        /// The offending name.
        name: String,
        /// Which part of the rule it breaks.
        reason: &'static str,
    },
    /// A property name is longer than 255 characters.
    #[error("property name of {len} characters is over the 255-character limit: {name:?}")]
    PropertyNameTooLong {
        /// The offending name (cut short).
        name: String,
        /// Its length in UTF-16 code units.
        len: usize,
    },
    /// A property name is one of the system property names.
    #[error("property name {name:?} is reserved for a system property")]
    PropertyNameReserved {
        /// The offending name.
        name: String,
    },
    /// A property name occurs twice in one entity.
    #[error("property {name:?} is specified more than once")]
    DuplicateProperty {
        /// The repeated name.
        name: String,
    },
    /// An `Edm.String` is larger than 64 KiB (UTF-16 code units × 2).
    #[error("string value is {len_bytes} bytes as UTF-16, over the 65536-byte limit")]
    StringTooLarge {
        /// Its size in bytes as UTF-16.
        len_bytes: usize,
    },
    /// An `Edm.Binary` is larger than 64 KiB.
    #[error("binary value is {len_bytes} bytes, over the 65536-byte limit")]
    BinaryTooLarge {
        /// Its size in bytes.
        len_bytes: usize,
    },
    /// A DateTime lies outside 1601-01-01T00:00:00Z ..= 9999-12-31T23:59:59.9999999Z.
    #[error("DateTime of {ticks} ticks is outside 1601-01-01 ..= 9999-12-31T23:59:59.9999999Z")]
    DateTimeOutOfRange {
        /// The offending instant in 100 ns ticks since 0001-01-01 (saturated if even that
        /// does not fit).
        ticks: i64,
    },
    /// An entity would have more than 252 custom properties.
    #[error("entity would have {count} custom properties, over the limit of 252")]
    TooManyProperties {
        /// The property count it would have.
        count: usize,
    },
    /// An entity would be larger than 1 MiB (see [`Entity::size`](super::Entity::size)).
    #[error("entity would be {size} bytes, over the 1048576-byte limit")]
    EntityTooLarge {
        /// The size it would have.
        size: usize,
    },
    /// A type name is not one of the eight `Edm.*` names.
    #[error("unknown EDM type name {name:?}")]
    UnknownEdmType {
        /// The offending name.
        name: String,
    },
    /// The wire form of a value does not parse as its type.
    #[error("{input:?} is not a valid {}: {reason}", what.name())]
    Parse {
        /// The type it was parsed as.
        what: EdmType,
        /// The offending text.
        input: String,
        /// What is wrong with it.
        reason: &'static str,
    },
}

impl ModelError {
    /// The Table service error code this error corresponds to, so that every layer above maps
    /// model errors 1:1 onto the service's responses (all are HTTP 400).
    #[must_use]
    pub const fn azure_code(&self) -> &'static str {
        match self {
            // What the service (and Azurite) answer to a create with a bad table name.
            Self::TableNameInvalid { .. } | Self::TableNameReserved { .. } => "InvalidResourceName",
            // The SDKs turn this code (with the service's sentence) into their own name-rule error.
            Self::TableNameLength { .. } => "OutOfRangeInput",
            // The service has no dedicated code for these: a forbidden key character or an
            // instant outside the range is an input out of range.
            Self::KeyInvalidChar { .. } | Self::DateTimeOutOfRange { .. } => "OutOfRangeInput",
            Self::KeyTooLarge { .. } => "KeyValueTooLarge",
            Self::PropertyNameInvalid { .. } | Self::PropertyNameReserved { .. } => {
                "PropertyNameInvalid"
            }
            Self::PropertyNameTooLong { .. } => "PropertyNameTooLong",
            Self::DuplicateProperty { .. } => "DuplicatePropertiesSpecified",
            Self::StringTooLarge { .. } | Self::BinaryTooLarge { .. } => "PropertyValueTooLarge",
            Self::TooManyProperties { .. } => "TooManyProperties",
            Self::EntityTooLarge { .. } => "EntityTooLarge",
            Self::UnknownEdmType { .. } => "InvalidValueType",
            Self::Parse { .. } => "InvalidInput",
        }
    }

    /// A `Parse` error for `input` read as `what`.
    pub(crate) fn parse(what: EdmType, input: &str, reason: &'static str) -> Self {
        Self::Parse {
            what,
            input: excerpt(input),
            reason,
        }
    }
}

/// The first [`ERROR_INPUT_MAX_CHARS`] characters of `input`, to keep in an error.
pub(crate) fn excerpt(input: &str) -> String {
    match input.char_indices().nth(ERROR_INPUT_MAX_CHARS) {
        Some((cut, _)) => input.get(..cut).unwrap_or(input).to_owned(),
        None => input.to_owned(),
    }
}
