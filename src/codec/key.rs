//! The order-preserving engine key: table id + PartitionKey + 0x00 + RowKey.
//!
//! ```text
//! +----------------+---------------------+------+------------------+
//! | table id (u32, | PartitionKey UTF-8  | 0x00 | RowKey UTF-8     |
//! | big-endian)    | (no 0x00 inside)    |      | (to the end)     |
//! +----------------+---------------------+------+------------------+
//!   4 bytes          0..n bytes            1      0..m bytes
//! ```
//!
//! Valid keys never contain U+0000, so the first 0x00 after the table id ends the
//! PartitionKey, and byte order equals (table id, PartitionKey, RowKey) order with each key
//! compared ordinally by its UTF-8 bytes: a PartitionKey that is a prefix of another sorts
//! first because 0x00 is below every byte of a non-empty continuation.
//!
//! UTF-8 byte order is Unicode code-point order. The service compares UTF-16 code units, which
//! agrees everywhere except between U+E000..=U+FFFF and the supplementary planes
//! (U+10000 and up): code-point order puts U+E000..=U+FFFF first, UTF-16 order puts the
//! surrogate pairs (0xD800..=0xDFFF) first. Keys mixing those two ranges at the same position
//! therefore sort as code points here; every other pair of keys sorts as in the service.
//!
//! ```
//! use strata::codec::key;
//! use strata::model::{PartitionKey, RowKey};
//!
//! let pk = PartitionKey::new("orders").unwrap();
//! let rk = RowKey::new("0001").unwrap();
//! let bytes = key::encode(7, &pk, &rk);
//! assert_eq!(bytes, b"\0\0\0\x07orders\x000001");
//! let (start, end) = key::partition_range(7, &pk);
//! assert!(start <= bytes && bytes < end);
//! assert_eq!(key::decode(&bytes).unwrap(), (7, pk, rk));
//! ```

use super::error::{CodecError, Result};
use super::format::{KEY_SEPARATOR, TABLE_END_MARKER, TABLE_ID_LEN};
use crate::engine::PrefixExtractor;
use crate::model::{PartitionKey, RowKey};

pub use super::format::CATALOG_TABLE_ID;

/// The engine key of the entity `(pk, rk)` in table `table_id`.
#[must_use]
pub fn encode(table_id: u32, pk: &PartitionKey, rk: &RowKey) -> Vec<u8> {
    let mut out = Vec::with_capacity(encoded_len(pk, rk));
    encode_into(table_id, pk, rk, &mut out);
    out
}

/// Appends the engine key of `(pk, rk)` in table `table_id` to `out`.
pub fn encode_into(table_id: u32, pk: &PartitionKey, rk: &RowKey, out: &mut Vec<u8>) {
    out.reserve(encoded_len(pk, rk));
    out.extend_from_slice(&table_id.to_be_bytes());
    out.extend_from_slice(pk.as_str().as_bytes());
    out.push(KEY_SEPARATOR);
    out.extend_from_slice(rk.as_str().as_bytes());
}

/// Length of the engine key of `(pk, rk)`.
#[must_use]
pub fn encoded_len(pk: &PartitionKey, rk: &RowKey) -> usize {
    TABLE_ID_LEN + pk.as_str().len() + 1 + rk.as_str().len()
}

/// Splits an engine key into its table id and validated keys. The PartitionKey ends at the
/// first 0x00; the RowKey is the rest, and both must satisfy the model's key rules.
///
/// # Errors
/// [`CodecError::Truncated`] for fewer than 4 bytes, [`CodecError::MissingSeparator`],
/// [`CodecError::InvalidUtf8`], or [`CodecError::Model`] for a key the model rejects.
pub fn decode(key: &[u8]) -> Result<(u32, PartitionKey, RowKey)> {
    let (table_id, rest) = split_table_id(key)?;
    let Some(separator) = rest.iter().position(|&byte| byte == KEY_SEPARATOR) else {
        return Err(CodecError::MissingSeparator {
            offset: TABLE_ID_LEN,
        });
    };
    let (pk_bytes, rk_with_separator) = rest.split_at(separator);
    let rk_bytes = rk_with_separator.get(1..).unwrap_or_default();
    let rk_offset = TABLE_ID_LEN + separator + 1;
    let pk = PartitionKey::from_borrowed(utf8(pk_bytes, TABLE_ID_LEN)?).map_err(|source| {
        CodecError::Model {
            offset: TABLE_ID_LEN,
            source,
        }
    })?;
    let rk =
        RowKey::from_borrowed(utf8(rk_bytes, rk_offset)?).map_err(|source| CodecError::Model {
            offset: rk_offset,
            source,
        })?;
    Ok((table_id, pk, rk))
}

/// The table id of an engine key, without looking at the rest.
///
/// # Errors
/// [`CodecError::Truncated`] for fewer than 4 bytes.
pub fn decode_table_id(key: &[u8]) -> Result<u32> {
    split_table_id(key).map(|(table_id, _)| table_id)
}

/// The bytes every key of table `table_id` starts with.
#[must_use]
pub const fn table_prefix(table_id: u32) -> [u8; TABLE_ID_LEN] {
    table_id.to_be_bytes()
}

/// `[start, end)` covering every key [`encode`] can produce for table `table_id`. The end is
/// `table id ++ 0xFF` (UTF-8 never contains 0xFF), so the range exists for every `u32` id.
#[must_use]
pub fn table_range(table_id: u32) -> (Vec<u8>, Vec<u8>) {
    let start = table_prefix(table_id).to_vec();
    let mut end = start.clone();
    end.push(TABLE_END_MARKER);
    (start, end)
}

/// The bytes every key of partition `pk` of table `table_id` starts with: the table id, the
/// PartitionKey and its 0x00 terminator. This is what the partition-prefix filter indexes.
#[must_use]
pub fn partition_prefix(table_id: u32, pk: &PartitionKey) -> Vec<u8> {
    let mut out = Vec::with_capacity(TABLE_ID_LEN + pk.as_str().len() + 1);
    out.extend_from_slice(&table_id.to_be_bytes());
    out.extend_from_slice(pk.as_str().as_bytes());
    out.push(KEY_SEPARATOR);
    out
}

/// `[start, end)` covering exactly the keys of partition `pk` of table `table_id`: the
/// partition prefix, and the same bytes with the 0x00 terminator raised to 0x01.
#[must_use]
pub fn partition_range(table_id: u32, pk: &PartitionKey) -> (Vec<u8>, Vec<u8>) {
    let start = partition_prefix(table_id, pk);
    let mut end = start.clone();
    if let Some(last) = end.last_mut() {
        *last = KEY_SEPARATOR + 1;
    }
    (start, end)
}

/// The smallest byte string greater than `key`: `key ++ 0x00`. Turns an inclusive bound into
/// an exclusive one and vice versa (`RowKey gt x` starts at `successor(encode(.., x))`).
#[must_use]
pub fn successor(key: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(key.len() + 1);
    out.extend_from_slice(key);
    out.push(KEY_SEPARATOR);
    out
}

/// The partition prefix (table id, PartitionKey, 0x00) that starts `key`, or `None` when `key`
/// is shorter than a table id or has no 0x00 after it. Never inspects the RowKey.
#[must_use]
pub fn partition_prefix_of(key: &[u8]) -> Option<&[u8]> {
    let rest = key.get(TABLE_ID_LEN..)?;
    let separator = rest.iter().position(|&byte| byte == KEY_SEPARATOR)?;
    key.get(..TABLE_ID_LEN + separator + 1)
}

/// [`PrefixExtractor`] for the engine's partition-prefix filter, using [`partition_prefix_of`].
#[derive(Debug, Clone, Copy, Default)]
pub struct PartitionPrefixExtractor;

impl PrefixExtractor for PartitionPrefixExtractor {
    fn prefix<'k>(&self, key: &'k [u8]) -> Option<&'k [u8]> {
        partition_prefix_of(key)
    }
}

fn split_table_id(key: &[u8]) -> Result<(u32, &[u8])> {
    match key.split_first_chunk::<TABLE_ID_LEN>() {
        Some((id, rest)) => Ok((u32::from_be_bytes(*id), rest)),
        None => Err(CodecError::Truncated {
            offset: 0,
            needed: TABLE_ID_LEN - key.len(),
        }),
    }
}

fn utf8(bytes: &[u8], offset: usize) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|error| CodecError::InvalidUtf8 {
        offset: offset + error.valid_up_to(),
    })
}
