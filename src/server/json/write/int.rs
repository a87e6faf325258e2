//! Integers in decimal, without the general formatter: a page of entities writes one or
//! more per row.

/// The two ASCII digits of each number below 100, in order.
const DIGIT_PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

/// Appends `value` in decimal, without the general formatter: two digits per division.
pub(super) fn write_int(out: &mut String, value: i64) {
    let (digits, at) = format_int(value);
    if value < 0 {
        out.push('-');
    }
    let digits = digits.get(at..).unwrap_or_default();
    // SAFETY: every byte is an ASCII digit, written by `format_int`, and ASCII is UTF-8 (a
    // checked conversion costs more than formatting a small number).
    out.push_str(unsafe { std::str::from_utf8_unchecked(digits) });
}

/// The decimal digits of `value`'s magnitude, ending the array, and where they start.
#[inline(always)]
pub(super) fn format_int(value: i64) -> ([u8; 20], usize) {
    let pair = |n: u64| {
        usize::try_from(n)
            .ok()
            .and_then(|n| DIGIT_PAIRS.get(2 * n..))
            .and_then(<[u8]>::first_chunk::<2>)
            .copied()
            .unwrap_or([b'0'; 2])
    };
    // u64::MAX has 20 digits.
    let mut digits = [0_u8; 20];
    let mut at = digits.len();
    let mut rest = value.unsigned_abs();
    while rest >= 100 {
        at -= 2;
        if let Some(slot) = digits.get_mut(at..at + 2) {
            slot.copy_from_slice(&pair(rest % 100));
        }
        rest /= 100;
    }
    if rest >= 10 {
        at -= 2;
        if let Some(slot) = digits.get_mut(at..at + 2) {
            slot.copy_from_slice(&pair(rest));
        }
    } else {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            *slot = b'0' + u8::try_from(rest).unwrap_or(0);
        }
    }
    (digits, at)
}
