//! The properties block: what the manifest and compaction need to know about an SST.
//!
//! ```text
//! min_key_len varint | min_key | max_key_len varint | max_key | min_seq varint
//! | max_seq varint | entries varint | tombstones varint | raw_bytes varint
//! ```

use super::format::{corruption, get_varint, put_varint};
use crate::engine::{Result, Seq};

/// What the manifest records about an SST.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SstProperties {
    /// Smallest user key.
    pub min_key: Vec<u8>,
    /// Largest user key.
    pub max_key: Vec<u8>,
    /// Smallest sequence number.
    pub min_seq: Seq,
    /// Largest sequence number.
    pub max_seq: Seq,
    /// Number of entries (tombstones included).
    pub entries: u64,
    /// Number of point tombstones.
    pub tombstones: u64,
    /// Sum of user key and value lengths (uncompressed, logical size).
    pub raw_bytes: u64,
}

impl SstProperties {
    /// Appends the encoded properties.
    pub fn encode(&self, out: &mut Vec<u8>) {
        put_varint(out, self.min_key.len() as u64);
        out.extend_from_slice(&self.min_key);
        put_varint(out, self.max_key.len() as u64);
        out.extend_from_slice(&self.max_key);
        for v in [
            self.min_seq,
            self.max_seq,
            self.entries,
            self.tombstones,
            self.raw_bytes,
        ] {
            put_varint(out, v);
        }
    }

    /// Bytes of memory held besides the struct itself (the two keys' allocations).
    pub fn heap_bytes(&self) -> usize {
        self.min_key.capacity() + self.max_key.capacity()
    }

    /// Decodes and sanity-checks properties found in the block at absolute `offset`.
    pub fn decode(buf: &[u8], offset: u64) -> Result<Self> {
        let bad = |what: &str| corruption(offset, format!("SST properties: {what}"));
        let mut pos = 0;
        let bytes = |pos: &mut usize| -> Option<Vec<u8>> {
            let n = usize::try_from(get_varint(buf, pos)?).ok()?;
            let v = buf.get(*pos..pos.checked_add(n)?)?.to_vec();
            *pos += n;
            Some(v)
        };
        let min_key = bytes(&mut pos).ok_or_else(|| bad("bad min key"))?;
        let max_key = bytes(&mut pos).ok_or_else(|| bad("bad max key"))?;
        let mut nums = [0u64; 5];
        for n in &mut nums {
            *n = get_varint(buf, &mut pos).ok_or_else(|| bad("truncated"))?;
        }
        let [min_seq, max_seq, entries, tombstones, raw_bytes] = nums;
        if pos != buf.len() {
            return Err(bad("trailing bytes"));
        }
        if min_key > max_key || min_seq > max_seq || tombstones > entries || entries == 0 {
            return Err(bad("inconsistent values"));
        }
        Ok(Self {
            min_key,
            max_key,
            min_seq,
            max_seq,
            entries,
            tombstones,
            raw_bytes,
        })
    }
}
