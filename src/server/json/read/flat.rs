//! A hand-written reader of the common request body: one JSON object whose members are all
//! strings, numbers, booleans or null. It reads straight from the bytes (no token stream),
//! borrows every string without escapes and gives up, returning `None`, on anything it does
//! not handle exactly as serde_json does (nested values, integers of 19 or more digits,
//! `-0`, lone surrogates, numbers out of range, any syntax error); serde_json then reads
//! the body and its answer, value or error, is the one used. So whatever this reader
//! accepts, it reads to the same members serde_json would.

use std::borrow::Cow;

use memchr::memchr2;
use serde_json::Number;

use super::Scalar;
use super::gaps::Gaps;

/// Most digits of an integer read here: every 18-digit integer fits `i64` and `u64`, so
/// the longer ones (serde_json turns some into floats) are left to serde_json.
const MAX_INTEGER_DIGITS: usize = 18;

/// Members of a typical body, annotations included.
pub(super) const MEMBERS_GUESS: usize = 16;

/// Members in body order; `None` when serde_json must decide.
pub(super) type FlatMembers<'de> = Vec<(Cow<'de, str>, Scalar<'de>)>;

/// The members of `body` in order, or `None` (see the module documentation).
#[cfg(test)]
pub(super) fn read_object(body: &[u8]) -> Option<FlatMembers<'_>> {
    let mut members = Vec::new();
    read_object_into(body, &mut members, &mut Gaps::default()).map(|()| members)
}

/// [`read_object`] into `members`, whose allocation a caller reading many bodies reuses;
/// `None` leaves it holding part of the body's members. The members it held before are
/// overwritten one by one: a string (name or value) equal to the one read at the same
/// place of the last body is recognised by comparison instead of being scanned (the bodies
/// of a batch repeat their names, annotations and often values). `gaps` holds the text
/// before each member's value in the bodies read before; a body repeating it there is
/// read past it with one comparison (see [`Gaps`]).
pub(super) fn read_object_into<'de>(
    body: &'de [u8],
    members: &mut FlatMembers<'de>,
    gaps: &mut Gaps<'de>,
) -> Option<()> {
    // SDK bodies annotate every string (`Name@odata.type`), doubling the member count: room
    // for a typical body's members, so the vector is not regrown.
    members.reserve(MEMBERS_GUESS.saturating_sub(members.len()));
    let mut count = 0;
    let mut reader = Reader { body, at: 0 };
    // Where the text before the next member's value starts.
    let mut gap_start = 0;
    // A buffer's first body notes nothing: most buffers read one body (a single-entity
    // request), for which noting costs allocations and brings nothing.
    let noting = gaps.arm();
    loop {
        let (last_name, last_value) = members.get(count).map_or((None, None), last_strings);
        let name = match gaps.get(count) {
            Some((gap, name)) if starts_with(reader.rest(), gap) => {
                reader.at += gap.len();
                // The gap ends at the first byte that was not whitespace there.
                reader.skip_whitespace();
                Cow::Borrowed(name)
            }
            _ => {
                reader.skip_whitespace();
                if count == 0 {
                    reader.expect(b'{')?;
                    reader.skip_whitespace();
                    if reader.peek() == Some(b'}') {
                        reader.at += 1;
                        break;
                    }
                } else {
                    match reader.next()? {
                        b',' => reader.skip_whitespace(),
                        b'}' => break,
                        _ => return None,
                    }
                }
                reader.expect(b'"')?;
                let name = reader.string_as(last_name)?;
                reader.skip_whitespace();
                reader.expect(b':')?;
                reader.skip_whitespace();
                if noting && let Cow::Borrowed(text) = name {
                    gaps.note(count, body.get(gap_start..reader.at)?, text);
                }
                name
            }
        };
        let value = reader.value(last_value)?;
        match members.get_mut(count) {
            Some(slot) => *slot = (name, value),
            None => members.push((name, value)),
        }
        count += 1;
        gap_start = reader.at;
    }
    members.truncate(count);
    reader.skip_whitespace();
    (reader.at == body.len()).then_some(())
}

/// The name and string value of a member, where they are borrowed from a body: text
/// without escapes, control characters or quotes.
fn last_strings<'de>(
    (name, value): &(Cow<'de, str>, Scalar<'de>),
) -> (Option<&'de str>, Option<&'de str>) {
    let borrowed = |text: &Cow<'de, str>| match *text {
        Cow::Borrowed(text) => Some(text),
        Cow::Owned(_) => None,
    };
    let value = match value {
        Scalar::Str(text) => borrowed(text),
        _ => None,
    };
    (borrowed(name), value)
}

/// A cursor over the body.
struct Reader<'de> {
    body: &'de [u8],
    at: usize,
}

impl<'de> Reader<'de> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.at += 1;
        Some(byte)
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        (self.next()? == byte).then_some(())
    }

    fn rest(&self) -> &'de [u8] {
        self.body.get(self.at..).unwrap_or_default()
    }

    /// Skips JSON whitespace (space, tab, line feed, carriage return; nothing else).
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    /// Skips `literal` if the body continues with it.
    fn literal(&mut self, literal: &[u8]) -> Option<()> {
        self.rest().starts_with(literal).then(|| {
            self.at += literal.len();
        })
    }

    /// The value here; a string equal to `last` is read as [`Reader::string_as`] reads it.
    fn value(&mut self, last: Option<&'de str>) -> Option<Scalar<'de>> {
        match self.peek()? {
            b'"' => {
                self.at += 1;
                self.string_as(last).map(Scalar::Str)
            }
            b't' => self.literal(b"true").map(|()| Scalar::Bool(true)),
            b'f' => self.literal(b"false").map(|()| Scalar::Bool(false)),
            b'n' => self.literal(b"null").map(|()| Scalar::Null),
            b'-' | b'0'..=b'9' => self.number().map(Scalar::Number),
            _ => None,
        }
    }

    /// [`Reader::string`], comparing first with `last`, a string borrowed from a body (no
    /// escape, control character or quote in it): the same bytes then the closing quote
    /// are the string `last` is, which is returned.
    fn string_as(&mut self, last: Option<&'de str>) -> Option<Cow<'de, str>> {
        if let Some(last) = last {
            let rest = self.rest();
            if rest.get(last.len()) == Some(&b'"') && starts_with(rest, last.as_bytes()) {
                self.at += last.len() + 1;
                return Some(Cow::Borrowed(last));
            }
        }
        self.string()
    }

    /// The string whose opening quote was just read; borrowed unless it holds an escape.
    fn string(&mut self) -> Option<Cow<'de, str>> {
        let (text, end) = plain_run(self.rest())?;
        self.at += end;
        if self.next()? == b'"' {
            return Some(Cow::Borrowed(text));
        }
        let mut owned = String::with_capacity(end + 16);
        owned.push_str(text);
        loop {
            // A backslash was just read.
            self.escape(&mut owned)?;
            let (text, end) = plain_run(self.rest())?;
            owned.push_str(text);
            self.at += end;
            if self.next()? == b'"' {
                return Some(Cow::Owned(owned));
            }
        }
    }

    /// Decodes the escape after a backslash into `out`.
    fn escape(&mut self, out: &mut String) -> Option<()> {
        let decoded = match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let unit = self.hex4()?;
                if (0xD800..0xDC00).contains(&unit) {
                    // A leading surrogate must be followed by an escaped trailing one.
                    self.literal(b"\\u")?;
                    let trail = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&trail) {
                        return None;
                    }
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (trail - 0xDC00);
                    char::from_u32(code)?
                } else {
                    // A lone trailing surrogate is not a char: serde_json decides.
                    char::from_u32(unit)?
                }
            }
            _ => return None,
        };
        out.push(decoded);
        Some(())
    }

    fn hex4(&mut self) -> Option<u32> {
        let digits = self.rest().get(..4)?;
        let mut unit = 0;
        for &digit in digits {
            unit = unit * 16 + char::from(digit).to_digit(16)?;
        }
        self.at += 4;
        Some(unit)
    }

    /// A number as serde_json reads it: integers as `i64` (negative) or `u64`, anything with
    /// a fraction or exponent as the correctly rounded `f64` (serde_json's `float_roundtrip`).
    fn number(&mut self) -> Option<Number> {
        let start = self.at;
        let negative = self.peek() == Some(b'-');
        if negative {
            self.at += 1;
        }
        let int_start = self.at;
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        let int_digits = self.at - int_start;
        let mut float = false;
        if self.peek() == Some(b'.') {
            self.at += 1;
            float = true;
            self.some_digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            float = true;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.some_digits()?;
        }
        if float {
            let text = std::str::from_utf8(self.body.get(start..self.at)?).ok()?;
            let value: f64 = text.parse().ok()?;
            // Out of range (infinite) is serde_json's error to report.
            return Number::from_f64(value);
        }
        if int_digits > MAX_INTEGER_DIGITS {
            return None;
        }
        // At most 18 digits, checked above: the magnitude fits `i64`, so the sum cannot
        // overflow (a string parse cost more than the rest of reading the member).
        let magnitude = self
            .body
            .get(int_start..self.at)?
            .iter()
            .fold(0_i64, |value, &digit| value * 10 + i64::from(digit - b'0'));
        if negative {
            // serde_json reads `-0` as the float -0.0.
            (magnitude != 0).then(|| (-magnitude).into())
        } else {
            Some(magnitude.unsigned_abs().into())
        }
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.at += 1;
        }
    }

    /// One or more digits.
    fn some_digits(&mut self) -> Option<()> {
        let start = self.at;
        self.digits();
        (self.at > start).then_some(())
    }
}

/// Whether `bytes` starts with `prefix`, compared a word at a time with overlapping
/// loads: for the short names and values of a body, a `memcmp` call cost more than the
/// comparison.
#[inline]
fn starts_with(bytes: &[u8], prefix: &[u8]) -> bool {
    let len = prefix.len();
    let Some(head) = bytes.get(..len) else {
        return false;
    };
    let word4 = |text: &[u8], at: usize| {
        text.get(at..at + 4)
            .and_then(|word| <[u8; 4]>::try_from(word).ok())
            .map(u32::from_le_bytes)
    };
    let word8 = |text: &[u8], at: usize| {
        text.get(at..at + 8)
            .and_then(|word| <[u8; 8]>::try_from(word).ok())
            .map(u64::from_le_bytes)
    };
    if len < 4 {
        return head.iter().zip(prefix).all(|(a, b)| a == b);
    }
    if len < 8 {
        return word4(head, 0) == word4(prefix, 0)
            && word4(head, len - 4) == word4(prefix, len - 4);
    }
    let mut at = 0;
    while at + 8 < len {
        if word8(head, at) != word8(prefix, at) {
            return false;
        }
        at += 8;
    }
    word8(head, len - 8) == word8(prefix, len - 8)
}

/// The text before the first quote or backslash of `bytes` and its length, if that run is
/// valid UTF-8 without control characters (which JSON strings may not hold raw).
fn plain_run(bytes: &[u8]) -> Option<(&str, usize)> {
    let ascii = ascii_run_len(bytes);
    let end = match bytes.get(ascii)? {
        b'"' | b'\\' => ascii,
        byte if *byte < 0x20 => return None,
        // Non-ASCII text: the general search and UTF-8 check (the rare case).
        _ => ascii + memchr2(b'"', b'\\', bytes.get(ascii..)?)?,
    };
    let run = bytes.get(..end)?;
    // The scan stopped at the first non-ASCII byte: the rest of the run is checked here.
    if run.get(ascii..)?.iter().any(|&byte| byte < 0x20) {
        return None;
    }
    if end == ascii {
        // SAFETY: the scan found every byte of the run below 0x80, and ASCII is UTF-8.
        return Some((unsafe { std::str::from_utf8_unchecked(run) }, end));
    }
    Some((std::str::from_utf8(run).ok()?, end))
}

/// Length of the leading run of printable-or-space ASCII bytes other than quote and
/// backslash, eight bytes at a time (entity payloads are long plain ASCII strings).
fn ascii_run_len(bytes: &[u8]) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // The has-zero-byte trick: exact for the lowest flagged lane, which is all we read.
    let has_zero = |word: u64| word.wrapping_sub(ONES) & !word & HIGHS;
    let mut at = 0;
    for chunk in bytes.chunks_exact(8) {
        let word = u64::from_le_bytes(<[u8; 8]>::try_from(chunk).unwrap_or([0; 8]));
        // Control bytes (< 0x20) have their top three bits clear; non-ASCII its top bit set.
        let stop = has_zero(word & 0xe0e0_e0e0_e0e0_e0e0)
            | has_zero(word ^ (ONES * u64::from(b'"')))
            | has_zero(word ^ (ONES * u64::from(b'\\')))
            | (word & HIGHS);
        if stop != 0 {
            return at + (stop.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .position(|&byte| !(0x20..0x80).contains(&byte) || byte == b'"' || byte == b'\\')
        .unwrap_or(bytes.len() - at)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use proptest::prelude::*;

    use super::super::Members;
    use super::{Gaps, ascii_run_len, read_object, read_object_into};

    /// What the fast reader reads must be what serde_json reads; `None` is always allowed.
    fn agrees_with_serde(body: &[u8]) -> Option<bool> {
        let fast = read_object(body)?;
        let serde = Members::parse_with_serde(body).ok().flatten();
        Some(serde == Some(Members::from_ordered(fast)))
    }

    #[test]
    fn the_common_entity_body_is_read_without_serde() {
        let body = br#"{"PartitionKey":"p0001","RowKey":"00000042","N":42,"Group":"g2","Payload":"xxx","N@odata.type":"Edm.Int64","D":1.5e3,"B":true,"Z":null,"E":"a\"b\\c\/\n\u00e9\ud83d\ude00"}"#;
        assert_eq!(agrees_with_serde(body), Some(true));
        assert_eq!(agrees_with_serde(b" { } "), Some(true));
        assert_eq!(agrees_with_serde(b"{\"a\":-7,\"a\":0.25}"), Some(true));
    }

    #[test]
    fn the_ascii_scan_stops_at_the_first_quote_backslash_control_or_non_ascii_byte() {
        let plain = "abcdefghijklmnopqrstuvwxyz 0123456789";
        for stop in ["\"", "\\", "\n", "\u{1f}", "é"] {
            for at in 0..plain.len() {
                let text = format!("{}{stop}{}", &plain[..at], &plain[at..]);
                assert_eq!(ascii_run_len(text.as_bytes()), at, "{text:?}");
            }
        }
        assert_eq!(ascii_run_len(plain.as_bytes()), plain.len());
    }

    #[test]
    fn what_only_serde_reads_exactly_is_left_to_serde() {
        for body in [
            &br#"{"a":[1]}"#[..],
            br#"{"a":{"b":1}}"#,
            br#"{"a":-0}"#,
            br#"{"a":1234567890123456789}"#,
            br#"{"a":1e400}"#,
            br#"{"a":"\udc00"}"#,
            br#"{"a":"\ud800x"}"#,
            b"{\"a\":\"\x01\"}",
            b"{\"a\":\"\xff\"}",
            br#"{"a":1,}"#,
            br#"{"a":01}"#,
            br#"{"a":1.}"#,
            br#"{"a":tru}"#,
            br#"{"a":1} x"#,
            br#"[1]"#,
            b"",
        ] {
            assert!(
                read_object(body).is_none(),
                "{:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    fn scalar_text() -> impl Strategy<Value = String> {
        prop_oneof![
            "\"[a-zA-Z0-9 _é\\\\\"/\\n\\t\u{1F600}]{0,12}\""
                .prop_map(|s| { serde_json::to_string(&s.trim_matches('"')).unwrap() }),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<u64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|f| format!("{f:e}")),
            any::<f64>().prop_map(|f| format!("{f}")),
            "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,3})?",
            Just("true".to_owned()),
            Just("false".to_owned()),
            Just("null".to_owned()),
            "\"(\\\\u[0-9a-fA-F]{4}|[a-z]){0,4}\"",
        ]
    }

    fn object_text() -> impl Strategy<Value = String> {
        prop::collection::vec(
            ("[a-cA-C@.]{1,3}", scalar_text(), "[ \\t\\r\\n]{0,2}"),
            0..8,
        )
        .prop_map(|members| {
            let inner: Vec<String> = members
                .into_iter()
                .map(|(name, value, space)| format!("{space}\"{name}\"{space}:{space}{value}"))
                .collect();
            format!("{{{}}}", inner.join(","))
        })
    }

    proptest! {
        #[test]
        fn accepted_bodies_read_as_serde_reads_them(body in object_text()) {
            prop_assert_ne!(agrees_with_serde(body.as_bytes()), Some(false));
        }

        #[test]
        fn mutated_bodies_never_read_differently_from_serde(
            body in object_text(),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
            delete in any::<bool>(),
        ) {
            let mut bytes = body.into_bytes();
            if !bytes.is_empty() {
                let at = at.index(bytes.len());
                if delete { bytes.remove(at); } else { bytes[at] = byte; }
            }
            prop_assert_ne!(agrees_with_serde(&bytes), Some(false));
        }

        #[test]
        fn bodies_read_after_others_read_as_fresh_ones(
            bodies in prop::collection::vec(object_text(), 1..6),
            at in any::<prop::sample::Index>(),
            byte in any::<u8>(),
        ) {
            let mut bodies: Vec<Vec<u8>> = bodies.into_iter().map(String::into_bytes).collect();
            // A body and its copy with one byte changed: most strings equal, one not.
            let mut changed = bodies[0].clone();
            let at = at.index(changed.len());
            changed[at] = byte;
            bodies.extend([changed, bodies[0].clone()]);
            prop_assert!(reads_alike_in_turn(&bodies));
        }
    }

    /// Whether reading `bodies` in turn into one vector reads each as a fresh vector does.
    fn reads_alike_in_turn(bodies: &[Vec<u8>]) -> bool {
        let (mut reused, mut gaps) = (Vec::new(), Gaps::default());
        bodies.iter().all(|body| {
            let fresh = read_object(body);
            let read = read_object_into(body, &mut reused, &mut gaps).map(|()| reused.clone());
            read == fresh
        })
    }

    #[test]
    fn the_word_wise_prefix_test_is_starts_with() {
        let text: Vec<u8> = (0..40_u8).map(|byte| b'a' + byte % 26).collect();
        for len in 0..=text.len() {
            for cut in [0, 1, 5, 8, 9, 16, 17] {
                let bytes = &text[..text.len().saturating_sub(cut)];
                let prefix = &text[..len];
                assert_eq!(super::starts_with(bytes, prefix), bytes.starts_with(prefix));
                for at in 0..len {
                    let mut other = prefix.to_vec();
                    other[at] ^= 0x20;
                    assert_eq!(
                        super::starts_with(bytes, &other),
                        bytes.starts_with(&other),
                        "{len} {cut} {at}"
                    );
                }
            }
        }
    }

    #[test]
    fn strings_equal_to_the_last_body_s_are_read_as_fresh_ones() {
        let bodies: [&[u8]; 9] = [
            br#"{"PartitionKey":"p","RowKey":"a","S":"xyz","S@odata.type":"Edm.String"}"#,
            br#"{"PartitionKey":"p","RowKey":"b","S":"xyz","S@odata.type":"Edm.String"}"#,
            br#"{"PartitionKey":"p","RowKey":"ab","S":"xy","S@odata.type":"Edm.Strin"}"#,
            br#"{"PartitionKey":"p","RowKey":"a","S":"xy\"z","S@odata.type":"Edm.String\u0000"}"#,
            br#"{"PartitionKey":"p","RowKey":"a","S":"xy"z","S@odata.type":"Edm.String"}"#,
            br#"{"PartitionKeyX":"p","RowKey":"a
b","S":1}"#,
            br#"{"PartitionKey":"p"}"#,
            br#"{"PartitionKey":"p","RowKey":"a","S":"xyz","S@odata.type":"Edm.String"}"#,
            br#"{"PartitionKey":"p","RowKey":"a","S":"xyz","S@odata.type":"Edm.String""#,
        ];
        let bodies: Vec<Vec<u8>> = bodies.iter().map(|body| body.to_vec()).collect();
        assert!(reads_alike_in_turn(&bodies));
        let (mut reused, mut gaps) = (Vec::new(), Gaps::default());
        read_object_into(bodies[0].as_slice(), &mut reused, &mut gaps).unwrap();
        read_object_into(bodies[1].as_slice(), &mut reused, &mut gaps).unwrap();
        assert_eq!(reused[1].1, super::Scalar::Str("b".into()));
    }
}
