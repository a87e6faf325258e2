//! Validated names: tables, keys and properties.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

use compact_str::CompactString;

use super::error::{KeyKind, excerpt};
use super::limits::{
    KEY_MAX_BYTES, PROPERTY_NAME_MAX_LEN, RESERVED_PROPERTY_NAMES, RESERVED_TABLE_NAME,
    TABLE_NAME_MAX_LEN, TABLE_NAME_MIN_LEN, UTF16_UNIT_BYTES,
};
use super::{ModelError, Result};

/// Size of `s` in bytes when encoded as UTF-16, the unit in which the service limits strings.
pub(crate) fn utf16_bytes(s: &str) -> usize {
    // ASCII (nearly every name and most strings): one byte is one UTF-16 unit, and
    // `is_ascii` tests a word at a time.
    if s.is_ascii() {
        return s.len() * UTF16_UNIT_BYTES;
    }
    // Counted on the UTF-8 bytes without decoding (a loop the compiler vectorises): every
    // char has one leading (non-continuation) byte and is one UTF-16 unit, except the 4-byte
    // ones (lead byte >= 0xF0), which are a surrogate pair.
    let units: usize = s
        .bytes()
        .map(|b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0))
        .sum();
    units * UTF16_UNIT_BYTES
}

/// A table name: `^[A-Za-z][A-Za-z0-9]{2,62}$`, not `tables`; compares and hashes
/// case-insensitively while keeping the spelling it was created with.
///
/// ```
/// use strata::model::TableName;
/// let name = TableName::new("Customers2024")?;
/// assert_eq!(name, TableName::new("CUSTOMERS2024")?);
/// assert_eq!(name.as_str(), "Customers2024");
/// assert!(TableName::new("tables").is_err());
/// # Ok::<(), strata::model::ModelError>(())
/// ```
// Names up to 24 bytes are stored inline: resolving a table per request allocates nothing.
#[derive(Debug, Clone)]
pub struct TableName(CompactString);

impl TableName {
    /// Validates `name` against the table name rules.
    ///
    /// # Errors
    /// [`ModelError::TableNameInvalid`] for a name outside the pattern,
    /// [`ModelError::TableNameLength`] for one shorter than 3 or longer than 63 characters,
    /// [`ModelError::TableNameReserved`] for `tables` in any case.
    pub fn new(name: impl AsRef<str>) -> Result<Self> {
        let name = name.as_ref();
        let invalid = |reason| ModelError::TableNameInvalid {
            name: excerpt(name),
            reason,
        };
        let mut chars = name.chars();
        match chars.next() {
            None => return Err(invalid("is empty")),
            Some(c) if !c.is_ascii_alphabetic() => {
                return Err(invalid("does not start with an ASCII letter"));
            }
            Some(_) => {}
        }
        if chars.any(|c| !c.is_ascii_alphanumeric()) {
            return Err(invalid(
                "contains a character other than ASCII letters and digits",
            ));
        }
        // Only ASCII remains, so the byte length is the character count.
        if !(TABLE_NAME_MIN_LEN..=TABLE_NAME_MAX_LEN).contains(&name.len()) {
            return Err(ModelError::TableNameLength {
                name: excerpt(name),
                len: name.len(),
            });
        }
        if name.eq_ignore_ascii_case(RESERVED_TABLE_NAME) {
            return Err(ModelError::TableNameReserved {
                name: name.to_owned(),
            });
        }
        Ok(Self(CompactString::new(name)))
    }

    /// The name as it was spelled at creation.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The name in ASCII lower case: the form under which it is unique.
    #[must_use]
    pub fn to_folded(&self) -> String {
        self.0.as_str().to_ascii_lowercase()
    }

    /// Takes the name out, keeping its spelling.
    #[must_use]
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl PartialEq for TableName {
    fn eq(&self, other: &Self) -> bool {
        self.0.eq_ignore_ascii_case(&other.0)
    }
}

impl Eq for TableName {}

impl Hash for TableName {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Consistent with `eq`: equal names fold to the same bytes.
        for b in self.0.bytes() {
            state.write_u8(b.to_ascii_lowercase());
        }
        state.write_usize(self.0.len());
    }
}

impl Ord for TableName {
    fn cmp(&self, other: &Self) -> Ordering {
        // Consistent with `eq`: ordered by the folded spelling.
        let other = other.0.bytes().map(|b| b.to_ascii_lowercase());
        self.0.bytes().map(|b| b.to_ascii_lowercase()).cmp(other)
    }
}

impl PartialOrd for TableName {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for TableName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for TableName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// Checks a PartitionKey or RowKey: forbidden characters first (they name the exact
/// problem), then the size.
fn validate_key(which: KeyKind, key: &str) -> Result<()> {
    // Nearly every key is plain printable ASCII: one pass over the bytes with no early exit
    // (so the compiler can vectorise it) settles both the characters and the size.
    let unusual = key.bytes().fold(false, |acc, b| {
        acc | UNUSUAL_KEY_BYTE
            .get(usize::from(b))
            .copied()
            .unwrap_or(true)
    });
    if !unusual {
        let len_bytes = key.len() * UTF16_UNIT_BYTES;
        if len_bytes > KEY_MAX_BYTES {
            return Err(ModelError::KeyTooLarge { which, len_bytes });
        }
        return Ok(());
    }
    // Every forbidden char is ASCII or a C1 control, whose UTF-8 form starts with 0xC2; a key
    // without such bytes (nearly all of them) needs no decoding.
    let suspect = |b: &u8| b.is_ascii_control() || matches!(b, b'/' | b'\\' | b'#' | b'?' | 0xC2);
    if key.as_bytes().iter().any(suspect)
        && let Some((index, ch)) = key.char_indices().find(|&(_, c)| is_forbidden_key_char(c))
    {
        return Err(ModelError::KeyInvalidChar {
            which,
            key: excerpt(key),
            ch,
            index,
        });
    }
    let len_bytes = utf16_bytes(key);
    if len_bytes > KEY_MAX_BYTES {
        return Err(ModelError::KeyTooLarge { which, len_bytes });
    }
    Ok(())
}

/// Per byte: whether a key holding it needs the full check (ASCII controls, DEL, non-ASCII,
/// `/ \\ # ?`); a table lookup is cheaper per byte than the comparisons.
static UNUSUAL_KEY_BYTE: [bool; 256] = unusual_key_bytes();

#[expect(
    clippy::indexing_slicing,
    reason = "const context, where `get_mut` is unavailable; the loop bounds b below 256"
)]
const fn unusual_key_bytes() -> [bool; 256] {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b < 0x20 || b >= 0x7F || matches!(b as u8, b'/' | b'\\' | b'#' | b'?');
        b += 1;
    }
    table
}

/// Whether `c` may not appear in a key: `/ \ # ?` and the C0 and C1 control ranges
/// (U+0000–U+001F, U+007F–U+009F). Excluding U+0000 is what lets the codec use `0x00` as the
/// separator between PartitionKey and RowKey.
const fn is_forbidden_key_char(c: char) -> bool {
    matches!(c, '/' | '\\' | '#' | '?' | '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
}

macro_rules! key_type {
    ($(#[$doc:meta])* $ty:ident, $kind:expr) => {
        $(#[$doc])*
        // Short keys (up to 24 bytes) are stored inline: reading an entity back allocates
        // nothing for them. Equality, order and hash are those of the key's `str`.
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
        pub struct $ty(CompactString);

        impl $ty {
            /// Validates `key`: none of `/ \ # ?` nor control characters (U+0000–U+001F,
            /// U+007F–U+009F), and at most 1024 bytes counted as UTF-16 code units × 2 (as the
            /// service counts). The empty string is a valid key.
            ///
            /// # Errors
            /// [`ModelError::KeyInvalidChar`] or [`ModelError::KeyTooLarge`].
            pub fn new(key: impl Into<String>) -> Result<Self> {
                let key = key.into();
                validate_key($kind, &key)?;
                Ok(Self(CompactString::from(key)))
            }

            /// As [`Self::new`] for borrowed text: a short key is copied inline, with no
            /// allocation at all.
            pub(crate) fn from_borrowed(key: &str) -> Result<Self> {
                validate_key($kind, key)?;
                Ok(Self(CompactString::new(key)))
            }

            /// The key's text.
            #[must_use]
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// Takes the key's text out.
            #[must_use]
            pub fn into_string(self) -> String {
                self.0.into_string()
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $ty {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $ty {
            fn borrow(&self) -> &str {
                &self.0
            }
        }
    };
}

key_type!(
    /// A PartitionKey: at most 1 KiB (UTF-16 code units × 2), none of `/ \ # ?` nor control
    /// characters; empty is valid.
    ///
    /// Keys order by code point (UTF-8 byte order, the order of the engine's keys). The
    /// service orders by UTF-16 code unit; the two differ only between U+E000..=U+FFFF and
    /// the supplementary planes (above U+FFFF), which sort first in UTF-16.
    ///
    /// ```
    /// use strata::model::PartitionKey;
    /// assert_eq!(PartitionKey::new("users")?.as_str(), "users");
    /// assert!(PartitionKey::new("a/b").is_err());
    /// # Ok::<(), strata::model::ModelError>(())
    /// ```
    PartitionKey,
    KeyKind::PartitionKey
);

key_type!(
    /// A RowKey: the same rules as [`PartitionKey`].
    ///
    /// ```
    /// use strata::model::RowKey;
    /// assert!(RowKey::new("").is_ok());
    /// assert!(RowKey::new("a#b").is_err());
    /// ```
    RowKey,
    KeyKind::RowKey
);

/// A custom property name: a C# identifier of 1..=255 characters, not a system property name.
///
/// "C# identifier" here is: a letter (Unicode alphabetic) or `_` first, then letters, digits
/// (Unicode alphanumeric) or `_`; so no `-`, `.`, space or other punctuation. Rust's Unicode
/// classes are a slight superset of C#'s (they also admit e.g. `²`, category No), which is
/// accepted rather than pulling in a Unicode category table. Length is counted in UTF-16 code
/// units, the service's characters. Names are case-sensitive.
///
/// ```
/// use strata::model::PropertyName;
/// assert_eq!(PropertyName::new("_Price2")?.as_str(), "_Price2");
/// assert!(PropertyName::new("first-name").is_err());
/// assert!(PropertyName::new("Timestamp").is_err());
/// # Ok::<(), strata::model::ModelError>(())
/// ```
// Names of up to 24 bytes (nearly all) are stored inline, so decoding an entity allocates
// nothing for them. Equality, order and hash are those of the name's `str`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PropertyName(CompactString);

impl PropertyName {
    /// Validates `name` against the property name rules.
    ///
    /// # Errors
    /// [`ModelError::PropertyNameInvalid`], [`ModelError::PropertyNameTooLong`] or
    /// [`ModelError::PropertyNameReserved`].
    pub fn new(name: impl Into<String>) -> Result<Self> {
        let name = name.into();
        if Self::is_plain_ascii(&name) {
            return Ok(Self(CompactString::from(name)));
        }
        let invalid = |reason| ModelError::PropertyNameInvalid {
            name: excerpt(&name),
            reason,
        };
        let mut chars = name.chars();
        match chars.next() {
            None => return Err(invalid("is empty")),
            Some(c) if !(c == '_' || c.is_alphabetic()) => {
                return Err(invalid("does not start with a letter or '_'"));
            }
            Some(_) => {}
        }
        if chars.any(|c| !(c == '_' || c.is_alphanumeric())) {
            return Err(invalid(
                "contains a character other than letters, digits and '_'",
            ));
        }
        let len = utf16_bytes(&name) / UTF16_UNIT_BYTES;
        if len > PROPERTY_NAME_MAX_LEN {
            return Err(ModelError::PropertyNameTooLong {
                name: excerpt(&name),
                len,
            });
        }
        if Self::is_reserved(&name) {
            return Err(ModelError::PropertyNameReserved { name });
        }
        Ok(Self(CompactString::from(name)))
    }

    /// `name` validated like [`Self::new`], allocating only once it is known to be valid in
    /// the common case (a decoder hands over a borrowed, UTF-8-checked name).
    pub(crate) fn from_borrowed(name: &str) -> Result<Self> {
        if Self::is_plain_ascii(name) {
            return Ok(Self(CompactString::new(name)));
        }
        Self::new(name)
    }

    /// Checks `name` against the property name rules without keeping it: the same result
    /// as [`Self::from_borrowed`], for an encoder that writes the borrowed text itself.
    ///
    /// # Errors
    /// As [`Self::new`].
    pub(crate) fn check(name: &str) -> Result<()> {
        if Self::is_plain_ascii(name) {
            return Ok(());
        }
        Self::new(name).map(drop)
    }

    /// A name read back from a row this crate encoded (and a checksum kept): it passed the
    /// naming rules when it was written, so they are not checked again. Only for that path.
    pub(crate) fn from_stored(name: &str) -> Self {
        Self(CompactString::new(name))
    }

    /// Fast path of the naming rules for ASCII names: for ASCII, Unicode alphabetic and
    /// alphanumeric are their ASCII forms and one byte is one UTF-16 unit. `false` means "take
    /// the full check", which also produces the error.
    fn is_plain_ascii(name: &str) -> bool {
        let bytes = name.as_bytes();
        matches!(bytes.first(), Some(&b) if b == b'_' || b.is_ascii_alphabetic())
            && bytes.len() <= PROPERTY_NAME_MAX_LEN
            && bytes
                .iter()
                .all(|&b| b == b'_' || b.is_ascii_alphanumeric())
            && !Self::is_reserved(name)
    }

    /// Whether `name` is a system property name (`PartitionKey`, `RowKey`, `Timestamp`),
    /// which cannot name a custom property.
    #[must_use]
    pub fn is_reserved(name: &str) -> bool {
        RESERVED_PROPERTY_NAMES.contains(&name)
    }

    /// The name's text.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Takes the name's text out.
    #[must_use]
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl fmt::Display for PropertyName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for PropertyName {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for PropertyName {
    fn borrow(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::PropertyName;

    #[test]
    fn a_checked_property_name_passes_or_fails_as_a_built_one() {
        let names = [
            "N".to_owned(),
            "_a1".to_owned(),
            "Größe".to_owned(),
            "名前".to_owned(),
            String::new(),
            "1a".to_owned(),
            "a-b".to_owned(),
            "a b".to_owned(),
            "é-".to_owned(),
            "PartitionKey".to_owned(),
            "RowKey".to_owned(),
            "Timestamp".to_owned(),
            "a".repeat(255),
            "a".repeat(256),
            "é".repeat(255),
            "é".repeat(256),
            "𝒜".repeat(128),
        ];
        for name in &names {
            let checked = PropertyName::check(name).map_err(|error| error.to_string());
            let built = PropertyName::new(name.as_str())
                .map(drop)
                .map_err(|error| error.to_string());
            assert_eq!(checked, built, "{name:.40}");
        }
    }
}
