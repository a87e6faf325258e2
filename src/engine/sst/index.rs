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
///
/// Every separator starts with the prefix that the first and the last one share (they are
/// sorted); `fences[i]` holds the next eight bytes of separator `i` after that prefix, big
/// endian and zero-padded, so a search compares integers and reads a separator only where two
/// fences tie. A fence smaller than another means a smaller key: at the first differing byte
/// either both are key bytes, or the smaller one is padding and its key a proper prefix.
#[derive(Debug)]
pub struct BlockIndex {
    keys: Vec<u8>,
    slots: Vec<Slot>,
    /// Length of the prefix every separator shares.
    common: usize,
    fences: Vec<u64>,
}

/// The eight bytes of `key` from `from`, big endian, zero-padded past the end of the key.
#[inline]
fn fence(key: &[u8], from: usize) -> u64 {
    let rest = key.get(from..).unwrap_or_default();
    let mut bytes = [0u8; 8];
    for (b, k) in bytes.iter_mut().zip(rest) {
        *b = *k;
    }
    u64::from_be_bytes(bytes)
}

impl BlockIndex {
    /// Parses index contents found at absolute `offset`; data blocks must tile `0..data_end`
    /// exactly, in order, and separators must not decrease.
    pub fn decode(buf: &[u8], offset: u64, data_end: u64) -> Result<Self> {
        let mut index = Self {
            keys: Vec::with_capacity(buf.len()),
            slots: Vec::new(),
            common: 0,
            fences: Vec::new(),
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
        index.build_fences();
        Ok(index)
    }

    fn build_fences(&mut self) {
        let first = self.separator(0).unwrap_or_default();
        let last = self.last_separator().unwrap_or_default();
        let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let fences = (0..self.slots.len())
            .map(|i| fence(self.separator(i).unwrap_or_default(), common))
            .collect();
        self.common = common;
        self.fences = fences;
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
        let first = self.separator(0).unwrap_or_default();
        let prefix = first.get(..self.common).unwrap_or_default();
        match key.get(..self.common).unwrap_or(key).cmp(prefix) {
            // Shorter than the common prefix, or smaller within it: before every separator.
            std::cmp::Ordering::Less => return 0,
            std::cmp::Ordering::Greater => return self.slots.len(),
            std::cmp::Ordering::Equal => {}
        }
        let target = fence(key, self.common);
        let (mut lo, mut hi) = (0, self.slots.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let below = match self.fences.get(mid).map(|f| f.cmp(&target)) {
                Some(std::cmp::Ordering::Less) => true,
                Some(std::cmp::Ordering::Equal) => self.separator(mid).is_some_and(|s| s < key),
                _ => false,
            };
            if below {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use proptest::prelude::*;

    use super::*;

    fn index_of(separators: &[Vec<u8>]) -> BlockIndex {
        let mut buf = Vec::new();
        for (i, sep) in separators.iter().enumerate() {
            let handle = BlockHandle {
                offset: i as u64 * 100,
                len: 100,
            };
            put_index_entry(&mut buf, sep, handle);
        }
        BlockIndex::decode(&buf, 0, separators.len() as u64 * 100).unwrap()
    }

    /// Keys over a small alphabet with a long shared prefix, so fences tie and keys end
    /// inside, at and past the common prefix.
    fn key() -> impl Strategy<Value = Vec<u8>> {
        (
            0..14usize,
            prop::collection::vec(prop::sample::select(vec![0u8, 1, 7, 255]), 0..12),
        )
            .prop_map(|(shared, tail)| {
                let mut k = b"tbl\x00prefix".get(..shared.min(10)).unwrap().to_vec();
                k.extend(tail);
                k
            })
    }

    proptest! {
        #[test]
        fn fenced_search_finds_the_first_separator_not_below_the_key(
            mut separators in prop::collection::vec(key(), 1..40),
            probes in prop::collection::vec(key(), 1..40),
        ) {
            separators.sort();
            let index = index_of(&separators);
            for probe in probes.iter().chain(&separators) {
                let expected = separators.partition_point(|s| s.as_slice() < probe.as_slice());
                prop_assert_eq!(index.find(probe), expected, "probe {:?}", probe);
            }
        }
    }
}
