//! The property codec: bit-exact round trips, canonical bytes, size, and the reader.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::{entity, every_type_entity, typical_entity};
use proptest::prelude::*;
use strata::codec::property::{self, PropertyReader, ValueRef};
use strata::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};

fn decode(entity: &Entity, bytes: &[u8]) -> Entity {
    property::decode(
        entity.partition_key().clone(),
        entity.row_key().clone(),
        bytes,
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn property_decode_inverts_encode_bit_exactly(entity in entity(24)) {
        let bytes = property::encode(&entity);
        prop_assert_eq!(bytes.len(), property::encoded_len(&entity));
        let decoded = decode(&entity, &bytes);
        prop_assert_eq!(&decoded, &entity);
        // PartialEq on Double is bit-exact; check the bits directly anyway.
        for ((_, a), (_, b)) in decoded.properties().iter().zip(entity.properties()) {
            if let (Value::Double(a), Value::Double(b)) = (a, b) {
                prop_assert_eq!(a.to_bits(), b.to_bits());
            }
        }
        prop_assert_eq!(property::encode(&decoded), bytes);
    }

    #[test]
    fn property_encode_into_appends_the_same_bytes(entity in entity(8), prefix in any::<Vec<u8>>()) {
        let mut out = prefix.clone();
        property::encode_into(&entity, &mut out);
        prop_assert_eq!(&out[..prefix.len()], prefix.as_slice());
        let alone = property::encode(&entity);
        prop_assert_eq!(&out[prefix.len()..], alone.as_slice());
    }

    #[test]
    fn property_reader_agrees_with_decode(entity in entity(24)) {
        let bytes = property::encode(&entity);
        let reader = PropertyReader::new(&bytes).unwrap();
        prop_assert_eq!(reader.timestamp(), entity.timestamp());
        prop_assert_eq!(reader.len(), entity.properties().len());
        for (name, value) in entity.properties() {
            prop_assert_eq!(reader.get(name.as_str()).unwrap(), Some(value.clone()));
            prop_assert_eq!(reader.get_ref(name.as_str()).unwrap(), Some(ValueRef::from(value)));
        }
        prop_assert_eq!(reader.get("NoSuchProperty").unwrap(), None);
        let walked: Vec<(PropertyName, Value)> = reader
            .iter()
            .map(|raw| {
                let raw = raw.unwrap();
                assert_eq!(raw.edm_type(), raw.value().unwrap().edm_type());
                (raw.property_name().unwrap(), raw.value().unwrap())
            })
            .collect();
        prop_assert_eq!(walked.as_slice(), entity.properties());
    }

    #[test]
    fn property_projection_keeps_stored_order_of_selected(
        entity in entity(24),
        picks in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
    ) {
        let bytes = property::encode(&entity);
        let reader = PropertyReader::new(&bytes).unwrap();
        let properties = entity.properties();
        let mut names: Vec<&str> = Vec::new();
        if !properties.is_empty() {
            names = picks.iter().map(|i| properties[i.index(properties.len())].0.as_str()).collect();
        }
        names.push("Missing");
        let expected: Vec<_> = properties
            .iter()
            .filter(|(name, _)| names.contains(&name.as_str()))
            .cloned()
            .collect();
        prop_assert_eq!(reader.project(&names).unwrap(), expected);
    }
}

#[test]
fn property_every_type_round_trips_with_exact_layout() {
    let entity = every_type_entity();
    let bytes = property::encode(&entity);
    assert_eq!(bytes[0], 1, "format version");
    assert_eq!(bytes[1], 1, "flags: Timestamp present");
    let ticks = entity.timestamp().unwrap().ticks().to_le_bytes();
    assert_eq!(&bytes[2..10], &ticks);
    assert_eq!(bytes[10], 8, "property count");
    // First property: "Bin", tag 1 (Binary), length 3, bytes 1 2 3.
    assert_eq!(&bytes[11..20], &[3, b'B', b'i', b'n', 1, 3, 1, 2, 3]);
    assert_eq!(decode(&entity, &bytes), entity);
}

#[test]
fn property_special_doubles_round_trip_bit_exactly() {
    let payloads = [
        0x8000_0000_0000_0000_u64, // -0.0
        0x7FF8_0000_0000_0000,     // quiet NaN
        0xFFF8_0000_0000_0001,     // negative NaN with payload
        0x7FF0_0000_0000_0001,     // signalling NaN
        0x7FF0_0000_0000_0000,     // +inf
        0x0000_0000_0000_0001,     // smallest subnormal
    ];
    for bits in payloads {
        let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        entity
            .set(
                PropertyName::new("D").unwrap(),
                Value::Double(f64::from_bits(bits)),
            )
            .unwrap();
        let bytes = property::encode(&entity);
        match decode(&entity, &bytes).get("D") {
            Some(Value::Double(d)) => assert_eq!(d.to_bits(), bits),
            other => panic!("expected a Double, got {other:?}"),
        }
    }
}

#[test]
fn property_entity_without_timestamp_has_no_ticks() {
    let entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let bytes = property::encode(&entity);
    assert_eq!(bytes, [1, 0, 0]);
    assert_eq!(decode(&entity, &bytes), entity);
    assert_eq!(PropertyReader::new(&bytes).unwrap().timestamp(), None);
}

#[test]
fn property_entity_with_252_properties_round_trips() {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    entity.set_timestamp(DateTime::now());
    for i in 0..252 {
        let name = PropertyName::new(format!("P{i}")).unwrap();
        entity.set(name, Value::Int64(i64::from(i) << 40)).unwrap();
    }
    let bytes = property::encode(&entity);
    assert_eq!(decode(&entity, &bytes), entity);
    let reader = PropertyReader::new(&bytes).unwrap();
    assert_eq!(reader.get("P251").unwrap(), Some(Value::Int64(251 << 40)));
}

#[test]
fn property_large_string_and_binary_round_trip() {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let text = "é".repeat(32 * 1024); // 32 Ki UTF-16 units = the 64 KiB limit, 64 KiB of UTF-8
    entity
        .set(
            PropertyName::new("S").unwrap(),
            Value::string(text).unwrap(),
        )
        .unwrap();
    entity
        .set(
            PropertyName::new("B").unwrap(),
            Value::binary(vec![0xAB; 65536]).unwrap(),
        )
        .unwrap();
    let bytes = property::encode(&entity);
    assert_eq!(decode(&entity, &bytes), entity);
}

#[test]
fn property_typical_entity_meets_the_size_goal() {
    let entity = typical_entity();
    let raw: usize = 8 // Timestamp ticks
        + entity
            .properties()
            .iter()
            .map(|(name, value)| name.as_str().len() + raw_value_len(value))
            .sum::<usize>();
    let encoded = property::encode(&entity).len();
    assert!(
        raw >= 180,
        "typical entity should hold ~200 bytes, holds {raw}"
    );
    println!("typical entity: raw {raw} B, encoded {encoded} B");
    assert!(
        encoded * 10 <= raw * 11,
        "encoded {encoded} > raw {raw} + 10%"
    );
}

/// The value's bytes in their natural fixed form (4 for Int32, 8 for Int64, UTF-8 for String).
fn raw_value_len(value: &Value) -> usize {
    match value {
        Value::Binary(bytes) => bytes.len(),
        Value::Boolean(_) => 1,
        Value::Int32(_) => 4,
        Value::DateTime(_) | Value::Double(_) | Value::Int64(_) => 8,
        Value::Guid(_) => 16,
        Value::String(text) => text.len(),
    }
}

#[test]
fn property_format_md_example_bytes_are_exact() {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    entity.set_timestamp(DateTime::parse("2024-01-01T00:00:00Z").unwrap());
    entity
        .set(PropertyName::new("Age").unwrap(), Value::Int32(42))
        .unwrap();
    assert_eq!(entity.timestamp().unwrap().ticks(), 638_396_640_000_000_000);
    let expected = [
        0x01, 0x01, 0x00, 0xC0, 0x00, 0x99, 0x5C, 0x0A, 0xDC, 0x08, 0x01, 0x03, b'A', b'g', b'e',
        0x06, 0x54,
    ];
    assert_eq!(property::encode(&entity), expected);
}
