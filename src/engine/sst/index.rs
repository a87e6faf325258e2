//! The index block: one separator key and block handle per data block.
//!
//! ```text
//! entry: separator_len varint | separator | block offset varint | block len varint
//! ```
//!
//! In memory the separators sit in one buffer and the slots in one array, so a binary search
//! touches two contiguous allocations instead of one heap object per block.

use super::format::{BLOCK_TRAILER_LEN, BlockHandle, corruption, get_varint, put_varint};
use crate::engine::Result;

/// Appends one index entry.
pub fn put_index_entry(out: &mut Vec<u8>, separator: &[u8], handle: BlockHandle) {
    put_varint(out, separator.len() as u64);
    out.extend_from_slice(separator);
    put_varint(out, handle.offset);
    put_varint(out, handle.len);
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    /// End of this block's separator in `keys` (it starts where the previous one ends).
    key_end: usize,
    handle: BlockHandle,
}

/// The decoded index of an SST.
#[derive(Debug)]
pub struct BlockIndex {
    keys: Vec<u8>,
    slots: Vec<Slot>,
}

impl BlockIndex {
    /// Parses index contents found at absolute `offset`; data blocks must tile `0..data_end`
    /// exactly, in order, and separators must not decrease.
    pub fn decode(buf: &[u8], offset: u64, data_end: u64) -> Result<Self> {
        let mut index = Self {
            keys: Vec::with_capacity(buf.len()),
            slots: Vec::new(),
        };
        let mut pos = 0;
        let mut expected_offset = 0u64;
        while pos < buf.len() {
            let i = index.slots.len();
            let bad = |what: &str| corruption(offset, format!("SST index entry {i}: {what}"));
            let n = get_varint(buf, &mut pos).ok_or_else(|| bad("bad key length"))?;
            let sep = usize::try_from(n)
                .ok()
                .and_then(|n| buf.get(pos..pos.checked_add(n)?))
                .ok_or_else(|| bad("key overruns the index"))?;
            pos += sep.len();
            let block_offset = get_varint(buf, &mut pos).ok_or_else(|| bad("bad block offset"))?;
            let block_len = get_varint(buf, &mut pos).ok_or_else(|| bad("bad block length"))?;
            if block_offset != expected_offset || block_len < BLOCK_TRAILER_LEN as u64 {
                return Err(bad(&format!(
                    "block ({block_offset}, {block_len}) does not follow the previous block"
                )));
            }
            expected_offset = block_offset
                .checked_add(block_len)
                .filter(|&e| e <= data_end)
                .ok_or_else(|| bad("block overruns the data area"))?;
            if index.last_separator().is_some_and(|p| p > sep) {
                return Err(bad("separator out of order"));
            }
            index.keys.extend_from_slice(sep);
            index.slots.push(Slot {
                key_end: index.keys.len(),
                handle: BlockHandle {
                    offset: block_offset,
                    len: block_len,
                },
            });
        }
        if index.slots.is_empty() || expected_offset != data_end {
            return Err(corruption(
                offset,
                format!(
                    "SST index covers {expected_offset} of {data_end} data bytes in {} blocks",
                    index.slots.len()
                ),
            ));
        }
        index.keys.shrink_to_fit();
        Ok(index)
    }

    /// Number of data blocks.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// The separator of block `i`.
    pub fn separator(&self, i: usize) -> Option<&[u8]> {
        let end = self.slots.get(i)?.key_end;
        let start = match i.checked_sub(1) {
            Some(p) => self.slots.get(p)?.key_end,
            None => 0,
        };
        self.keys.get(start..end)
    }

    /// The separator of the last block.
    pub fn last_separator(&self) -> Option<&[u8]> {
        self.separator(self.slots.len().checked_sub(1)?)
    }

    /// The handle of block `i`.
    pub fn handle(&self, i: usize) -> Option<BlockHandle> {
        self.slots.get(i).map(|s| s.handle)
    }

    /// The first block whose separator is `>= key` (== `len()` if none).
    pub fn find(&self, key: &[u8]) -> usize {
        let (mut lo, mut hi) = (0, self.slots.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.separator(mid).is_some_and(|s| s < key) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}
