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

/// Puts, deletes and range deletes applied atomically and in isolation by `Engine::write`.
///
/// The operations live in one buffer, already in their encoded form (the `op` rows above)
/// after room for the `count` header: adding one copies its bytes once and allocates only
/// when the buffer grows; encoding the batch for the WAL is one copy, or none when the batch
/// is given up ([`WriteBatch::into_encoded`]), which fills in the header and hands the
/// buffer over. Limits are checked as operations are added; the first
/// violation is kept and reported by [`WriteBatch::validate`], so such a batch is never written.
///
/// ```
/// use strata::engine::WriteBatch;
/// let mut batch = WriteBatch::with_capacity(3, 64);
/// batch.put(b"a", b"1");
/// batch.delete(b"b");
/// batch.delete_range(b"c", b"d");
/// assert_eq!(batch.len(), 3);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteBatch {
    /// Room for the count header ([`BATCH_HEADER_BYTES`], its value not kept up to date)
    /// followed by the encoded operations; empty while no operation was admitted.
    ops: Vec<u8>,
    /// Operations in `ops`.
    count: usize,
    /// Operations refused by a limit check (not in `ops`), still counted by [`Self::len`].
    refused: usize,
    /// The first limit violation, reported by [`Self::validate`].
    invalid: Option<String>,
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
    pub const fn new() -> Self {
        Self {
            ops: Vec::new(),
            count: 0,
            refused: 0,
            invalid: None,
        }
    }

    /// An empty batch with room for `ops` operations whose keys and values total `bytes`,
    /// so that filling it allocates once.
    #[must_use]
    pub fn with_capacity(ops: usize, bytes: usize) -> Self {
        let mut batch = Self::new();
        batch.reserve(ops, bytes);
        batch
    }

    /// Room for `ops` more operations whose keys and values total `bytes`.
    pub fn reserve(&mut self, ops: usize, bytes: usize) {
        let header = if self.ops.is_empty() {
            BATCH_HEADER_BYTES
        } else {
            0
        };
        self.ops.reserve(
            ops.saturating_mul(1 + 4 + 4)
                .saturating_add(bytes)
                .saturating_add(header),
        );
    }

    /// The buffer to append an admitted operation to, its header room made on first use.
    fn op_buffer(&mut self) -> &mut Vec<u8> {
        if self.ops.is_empty() {
            self.ops.extend_from_slice(&[0; BATCH_HEADER_BYTES]);
        }
        &mut self.ops
    }

    /// The encoded operations, without the header room.
    fn op_bytes(&self) -> &[u8] {
        self.ops.get(BATCH_HEADER_BYTES..).unwrap_or_default()
    }

    /// Sets `key` to `value`.
    pub fn put(&mut self, key: &[u8], value: &[u8]) -> &mut Self {
        let index = self.len();
        if self.admit(check_key(index, key).and_then(|()| check_value(index, value))) {
            let ops = self.op_buffer();
            ops.reserve(1 + 4 + key.len() + 4 + value.len());
            ops.push(OP_PUT);
            put_bytes(ops, key);
            put_bytes(ops, value);
        }
        self
    }

    /// Deletes `key`.
    pub fn delete(&mut self, key: &[u8]) -> &mut Self {
        if self.admit(check_key(self.len(), key)) {
            let ops = self.op_buffer();
            ops.push(OP_DELETE);
            put_bytes(ops, key);
        }
        self
    }

    /// Deletes every key `k` with `start <= k < end` (one record, whatever the range holds).
    pub fn delete_range(&mut self, start: &[u8], end: &[u8]) -> &mut Self {
        let index = self.len();
        let checked = check_key(index, start)
            .and_then(|()| check_key(index, end))
            .and_then(|()| {
                if start >= end {
                    return Err(format!(
                        "batch operation {index}: range delete with start >= end (empty range)"
                    ));
                }
                Ok(())
            });
        if self.admit(checked) {
            let ops = self.op_buffer();
            ops.push(OP_DELETE_RANGE);
            put_bytes(ops, start);
            put_bytes(ops, end);
        }
        self
    }

    /// Counts one more operation; whether its bytes may be appended (its limits hold).
    fn admit(&mut self, checked: std::result::Result<(), String>) -> bool {
        match checked {
            Ok(()) => {
                self.count += 1;
                true
            }
            Err(what) => {
                self.refused += 1;
                self.invalid.get_or_insert(what);
                false
            }
        }
    }

    /// Number of operations.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.count + self.refused
    }

    /// True when the batch holds no operation.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size of the encoded batch in bytes.
    #[must_use]
    pub const fn size(&self) -> usize {
        // The buffer holds the header room once it holds any operation.
        if self.ops.is_empty() {
            BATCH_HEADER_BYTES
        } else {
            self.ops.len()
        }
    }

    /// Removes every operation (keeping the buffer for reuse).
    pub fn clear(&mut self) {
        self.ops.clear();
        self.count = 0;
        self.refused = 0;
        self.invalid = None;
    }

    /// The operations in order (those refused by a limit are not among them).
    pub fn ops(&self) -> impl Iterator<Item = BatchOp<'_>> {
        let mut reader = Reader {
            bytes: self.op_bytes(),
            pos: 0,
        };
        // The buffer holds only operations this type encoded, so it always parses; a parse
        // failure would end the walk early rather than panic.
        (0..self.count).map_while(move |_| reader.op().ok())
    }

    /// Checks every operation against the engine limits; the error names the operation index.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] naming the first operation that broke a limit.
    pub fn validate(&self) -> Result<()> {
        match &self.invalid {
            Some(what) => Err(Error::InvalidArgument(what.clone())),
            None => Ok(()),
        }
    }

    /// Appends the encoding of the batch to `out` (without any refused operation).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.size());
        out.extend_from_slice(&u32::try_from(self.count).unwrap_or(u32::MAX).to_le_bytes());
        out.extend_from_slice(self.op_bytes());
    }

    /// The encoding of the batch, as [`WriteBatch::encode`] appends it, in the batch's own
    /// buffer: no copy, no allocation (a batch writer hands its batch over whole).
    #[must_use]
    pub fn into_encoded(mut self) -> Vec<u8> {
        let count = u32::try_from(self.count).unwrap_or(u32::MAX).to_le_bytes();
        if let Some(header) = self.op_buffer().get_mut(..BATCH_HEADER_BYTES) {
            header.copy_from_slice(&count);
        }
        self.ops
    }

    /// Decodes an owned batch from its encoding (total over arbitrary bytes).
    ///
    /// # Errors
    /// [`BatchDecodeError`] with the position of the first malformed byte.
    pub fn decode(bytes: &[u8]) -> Result<Self, BatchDecodeError> {
        let ops = decode_ops(bytes)?;
        let mut batch = Self::with_capacity(0, bytes.len());
        for op in ops {
            match op {
                BatchOp::Put { key, value } => batch.put(key, value),
                BatchOp::Delete { key } => batch.delete(key),
                BatchOp::DeleteRange { start, end } => batch.delete_range(start, end),
            };
        }
        Ok(batch)
    }
}

fn check_value(index: usize, value: &[u8]) -> std::result::Result<(), String> {
    if value.len() > MAX_VALUE_BYTES {
        return Err(format!(
            "batch operation {index}: value of {} bytes exceeds the limit of {MAX_VALUE_BYTES}",
            value.len()
        ));
    }
    Ok(())
}

fn check_key(index: usize, key: &[u8]) -> std::result::Result<(), String> {
    if key.len() > MAX_KEY_BYTES {
        return Err(format!(
            "batch operation {index}: key of {} bytes exceeds the limit of {MAX_KEY_BYTES}",
            key.len()
        ));
    }
    Ok(())
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    // Only lengths within the engine limits (far below u32::MAX) are ever appended.
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
        ops.push(reader.op()?);
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

    /// One operation: its tag and fields.
    fn op(&mut self) -> Result<BatchOp<'a>, BatchDecodeError> {
        let tag_pos = self.pos;
        let tag = self
            .take(1, "operation tag")?
            .first()
            .copied()
            .unwrap_or(u8::MAX);
        Ok(match tag {
            OP_DELETE => BatchOp::Delete {
                key: self.bytes_field("key")?,
            },
            OP_PUT => {
                let key = self.bytes_field("key")?;
                BatchOp::Put {
                    key,
                    value: self.bytes_field("value")?,
                }
            }
            OP_DELETE_RANGE => {
                let start = self.bytes_field("range start")?;
                BatchOp::DeleteRange {
                    start,
                    end: self.bytes_field("range end")?,
                }
            }
            other => {
                return Err(BatchDecodeError {
                    pos: tag_pos,
                    what: format!("unknown operation tag {other}"),
                });
            }
        })
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

    #[test]
    fn batch_oversized_key_is_refused_named_and_never_encoded() {
        let mut batch = WriteBatch::new();
        batch
            .put(b"a", b"1")
            .delete(&vec![0; MAX_KEY_BYTES + 1])
            .put(b"b", b"2");
        assert_eq!(batch.len(), 3);
        let err = batch.validate().unwrap_err().to_string();
        assert!(
            err.contains("operation 1") && err.contains("key of"),
            "{err}"
        );
        let mut bytes = Vec::new();
        batch.encode(&mut bytes);
        assert_eq!(decode_ops(&bytes).unwrap().len(), 2);
        batch.clear();
        assert!(batch.validate().is_ok() && batch.is_empty());
    }

    #[test]
    fn an_owned_batch_encodes_as_a_borrowed_one() {
        let encoded = |batch: &WriteBatch| {
            let mut bytes = Vec::new();
            batch.encode(&mut bytes);
            bytes
        };
        let mut batches = vec![WriteBatch::new(), WriteBatch::with_capacity(4, 64)];
        let mut refused = WriteBatch::new();
        refused.delete(&vec![0; MAX_KEY_BYTES + 1]);
        batches.push(refused.clone());
        refused.put(b"a", b"1");
        batches.push(refused);
        let mut reused = WriteBatch::with_capacity(2, 16);
        reused.put(b"k", b"v").delete_range(b"a", b"b");
        batches.push(reused.clone());
        reused.clear();
        batches.push(reused.clone());
        reused.delete(b"x");
        batches.push(reused);
        for batch in batches {
            let bytes = encoded(&batch);
            assert_eq!(bytes.len(), batch.size(), "{batch:?}");
            assert_eq!(batch.clone().into_encoded(), bytes, "{batch:?}");
        }
    }

    proptest! {
        #[test]
        fn batch_ops_walk_matches_the_decoded_encoding(
            ops in proptest::collection::vec(
                (0u8..3, proptest::collection::vec(any::<u8>(), 0..8),
                 proptest::collection::vec(any::<u8>(), 0..8)),
                0..16,
            )
        ) {
            let mut batch = WriteBatch::new();
            for (kind, a, b) in &ops {
                match kind {
                    0 => batch.put(a, b),
                    1 => batch.delete(a),
                    _ => batch.delete_range(a, b),
                };
            }
            let mut bytes = Vec::new();
            batch.encode(&mut bytes);
            prop_assert_eq!(bytes.len(), batch.size());
            let walked: Vec<BatchOp<'_>> = batch.ops().collect();
            prop_assert_eq!(&walked, &decode_ops(&bytes).unwrap());
            let decoded = WriteBatch::decode(&bytes).unwrap();
            prop_assert_eq!(decoded.ops().collect::<Vec<_>>(), walked);
            prop_assert_eq!(batch.into_encoded(), bytes);
        }

        #[test]
        fn batch_decode_arbitrary_bytes_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_ops(&bytes);
        }
    }
}
