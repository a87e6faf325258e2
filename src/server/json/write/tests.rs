//! Golden and equivalence tests of the JSON entity writer.

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
        // Names and strings on and off the plain fast path, at each length class of it.
        ("N\u{e4}me", Value::string("v").unwrap()),
        ("S0", Value::string("").unwrap()),
        ("S1", Value::string("\"").unwrap()),
        ("S3", Value::string("ab\\").unwrap()),
        ("S5", Value::string("\u{e9}t\u{e9}").unwrap()),
        ("S9", Value::string("12345678\u{7f}").unwrap()),
        ("S17", Value::string("0123456789abcdef\u{1}").unwrap()),
        ("S40", Value::string("x".repeat(39) + "\u{e9}").unwrap()),
        ("S100", Value::string("x".repeat(100)).unwrap()),
        ("\u{e9}_1", Value::Int64(-1)),
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
    let stored = table.get(pk, rk, None).unwrap();
    for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
        for in_feed in [false, true] {
            let mut expected = String::new();
            write_entity(&mut expected, &stored, metadata, &links, in_feed);
            let mut ours = String::new();
            table
                .get_row(pk, rk, |row| {
                    write_row(&mut ours, row, metadata, &links, in_feed, None)
                })
                .unwrap()
                .unwrap();
            assert_eq!(ours, expected);
            let parsed: serde_json::Value = serde_json::from_str(&ours).unwrap();
            for (name, text) in [("S1", "\""), ("S9", "12345678\u{7f}"), ("N\u{e4}me", "v")] {
                assert_eq!(
                    parsed.get(name).and_then(serde_json::Value::as_str),
                    Some(text),
                    "{ours}"
                );
            }
            // A `$select` keeps exactly the members it names (a missing one is `null`, as the
            // service answers it), with the values and annotations of the whole row, and the
            // metadata members.
            for select in [&["B", "H", "Z"][..], &["RowKey", "S1", "Timestamp"]] {
                let mut picked = String::new();
                table
                    .get_row(pk, rk, |row| {
                        write_row(&mut picked, row, metadata, &links, in_feed, Some(select))
                    })
                    .unwrap()
                    .unwrap();
                let picked: serde_json::Value = serde_json::from_str(&picked).unwrap();
                let picked = picked.as_object().unwrap();
                for (name, value) in parsed.as_object().unwrap() {
                    let plain = name.strip_suffix("@odata.type").unwrap_or(name);
                    let kept = name.starts_with("odata.") || select.contains(&plain);
                    // The lone entity's metadata URL names the projection, as the service's.
                    let value = match (name.as_str(), value.as_str()) {
                        ("odata.metadata", Some(url)) => {
                            serde_json::json!(format!("{url}&$select={}", select.join(",")))
                        }
                        _ => value.clone(),
                    };
                    assert_eq!(
                        picked.get(name),
                        kept.then_some(&value),
                        "{name}: {picked:?}"
                    );
                }
                for (name, value) in picked {
                    let missing = parsed.get(name).is_none();
                    assert!(
                        !missing || (select.contains(&name.as_str()) && value.is_null()),
                        "{name}: {picked:?}"
                    );
                }
                assert_eq!(
                    picked.get("Z").map(serde_json::Value::is_null),
                    select.contains(&"Z").then_some(true)
                );
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
fn rows_after_the_first_outside_a_feed_are_written_as_lone_rows() {
    let dir = tempfile::tempdir().unwrap();
    let account = Account::open(dir.path().join("db")).unwrap();
    account.create_table("Items").unwrap();
    let table = account.table("Items").unwrap();
    for rk in ["r1", "r2", "r3"] {
        table
            .insert(&Entity::new(
                PartitionKey::new("p").unwrap(),
                RowKey::new(rk).unwrap(),
            ))
            .unwrap();
    }
    let links = Links {
        base: "http://h/a\"c",
        account: "a\"c",
        table: "Items",
    };
    let to_table_error = |_| TableError::OutOfRangeInput {
        reason: String::new(),
    };
    for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
        let mut writer = super::EntityWriter::new(metadata, &links, false, None);
        let (mut ours, mut lone) = (String::new(), String::new());
        table
            .query_rows(&crate::table::Query::default(), |row| {
                writer.write_row(&mut ours, row).map_err(to_table_error)?;
                write_row(&mut lone, row, metadata, &links, false, None).map_err(to_table_error)
            })
            .unwrap();
        assert_eq!(ours, lone);
        let members = lone.matches(r#""odata.metadata":"http://h/a\"c/$metadata#Items/@Element","#);
        assert_eq!(
            members.count(),
            if metadata == Metadata::None { 0 } else { 3 }
        );
    }
}

#[test]
fn colons_of_a_timestamp_text_are_escaped_as_a_split_at_every_colon_escapes_them() {
    let split = |text: &str| text.split(':').collect::<Vec<_>>().join("%3A");
    let stepped = (0..2000_i64).map(|i| 630_000_000_000_000_000 + i * 7_777_777_777_777);
    for ticks in [0, 1, 863_999_999_999, 3_155_378_975_999_999_999]
        .into_iter()
        .chain(stepped)
    {
        let Ok(timestamp) = DateTime::from_ticks(ticks) else {
            continue;
        };
        let mut ours = String::new();
        super::push_iso_colons_escaped(&mut ours, timestamp);
        assert_eq!(ours, split(&timestamp.to_string()), "{ticks}");
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
fn etag_texts_of_instants_of_every_range_match_the_etag_display() {
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
        let mut ours = String::new();
        write_etag_text(&mut ours, instant);
        assert_eq!(ours, ETag::from_timestamp(instant).to_string());
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
        99,
        100,
        -101,
        i64::from(i32::MIN),
        i64::from(i32::MAX),
        i64::MIN,
        i64::MAX,
    ]
    .into_iter()
    .chain((-1_000..=100_000).step_by(7))
    {
        let mut ours = String::new();
        super::int::write_int(&mut ours, value);
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
    for len in 1..40 {
        for at in 0..len {
            for special in [
                '\0', '\u{1f}', ' ', '"', '\\', '\u{7f}', '~', '\n', '\u{e9}',
            ] {
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

#[test]
fn plain_test_agrees_with_the_byte_rule() {
    // Every byte class at every position of strings of every length class of `is_plain`.
    let specials = [
        0x00, 0x1f, b' ', b'"', b'\\', 0x7f, 0x80, 0xc3, 0xff, b'~', b'a',
    ];
    for len in 0..50 {
        for at in 0..len {
            for special in specials {
                let mut bytes = vec![b'a'; len];
                *bytes.get_mut(at).unwrap() = special;
                let expected = bytes.iter().all(|&byte| super::byte_is_plain(byte));
                assert_eq!(super::is_plain(&bytes), expected, "{bytes:?}");
            }
        }
        assert!(super::is_plain(&vec![b'~'; len]));
    }
    for byte in 0..=u8::MAX {
        let plain = (0x20..=0x7f).contains(&byte) && byte != b'"' && byte != b'\\';
        assert_eq!(super::byte_is_plain(byte), plain, "{byte:#x}");
        assert_eq!(super::word_is_plain(u64::from(byte) * super::LOW), plain);
    }
}

#[test]
fn plain_and_escaped_properties_read_back_as_serde_json_reads_them() {
    // Int32 and String values on the plain-copy path and off it, at each metadata level:
    // the text must be JSON whose members are exactly the entity's, typed as JSON infers.
    let mut entity = Entity::new(
        PartitionKey::new("p-1").unwrap(),
        RowKey::new("r\u{e9}").unwrap(),
    );
    let values = [
        ("I", Value::Int32(i32::MIN)),
        ("J", Value::Int32(0)),
        ("K\u{e9}", Value::Int32(42)),
        ("S", Value::string("x".repeat(33)).unwrap()),
        ("T", Value::string("tab\there").unwrap()),
        ("U\u{e9}", Value::string("plain").unwrap()),
    ];
    for (name, value) in &values {
        entity
            .set(PropertyName::new(*name).unwrap(), value.clone())
            .unwrap();
    }
    let stored = crate::table::StoredEntity {
        entity,
        etag: ETag::from_timestamp(DateTime::from_ticks(630_000_000_000_000_001).unwrap()),
    };
    let links = Links {
        base: "http://h/acct",
        account: "acct",
        table: "Items",
    };
    for metadata in [Metadata::None, Metadata::Minimal, Metadata::Full] {
        let mut out = String::new();
        write_entity(&mut out, &stored, metadata, &links, true);
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(parsed.get("PartitionKey").unwrap(), "p-1", "{out}");
        assert_eq!(parsed.get("RowKey").unwrap(), "r\u{e9}", "{out}");
        for (name, value) in &values {
            let expected = match value {
                Value::Int32(number) => serde_json::json!(number),
                Value::String(text) => serde_json::json!(text),
                _ => unreachable!("only Int32 and String here"),
            };
            assert_eq!(parsed.get(*name), Some(&expected), "{name}: {out}");
            assert!(parsed.get(format!("{name}@odata.type")).is_none(), "{out}");
        }
    }
}
