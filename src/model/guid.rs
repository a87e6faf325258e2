//! `Edm.Guid`, and its hyphenated wire form.

use std::fmt;

use super::{EdmType, ModelError, Result};

/// A GUID held as its 16 bytes in the textual (big-endian, RFC 4122) order, so that
/// `00112233-4455-6677-8899-aabbccddeeff` is bytes `00 11 22 .. ff`.
///
/// ```
/// use strata::model::Guid;
/// let g = Guid::parse("00112233-4455-6677-8899-AABBCCDDEEFF")?;
/// assert_eq!(g.0[15], 0xff);
/// assert_eq!(g.to_string(), "00112233-4455-6677-8899-aabbccddeeff");
/// # Ok::<(), strata::model::ModelError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Guid(pub [u8; 16]);

/// Byte offsets of the hyphens in the 36-character form (8-4-4-4-12 hex digits).
const HYPHEN_OFFSETS: [usize; 4] = [8, 13, 18, 23];
/// Length of the hyphenated form.
const TEXT_LEN: usize = 36;

impl Guid {
    /// Parses the 36-character hyphenated form `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, hex
    /// digits in either case.
    ///
    /// # Errors
    /// [`ModelError::Parse`] for any other text.
    pub fn parse(input: &str) -> Result<Self> {
        let fail = |reason| ModelError::parse(EdmType::Guid, input, reason);
        if input.len() != TEXT_LEN {
            return Err(fail("not 36 characters long"));
        }
        let mut bytes = [0_u8; 16];
        let mut nibbles = 0_usize;
        for (offset, c) in input.bytes().enumerate() {
            if HYPHEN_OFFSETS.contains(&offset) {
                if c != b'-' {
                    return Err(fail("expected '-' between groups 8-4-4-4-12"));
                }
                continue;
            }
            let nibble = hex_value(c).ok_or_else(|| fail("contains a non-hex digit"))?;
            let byte = bytes
                .get_mut(nibbles / 2)
                .ok_or_else(|| fail("too many hex digits"))?;
            *byte = (*byte << 4) | nibble;
            nibbles += 1;
        }
        Ok(Self(bytes))
    }
}

impl std::str::FromStr for Guid {
    type Err = ModelError;

    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

/// The value of an ASCII hex digit.
const fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, byte) in self.0.iter().enumerate() {
            // Hyphens go before bytes 4, 6, 8 and 10 (after 8, 12, 16, 20 hex digits).
            if matches!(index, 4 | 6 | 8 | 10) {
                f.write_str("-")?;
            }
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}
