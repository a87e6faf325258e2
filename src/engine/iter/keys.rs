//! User-key comparisons by big-endian words, shared by the merge and its sources.

use std::cmp::Ordering;

/// The first eight bytes of `key` as a big-endian word, zero-padded when shorter. When the
/// head words of two keys differ they order the keys as the keys' bytes do (a key that ends
/// inside the word is a prefix of the other up to there, hence the smaller); equal words
/// leave the order to the rest of the keys.
#[inline(always)]
pub(super) fn head_word(key: &[u8]) -> u64 {
    if let Some(word) = key.first_chunk::<8>() {
        return u64::from_be_bytes(*word);
    }
    // A short key (an entity key's tail after its whole words) as two overlapping loads
    // instead of a byte loop: the bytes both loads hold are the same, so OR-ing them in
    // place is exact.
    let len = key.len();
    let (head, tail) = if len >= 4 {
        let head = key.first_chunk::<4>().map_or(0, |b| u32::from_be_bytes(*b));
        let tail = key.last_chunk::<4>().map_or(0, |b| u32::from_be_bytes(*b));
        (u64::from(head) << 32, u64::from(tail))
    } else if len >= 2 {
        let head = key.first_chunk::<2>().map_or(0, |b| u16::from_be_bytes(*b));
        let tail = key.last_chunk::<2>().map_or(0, |b| u16::from_be_bytes(*b));
        (u64::from(head) << 48, u64::from(tail))
    } else {
        return key.first().map_or(0, |&b| u64::from(b) << 56);
    };
    // The tail load's last byte is the key's byte `len - 1`, whose place in the word is
    // 8 * (8 - len) bits up.
    head | tail << (8 * (8 - len))
}

/// The order of two user keys, as `a.cmp(b)`, eight bytes at a time as big-endian words:
/// entity keys share their first word (table id and the start of the PartitionKey), so a
/// `memcmp` call after the head word was the usual case; a few word compares cost less.
#[inline(always)]
pub(super) fn key_cmp(a: &[u8], b: &[u8]) -> Ordering {
    let (mut a, mut b) = (a, b);
    while let (Some((x, a_rest)), Some((y, b_rest))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        if x != y {
            return u64::from_be_bytes(*x).cmp(&u64::from_be_bytes(*y));
        }
        (a, b) = (a_rest, b_rest);
    }
    // One of them has under eight bytes left: zero-padded words order them unless equal,
    // and then the shorter is a prefix of the other.
    head_word(a)
        .cmp(&head_word(b))
        .then_with(|| a.len().cmp(&b.len()))
}

/// The first sixteen bytes of `key` as two big-endian words, ordered as those bytes are;
/// `None` for a shorter key.
#[inline(always)]
pub(super) fn head_words(key: &[u8]) -> Option<(u64, u64)> {
    let (a, rest) = key.split_first_chunk::<8>()?;
    let b = rest.first_chunk::<8>()?;
    Some((u64::from_be_bytes(*a), u64::from_be_bytes(*b)))
}

/// Whether two user keys are equal, looking first where neighbouring keys differ: their
/// lengths and last bytes.
#[inline(always)]
pub(super) fn same_key(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.last() == b.last() && a == b
}

/// Whether `key < end`, given `end_word = head_word(end)`.
#[inline(always)]
pub(super) fn below(key: &[u8], end: &[u8], end_word: u64) -> bool {
    // Tested as two compares, not through an `Ordering` (which was built and matched).
    let word = head_word(key);
    word < end_word || (word == end_word && key < end)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::{below, head_word, key_cmp};

    #[test]
    fn key_order_by_head_words_is_the_byte_order() {
        let keys: Vec<Vec<u8>> = (0..400u32)
            .map(|i| {
                let len = (i % 23) as usize;
                (0..len)
                    .map(|j| [0u8, 1, 0x7F, 0x80, 0xFF][(i as usize / 23 + j * 3) % 5])
                    .collect()
            })
            .collect();
        for a in &keys {
            let mut padded = [0u8; 8];
            for (to, from) in padded.iter_mut().zip(a) {
                *to = *from;
            }
            assert_eq!(head_word(a), u64::from_be_bytes(padded), "{a:?}");
            for b in &keys {
                assert_eq!(key_cmp(a, b), a.cmp(b), "{a:?} {b:?}");
                assert_eq!(below(a, b, head_word(b)), a < b, "{a:?} {b:?}");
            }
        }
    }
}
