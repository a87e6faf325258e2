//! Data block entries: the decoded header of one entry, and the fast paths that read entity
//! rows' entries with plain byte reads (every index still bounds-checked), leaving anything
//! unusual to the checked decoder in [`super::decoder`].

use std::ops::Range;

use super::super::format::KIND_LEN;
use crate::engine::{Seq, ValueKind};

/// The longest varint (a u64 in 7-bit groups).
pub(super) const MAX_VARINT_LEN: usize = 10;

/// What a lookup needs to pass an entry: its key's shared length, where its key suffix lies
/// and where the next entry starts.
pub(super) struct Skim {
    pub(super) shared: usize,
    pub(super) delta: Range<usize>,
    pub(super) next: usize,
}

/// The key lengths and value length of the entry at `start` of `entries` (a block's entry
/// area) whose predecessor key is `prev_len` bytes long, read with the fewest checks that keep
/// every index in bounds: one-byte key lengths and a value length of at most two bytes (what
/// entity rows have). Returns the shared length, where the key suffix lies and the value
/// length; `None` means "not that simple", and the caller decodes the entry in full with
/// `Block::entry_at`, which either succeeds or names the fault.
#[inline(always)]
pub(super) fn entry_head(
    entries: &[u8],
    start: usize,
    prev_len: usize,
) -> Option<(usize, Range<usize>, usize)> {
    let &[shared, unshared, v0] = entries.get(start..start.checked_add(3)?)? else {
        return None;
    };
    if (shared | unshared) >= 0x80 || usize::from(shared) > prev_len {
        return None;
    }
    let (value_len, key_start) = if v0 < 0x80 {
        (usize::from(v0), start + 3)
    } else {
        let v1 = *entries.get(start + 3)?;
        if v1 >= 0x80 {
            return None;
        }
        (usize::from(v0 & 0x7f) | usize::from(v1) << 7, start + 4)
    };
    let key_end = key_start + usize::from(unshared);
    Some((usize::from(shared), key_start..key_end, value_len))
}

/// What a lookup needs to pass an entry without decoding it (see [`entry_head`]); the kind
/// byte is not read, as a skimmed entry is never returned.
#[inline]
pub(super) fn skim_entry(entries: &[u8], start: usize, prev_len: usize) -> Option<Skim> {
    let (shared, delta, value_len) = entry_head(entries, start, prev_len)?;
    let seq_len = entries
        .get(delta.end..)?
        .iter()
        .take(MAX_VARINT_LEN)
        .position(|&b| b < 0x80)?
        + 1;
    let next = delta.end + seq_len + KIND_LEN + value_len;
    (next <= entries.len()).then_some(Skim {
        shared,
        delta,
        next,
    })
}

/// A whole entry read on the fast path of [`entry_head`]: its sequence number and kind
/// decoded, its value in bounds.
#[inline]
pub(super) fn read_entry(entries: &[u8], start: usize, prev_len: usize) -> Option<(Entry, Seq)> {
    let (shared, delta, value_len) = entry_head(entries, start, prev_len)?;
    let (mut seq, mut shift, mut pos) = (0u64, 0u32, delta.end);
    loop {
        let b = *entries.get(pos)?;
        pos += 1;
        // The tenth byte may only hold the top bit of a u64.
        if shift == 63 && b > 1 {
            return None;
        }
        seq |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            break;
        }
        shift += 7;
        if shift > 63 {
            return None;
        }
    }
    let kind = ValueKind::from_tag(*entries.get(pos)?)?;
    let value_start = pos + KIND_LEN;
    let value_end = value_start + value_len;
    (value_end <= entries.len()).then_some((
        Entry {
            shared,
            seq_at: delta.end,
            delta,
            kind,
            value: value_start..value_end,
        },
        seq,
    ))
}

/// Length of the common prefix of `a` and `b`, eight bytes at a time.
#[inline]
pub(super) fn common_prefix_len(a: &[u8], b: &[u8]) -> usize {
    let mut n = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        if x != y {
            break;
        }
        n += 8;
    }
    let (a, b) = (
        a.get(n..).unwrap_or_default(),
        b.get(n..).unwrap_or_default(),
    );
    n + a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// One decoded entry header: where its key suffix and value lie in the block.
pub(super) struct Entry {
    pub(super) shared: usize,
    pub(super) delta: Range<usize>,
    /// Where its sequence number varint starts.
    pub(super) seq_at: usize,
    pub(super) kind: ValueKind,
    pub(super) value: Range<usize>,
}
