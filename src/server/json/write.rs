//! Writing entities as JSON, either from an owned [`StoredEntity`] or straight from a stored
//! row's property bytes ([`RowRef`]); both go through one writer, so their bytes are equal.

mod frames;
mod int;
mod metadata_member;
mod plain;
mod selected;

use std::fmt::Write as _;

use self::frames::push_usual_frames;
use self::int::write_int;
use self::metadata_member::write_metadata_member;
pub(super) use self::plain::push_ascii_array;
use self::plain::{push_ascii, push_plain};
use self::selected::selected_bit;
use super::stamp::push_iso_colons_escaped;
use super::stamp::{PARTITION_KEY_NAME, StampText};
use super::{Links, Metadata, TYPE_ANNOTATION_SUFFIX};
use crate::codec::CodecError;
use crate::codec::property::ValueRef;
use crate::model::{DateTime, EdmType, Value};
use crate::table::{RowRef, StoredEntity};

/// Appends `text` as a JSON string literal.
pub fn write_str(out: &mut String, text: &str) {
    out.push('"');
    write_escaped(out, text);
    out.push('"');
}

/// Appends the JSON escape of `text`, without quotes.
#[inline]
fn write_escaped(out: &mut String, text: &str) {
    if is_plain(text.as_bytes()) {
        out.push_str(text);
    } else {
        write_unplain(out, text);
    }
}

/// [`write_escaped`] of a `text` that is not plain ASCII: it may still need no escape.
#[cold]
fn write_unplain(out: &mut String, text: &str) {
    let clean = clean_prefix(text.as_bytes());
    if clean == text.len() {
        out.push_str(text);
    } else {
        write_escaped_from(out, text, clean);
    }
}

/// `bytes` as text when JSON takes it as it stands: see [`is_plain`].
#[inline]
fn plain_text(bytes: &[u8]) -> Option<&str> {
    if is_plain(bytes) {
        // SAFETY: `is_plain` admits ASCII bytes only, and ASCII is UTF-8.
        Some(unsafe { std::str::from_utf8_unchecked(bytes) })
    } else {
        None
    }
}

/// Eight copies of a byte: `LOW * b` repeats `b` in each byte of a word.
const LOW: u64 = 0x0101_0101_0101_0101;
/// The top bit of each byte of a word.
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Whether each of the 8 bytes of `word` is printable ASCII (0x20..=0x7F) other than `"`
/// and `\`. Each term's top bit is set in some byte exactly when some byte is of its kind.
#[inline]
const fn word_is_plain(word: u64) -> bool {
    let control = word.wrapping_sub(LOW * 0x20) & !word;
    let quote = word ^ (LOW * b'"' as u64);
    let backslash = word ^ (LOW * b'\\' as u64);
    let has_quote = quote.wrapping_sub(LOW) & !quote;
    let has_backslash = backslash.wrapping_sub(LOW) & !backslash;
    (word | control | has_quote | has_backslash) & HIGH == 0
}

/// Whether `byte` is printable ASCII other than `"` and `\`, as [`word_is_plain`] tests.
#[inline]
const fn byte_is_plain(byte: u8) -> bool {
    // As a signed byte, everything from 0x80 up is negative: one compare rules out control
    // characters and non-ASCII alike (a single vector compare per block).
    i8::from_ne_bytes([byte]) >= 0x20 && byte != b'"' && byte != b'\\'
}

/// Whether every byte of `bytes` is printable ASCII other than `"` and `\`: such text is
/// UTF-8 and its own JSON escape. Short strings (keys, names, most values) are tested as at
/// most two overlapping words, longer ones 16 bytes at a time and the tail as the last 16.
#[inline]
fn is_plain(bytes: &[u8]) -> bool {
    let len = bytes.len();
    // A word that fails to load is reported as not plain (all top bits set).
    let word = |at: usize| {
        bytes
            .get(at..at + 8)
            .and_then(|word| <[u8; 8]>::try_from(word).ok())
            .map_or(u64::MAX, u64::from_le_bytes)
    };
    let half = |at: usize| {
        bytes
            .get(at..at + 4)
            .and_then(|half| <[u8; 4]>::try_from(half).ok())
            .map_or(u32::MAX, u32::from_le_bytes)
    };
    let byte = |at: usize| u64::from(bytes.get(at).copied().unwrap_or(u8::MAX));
    match len {
        0 => true,
        1..=3 => {
            // First, middle and last byte cover all of 1 to 3; spaces fill the word.
            let spaces = (LOW * u64::from(b' ')) << 24;
            word_is_plain(byte(0) | byte(len / 2) << 8 | byte(len - 1) << 16 | spaces)
        }
        4..=7 => word_is_plain(u64::from(half(0)) | u64::from(half(len - 4)) << 32),
        8..=15 => word_is_plain(word(0)) & word_is_plain(word(len - 8)),
        _ => blocks_are_plain(bytes),
    }
}

/// [`is_plain`] of at least 16 bytes.
fn blocks_are_plain(bytes: &[u8]) -> bool {
    // Whole blocks are tested without an early exit inside, which the compiler turns into a
    // few vector compares per block; the last block overlaps the one before it.
    const BLOCK: usize = 16;
    let tail = bytes
        .get(bytes.len().saturating_sub(BLOCK)..)
        .unwrap_or_default();
    for block in bytes.chunks_exact(BLOCK).chain(std::iter::once(tail)) {
        let Ok(block) = <&[u8; BLOCK]>::try_from(block) else {
            return false;
        };
        let mut dirty = 0_u8;
        for &byte in block {
            dirty |= u8::from(!byte_is_plain(byte));
        }
        if dirty != 0 {
            return false;
        }
    }
    true
}

/// [`write_escaped`] of a `text` whose first `clean` bytes need no escape.
#[cold]
fn write_escaped_from(out: &mut String, text: &str, clean: usize) {
    // Copies runs that need no escape in one go. Every byte that ends a run is ASCII, so
    // each run ends on a character boundary.
    let bytes = text.as_bytes();
    let mut run = 0;
    let mut at = clean;
    while let Some(&byte) = bytes.get(at) {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0..=0x1f => "",
            _ => {
                at += 1;
                continue;
            }
        };
        out.push_str(text.get(run..at).unwrap_or_default());
        run = at + 1;
        if escape.is_empty() {
            let _ = write!(out, "\\u{byte:04x}");
        } else {
            out.push_str(escape);
        }
        at += 1;
    }
    out.push_str(text.get(run..).unwrap_or_default());
}

/// Whether `byte` needs a JSON escape.
#[inline]
const fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// How many leading bytes of `bytes` need no JSON escape (the usual string needs none).
#[inline]
fn clean_prefix(bytes: &[u8]) -> usize {
    // Whole blocks are tested without an early exit, which the compiler turns into a few
    // vector compares per block.
    const BLOCK: usize = 16;
    let mut at = 0;
    let mut blocks = bytes.chunks_exact(BLOCK);
    for block in &mut blocks {
        let block = <&[u8; BLOCK]>::try_from(block).unwrap_or(&[0; BLOCK]);
        let mut dirty = 0_u8;
        for &byte in block {
            dirty |= u8::from(needs_escape(byte));
        }
        if dirty != 0 {
            break;
        }
        at += BLOCK;
    }
    at + bytes
        .get(at..)
        .unwrap_or_default()
        .iter()
        .position(|&byte| needs_escape(byte))
        .unwrap_or(bytes.len() - at)
}

/// Appends the concatenation of `parts` as one JSON string literal (escaping is per
/// character, so escaping the parts one by one is the same).
pub fn write_str_parts(out: &mut String, parts: &[&str]) {
    out.push('"');
    for part in parts {
        write_escaped(out, part);
    }
    out.push('"');
}

/// The key-predicate form of an entity's address: `PartitionKey='a',RowKey='b'` with quotes
/// doubled and the result percent-encoded as the service writes `odata.id`.
pub fn key_predicate(partition_key: &str, row_key: &str) -> String {
    let mut out = String::new();
    write_key_predicate(&mut out, partition_key, row_key);
    out
}

/// Appends [`key_predicate`]`(partition_key, row_key)`.
pub fn write_key_predicate(out: &mut String, partition_key: &str, row_key: &str) {
    let quote = |out: &mut String, key: &str| {
        let doubled = if key.contains('\'') {
            std::borrow::Cow::Owned(key.replace('\'', "''"))
        } else {
            std::borrow::Cow::Borrowed(key)
        };
        out.extend(percent_encoding::utf8_percent_encode(
            &doubled,
            crate::server::route::KEY_ENCODE_SET,
        ));
    };
    out.push_str("PartitionKey='");
    quote(out, partition_key);
    out.push_str("',RowKey='");
    quote(out, row_key);
    out.push('\'');
}

/// Appends the header form of the ETag of an entity written at `timestamp`, as
/// [`crate::table::ETag`] displays it: `W/"datetime'<timestamp, ':' as %3A>'"`.
pub fn write_etag_text(out: &mut String, timestamp: DateTime) {
    out.push_str("W/\"datetime'");
    push_iso_colons_escaped(out, timestamp);
    out.push_str("'\"");
}

/// Appends `stored` as one JSON object at `metadata`. `in_feed` leaves out `odata.metadata`
/// (a query's feed carries it once, at the top).
pub fn write_entity(
    out: &mut String,
    stored: &StoredEntity,
    metadata: Metadata,
    links: &Links<'_>,
    in_feed: bool,
) {
    EntityWriter::new(metadata, links, in_feed, None).write_entity(out, stored);
}

/// Appends the stored row `row` as one JSON object at `metadata`, reading its values where
/// they lie: the same bytes [`write_entity`] writes for the decoded entity. With `select`,
/// only the properties it names, system ones included, beside the metadata members.
///
/// # Errors
/// A [`CodecError`] for corrupt property bytes; `out` then holds a partial object.
pub fn write_row(
    out: &mut String,
    row: &RowRef<'_>,
    metadata: Metadata,
    links: &Links<'_>,
    in_feed: bool,
    select: Option<&[&str]>,
) -> Result<(), CodecError> {
    EntityWriter::new(metadata, links, in_feed, select).write_row(out, row)
}

/// Writes entities one after another (a query's page) with what they share prepared once:
/// metadata level, links, `$select`, and the Timestamp texts of the last entity, which the
/// next one usually shares (a batch stamps all its rows alike).
#[derive(Debug)]
pub struct EntityWriter<'a> {
    metadata: Metadata,
    links: &'a Links<'a>,
    in_feed: bool,
    select: Option<&'a [&'a str]>,
    stamp: StampText,
    /// The `"odata.metadata":"…",` member every row of this writer starts with (outside a
    /// feed), escaped once by the second row: a batch answers with 100 such objects.
    metadata_member: Option<String>,
    /// Rows this writer has begun, outside a feed.
    rows_headed: usize,
}

impl<'a> EntityWriter<'a> {
    /// A writer at `metadata`; `in_feed` leaves out `odata.metadata`, `select` keeps only
    /// the properties it names (PartitionKey, RowKey and Timestamp too).
    #[must_use]
    pub fn new(
        metadata: Metadata,
        links: &'a Links<'a>,
        in_feed: bool,
        select: Option<&'a [&'a str]>,
    ) -> Self {
        Self {
            metadata,
            links,
            in_feed,
            select,
            stamp: StampText::new(),
            metadata_member: None,
            rows_headed: 0,
        }
    }

    /// Appends the stored row `row` as one JSON object, as [`write_row`] does.
    ///
    /// # Errors
    /// A [`CodecError`] for corrupt property bytes; `out` then holds a partial object.
    pub fn write_row(&mut self, out: &mut String, row: &RowRef<'_>) -> Result<(), CodecError> {
        let start = out.len();
        let keys = (row.partition_key, row.row_key);
        if let Some(names) = self.select {
            self.write_selected_head(out, keys, row.timestamp, names);
        } else {
            self.write_head(out, keys, row.timestamp);
            let (frames, count) = row.properties.frame_bytes();
            if push_usual_frames(out, frames, count) {
                out.push('}');
                return Ok(());
            }
        }
        // Bit `i`: the `i`th selected name was written (a name past the bits is looked up
        // again by [`Self::write_missing_selected`]).
        let mut present = 0_u64;
        for frame in row.properties.frames() {
            let frame = frame?;
            let name = frame.name_bytes();
            if let Some(names) = self.select {
                match names.iter().position(|wanted| wanted.as_bytes() == name) {
                    None => continue,
                    Some(at) => present |= selected_bit(at).unwrap_or(0),
                }
            }
            // A stored name is a checked identifier, so nearly always plain ASCII that needs
            // no escape; so are most strings, which are then copied as stored. Each is tested
            // as it is copied; a text that turns out to need escapes is taken back and
            // written by the general path.
            let mark = out.len();
            let written = match frame.edm_type() {
                EdmType::String => {
                    push_plain(out, b",\"", name, b"\":\"")
                        && push_plain(out, b"", frame.value_bytes(), b"\"")
                }
                // JSON infers Int32 at every metadata level: no annotation.
                EdmType::Int32 => match frame.value_ref()? {
                    ValueRef::Int32(value) if push_plain(out, b",\"", name, b"\":") => {
                        write_int(out, i64::from(value));
                        true
                    }
                    _ => false,
                },
                _ => false,
            };
            if written {
                continue;
            }
            out.truncate(mark);
            let name = match plain_text(name) {
                Some(name) => Name::Plain(name),
                None => Name::Text(frame.property()?.name()),
            };
            write_property(out, self.metadata, name, &frame.value_ref()?)?;
        }
        if let Some(names) = self.select {
            Self::write_missing_selected(out, names, present, row);
            Self::close_selected(out, start);
        } else {
            out.push('}');
        }
        Ok(())
    }

    /// The ETag header value of the row written last, from the Timestamp text already
    /// formatted for its body.
    #[must_use]
    pub fn etag_text(&self) -> String {
        self.stamp.etag_text()
    }

    /// Appends `stored` as one JSON object, as [`write_entity`] does (no `select`).
    pub fn write_entity(&mut self, out: &mut String, stored: &StoredEntity) {
        let entity = &stored.entity;
        self.write_head(
            out,
            (entity.partition_key().as_str(), entity.row_key().as_str()),
            stored.timestamp(),
        );
        for (name, value) in entity.properties() {
            // The usual String and Int32 properties, as `write_row` writes them.
            let name_bytes = name.as_str().as_bytes();
            let mark = out.len();
            let written = match value {
                Value::String(text) => {
                    push_plain(out, b",\"", name_bytes, b"\":\"")
                        && push_plain(out, b"", text.as_str().as_bytes(), b"\"")
                }
                Value::Int32(number) if push_plain(out, b",\"", name_bytes, b"\":") => {
                    write_int(out, i64::from(*number));
                    true
                }
                _ => false,
            };
            if written {
                continue;
            }
            out.truncate(mark);
            // An owned entity's values are all valid, so the writer cannot fail on them.
            let _ = write_property(
                out,
                self.metadata,
                Name::Text(name.as_str()),
                &ValueRef::from(value),
            );
        }
        out.push('}');
    }

    /// Counts a row begun and sets its Timestamp texts. A writer outside a feed usually
    /// writes one row (a single-entity response): its texts are kept for copying from its
    /// second row on.
    fn begin_row(&mut self, timestamp: DateTime) {
        let kept = self.in_feed || {
            self.rows_headed += 1;
            self.rows_headed > 1
        };
        self.stamp.set(timestamp, kept);
    }

    /// Appends the members a row at full metadata starts with after `odata.metadata`:
    /// `odata.type`, `odata.id`, `odata.etag` and `odata.editLink` (no comma after the last).
    fn write_full_metadata_members(
        &self,
        out: &mut String,
        (partition_key, row_key): (&str, &str),
    ) {
        let links = self.links;
        let address = format!("{}({})", links.table, key_predicate(partition_key, row_key));
        out.push_str("\"odata.type\":");
        write_str_parts(out, &[links.account, ".", links.table]);
        out.push_str(",\"odata.id\":");
        write_str_parts(out, &[links.base, "/", &address]);
        out.push_str(",\"odata.etag\":");
        self.stamp.push_etag_json(out);
        out.push_str(",\"odata.editLink\":");
        write_str(out, &address);
    }

    /// Opens the object and writes what precedes the custom properties: metadata, keys and
    /// Timestamp.
    fn write_head(
        &mut self,
        out: &mut String,
        (partition_key, row_key): (&str, &str),
        timestamp: DateTime,
    ) {
        let (metadata, links) = (self.metadata, self.links);
        self.begin_row(timestamp);
        out.push('{');
        match metadata {
            Metadata::None => out.push_str("\"PartitionKey\":"),
            Metadata::Minimal | Metadata::Full => {
                if !self.in_feed {
                    // A lone row (a single-entity response) writes the member directly; a
                    // writer's rows from the second on copy it, escaped once.
                    if self.rows_headed == 1 {
                        write_metadata_member(out, links);
                    } else {
                        let member = self.metadata_member.get_or_insert_with(|| {
                            let mut member = String::new();
                            write_metadata_member(&mut member, links);
                            member
                        });
                        out.push_str(member);
                    }
                }
                if metadata == Metadata::Full {
                    self.write_full_metadata_members(out, (partition_key, row_key));
                    out.push_str(PARTITION_KEY_NAME);
                } else {
                    self.stamp.push_etag_member(out);
                }
            }
        }
        if !push_plain(out, b"\"", partition_key.as_bytes(), b"\"") {
            write_str(out, partition_key);
        }
        if !push_plain(out, b",\"RowKey\":\"", row_key.as_bytes(), b"\"") {
            push_ascii(out, b",\"RowKey\":");
            write_str(out, row_key);
        }
        if metadata == Metadata::Full {
            push_ascii(out, b",\"Timestamp@odata.type\":\"Edm.DateTime\"");
        }
        self.stamp.push_timestamp_member(out);
    }
}

/// A property name to write: known plain (see [`is_plain`]) or any text, escaped as needed.
#[derive(Clone, Copy)]
enum Name<'a> {
    Plain(&'a str),
    Text(&'a str),
}

impl Name<'_> {
    fn write(self, out: &mut String) {
        match self {
            Self::Plain(name) => out.push_str(name),
            Self::Text(name) => write_escaped(out, name),
        }
    }
}

/// Appends `,"name":value` at `metadata`, preceded by the type annotation the value needs.
fn write_property(
    out: &mut String,
    metadata: Metadata,
    name: Name<'_>,
    value: &ValueRef<'_>,
) -> Result<(), CodecError> {
    if metadata != Metadata::None && needs_annotation(value, metadata) {
        out.push_str(",\"");
        name.write(out);
        out.push_str(TYPE_ANNOTATION_SUFFIX);
        out.push_str("\":");
        write_str(out, value.edm_type().name());
    }
    out.push_str(",\"");
    name.write(out);
    out.push_str("\":");
    write_value(out, value)
}

/// Whether `value` carries a type annotation at `metadata`: JSON infers String, Boolean,
/// Int32 and finite Double by itself; full metadata annotates all but those three natives.
fn needs_annotation(value: &ValueRef<'_>, metadata: Metadata) -> bool {
    match value {
        ValueRef::Binary(_) | ValueRef::DateTime(_) | ValueRef::Guid(_) | ValueRef::Int64(_) => {
            true
        }
        ValueRef::Double(d) => metadata == Metadata::Full || !d.is_finite(),
        ValueRef::Int32(_) | ValueRef::Boolean(_) | ValueRef::String(_) => false,
    }
}

/// Appends the JSON form of `value`: numbers for Int32, Boolean and finite Doubles (always
/// with a fraction or exponent, so a reader does not take `5.0` for an integer), strings for
/// the rest, in their wire form.
fn write_value(out: &mut String, value: &ValueRef<'_>) -> Result<(), CodecError> {
    match value {
        ValueRef::Int32(i) => write_int(out, i64::from(*i)),
        ValueRef::Boolean(b) => out.push_str(if *b { "true" } else { "false" }),
        ValueRef::Double(d) if d.is_finite() => {
            // Debug is the shortest round-trip form and always has a `.` or an exponent.
            let _ = write!(out, "{d:?}");
        }
        ValueRef::String(s) => write_str(out, s),
        other => {
            let owned = other
                .to_value()
                .map_err(|source| CodecError::Model { offset: 0, source })?;
            write_str(out, &owned.to_wire());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
