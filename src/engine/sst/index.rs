//! The index block: one separator key and block handle per data block.
//!
//! ```text
//! entry: separator_len varint | separator | block offset varint | block len varint
//! ```
//!
//! In memory the separators sit in one buffer and the per-block numbers in flat arrays (12
//! bytes a block besides its separator and fence: data blocks tile the data area, so a block's
//! end is the next one's offset), so a binary search touches contiguous allocations instead
//! of one heap object per block, and an SST's resident index stays small.

use super::format::{BLOCK_TRAILER_LEN, BlockHandle, corruption, get_varint, put_varint};
use crate::engine::Result;

/// Appends one index entry.
pub fn put_index_entry(out: &mut Vec<u8>, separator: &[u8], handle: BlockHandle) {
    put_varint(out, separator.len() as u64);
    out.extend_from_slice(separator);
    put_varint(out, handle.offset);
    put_varint(out, handle.len);
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
    /// End of separator `i` in `keys` (it starts where separator `i - 1` ends).
    key_ends: Vec<u32>,
    /// End of data block `i` (it starts where block `i - 1` ends, the first at 0).
    block_ends: Vec<u64>,
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
        if u32::try_from(buf.len()).is_err() {
            return Err(corruption(
                offset,
                format!("SST index of {} bytes is over 4 GiB", buf.len()),
            ));
        }
        let mut index = Self {
            keys: Vec::with_capacity(buf.len()),
            key_ends: Vec::new(),
            block_ends: Vec::new(),
            common: 0,
            fences: Vec::new(),
        };
        let mut pos = 0;
        let mut expected_offset = 0u64;
        while pos < buf.len() {
            let i = index.block_ends.len();
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
            // `keys` is never longer than `buf`, checked above to fit a u32.
            let key_end = u32::try_from(index.keys.len()).unwrap_or(u32::MAX);
            index.key_ends.push(key_end);
            index.block_ends.push(expected_offset);
        }
        if index.block_ends.is_empty() || expected_offset != data_end {
            return Err(corruption(
                offset,
                format!(
                    "SST index covers {expected_offset} of {data_end} data bytes in {} blocks",
                    index.block_ends.len()
                ),
            ));
        }
        index.keys.shrink_to_fit();
        index.key_ends.shrink_to_fit();
        index.block_ends.shrink_to_fit();
        index.build_fences();
        Ok(index)
    }

    fn build_fences(&mut self) {
        let first = self.separator(0).unwrap_or_default();
        let last = self.last_separator().unwrap_or_default();
        let common = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let fences = (0..self.len())
            .map(|i| fence(self.separator(i).unwrap_or_default(), common))
            .collect();
        self.common = common;
        self.fences = fences;
    }

    /// Number of data blocks.
    pub fn len(&self) -> usize {
        self.block_ends.len()
    }

    /// Bytes of heap the decoded index holds (its allocations' capacities).
    pub fn heap_bytes(&self) -> usize {
        self.keys.capacity()
            + self.key_ends.capacity() * size_of::<u32>()
            + self.block_ends.capacity() * size_of::<u64>()
            + self.fences.capacity() * size_of::<u64>()
    }

    /// The separator of block `i`.
    pub fn separator(&self, i: usize) -> Option<&[u8]> {
        let end = *self.key_ends.get(i)? as usize;
        let start = match i.checked_sub(1) {
            Some(p) => *self.key_ends.get(p)? as usize,
            None => 0,
        };
        self.keys.get(start..end)
    }

    /// The separator of the last block.
    pub fn last_separator(&self) -> Option<&[u8]> {
        self.separator(self.len().checked_sub(1)?)
    }

    /// The handle of block `i`.
    pub fn handle(&self, i: usize) -> Option<BlockHandle> {
        let end = *self.block_ends.get(i)?;
        let offset = match i.checked_sub(1) {
            Some(p) => *self.block_ends.get(p)?,
            None => 0,
        };
        Some(BlockHandle {
            offset,
            len: end.saturating_sub(offset),
        })
    }

    /// The first block whose separator is `>= key` (== `len()` if none).
    pub fn find(&self, key: &[u8]) -> usize {
        let first = self.separator(0).unwrap_or_default();
        let prefix = first.get(..self.common).unwrap_or_default();
        match key.get(..self.common).unwrap_or(key).cmp(prefix) {
            // Shorter than the common prefix, or smaller within it: before every separator.
            std::cmp::Ordering::Less => return 0,
            std::cmp::Ordering::Greater => return self.len(),
            std::cmp::Ordering::Equal => {}
        }
        let target = fence(key, self.common);
        let (mut lo, mut hi) = (0, self.len());
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
