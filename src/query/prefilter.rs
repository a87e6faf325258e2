//! A byte test that rules rows out before their filter is evaluated: a row can satisfy
//! `Name eq <literal>` only if its property `Name` is stored as exactly that literal's
//! encoding, which the encoder writes in one canonical form. A filtered scan examines many
//! rows per match; this test walks only the frames' lengths (no value is decoded, no name is
//! checked as text), a fraction of evaluating the filter.

use super::ast::{CompareOp, Comparison, Expr, Field, Literal};
use super::filter::Filter;
use crate::codec::format::{
    FLAG_HAS_TIMESTAMP, HEADER_FIXED_LEN, PROPERTY_FORMAT_VERSION, TICKS_LEN,
};
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
    /// [`Prefilter::walk`] of this needle alone over the `count` frames `frames`. Only the
    /// first frame is tested here, inlined into the scan's loop (frames are stored in name
    /// order, so a short name such as `Group` is often first); the walk over the rest is a
    /// call, whose code would otherwise crowd the loop's registers.
    #[inline(always)]
    fn find(&self, count: usize, frames: &[u8]) -> Option<bool> {
        if count == 0 {
            return Some(false);
        }
        match self.judge(frames) {
            Some(found) => found,
            None => self.find_after_first(count - 1, frames),
        }
    }

    /// What the frame at the start of `frames` says: `Some` of the walk's answer when it is
    /// this needle's property, `None` when it is another property.
    #[inline(always)]
    fn judge(&self, frames: &[u8]) -> Option<Option<bool>> {
        // The name is a prefix of the frame: one load and compare answers both.
        match self.frame.compare(&self.name, frames) {
            Found::Frame => Some(Some(true)),
            Found::Name => Some((frames.len() >= self.frame.bytes.len()).then_some(false)),
            Found::Neither => None,
        }
    }

    /// [`Self::find`] past the first frame of `frames`, over the `count` frames after it.
    #[inline(never)]
    fn find_after_first(&self, count: usize, frames: &[u8]) -> Option<bool> {
        let mut frames = skip_frame(frames)?;
        for _ in 0..count {
            if let Some(found) = self.judge(frames) {
                return found;
            }
            frames = skip_frame(frames)?;
        }
        Some(false)
    }
}

/// The one needle of a single-equality filter (`Group eq 'g1'`) whose frame fits a word,
/// tested where the usual row holds its first frame: a stored row with a Timestamp and
/// fewer than 128 properties has it at [`FIRST_FRAME_AT`]. One length check, one load of
/// the header and one masked compare answer most rows, where the general walk takes a
/// step per header field.
#[derive(Debug, Clone)]
struct FirstFrame {
    /// The needle, for the walk past the first frame.
    needle: Needle,
    /// The needle's frame, zero-padded to a word.
    word: u128,
    /// The frame's bytes of a word.
    frame_mask: u128,
    /// The name part's bytes of a word.
    name_mask: u128,
}

/// The header of the usual stored row as a little-endian word: format version, then the
/// flags with the Timestamp's alone.
const USUAL_HEAD: u16 = u16::from_le_bytes([PROPERTY_FORMAT_VERSION, FLAG_HAS_TIMESTAMP]);
/// Where the usual row's property count is: after the version, flags and Timestamp.
const COUNT_AT: usize = HEADER_FIXED_LEN + TICKS_LEN;
/// Where the usual row's first frame starts: after a one-byte property count.
const FIRST_FRAME_AT: usize = COUNT_AT + 1;

impl FirstFrame {
    /// [`Needle::find`] of the needle over a whole stored row `encoded`, for rows
    /// of the usual header with a word of bytes from their first frame on; `None` for any
    /// other row, which the general walk then reads.
    #[inline(always)]
    fn find(&self, encoded: &[u8]) -> Option<Option<bool>> {
        let (head, frames) = encoded.split_first_chunk::<FIRST_FRAME_AT>()?;
        let first = frames.first_chunk::<WORD_LEN>()?;
        let (&[version, flags], _) = head.split_first_chunk::<HEADER_FIXED_LEN>()?;
        let count = *head.last()?;
        // A one-byte count of at least one frame: a first byte from 1 to 0x7F.
        if u16::from_le_bytes([version, flags]) != USUAL_HEAD || count.wrapping_sub(1) >= 0x7F {
            return None;
        }
        let diff = u128::from_le_bytes(*first) ^ self.word;
        Some(if diff & self.frame_mask == 0 {
            Some(true)
        } else if diff & self.name_mask == 0 {
            Some(false)
        } else {
            self.needle.find_after_first(usize::from(count) - 1, frames)
        })
    }
}

/// What every row matching a filter holds in its encoded properties: one property frame per
/// `Property eq literal` the filter requires (a top-level comparison or a conjunct of a
/// top-level `and`). Empty when the filter requires none, and then every row may match.
#[derive(Debug, Clone, Default)]
pub struct Prefilter {
    needles: Vec<Needle>,
    /// The needle of a single-equality filter, as [`FirstFrame`] tests it.
    first: Option<FirstFrame>,
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
        let first = match needles.as_slice() {
            [needle] if needle.frame.bytes.len() <= WORD_LEN => Some(FirstFrame {
                needle: needle.clone(),
                word: needle.frame.word,
                frame_mask: needle.frame.mask,
                name_mask: needle.name.mask,
            }),
            _ => None,
        };
        Self {
            needles,
            first,
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
        let found = if let Some(first) = &self.first {
            match first.find(encoded) {
                Some(found) => found,
                None => self.walk_unusual(encoded),
            }
        } else if self.needles.is_empty() {
            return Verdict::Maybe;
        } else {
            self.walk_unusual(encoded)
        };
        match found {
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

    /// [`Self::walk`] of a row [`FirstFrame::find`] does not read (or of any row, without
    /// it), out of the scan's loop.
    #[inline(never)]
    fn walk_unusual(&self, encoded: &[u8]) -> Option<bool> {
        self.walk(encoded)
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
mod tests;
