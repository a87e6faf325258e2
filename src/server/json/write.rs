//! Writing entities as JSON, either from an owned [`StoredEntity`] or straight from a stored
//! row's property bytes ([`RowRef`]); both go through one writer, so their bytes are equal.

use std::fmt::Write as _;

use super::stamp::StampText;
use super::{Links, Metadata, TYPE_ANNOTATION_SUFFIX};
use crate::codec::CodecError;
use crate::codec::property::ValueRef;
use crate::model::DateTime;
use crate::model::ISO8601_LEN;
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
    let clean = clean_prefix(text.as_bytes());
    if clean == text.len() {
        out.push_str(text);
    } else {
        write_escaped_from(out, text, clean);
    }
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

/// Appends the JSON string of the weak ETag of an entity written at `timestamp` (its ISO 8601
/// form): `W/"datetime'<timestamp, ':' as %3A>'"`, as [`crate::table::ETag`] displays it,
/// without formatting the timestamp a second time.
pub(super) fn write_etag(out: &mut String, timestamp: &str) {
    out.push_str("\"W/\\\"datetime'");
    for (index, part) in timestamp.split(':').enumerate() {
        if index > 0 {
            out.push_str("%3A");
        }
        out.push_str(part);
    }
    out.push_str("'\\\"\"");
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
    for (index, part) in Timestamp::new(timestamp).as_str().split(':').enumerate() {
        if index > 0 {
            out.push_str("%3A");
        }
        out.push_str(part);
    }
    out.push_str("'\"");
}

/// A Timestamp formatted on the stack.
struct Timestamp([u8; ISO8601_LEN]);

impl Timestamp {
    fn new(instant: DateTime) -> Self {
        Self(instant.iso8601_bytes())
    }

    fn as_str(&self) -> &str {
        // ASCII by construction (`DateTime::iso8601_bytes`).
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
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
/// only those custom properties (keys and Timestamp always).
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
}

impl<'a> EntityWriter<'a> {
    /// A writer at `metadata`; `in_feed` leaves out `odata.metadata`, `select` keeps only
    /// those custom properties.
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
        }
    }

    /// Appends the stored row `row` as one JSON object, as [`write_row`] does.
    ///
    /// # Errors
    /// A [`CodecError`] for corrupt property bytes; `out` then holds a partial object.
    pub fn write_row(&mut self, out: &mut String, row: &RowRef<'_>) -> Result<(), CodecError> {
        let select = self.select;
        let properties = row
            .properties
            .frames()
            .filter(|frame| match (frame, select) {
                (Ok(frame), Some(names)) => names
                    .iter()
                    .any(|wanted| wanted.as_bytes() == frame.name_bytes()),
                _ => true,
            })
            .map(|frame| {
                let property = frame?.property()?;
                Ok((property.name(), property.value_ref()?))
            });
        self.write_object(
            out,
            (row.partition_key, row.row_key),
            row.timestamp,
            properties,
        )
    }

    /// Appends `stored` as one JSON object, as [`write_entity`] does (no `select`).
    pub fn write_entity(&mut self, out: &mut String, stored: &StoredEntity) {
        let entity = &stored.entity;
        let properties = entity
            .properties()
            .iter()
            .map(|(name, value)| Ok((name.as_str(), ValueRef::from(value))));
        // An owned entity's values are all valid, so the writer cannot fail on them.
        let _ = self.write_object(
            out,
            (entity.partition_key().as_str(), entity.row_key().as_str()),
            stored.timestamp(),
            properties,
        );
    }

    /// The writer behind [`Self::write_entity`] and [`Self::write_row`].
    fn write_object<'v>(
        &mut self,
        out: &mut String,
        (partition_key, row_key): (&str, &str),
        timestamp: DateTime,
        properties: impl Iterator<Item = Result<(&'v str, ValueRef<'v>), CodecError>>,
    ) -> Result<(), CodecError> {
        let (metadata, links) = (self.metadata, self.links);
        self.stamp.set(timestamp);
        out.push('{');
        match metadata {
            Metadata::None => out.push_str("\"PartitionKey\":"),
            Metadata::Minimal | Metadata::Full => {
                if !self.in_feed {
                    out.push_str("\"odata.metadata\":");
                    write_str_parts(out, &[links.base, "/$metadata#", links.table, "/@Element"]);
                    out.push(',');
                }
                if metadata == Metadata::Full {
                    let address =
                        format!("{}({})", links.table, key_predicate(partition_key, row_key));
                    out.push_str("\"odata.type\":");
                    write_str_parts(out, &[links.account, ".", links.table]);
                    out.push_str(",\"odata.id\":");
                    write_str_parts(out, &[links.base, "/", &address]);
                    out.push_str(",\"odata.etag\":");
                    out.push_str(self.stamp.etag_json());
                    out.push_str(",\"odata.editLink\":");
                    write_str(out, &address);
                } else {
                    out.push_str("\"odata.etag\":");
                    out.push_str(self.stamp.etag_json());
                }
                out.push_str(",\"PartitionKey\":");
            }
        }
        write_str(out, partition_key);
        out.push_str(",\"RowKey\":");
        write_str(out, row_key);
        if metadata == Metadata::Full {
            out.push_str(",\"Timestamp@odata.type\":\"Edm.DateTime\"");
        }
        out.push_str(",\"Timestamp\":\"");
        out.push_str(self.stamp.text());
        out.push('"');
        for property in properties {
            let (name, value) = property?;
            if metadata != Metadata::None && needs_annotation(&value, metadata) {
                out.push_str(",\"");
                write_escaped(out, name);
                out.push_str(TYPE_ANNOTATION_SUFFIX);
                out.push_str("\":");
                write_str(out, value.edm_type().name());
            }
            out.push_str(",\"");
            write_escaped(out, name);
            out.push_str("\":");
            write_value(out, &value)?;
        }
        out.push('}');
        Ok(())
    }
}

/// Appends `value` in decimal, without the general formatter.
fn write_int(out: &mut String, value: i64) {
    let mut digits = [0_u8; 20];
    let mut at = digits.len();
    let mut rest = value.unsigned_abs();
    loop {
        at -= 1;
        if let Some(slot) = digits.get_mut(at) {
            *slot = b'0' + u8::try_from(rest % 10).unwrap_or(0);
        }
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if value < 0 {
        out.push('-');
    }
    out.push_str(std::str::from_utf8(digits.get(at..).unwrap_or_default()).unwrap_or_default());
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
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::{key_predicate, write_entity, write_etag_text, write_row};
    use crate::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};
    use crate::server::json::{Links, Metadata};
    use crate::table::ETag;
    use crate::{Account, TableError};

    #[test]
    fn row_writer_writes_the_bytes_of_the_entity_writer() {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db")).unwrap();
        account.create_table("Items").unwrap();
        let table = account.table("Items").unwrap();
        let mut entity = Entity::new(
            PartitionKey::new("p\"1").unwrap(),
            RowKey::new("r \u{e9}'").unwrap(),
        );
        let values = [
            ("A", Value::Int32(-7)),
            ("B", Value::Int64(1 << 40)),
            ("C", Value::Double(2.5)),
            ("D", Value::Double(f64::NAN)),
            ("E", Value::Boolean(true)),
            ("F", Value::string("line\n\"q\"").unwrap()),
            ("G", Value::binary([0_u8, 255, 7]).unwrap()),
            ("H", Value::Guid(Guid([9; 16]))),
            (
                "I",
                Value::DateTime(DateTime::from_ticks(630_000_000_000_000_001).unwrap()),
            ),
        ];
        for (name, value) in values {
            entity.set(PropertyName::new(name).unwrap(), value).unwrap();
        }
        table.insert(&entity).unwrap();
        let links = Links {
            base: "http://h\"x/acct",
            account: "acct",
            table: "Items",
        };
        let (pk, rk) = (entity.partition_key().as_str(), entity.row_key().as_str());
        for select in [None, Some(&["B", "H", "Z"][..])] {
            let stored = table.get(pk, rk, select).unwrap();
            for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
                for in_feed in [false, true] {
                    let mut expected = String::new();
                    write_entity(&mut expected, &stored, metadata, &links, in_feed);
                    let mut ours = String::new();
                    table
                        .get_row(pk, rk, |row| {
                            write_row(&mut ours, row, metadata, &links, in_feed, select)
                        })
                        .unwrap()
                        .unwrap();
                    assert_eq!(ours, expected);
                }
            }
        }
    }

    #[test]
    fn a_page_of_rows_is_written_as_the_service_writes_it() {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db")).unwrap();
        account.create_table("Items").unwrap();
        let table = account.table("Items").unwrap();
        for (rk, payload) in [("r1", "a\"b"), ("r2", "plain")] {
            let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new(rk).unwrap());
            entity
                .set(PropertyName::new("N").unwrap(), Value::Int64(-5))
                .unwrap();
            entity
                .set(
                    PropertyName::new("S").unwrap(),
                    Value::string(payload).unwrap(),
                )
                .unwrap();
            table.insert(&entity).unwrap();
        }
        let links = Links {
            base: "http://h/acct",
            account: "acct",
            table: "Items",
        };
        let stamps: Vec<_> = ["r1", "r2"]
            .iter()
            .map(|rk| table.get("p", rk, None).unwrap().timestamp())
            .collect();
        let expected = |metadata: Metadata, index: usize, rk: &str, payload: &str| {
            let stamp = stamps.get(index).copied().unwrap();
            let etag = serde_json::to_string(&ETag::from_timestamp(stamp).to_string()).unwrap();
            let payload = serde_json::to_string(payload).unwrap();
            match metadata {
                Metadata::None => format!(
                    r#"{{"PartitionKey":"p","RowKey":"{rk}","Timestamp":"{stamp}","N":"-5","S":{payload}}}"#
                ),
                Metadata::Minimal => format!(
                    r#"{{"odata.etag":{etag},"PartitionKey":"p","RowKey":"{rk}","Timestamp":"{stamp}","N@odata.type":"Edm.Int64","N":"-5","S":{payload}}}"#
                ),
                Metadata::Full => format!(
                    r#"{{"odata.type":"acct.Items","odata.id":"http://h/acct/Items(PartitionKey='p',RowKey='{rk}')","odata.etag":{etag},"odata.editLink":"Items(PartitionKey='p',RowKey='{rk}')","PartitionKey":"p","RowKey":"{rk}","Timestamp@odata.type":"Edm.DateTime","Timestamp":"{stamp}","N@odata.type":"Edm.Int64","N":"-5","S":{payload}}}"#
                ),
            }
        };
        for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
            let mut writer = super::EntityWriter::new(metadata, &links, true, None);
            let mut ours = String::new();
            table
                .query_rows(&crate::table::Query::default(), |row| {
                    writer
                        .write_row(&mut ours, row)
                        .map_err(|_| TableError::OutOfRangeInput {
                            reason: String::new(),
                        })
                })
                .unwrap();
            let page = expected(metadata, 0, "r1", "a\"b") + &expected(metadata, 1, "r2", "plain");
            assert_eq!(ours, page);
        }
    }

    #[test]
    fn etag_text_matches_the_etag_display() {
        for ticks in [630_000_000_000_000_000, 638_000_000_000_000_123] {
            let timestamp = DateTime::from_ticks(ticks).unwrap();
            let mut ours = String::new();
            write_etag_text(&mut ours, timestamp);
            assert_eq!(ours, ETag::from_timestamp(timestamp).to_string());
        }
    }

    #[test]
    fn timestamps_are_written_as_the_model_displays_them() {
        let samples = [
            0,
            1,
            630_000_000_000_000_000,
            638_000_000_000_000_123,
            3_155_378_975_999_999_999,
            DateTime::now().ticks(),
        ];
        let stepped = (0..2000_i64).map(|i| i * 1_577_000_000_000_003);
        for ticks in samples.into_iter().chain(stepped) {
            let Ok(instant) = DateTime::from_ticks(ticks) else {
                continue;
            };
            assert_eq!(super::Timestamp::new(instant).as_str(), instant.to_string());
        }
    }

    #[test]
    fn ints_and_escapes_match_the_general_formatters() {
        for value in [
            0,
            7,
            -7,
            10,
            -10,
            123_456,
            i64::from(i32::MIN),
            i64::from(i32::MAX),
        ] {
            let mut ours = String::new();
            super::write_int(&mut ours, value);
            assert_eq!(ours, value.to_string());
        }
        let samples = [
            "",
            "plain text of more than eight bytes",
            "0123456\"89",
            "01234567\\9abcdef",
            "\u{1f}bcdefghij",
            "abcdefghi\n",
            "h\u{e9}llo w\u{f6}rld \u{1F600}!",
            "\u{7f}\u{80}~ !#",
            "0123456789abcdef\"123456789abcdef0123456789",
            "0123456789abcde\u{1}0123456789abcdef\\",
            "0123456789abcdef0123456789abcdef\t",
            "0123456789abcdef0123456789abcdef0123456789abcdef",
            "\u{e9}123456789abcdef0123456789abcd\u{e9}\n",
        ];
        // Each byte that needs an escape (and its neighbours that do not) at every position
        // of strings around the 8-byte word size.
        for len in 1..20 {
            for at in 0..len {
                for special in ['\0', '\u{1f}', ' ', '"', '\\', '\u{7f}', '~', '\n'] {
                    let mut text = "a".repeat(len);
                    text.replace_range(at..=at, special.encode_utf8(&mut [0; 4]));
                    let mut ours = String::new();
                    super::write_str(&mut ours, &text);
                    assert_eq!(ours, serde_json::to_string(&text).unwrap(), "{text:?}");
                }
            }
        }
        for text in samples {
            let mut ours = String::new();
            super::write_str(&mut ours, text);
            assert_eq!(ours, serde_json::to_string(text).unwrap(), "{text:?}");
        }
    }

    #[test]
    fn key_predicate_doubles_quotes_and_percent_encodes() {
        assert_eq!(
            key_predicate("p'1", "a b/c"),
            "PartitionKey='p''1',RowKey='a%20b%2Fc'"
        );
    }
}
