//! A byte test that rules rows out before their filter is evaluated: a row can satisfy
//! `Name eq <literal>` only if its property `Name` is stored as exactly that literal's
//! encoding, which the encoder writes in one canonical form. A filtered scan examines many
//! rows per match; this test walks only the frames' lengths (no value is decoded, no name is
//! checked as text), a fraction of evaluating the filter.

use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::filter::Filter;
use crate::codec::property;
use crate::codec::property::walk::{frames_of, skip_frame, take_varint};
use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};

/// Most required properties a prefilter tracks (one bit each); further ones are left to
/// the filter itself.
const MAX_NEEDLES: usize = 64;
/// Bytes a [`Prefix`] compares in one word.
const WORD_LEN: usize = 16;

/// A byte string to test row bytes against: up to [`WORD_LEN`] bytes are compared as one
/// masked 128-bit word (a few instructions instead of a `memcmp` call or a byte loop).
#[derive(Debug, Clone)]
struct Prefix {
    bytes: Box<[u8]>,
    word: u128,
    mask: u128,
}

impl Prefix {
    fn new(bytes: &[u8]) -> Self {
        let mut padded = [0u8; WORD_LEN];
        for (to, from) in padded.iter_mut().zip(bytes) {
            *to = *from;
        }
        let mask = match bytes.len() {
            0 => 0,
            n if n >= WORD_LEN => u128::MAX,
            n => u128::MAX >> (8 * (WORD_LEN - n)),
        };
        Self {
            bytes: bytes.into(),
            word: u128::from_le_bytes(padded),
            mask,
        }
    }

    /// Whether `input` starts with these bytes.
    #[inline(always)]
    fn starts(&self, input: &[u8]) -> bool {
        if self.bytes.len() <= WORD_LEN
            && let Some(head) = input.first_chunk::<WORD_LEN>()
        {
            return (u128::from_le_bytes(*head) ^ self.word) & self.mask == 0;
        }
        input.starts_with(&self.bytes)
    }

    /// Whether `input` starts with these bytes, with `name` (a prefix of them) only, or
    /// with neither: where both fit in one word, a single load and XOR answers both.
    #[inline(always)]
    fn compare(&self, name: &Self, input: &[u8]) -> Found {
        if self.bytes.len() <= WORD_LEN
            && let Some(head) = input.first_chunk::<WORD_LEN>()
        {
            let diff = u128::from_le_bytes(*head) ^ self.word;
            return if diff & self.mask == 0 {
                Found::Frame
            } else if diff & name.mask == 0 {
                Found::Name
            } else {
                Found::Neither
            };
        }
        if self.starts(input) {
            Found::Frame
        } else if name.starts(input) {
            Found::Name
        } else {
            Found::Neither
        }
    }
}

/// What [`Prefix::compare`] found at the start of a frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Found {
    /// The whole frame: the property with the literal's value.
    Frame,
    /// The name alone: the property, with another value.
    Name,
    /// Another property.
    Neither,
}

/// One property a matching row must hold as exactly these bytes.
#[derive(Debug, Clone)]
struct Needle {
    /// The property's name part: name length and name.
    name: Prefix,
    /// The property's whole stored frame: name length, name, type tag, value. Frames are
    /// self-delimiting, so a frame that starts with these bytes is this frame.
    frame: Prefix,
}

impl Needle {
    /// [`Prefilter::walk`] of this needle alone over the `count` frames `frames`.
    #[inline(always)]
    fn find(&self, count: usize, mut frames: &[u8]) -> Option<bool> {
        for _ in 0..count {
            // The name is a prefix of the frame: one load and compare answers both.
            match self.frame.compare(&self.name, frames) {
                Found::Frame => return Some(true),
                Found::Name => return (frames.len() >= self.frame.bytes.len()).then_some(false),
                Found::Neither => {}
            }
            frames = skip_frame(frames)?;
        }
        Some(false)
    }
}

/// What every row matching a filter holds in its encoded properties: one property frame per
/// `Property eq literal` the filter requires (a top-level comparison or a conjunct of a
/// top-level `and`). Empty when the filter requires none, and then every row may match.
#[derive(Debug, Clone, Default)]
pub struct Prefilter {
    needles: Vec<Needle>,
    /// One bit per needle: the `found` mask of a row that holds them all.
    all: u64,
    /// The filter is nothing but the needles' comparisons: a row holding every needle
    /// matches it.
    decides: bool,
}

/// What the bytes of a row say about a filter ([`Prefilter::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The row cannot match.
    No,
    /// The row may match: the filter must tell.
    Maybe,
    /// The row matches: it holds every required property as the literal's exact encoding
    /// and the filter requires nothing else.
    Yes,
}

impl Prefilter {
    /// The properties `filter` requires.
    #[must_use]
    pub fn new(filter: &Filter) -> Self {
        let required: &[Expr] = match filter.expr() {
            Expr::And(operands) => operands,
            other => std::slice::from_ref(other),
        };
        let mut needles: Vec<Needle> = required
            .iter()
            .filter_map(|expr| match expr {
                Expr::Compare(comparison) => needle(comparison),
                _ => None,
            })
            .collect();
        let decides = needles.len() == required.len() && needles.len() <= MAX_NEEDLES;
        needles.truncate(MAX_NEEDLES);
        let all = match needles.len() {
            0 => 0,
            n => u64::MAX >> (64 - n),
        };
        Self {
            needles,
            all,
            decides,
        }
    }

    /// What the bytes `encoded` of a row say about the filter. Rows whose bytes the walk
    /// cannot frame before it finds the required properties get `Maybe`: the filter then
    /// reads the row and reports what is wrong with it.
    #[inline]
    #[must_use]
    pub fn verdict(&self, encoded: &[u8]) -> Verdict {
        if self.needles.is_empty() {
            return Verdict::Maybe;
        }
        match self.walk(encoded) {
            Some(false) => Verdict::No,
            Some(true) if self.decides => Verdict::Yes,
            _ => Verdict::Maybe,
        }
    }

    /// Whether a row whose encoded properties are `encoded` may match; false only when it
    /// cannot. Bytes the walk cannot frame before it finds the required properties answer
    /// true: the filter then reads the row and reports what is wrong with it.
    #[inline]
    #[must_use]
    pub fn may_match(&self, encoded: &[u8]) -> bool {
        self.needles.is_empty() || self.walk(encoded).unwrap_or(true)
    }

    /// Whether the test rules anything out.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.needles.is_empty()
    }

    /// The answer of [`Self::may_match`], or `None` where the framing is not what the
    /// encoder writes. Inlined where it is called per scanned row: the call and its
    /// register saves were a good part of the test.
    #[inline(always)]
    fn walk(&self, encoded: &[u8]) -> Option<bool> {
        let (count, rest) = take_varint(frames_of(encoded)?)?;
        // One required property (`Group eq 'g1'`), the usual filtered scan: the first frame
        // of its name decides, with no needle loop nor found-mask per frame.
        match self.needles.as_slice() {
            [needle] => needle.find(count, rest),
            _ => self.find_all(count, rest),
        }
    }

    /// [`Self::walk`] of several needles over the `count` frames `rest`.
    fn find_all(&self, count: usize, mut rest: &[u8]) -> Option<bool> {
        let mut found = 0u64;
        for _ in 0..count {
            for (bit, needle) in self.needles.iter().enumerate() {
                if !needle.name.starts(rest) {
                    continue;
                }
                // Names are unique in a row: this property is the only one of that name, and
                // bytes other than the literal's (a different value, or damage) cannot match.
                // A row cut short inside it is left to the filter, which names the damage.
                if !needle.frame.starts(rest) {
                    return (rest.len() >= needle.frame.bytes.len()).then_some(false);
                }
                found |= 1 << bit;
                if found == self.all {
                    return Some(true);
                }
            }
            rest = skip_frame(rest)?;
        }
        Some(false)
    }
}

/// The stored form of the property `comparison` requires, when it requires one exact
/// encoding: `eq` on a custom property with a literal of any type but Double (`-0.0 eq 0.0`
/// holds between different bit patterns).
fn needle(comparison: &Comparison) -> Option<Needle> {
    let Field::Property(name) = &comparison.field else {
        return None;
    };
    if comparison.op != CompareOp::Eq {
        return None;
    }
    let value = match &comparison.literal {
        Literal::String(text) => Value::string(text.as_ref()).ok()?,
        Literal::Int32(n) => Value::Int32(*n),
        Literal::Int64(n) => Value::Int64(*n),
        Literal::Boolean(b) => Value::Boolean(*b),
        Literal::DateTime(instant) => Value::DateTime(*instant),
        Literal::Guid(guid) => Value::Guid(*guid),
        Literal::Binary(bytes) => Value::binary(bytes.to_vec()).ok()?,
        Literal::Double(_) => return None,
    };
    // The codec's own encoder writes the property, so the bytes are those a stored row holds.
    let mut entity = Entity::new(PartitionKey::new("p").ok()?, RowKey::new("r").ok()?);
    entity
        .set(PropertyName::new(name.as_ref()).ok()?, value)
        .ok()?;
    let encoded = property::encode(&entity);
    // The one property's frame is what follows the header and the property count.
    let (_, frame) = take_varint(frames_of(&encoded)?)?;
    let (name_len, after) = take_varint(frame)?;
    let name = frame.get(..frame.len() - after.len() + name_len)?;
    skip_frame(frame)?.is_empty().then(|| Needle {
        name: Prefix::new(name),
        frame: Prefix::new(frame),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]

    use super::{Prefilter, Verdict};
    use crate::codec::property;
    use crate::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
    use crate::query::{EncodedEntity, Filter};

    fn row(properties: &[(&str, Value)]) -> Vec<u8> {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        for (name, value) in properties {
            entity
                .set(PropertyName::new(*name).unwrap(), value.clone())
                .unwrap();
        }
        property::encode(&entity)
    }

    #[test]
    fn the_prefilter_never_rules_out_a_matching_row() {
        let rows = [
            row(&[("Group", Value::string("g1").unwrap())]),
            row(&[
                ("N", Value::Int32(7)),
                ("Group", Value::string("g1").unwrap()),
                ("Payload", Value::string("Group g1").unwrap()),
            ]),
            row(&[("Group", Value::string("g10").unwrap())]),
            row(&[("Group", Value::Int32(1))]),
            row(&[("group", Value::string("g1").unwrap())]),
            row(&[("Other", Value::string("g1").unwrap())]),
            row(&[("N", Value::Int64(7)), ("B", Value::Boolean(true))]),
            row(&[("N", Value::Int32(7)), ("D", Value::Double(-0.0))]),
            row(&[("Group", Value::binary(b"g1".to_vec()).unwrap())]),
            row(&[
                ("N", Value::Int32(-7)),
                ("Group", Value::string("g").unwrap()),
            ]),
            row(&[]),
        ];
        let filters = [
            "Group eq 'g1'",
            "Group eq 'g1' and N eq 7",
            "N eq 7L and B",
            "N eq 7 or Group eq 'g1'",
            "D eq 0.0",
            "Group ne 'g1'",
            "not (Group eq 'g2')",
            "Group eq 'g1' and Group eq 'g1'",
            "Group eq 'g1' and Group eq 'g2'",
            "N eq 7 and Group eq 'g1' and N eq 7L",
        ];
        let (mut ruled_out, mut said_yes) = (0, 0);
        for text in filters {
            let filter = Filter::parse(text).unwrap();
            let prefilter = Prefilter::new(&filter);
            for bytes in &rows {
                let encoded = EncodedEntity {
                    partition_key: "p",
                    row_key: "r",
                    reader: property::PropertyReader::new(bytes).unwrap(),
                };
                let matches = filter.matches(&encoded).unwrap();
                let may = prefilter.may_match(bytes);
                assert!(may || !matches, "{text} ruled out a matching row");
                let verdict = prefilter.verdict(bytes);
                assert_eq!(verdict == Verdict::No, !may, "{text}");
                if verdict == Verdict::Yes {
                    assert!(matches, "{text} said yes to a row the filter rejects");
                    said_yes += 1;
                }
                ruled_out += usize::from(!may);
            }
        }
        // The test is not vacuous: most rows fail `Group eq 'g1'` on their bytes alone.
        assert!(ruled_out >= 10, "{ruled_out}");
        assert!(said_yes >= 3, "{said_yes}");
    }

    #[test]
    fn only_required_equalities_make_needles() {
        for (text, needles) in [
            ("Group eq 'g1'", 1),
            ("Group eq 'g1' and N eq 7 and M gt 3", 2),
            ("Group eq 'g1' or N eq 7", 0),
            ("D eq 1.5", 0),
            ("PartitionKey eq 'p'", 0),
            ("not (Group eq 'g1')", 0),
        ] {
            let prefilter = Prefilter::new(&Filter::parse(text).unwrap());
            assert_eq!(prefilter.needles.len(), needles, "{text}");
            // Only a filter made of needles alone can be decided by them.
            let alone = !text.contains(" or ") && !text.contains(" gt ") && needles > 0;
            assert_eq!(prefilter.decides, alone, "{text}");
        }
    }

    #[test]
    fn the_prefilter_leaves_rows_it_cannot_frame_to_the_filter() {
        let prefilter = Prefilter::new(&Filter::parse("Group eq 'g1'").unwrap());
        let whole = row(&[
            ("N", Value::Int32(7)),
            ("Group", Value::string("g1").unwrap()),
        ]);
        assert!(prefilter.may_match(&whole));
        // Cut inside the N frame: the walk cannot frame the row, so the filter must read it
        // (and report the damage) rather than have it skipped unread.
        for cut in 0..whole.len() {
            assert!(prefilter.may_match(&whole[..cut]), "cut at {cut}");
        }
        let wrong = row(&[("Group", Value::string("g2").unwrap())]);
        assert!(!prefilter.may_match(&wrong));
    }

    #[test]
    fn a_word_prefix_test_agrees_with_starts_with() {
        let input: Vec<u8> = (0..40u8).map(|i| i.wrapping_mul(37)).collect();
        for len in 0..=20 {
            for at in 0..input.len() {
                let rest = &input[at..];
                let mut prefix = input[at..].iter().take(len).copied().collect::<Vec<_>>();
                let same = super::Prefix::new(&prefix);
                assert_eq!(
                    same.starts(rest),
                    rest.starts_with(&prefix),
                    "{len} at {at}"
                );
                // A name of any shorter length against this frame: `compare` tells the
                // frame, the name alone or neither, as two `starts_with` would.
                for name_len in 0..=prefix.len() {
                    let name = super::Prefix::new(&prefix[..name_len]);
                    let expected = if rest.starts_with(&prefix) {
                        super::Found::Frame
                    } else if rest.starts_with(&prefix[..name_len]) {
                        super::Found::Name
                    } else {
                        super::Found::Neither
                    };
                    assert_eq!(
                        same.compare(&name, rest),
                        expected,
                        "{len} {name_len} at {at}"
                    );
                }
                if let Some(last) = prefix.last_mut() {
                    *last ^= 0x80;
                    let other = super::Prefix::new(&prefix);
                    assert!(!other.starts(rest), "{len} at {at}");
                }
            }
        }
    }
}
