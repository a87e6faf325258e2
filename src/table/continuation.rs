//! Continuation tokens: where the next page of a query starts.

use std::fmt;
use std::str::FromStr;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

use super::error::TableError;
use super::limits::{TOKEN_HEADER_LEN, TOKEN_MAX_TEXT_LEN, TOKEN_VERSION};
use crate::model::{PartitionKey, RowKey};

/// Where a query resumes: the keys of the first entity not yet examined. Feeding it back
/// continues exactly after the last entity returned. Plain data, valid after a restart.
///
/// Its text form is opaque, versioned and URL-safe: base64url (no padding) of
///
/// ```text
/// +---------+---------------------+----------------+---------------+
/// | version | PartitionKey length | PartitionKey   | RowKey        |
/// | u8 = 1  | u32 big-endian      | UTF-8          | UTF-8 (rest)  |
/// +---------+---------------------+----------------+---------------+
/// ```
///
/// ```
/// use strata::ContinuationToken;
/// let token = ContinuationToken {
///     next_partition_key: "2024".into(),
///     next_row_key: "0042".into(),
/// };
/// let text = token.to_string();
/// assert_eq!(text.parse::<ContinuationToken>()?, token);
/// # Ok::<(), strata::TableError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContinuationToken {
    /// PartitionKey of the next entity to examine.
    pub next_partition_key: String,
    /// RowKey of the next entity to examine.
    pub next_row_key: String,
}

impl ContinuationToken {
    /// The token's keys, validated.
    ///
    /// # Errors
    /// [`TableError::InvalidContinuationToken`] if a key breaks the key rules.
    pub fn keys(&self) -> Result<(PartitionKey, RowKey), TableError> {
        let invalid = |reason| TableError::InvalidContinuationToken {
            token: format!("{}/{}", self.next_partition_key, self.next_row_key)
                .chars()
                .take(TOKEN_MAX_TEXT_LEN)
                .collect(),
            reason,
        };
        let pk = PartitionKey::new(self.next_partition_key.as_str())
            .map_err(|_| invalid("its PartitionKey is not a valid key"))?;
        let rk = RowKey::new(self.next_row_key.as_str())
            .map_err(|_| invalid("its RowKey is not a valid key"))?;
        Ok((pk, rk))
    }

    /// Parses the text form.
    ///
    /// # Errors
    /// [`TableError::InvalidContinuationToken`] for text this layer did not write.
    pub fn parse(text: &str) -> Result<Self, TableError> {
        let invalid = |reason| TableError::InvalidContinuationToken {
            token: text.chars().take(TOKEN_MAX_TEXT_LEN).collect(),
            reason,
        };
        if text.len() > TOKEN_MAX_TEXT_LEN {
            return Err(invalid("longer than any token this layer writes"));
        }
        let bytes = URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| invalid("not base64url"))?;
        let (&version, rest) = bytes.split_first().ok_or_else(|| invalid("empty"))?;
        if version != TOKEN_VERSION {
            return Err(invalid("unknown version"));
        }
        let (len, rest) = rest
            .split_first_chunk::<4>()
            .ok_or_else(|| invalid("truncated PartitionKey length"))?;
        let len = usize::try_from(u32::from_be_bytes(*len)).unwrap_or(usize::MAX);
        if len > rest.len() {
            return Err(invalid("PartitionKey length past the end"));
        }
        let (pk, rk) = rest.split_at(len);
        let token = Self {
            next_partition_key: String::from_utf8(pk.to_vec())
                .map_err(|_| invalid("PartitionKey is not UTF-8"))?,
            next_row_key: String::from_utf8(rk.to_vec())
                .map_err(|_| invalid("RowKey is not UTF-8"))?,
        };
        token.keys()?;
        Ok(token)
    }
}

impl fmt::Display for ContinuationToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pk = self.next_partition_key.as_bytes();
        let rk = self.next_row_key.as_bytes();
        // A key over 4 GiB cannot be valid; saturating keeps formatting total, and parsing
        // rejects the result.
        let len = u32::try_from(pk.len()).unwrap_or(u32::MAX);
        let mut bytes = Vec::with_capacity(TOKEN_HEADER_LEN + pk.len() + rk.len());
        bytes.push(TOKEN_VERSION);
        bytes.extend_from_slice(&len.to_be_bytes());
        bytes.extend_from_slice(pk);
        bytes.extend_from_slice(rk);
        f.write_str(&URL_SAFE_NO_PAD.encode(bytes))
    }
}

impl FromStr for ContinuationToken {
    type Err = TableError;

    fn from_str(text: &str) -> Result<Self, TableError> {
        Self::parse(text)
    }
}
