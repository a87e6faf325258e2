//! Text that JSON takes as it stands, tested while it is copied into the output: one pass
//! over the bytes instead of a test and then a `memcpy` call, and the constant pieces around
//! it (`,"`, `":"`, quotes) written by the same reserve. Keys, property names and most string
//! values of a row take this path; the rest falls back to the escaping writer.

use super::{LOW, word_is_plain};

/// Bytes tested and copied as one block.
const BLOCK: usize = 16;

/// Appends `open`, `text` and `close` when every byte of `text` is printable ASCII other
/// than `"` and `\` (so its own JSON escape); otherwise leaves `out` unchanged and returns
/// false. `open` and `close` are ASCII constants (checked in debug builds).
#[inline(always)]
pub(super) fn push_plain(
    out: &mut String,
    open: &'static [u8],
    text: &[u8],
    close: &'static [u8],
) -> bool {
    debug_assert!(open.is_ascii() && close.is_ascii());
    // SAFETY: the length is only moved over bytes written here, all of them ASCII (`open`,
    // `close`, and `text` once `copy_plain` has found it plain), so the string stays UTF-8.
    let bytes = unsafe { out.as_mut_vec() };
    let total = open.len() + text.len() + close.len();
    bytes.reserve(total);
    let start = bytes.len();
    // SAFETY: `reserve` made room for `total` bytes past `start`; every write below stays
    // inside `[start, start + total)`, and the length moves only once all are written.
    unsafe {
        let at = bytes.as_mut_ptr().add(start);
        std::ptr::copy_nonoverlapping(open.as_ptr(), at, open.len());
        if !copy_plain(text, at.add(open.len())) {
            return false;
        }
        std::ptr::copy_nonoverlapping(close.as_ptr(), at.add(open.len() + text.len()), close.len());
        bytes.set_len(start + total);
    }
    true
}

/// Appends the ASCII text `piece` of a fixed length: a few moves where a slice of unknown
/// length took a `memcpy` call (and a UTF-8 check ~100 instructions a row).
///
/// # Safety
/// `piece` must be ASCII (checked in debug builds): the callers' texts are ASCII by
/// construction (Timestamp and ETag texts written digit by digit), and a release-build check
/// cost every row of a feed ~80 instructions.
#[inline(always)]
pub(in crate::server::json) unsafe fn push_ascii_array<const N: usize>(
    out: &mut String,
    piece: &[u8; N],
) {
    debug_assert!(piece.is_ascii());
    // SAFETY: `piece` is ASCII (the caller's contract), so `out` stays UTF-8.
    unsafe { out.as_mut_vec() }.extend_from_slice(piece);
}

/// Appends the ASCII constant `piece` (checked in debug builds).
#[inline(always)]
pub(super) fn push_ascii(out: &mut String, piece: &'static [u8]) {
    debug_assert!(piece.is_ascii());
    // SAFETY: only ASCII bytes are appended.
    unsafe { out.as_mut_vec() }.extend_from_slice(piece);
}

/// Copies `text` to `to` and tells whether all of it is plain (as `is_plain` decides).
/// Short texts are copied as two overlapping words (or halves, or single bytes), longer ones
/// 16 bytes at a time with the last block overlapping the one before: every write lies in
/// `[to, to + text.len())`.
///
/// # Safety
/// `to` must be valid for writes of `text.len()` bytes.
#[inline(always)]
pub(super) unsafe fn copy_plain(text: &[u8], to: *mut u8) -> bool {
    let len = text.len();
    // SAFETY (all writes): each lies in `[to, to + len)` by the length of its case.
    unsafe {
        match len {
            0 => true,
            1..=3 => {
                let (first, middle, last) = (
                    text.first().copied().unwrap_or(0),
                    text.get(len / 2).copied().unwrap_or(0),
                    text.last().copied().unwrap_or(0),
                );
                to.write(first);
                to.add(len / 2).write(middle);
                to.add(len - 1).write(last);
                // Spaces fill the word, as `is_plain` does.
                let spaces = (LOW * u64::from(b' ')) << 24;
                word_is_plain(
                    u64::from(first) | u64::from(middle) << 8 | u64::from(last) << 16 | spaces,
                )
            }
            4..=7 => {
                let (Some(head), Some(tail)) = (text.first_chunk::<4>(), text.last_chunk::<4>())
                else {
                    return false;
                };
                to.cast::<[u8; 4]>().write_unaligned(*head);
                to.add(len - 4).cast::<[u8; 4]>().write_unaligned(*tail);
                word_is_plain(
                    u64::from(u32::from_le_bytes(*head))
                        | u64::from(u32::from_le_bytes(*tail)) << 32,
                )
            }
            8..BLOCK => {
                let (Some(head), Some(tail)) = (text.first_chunk::<8>(), text.last_chunk::<8>())
                else {
                    return false;
                };
                to.cast::<[u8; 8]>().write_unaligned(*head);
                to.add(len - 8).cast::<[u8; 8]>().write_unaligned(*tail);
                word_is_plain(u64::from_le_bytes(*head)) & word_is_plain(u64::from_le_bytes(*tail))
            }
            _ => copy_plain_blocks(text, to),
        }
    }
}

/// [`copy_plain`] of at least [`BLOCK`] bytes.
///
/// # Safety
/// As [`copy_plain`].
#[inline]
unsafe fn copy_plain_blocks(text: &[u8], to: *mut u8) -> bool {
    let mut blocks = text.chunks_exact(BLOCK);
    let mut at = 0;
    for block in &mut blocks {
        let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
            return false;
        };
        if !block_is_plain(block) {
            return false;
        }
        // SAFETY: `at + BLOCK <= text.len()`.
        unsafe { to.add(at).cast::<[u8; BLOCK]>().write_unaligned(*block) };
        at += BLOCK;
    }
    if blocks.remainder().is_empty() {
        return true;
    }
    let Some(last) = text.last_chunk::<BLOCK>() else {
        return false;
    };
    // SAFETY: the last block ends at `text.len()`.
    unsafe {
        to.add(text.len() - BLOCK)
            .cast::<[u8; BLOCK]>()
            .write_unaligned(*last);
    };
    block_is_plain(last)
}

/// Whether every byte of `block` is plain: three vector compares (signed below 0x20 covers
/// control characters and every byte from 0x80 up; `"`; `\`) and one mask. The portable
/// form below, which the compiler vectorised by itself, took ~22 instructions a block.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn block_is_plain(block: &[u8; BLOCK]) -> bool {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is in every x86_64 target; the load reads the block's 16 bytes, unaligned.
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast::<__m128i>());
        let control = _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20));
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        _mm_movemask_epi8(_mm_or_si128(control, _mm_or_si128(quote, backslash))) == 0
    }
}

/// Whether every byte of `block` is plain; no early exit inside, so the compiler makes it
/// a few vector compares.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn block_is_plain(block: &[u8; BLOCK]) -> bool {
    let mut dirty = 0_u8;
    for &byte in block {
        dirty |= u8::from(!super::byte_is_plain(byte));
    }
    dirty == 0
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::push_plain;
    use crate::server::json::write::is_plain;

    #[test]
    fn push_plain_copies_exactly_the_texts_is_plain_admits() {
        // Every length class, with one offending byte at each position, and clean texts.
        let bad = [b'"', b'\\', 0x00, 0x1f, 0x7f + 1, 0xff];
        for len in 0..=40 {
            let clean: Vec<u8> = (0..len).map(|i| b' ' + ((i * 7) % 95) as u8).collect();
            let clean: Vec<u8> = clean
                .into_iter()
                .map(|b| if b == b'"' || b == b'\\' { b'a' } else { b })
                .collect();
            let mut texts = vec![clean.clone()];
            for at in 0..len {
                for &byte in &bad {
                    let mut text = clean.clone();
                    text[at] = byte;
                    texts.push(text);
                }
            }
            for text in texts {
                let mut out = String::from("head");
                let pushed = push_plain(&mut out, b",\"", &text, b"\"");
                assert_eq!(pushed, is_plain(&text), "{text:?}");
                if pushed {
                    let expected = format!("head,\"{}\"", std::str::from_utf8(&text).unwrap());
                    assert_eq!(out, expected);
                } else {
                    assert_eq!(out, "head");
                }
            }
        }
    }
}
