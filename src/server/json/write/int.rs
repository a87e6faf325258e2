//! Integers in decimal, without the general formatter: a page of entities writes one or
//! more per row.

/// The two ASCII digits of each number below 100.
const DIGIT_PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0; 2]; 100];
    let mut n = 0;
    while n < 100 {
        #[expect(clippy::cast_possible_truncation, reason = "n < 100")]
        let (tens, ones) = ((n / 10) as u8, (n % 10) as u8);
        pairs[n] = [b'0' + tens, b'0' + ones];
        n += 1;
    }
    pairs
};

/// Appends `value` in decimal, without the general formatter: two digits per division.
pub(super) fn write_int(out: &mut String, value: i64) {
    let pair = |n: u64| {
        usize::try_from(n)
            .ok()
            .and_then(|n| DIGIT_PAIRS.get(n))
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
    if value < 0 {
        out.push('-');
    }
    let digits = digits.get(at..).unwrap_or_default();
    // SAFETY: every byte is an ASCII digit, written above, and ASCII is UTF-8 (a checked
    // conversion costs more than formatting a small number).
    out.push_str(unsafe { std::str::from_utf8_unchecked(digits) });
}
