//! Atomic write batches and their encoding (the payload of one WAL record).
//!
//! ```text
//! batch := count:u32 | op * count
//! op    := 0x00 key_len:u32 key                      (delete)
//!        | 0x01 key_len:u32 key value_len:u32 value  (put)
//!        | 0x02 start_len:u32 start end_len:u32 end  (delete range [start, end))
//! ```
//!
//! All integers are little-endian. Operation `i` of a batch written at sequence number `s`
//! takes sequence number `s + i`, so a later operation of the same batch wins over an earlier one.

use super::limits::{
    BATCH_HEADER_BYTES, MAX_KEY_BYTES, MAX_VALUE_BYTES, MIN_OP_BYTES, OP_DELETE, OP_DELETE_RANGE,
    OP_PUT,
};
use super::{Error, Result};

/// One operation of a batch, borrowed from its owner or from encoded bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BatchOp<'a> {
    /// Set `key` to `value`.
    Put {
        /// The key.
        key: &'a [u8],
        /// The value.
        value: &'a [u8],
    },
    /// Delete `key`.
    Delete {
        /// The key.
        key: &'a [u8],
    },
    /// Delete every key in `[start, end)`.
    DeleteRange {
        /// First deleted key.
        start: &'a [u8],
        /// Exclusive end.
        end: &'a [u8],
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum OwnedOp {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    DeleteRange(Vec<u8>, Vec<u8>),
}

impl OwnedOp {
    fn as_op(&self) -> BatchOp<'_> {
        match self {
            Self::Put(key, value) => BatchOp::Put { key, value },
            Self::Delete(key) => BatchOp::Delete { key },
            Self::DeleteRange(start, end) => BatchOp::DeleteRange { start, end },
        }
    }
}

/// Puts, deletes and range deletes applied atomically and in isolation by `Engine::write`.
///
/// ```
/// use strata::engine::WriteBatch;
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1");
/// batch.delete(b"b");
/// batch.delete_range(b"c", b"d");
/// assert_eq!(batch.len(), 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    ops: Vec<OwnedOp>,
    encoded_len: usize,
}

/// A batch encoding that failed to decode: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad write batch encoding at byte {pos}: {what}")]
pub struct BatchDecodeError {
    /// Byte position inside the encoded batch.
    pub pos: usize,
    /// What was wrong.
    pub what: String,
}

impl WriteBatch {
    /// An empty batch.
    #[must_use]
    pub fn new() -> Self {
        Self {
            ops: Vec::new(),
            encoded_len: BATCH_HEADER_BYTES,
        }
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> &mut Self {
        self.encoded_len += 1 + 4 + key.len() + 4 + value.len();
        self.ops.push(OwnedOp::Put(key.to_vec(), value.to_vec()));
        self
    }

    /// Deletes `key`.
    pub fn delete(&mut self, key: &[u8]) -> &mut Self {
        self.encoded_len += 1 + 4 + key.len();
        self.ops.push(OwnedOp::Delete(key.to_vec()));
        self
    }

    /// Deletes every key `k` with `start <= k < end` (one record, whatever the range holds).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) -> &mut Self {
        self.encoded_len += 1 + 4 + start.len() + 4 + end.len();
        self.ops
            .push(OwnedOp::DeleteRange(start.to_vec(), end.to_vec()));
        self
    }

    /// Number of operations.
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// True when the batch holds no operation.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Size of the encoded batch in bytes.
    #[must_use]
    pub fn size(&self) -> usize {
        self.encoded_len.max(BATCH_HEADER_BYTES)
    }

    /// Removes every operation.
    pub fn clear(&mut self) {
        self.ops.clear();
        self.encoded_len = BATCH_HEADER_BYTES;
    }

    /// The operations in order.
    pub fn ops(&self) -> impl Iterator<Item = BatchOp<'_>> {
        self.ops.iter().map(OwnedOp::as_op)
    }

    /// Checks every operation against the engine limits; the error names the operation index.
    pub fn validate(&self) -> Result<()> {
        for (index, op) in self.ops().enumerate() {
            let invalid = |what: String| {
                Err(Error::InvalidArgument(format!(
                    "batch operation {index}: {what}"
                )))
            };
            match op {
                BatchOp::Put { key, value } => {
                    check_key(index, key)?;
                    if value.len() > MAX_VALUE_BYTES {
                        return invalid(format!(
                            "value of {} bytes exceeds the limit of {MAX_VALUE_BYTES}",
                            value.len()
                        ));
                    }
                }
                BatchOp::Delete { key } => check_key(index, key)?,
                BatchOp::DeleteRange { start, end } => {
                    check_key(index, start)?;
                    check_key(index, end)?;
                    if start >= end {
                        return invalid("range delete with start >= end (empty range)".to_owned());
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends the encoding of the batch to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.size());
        out.extend_from_slice(
            &u32::try_from(self.ops.len())
                .unwrap_or(u32::MAX)
                .to_le_bytes(),
        );
        for op in self.ops() {
            match op {
                BatchOp::Delete { key } => {
                    out.push(OP_DELETE);
                    put_bytes(out, key);
                }
                BatchOp::Put { key, value } => {
                    out.push(OP_PUT);
                    put_bytes(out, key);
                    put_bytes(out, value);
                }
                BatchOp::DeleteRange { start, end } => {
                    out.push(OP_DELETE_RANGE);
                    put_bytes(out, start);
                    put_bytes(out, end);
                }
            }
        }
    }

    /// Decodes an owned batch from its encoding (total over arbitrary bytes).
    pub fn decode(bytes: &[u8]) -> Result<Self, BatchDecodeError> {
        let mut batch = Self::new();
        for op in decode_ops(bytes)? {
            match op {
                BatchOp::Put { key, value } => batch.put(key, value),
                BatchOp::Delete { key } => batch.delete(key),
                BatchOp::DeleteRange { start, end } => batch.delete_range(start, end),
            };
        }
        Ok(batch)
    }
}

fn check_key(index: usize, key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_BYTES {
        return Err(Error::InvalidArgument(format!(
            "batch operation {index}: key of {} bytes exceeds the limit of {MAX_KEY_BYTES}",
            key.len()
        )));
    }
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Lengths are bounded by `validate` (far below u32::MAX) before any batch is encoded for the WAL.
    out.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// Decodes the operations of an encoded batch, borrowing from `bytes`. Total: never panics,
/// never allocates more than `bytes` justifies.
pub fn decode_ops(bytes: &[u8]) -> Result<Vec<BatchOp<'_>>, BatchDecodeError> {
    let mut reader = Reader { bytes, pos: 0 };
    let count = reader.u32("operation count")? as usize;
    let room = bytes.len().saturating_sub(BATCH_HEADER_BYTES) / MIN_OP_BYTES;
    if count > room {
        return Err(reader.error(format!("claims {count} operations but only {room} fit")));
    }
    let mut ops = Vec::with_capacity(count);
    for _ in 0..count {
        let tag_pos = reader.pos;
        let tag = reader
            .take(1, "operation tag")?
            .first()
            .copied()
            .unwrap_or(u8::MAX);
        let op = match tag {
            OP_DELETE => BatchOp::Delete {
                key: reader.bytes_field("key")?,
            },
            OP_PUT => {
                let key = reader.bytes_field("key")?;
                BatchOp::Put {
                    key,
                    value: reader.bytes_field("value")?,
                }
            }
            OP_DELETE_RANGE => {
                let start = reader.bytes_field("range start")?;
                BatchOp::DeleteRange {
                    start,
                    end: reader.bytes_field("range end")?,
                }
            }
            other => {
                return Err(BatchDecodeError {
                    pos: tag_pos,
                    what: format!("unknown operation tag {other}"),
                });
            }
        };
        ops.push(op);
    }
    if reader.pos != bytes.len() {
        return Err(reader.error(format!("{} trailing bytes", bytes.len() - reader.pos)));
    }
    Ok(ops)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn error(&self, what: String) -> BatchDecodeError {
        BatchDecodeError {
            pos: self.pos,
            what,
        }
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], BatchDecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&end| end <= self.bytes.len());
        match end.and_then(|end| self.bytes.get(self.pos..end)) {
            Some(slice) => {
                self.pos += n;
                Ok(slice)
            }
            None => Err(self.error(format!(
                "{what}: needs {n} bytes, {} left",
                self.bytes.len().saturating_sub(self.pos)
            ))),
        }
    }

    fn u32(&mut self, what: &str) -> Result<u32, BatchDecodeError> {
        let raw = self.take(4, what)?;
        let mut buf = [0u8; 4];
        buf.copy_from_slice(raw);
        Ok(u32::from_le_bytes(buf))
    }

    fn bytes_field(&mut self, what: &str) -> Result<&'a [u8], BatchDecodeError> {
        let len = self.u32(what)? as usize;
        self.take(len, what)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn batch_encoding_round_trips_every_operation_kind() {
        let mut batch = WriteBatch::new();
        batch.put(b"k", b"v").delete(b"").delete_range(b"a", b"z");
        let mut bytes = Vec::new();
        batch.encode(&mut bytes);
        assert_eq!(bytes.len(), batch.size());
        assert_eq!(WriteBatch::decode(&bytes).unwrap(), batch);
    }

    #[test]
    fn batch_decode_of_truncated_bytes_is_rejected_with_position() {
        let mut batch = WriteBatch::new();
        batch.put(b"key", b"value");
        let mut bytes = Vec::new();
        batch.encode(&mut bytes);
        for cut in 0..bytes.len() {
            assert!(decode_ops(&bytes[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn batch_decode_huge_count_is_rejected_without_allocating() {
        let err = decode_ops(&u32::MAX.to_le_bytes()).unwrap_err();
        assert_eq!(err.pos, 4);
    }

    #[test]
    fn batch_decode_unknown_tag_names_its_position() {
        let bytes = [1, 0, 0, 0, 7, 0, 0, 0, 0];
        assert_eq!(decode_ops(&bytes).unwrap_err().pos, 4);
    }

    #[test]
    fn batch_validate_empty_range_is_rejected_with_index() {
        let mut batch = WriteBatch::new();
        batch.put(b"a", b"").delete_range(b"b", b"b");
        let err = batch.validate().unwrap_err().to_string();
        assert!(err.contains("operation 1"), "{err}");
    }

    proptest! {
        #[test]
        fn batch_decode_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_ops(&bytes);
        }
    }
}
