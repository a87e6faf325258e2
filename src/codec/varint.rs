//! LEB128 varints and zigzag integers, as written by every codec of this layer.
//!
//! Decoding accepts only the shortest form, so every value has exactly one encoding and
//! `encode(decode(bytes)) == bytes` holds for anything that decodes.

/// Appends `value` as a LEB128 varint: 7 bits per byte, least significant group first,
/// high bit set on every byte but the last.
pub(crate) fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

/// Bytes that [`put`] writes for `value`.
pub(crate) const fn len(value: u64) -> usize {
    // 1 + floor(bits / 7), with 0 taking one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Why [`get`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarintError {
    /// The input ended inside the varint.
    Truncated,
    /// Longer than 10 bytes, above `u64::MAX`, or not the shortest form.
    Malformed,
}

/// Decodes a varint at the start of `bytes`, returning the value and its length.
#[inline]
pub(crate) fn get(bytes: &[u8]) -> Result<(u64, usize), VarintError> {
    // One and two bytes (lengths, names, small numbers) are the usual forms: no loop. A
    // zero second byte would be a longer form than the encoder writes: the loop rejects it.
    match *bytes {
        [first, ..] if first < 0x80 => Ok((u64::from(first), 1)),
        [first, second, ..] if second.wrapping_sub(1) < 0x7F => {
            Ok((u64::from(first & 0x7F) | u64::from(second) << 7, 2))
        }
        _ => get_long(bytes),
    }
}

/// [`get`] of the forms it does not read inline.
fn get_long(bytes: &[u8]) -> Result<(u64, usize), VarintError> {
    let mut value: u64 = 0;
    for (index, &byte) in bytes.iter().enumerate().take(super::format::MAX_VARINT_LEN) {
        let group = u64::from(byte & 0x7F);
        let shift = 7 * index as u32;
        // The 10th byte holds bit 63 only.
        if index == super::format::MAX_VARINT_LEN - 1 && group > 1 {
            return Err(VarintError::Malformed);
        }
        value |= group << shift;
        if byte & 0x80 == 0 {
            // A zero final group after the first byte means a shorter form existed.
            if byte == 0 && index > 0 {
                return Err(VarintError::Malformed);
            }
            return Ok((value, index + 1));
        }
    }
    if bytes.len() >= super::format::MAX_VARINT_LEN {
        Err(VarintError::Malformed)
    } else {
        Err(VarintError::Truncated)
    }
}

/// Maps signed to unsigned so that small magnitudes of either sign give short varints.
pub(crate) const fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

/// Inverse of [`zigzag`].
pub(crate) const fn unzigzag(value: u64) -> i64 {
    ((value >> 1) as i64) ^ -((value & 1) as i64)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn varint_round_trips_at_every_group_boundary() {
        for shift in 0..64 {
            for value in [1u64 << shift, (1u64 << shift) - 1, u64::MAX >> shift] {
                let mut out = Vec::new();
                put(&mut out, value);
                assert_eq!(out.len(), len(value), "len of {value}");
                assert_eq!(get(&out), Ok((value, out.len())), "value {value}");
            }
        }
    }

    #[test]
    fn varint_short_forms_read_inline_as_the_loop_reads_them() {
        for first in 0..=u8::MAX {
            for second in 0..=u8::MAX {
                for input in [
                    &[first, second][..],
                    &[first, second, 0x01],
                    &[first, second, 0x80],
                ] {
                    assert_eq!(get(input), get_long(input), "{input:?}");
                }
            }
            assert_eq!(get(&[first]), get_long(&[first]), "{first}");
        }
    }

    #[test]
    fn varint_non_shortest_form_is_rejected() {
        assert_eq!(get(&[0x80, 0x00]), Err(VarintError::Malformed));
        assert_eq!(get(&[0x81, 0x80, 0x00]), Err(VarintError::Malformed));
        assert_eq!(get(&[0x00]), Ok((0, 1)));
    }

    #[test]
    fn varint_above_u64_is_rejected() {
        let mut too_big = vec![0xFF; 9];
        too_big.push(0x02);
        assert_eq!(get(&too_big), Err(VarintError::Malformed));
        let mut max = vec![0xFF; 9];
        max.push(0x01);
        assert_eq!(get(&max), Ok((u64::MAX, 10)));
        assert_eq!(get(&[0xFF; 11]), Err(VarintError::Malformed));
    }

    #[test]
    fn varint_truncated_is_reported() {
        assert_eq!(get(&[]), Err(VarintError::Truncated));
        assert_eq!(get(&[0x80, 0x80]), Err(VarintError::Truncated));
    }

    #[test]
    fn zigzag_round_trips_extremes() {
        for value in [0, 1, -1, 63, -64, i64::from(i32::MIN), i64::MAX, i64::MIN] {
            assert_eq!(unzigzag(zigzag(value)), value);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
