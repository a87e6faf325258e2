//! Proptest strategies and sample entities shared by the codec tests.
#![allow(dead_code, reason = "each test binary uses a different part")]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::model::limits::{DATETIME_MAX_TICKS, DATETIME_MIN_TICKS};
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};

/// Characters a PartitionKey/RowKey may hold, biased towards a tiny alphabet so that
/// generated keys share prefixes, and covering the planes where UTF-8 and UTF-16 orders differ.
pub fn key_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'c'),
        2 => prop::char::range(' ', '~'),
        1 => prop::char::range('\u{A0}', '\u{D7FF}'),
        1 => prop::char::range('\u{E000}', '\u{FFFF}'),
        1 => prop::char::range('\u{10000}', '\u{10FFFF}'),
    ]
    .prop_filter("forbidden key character", |c| {
        !matches!(c, '/' | '\\' | '#' | '?')
    })
}

/// A valid key string of up to 12 characters.
pub fn key_string() -> impl Strategy<Value = String> {
    prop::collection::vec(key_char(), 0..12).prop_map(|chars| chars.into_iter().collect())
}

/// A valid PartitionKey.
pub fn partition_key() -> impl Strategy<Value = PartitionKey> {
    key_string().prop_map(|s| PartitionKey::new(s).unwrap())
}

/// A valid RowKey.
pub fn row_key() -> impl Strategy<Value = RowKey> {
    key_string().prop_map(|s| RowKey::new(s).unwrap())
}

/// A valid custom property name.
pub fn property_name() -> impl Strategy<Value = PropertyName> {
    prop_oneof![
        "[A-Za-z_][A-Za-z0-9_]{0,12}",
        "[a-z][a-z\u{E9}\u{3B1}-\u{3C9}0-9]{0,6}",
    ]
    .prop_filter_map("reserved name", |s| PropertyName::new(s).ok())
}

/// Doubles that include every NaN payload, both zeros and both infinities.
pub fn double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<u64>().prop_map(f64::from_bits),
        Just(-0.0),
        Just(0.0),
        Just(f64::NAN),
        Just(-f64::NAN),
        Just(f64::from_bits(0x7FF0_0000_0000_0001)),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        any::<f64>(),
    ]
}

/// A DateTime anywhere in the service's range, edges included.
pub fn date_time() -> impl Strategy<Value = DateTime> {
    prop_oneof![
        DATETIME_MIN_TICKS..=DATETIME_MAX_TICKS,
        Just(DATETIME_MIN_TICKS),
        Just(DATETIME_MAX_TICKS),
    ]
    .prop_map(|ticks| DateTime::from_ticks(ticks).unwrap())
}

/// A value of any EDM type.
pub fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(any::<u8>(), 0..48).prop_map(Value::Binary),
        any::<bool>().prop_map(Value::Boolean),
        date_time().prop_map(Value::DateTime),
        double().prop_map(Value::Double),
        any::<[u8; 16]>().prop_map(|b| Value::Guid(Guid(b))),
        any::<i32>().prop_map(Value::Int32),
        prop_oneof![Just(i32::MIN), Just(i32::MAX), Just(0), Just(-1)].prop_map(Value::Int32),
        any::<i64>().prop_map(Value::Int64),
        prop_oneof![Just(i64::MIN), Just(i64::MAX)].prop_map(Value::Int64),
        any::<String>().prop_map(Value::String),
    ]
}

/// An entity with random keys, an optional Timestamp and up to `max` distinct properties.
pub fn entity(max: usize) -> impl Strategy<Value = Entity> {
    (
        partition_key(),
        row_key(),
        prop::option::of(date_time()),
        prop::collection::vec((property_name(), value()), 0..max),
    )
        .prop_map(|(pk, rk, timestamp, properties)| {
            let mut entity = Entity::new(pk, rk);
            for (name, value) in properties {
                if entity.get(name.as_str()).is_none() {
                    entity.set(name, value).unwrap();
                }
            }
            if let Some(timestamp) = timestamp {
                entity.set_timestamp(timestamp);
            }
            entity
        })
}

/// The bench's typical entity: 6 properties of mixed types, about 200 bytes of data.
pub fn typical_entity() -> Entity {
    let mut entity = Entity::new(
        PartitionKey::new("customer-0042").unwrap(),
        RowKey::new("order-2024-000917").unwrap(),
    );
    entity.set_timestamp(DateTime::parse("2024-05-17T09:30:12.1234567Z").unwrap());
    let properties = [
        (
            "Name",
            Value::string("Ada Lovelace, Analytical Engines & Co. Ltd.").unwrap(),
        ),
        (
            "Address",
            Value::string("12 St James's Square, London SW1Y 4JH, United Kingdom (rear door)")
                .unwrap(),
        ),
        ("Quantity", Value::Int32(17)),
        ("Total", Value::Double(1234.56)),
        (
            "OrderedAt",
            Value::DateTime(DateTime::parse("2024-05-16T18:04:55Z").unwrap()),
        ),
        (
            "CustomerId",
            Value::Guid(Guid::parse("6f1c2a9e-3b4d-4e5f-8a9b-0c1d2e3f4a5b").unwrap()),
        ),
    ];
    for (name, value) in properties {
        entity.set(PropertyName::new(name).unwrap(), value).unwrap();
    }
    entity
}

/// A small entity with one property of every EDM type, for hand-made error cases.
pub fn every_type_entity() -> Entity {
    let mut entity = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    entity.set_timestamp(DateTime::from_ticks(DATETIME_MIN_TICKS + 1).unwrap());
    let properties = [
        ("Bin", Value::binary(vec![1, 2, 3]).unwrap()),
        ("Flag", Value::Boolean(true)),
        (
            "When",
            Value::DateTime(DateTime::from_ticks(DATETIME_MAX_TICKS).unwrap()),
        ),
        ("Ratio", Value::Double(-0.0)),
        ("Id", Value::Guid(Guid([7; 16]))),
        ("Small", Value::Int32(-300)),
        ("Big", Value::Int64(i64::MIN)),
        ("Text", Value::string("héllo").unwrap()),
    ];
    for (name, value) in properties {
        entity.set(PropertyName::new(name).unwrap(), value).unwrap();
    }
    entity
}
