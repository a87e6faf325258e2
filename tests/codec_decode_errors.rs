//! The property decoder on bad input: every error is typed, carries its offset, and nothing
//! panics. Hand-made inputs use the layout of docs/FORMAT.md.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::{entity, every_type_entity, typical_entity};
use proptest::prelude::*;
use strata::codec::CodecError;
use strata::codec::property::{self, PropertyReader};
use strata::model::limits::DATETIME_MIN_TICKS;
use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};

fn decode(bytes: &[u8]) -> Result<Entity, CodecError> {
    property::decode(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        bytes,
    )
}

/// Version 1, no Timestamp, then `count` and the given property bytes.
fn body(count: u8, properties: &[u8]) -> Vec<u8> {
    let mut out = vec![1, 0, count];
    out.extend_from_slice(properties);
    out
}

/// One property named `A` with tag `tag` and value bytes `value`; the name is at offset 4 and
/// the value at offset 6 when it is the first property of [`body`].
fn prop_a(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = vec![1, b'A', tag];
    out.extend_from_slice(value);
    out
}

#[test]
fn decode_truncated_at_every_prefix_length_is_an_error() {
    for entity in [every_type_entity(), typical_entity()] {
        let bytes = property::encode(&entity);
        for len in 0..bytes.len() {
            let error = decode(&bytes[..len]).unwrap_err();
            match error {
                CodecError::Truncated { offset, needed } => {
                    assert!(offset <= len && needed >= 1, "len {len}: {error:?}");
                }
                CodecError::LengthTooLarge {
                    offset,
                    len: claimed,
                    remaining,
                } => {
                    let fits = u64::try_from(remaining).unwrap() >= claimed;
                    assert!(offset < len && !fits, "len {len}: {error:?}");
                }
                other => panic!("prefix of length {len}: unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn decode_trailing_bytes_are_rejected() {
    let mut bytes = property::encode(&every_type_entity());
    let len = bytes.len();
    bytes.extend_from_slice(&[0, 0]);
    assert_eq!(
        decode(&bytes),
        Err(CodecError::TrailingBytes {
            offset: len,
            len: 2
        })
    );
}

#[test]
fn decode_every_unknown_type_tag_is_rejected() {
    for tag in (0..=u8::MAX).filter(|tag| !(1..=8).contains(tag)) {
        let bytes = body(1, &prop_a(tag, &[0]));
        assert_eq!(
            decode(&bytes),
            Err(CodecError::BadTypeTag { offset: 5, tag })
        );
        let reader = PropertyReader::new(&bytes).unwrap();
        assert_eq!(
            reader.get("A"),
            Err(CodecError::BadTypeTag { offset: 5, tag })
        );
    }
}

#[test]
fn decode_oversized_lengths_are_rejected_before_allocating() {
    // Name length 1000 with 2 bytes left.
    let bytes = body(1, &[0xE8, 0x07, b'A', 8]);
    assert_eq!(
        decode(&bytes),
        Err(CodecError::LengthTooLarge {
            offset: 3,
            len: 1000,
            remaining: 2
        })
    );
    // String length u64::MAX.
    let mut value = vec![0xFF; 9];
    value.push(0x01);
    let bytes = body(1, &prop_a(8, &value));
    assert_eq!(
        decode(&bytes),
        Err(CodecError::LengthTooLarge {
            offset: 6,
            len: u64::MAX,
            remaining: 0
        })
    );
    // Binary length one past the end.
    let bytes = body(1, &prop_a(1, &[3, 1, 2]));
    assert_eq!(
        decode(&bytes),
        Err(CodecError::LengthTooLarge {
            offset: 6,
            len: 3,
            remaining: 2
        })
    );
}

#[test]
fn decode_header_errors_name_their_field() {
    assert_eq!(
        decode(&[]),
        Err(CodecError::Truncated {
            offset: 0,
            needed: 1
        })
    );
    assert_eq!(
        decode(&[2, 0, 0]),
        Err(CodecError::UnsupportedVersion {
            offset: 0,
            version: 2
        })
    );
    assert_eq!(
        decode(&[1, 0x82, 0]),
        Err(CodecError::UnknownFlags {
            offset: 1,
            flags: 0x82
        })
    );
    assert_eq!(
        decode(&[1, 1, 0, 0]),
        Err(CodecError::Truncated {
            offset: 2,
            needed: 6
        })
    );
    let mut zero_ticks = vec![1, 1];
    zero_ticks.extend_from_slice(&0_i64.to_le_bytes());
    zero_ticks.push(0);
    assert!(matches!(
        decode(&zero_ticks),
        Err(CodecError::Model { offset: 2, .. })
    ));
    assert!(matches!(
        PropertyReader::new(&zero_ticks),
        Err(CodecError::Model { offset: 2, .. })
    ));
}

#[test]
fn decode_property_count_above_252_is_rejected() {
    assert_eq!(
        decode(&[1, 0, 0xFD, 0x01]),
        Err(CodecError::TooManyProperties {
            offset: 2,
            count: 253,
            limit: 252
        })
    );
    let mut huge = vec![1, 0];
    huge.extend_from_slice(&[0xFF; 9]);
    huge.push(0x01);
    assert_eq!(
        decode(&huge),
        Err(CodecError::TooManyProperties {
            offset: 2,
            count: u64::MAX,
            limit: 252
        })
    );
    // 252 announced, none present: an error at the first missing property, not a panic.
    assert_eq!(
        decode(&[1, 0, 0xFC, 0x01]),
        Err(CodecError::Truncated {
            offset: 4,
            needed: 1
        })
    );
}

#[test]
fn decode_non_shortest_varints_are_rejected() {
    assert_eq!(
        decode(&[1, 0, 0x80, 0x00]),
        Err(CodecError::BadVarint { offset: 2 })
    );
    // Int64 zero written in two bytes.
    assert_eq!(
        decode(&body(1, &prop_a(7, &[0x80, 0x00]))),
        Err(CodecError::BadVarint { offset: 6 })
    );
    // Name length 1 written in two bytes.
    assert_eq!(
        decode(&body(1, &[0x81, 0x00, b'A', 2, 1])),
        Err(CodecError::BadVarint { offset: 3 })
    );
}

#[test]
fn decode_value_errors_name_their_offset() {
    assert_eq!(
        decode(&body(1, &prop_a(2, &[2]))),
        Err(CodecError::BadBoolean { offset: 6, byte: 2 })
    );
    // Zigzag 2^32 decodes to 2^31, one past i32::MAX.
    assert_eq!(
        decode(&body(1, &prop_a(6, &[0x80, 0x80, 0x80, 0x80, 0x10]))),
        Err(CodecError::Int32OutOfRange {
            offset: 6,
            zigzag: 1 << 32
        })
    );
    let early = (DATETIME_MIN_TICKS - 1).to_le_bytes();
    assert!(matches!(
        decode(&body(1, &prop_a(3, &early))),
        Err(CodecError::Model { offset: 6, .. })
    ));
    assert_eq!(
        decode(&body(1, &prop_a(8, &[2, b'o', 0xC0]))),
        Err(CodecError::InvalidUtf8 { offset: 8 })
    );
}

#[test]
fn decode_int32_extremes_use_the_whole_32_bit_zigzag_range() {
    let max = decode(&body(1, &prop_a(6, &[0xFE, 0xFF, 0xFF, 0xFF, 0x0F]))).unwrap();
    assert_eq!(max.get("A"), Some(&Value::Int32(i32::MAX)));
    let min = decode(&body(1, &prop_a(6, &[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]))).unwrap();
    assert_eq!(min.get("A"), Some(&Value::Int32(i32::MIN)));
}

#[test]
fn decode_bad_property_names_are_rejected() {
    assert_eq!(
        decode(&body(1, &[1, 0xFF, 2, 1])),
        Err(CodecError::InvalidUtf8 { offset: 4 })
    );
    for bad in ["1A", "Timestamp", "a-b", ""] {
        let mut property = vec![bad.len() as u8];
        property.extend_from_slice(bad.as_bytes());
        property.extend_from_slice(&[2, 1]);
        let result = decode(&body(1, &property));
        assert!(
            matches!(result, Err(CodecError::Model { offset: 4, .. })),
            "{bad:?}: {result:?}"
        );
    }
}

#[test]
fn decode_duplicate_property_names_are_rejected() {
    let mut properties = prop_a(2, &[1]);
    properties.extend_from_slice(&prop_a(7, &[2]));
    assert_eq!(
        decode(&body(2, &properties)),
        Err(CodecError::DuplicateProperty {
            offset: 8,
            name: "A".into()
        })
    );
}

#[test]
fn decode_string_over_64_kib_is_rejected_by_the_model() {
    let text = "x".repeat(32 * 1024 + 1);
    let mut value = vec![0x81, 0x80, 0x02]; // varint 32769
    value.extend_from_slice(text.as_bytes());
    let result = decode(&body(1, &prop_a(8, &value)));
    assert!(
        matches!(result, Err(CodecError::Model { offset: 9, .. })),
        "{result:?}"
    );
}

#[test]
fn decode_entity_over_1_mib_is_rejected_by_the_model() {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    for i in 0..15 {
        let name = PropertyName::new(format!("B{i}")).unwrap();
        entity
            .set(name, Value::binary(vec![0; 65536]).unwrap())
            .unwrap();
    }
    let mut bytes = property::encode(&entity);
    // Raise the count to 17 and append two more 64 KiB binaries; the first crosses 1 MiB.
    bytes[2] = 17;
    let crossing_name = bytes.len() + 1;
    for name in [b"X1", b"X2"] {
        bytes.extend_from_slice(&[2, name[0], name[1], 1, 0x80, 0x80, 0x04]);
        bytes.extend(std::iter::repeat_n(0, 65536));
    }
    let result = decode(&bytes);
    assert!(
        matches!(result, Err(CodecError::Model { offset, .. }) if offset == crossing_name),
        "{result:?}"
    );
}

#[test]
fn reader_finds_a_property_before_later_damage() {
    let mut properties = prop_a(2, &[1]);
    properties.extend_from_slice(&[1, b'B', 99]);
    let bytes = body(2, &properties);
    let reader = PropertyReader::new(&bytes).unwrap();
    assert_eq!(reader.get("A"), Ok(Some(Value::Boolean(true))));
    assert_eq!(
        reader.get("B"),
        Err(CodecError::BadTypeTag { offset: 9, tag: 99 })
    );
    assert_eq!(
        reader.project(&["A", "B"]),
        Err(CodecError::BadTypeTag { offset: 9, tag: 99 })
    );
    let walked: Vec<_> = reader.iter().collect();
    assert_eq!(walked.len(), 2, "the walk yields one error, then ends");
    assert!(walked[1].is_err());
    assert!(decode(&bytes).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn decode_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        let _ = decode(&bytes);
        if let Ok(reader) = PropertyReader::new(&bytes) {
            for raw in reader.iter().flatten() {
                let _ = raw.value();
                let _ = reader.get(raw.name());
            }
        }
    }

    #[test]
    fn decode_success_implies_canonical_bytes(
        entity in entity(8),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
    ) {
        let mut bytes = property::encode(&entity);
        for (index, byte) in flips {
            let at = index.index(bytes.len());
            bytes[at] = byte;
        }
        if let Ok(decoded) = property::decode(
            entity.partition_key().clone(),
            entity.row_key().clone(),
            &bytes,
        ) {
            prop_assert_eq!(property::encode(&decoded), bytes);
        }
    }
}

fn decode_stored(bytes: &[u8]) -> Result<Entity, CodecError> {
    property::decode_stored(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        bytes,
    )
}

#[test]
fn decode_stored_rejects_every_truncation_and_bad_framing_like_decode() {
    for entity in [every_type_entity(), typical_entity()] {
        let bytes = property::encode(&entity);
        let stored = decode_stored(&bytes).unwrap();
        assert_eq!(stored.properties(), entity.properties());
        assert_eq!(stored.timestamp(), entity.timestamp());
        for len in 0..bytes.len() {
            assert_eq!(
                decode_stored(&bytes[..len]).unwrap_err(),
                decode(&bytes[..len]).unwrap_err(),
                "len {len}"
            );
        }
    }
    // Framing, UTF-8 and value ranges are still checked on the stored path.
    for bad in [
        body(1, &prop_a(9, &[])),  // unknown tag
        body(1, &prop_a(3, &[2])), // Boolean byte other than 0/1
        body(1, &[1, 0xFF, 8, 0]), // name not UTF-8
        body(2, &prop_a(3, &[1])), // count larger than the properties
        body(0, &prop_a(3, &[1])), // trailing bytes
    ] {
        assert!(decode_stored(&bad).is_err(), "{bad:?}");
        assert!(decode(&bad).is_err(), "{bad:?}");
    }
}

#[test]
fn decode_stored_skips_only_name_rules_and_uniqueness() {
    // Bytes no encoder writes: the full decoder refuses them, the stored-row path (behind a
    // checksum) does not look, and still returns an entity rather than panicking.
    let dash = body(1, &[2, b'a', b'-', 2, 1]);
    assert!(decode(&dash).is_err());
    assert_eq!(decode_stored(&dash).unwrap().properties().len(), 1);
    let mut twice = prop_a(2, &[1]);
    twice.extend(prop_a(2, &[0]));
    let twice = body(2, &twice);
    assert!(matches!(
        decode(&twice).unwrap_err(),
        CodecError::DuplicateProperty { .. }
    ));
    assert_eq!(decode_stored(&twice).unwrap().properties().len(), 2);
}

proptest! {
    #[test]
    fn decode_stored_arbitrary_bytes_never_panics_and_agrees_when_valid(
        bytes in prop::collection::vec(any::<u8>(), 0..64)
    ) {
        let stored = decode_stored(&bytes);
        if let Ok(entity) = decode(&bytes) {
            prop_assert_eq!(stored.unwrap(), entity);
        }
    }
}
