//! A Merge written from the stored bytes writes exactly what the Entity path writes, and
//! declines (for the Entity path to report) whatever that path would reject.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod codec_support;

use codec_support::{entity, value};
use proptest::prelude::*;
use strata::codec::property;
use strata::model::{DateTime, Entity, PropertyName, Value};

/// The Entity path: decode the stored row, set each update property in order, encode.
fn merged_by_entity(stored: &[u8], update: &Entity, timestamp: DateTime) -> Option<Vec<u8>> {
    let mut merged = property::decode_stored(
        update.partition_key().clone(),
        update.row_key().clone(),
        stored,
    )
    .ok()?;
    for (name, value) in update.properties() {
        merged.set(name.clone(), value.clone()).ok()?;
    }
    merged.set_timestamp(timestamp);
    Some(property::encode(&merged))
}

fn merged_from_bytes(stored: &[u8], update: &Entity, timestamp: DateTime) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    property::merge_stored_into(stored, update, timestamp, &mut out).map(|()| out)
}

fn timestamp() -> DateTime {
    DateTime::from_ticks(638_000_000_000_000_123).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn merge_from_stored_bytes_writes_what_the_entity_path_writes(
        stored in entity(24),
        overrides in prop::collection::vec(prop::option::of(value()), 24),
        extra in entity(8),
    ) {
        let bytes = property::encode(&stored);
        let mut update = Entity::new(stored.partition_key().clone(), stored.row_key().clone());
        // Some stored names get new values (in another order), then some new names.
        for ((name, _), value) in stored.properties().iter().rev().zip(&overrides) {
            if let Some(value) = value {
                update.set(name.clone(), value.clone()).unwrap();
            }
        }
        for (name, value) in extra.properties() {
            update.set(name.clone(), value.clone()).unwrap();
        }
        let expected = merged_by_entity(&bytes, &update, timestamp());
        prop_assert!(expected.is_some());
        prop_assert_eq!(merged_from_bytes(&bytes, &update, timestamp()), expected);
    }
}

#[test]
fn merge_from_stored_bytes_declines_a_merge_the_entity_path_rejects() {
    let big = |n: usize| Value::String("x".repeat(n));
    let name = |n: &str| PropertyName::new(n).unwrap();
    let mut stored = Entity::new(
        strata::model::PartitionKey::new("p").unwrap(),
        strata::model::RowKey::new("r").unwrap(),
    );
    for index in 0..20 {
        stored.set(name(&format!("S{index}")), big(26_000)).unwrap();
    }
    let bytes = property::encode(&stored);
    // Growing one stored String past 1 MiB in total.
    let mut grow = Entity::new(stored.partition_key().clone(), stored.row_key().clone());
    grow.set(name("S0"), big(32_000)).unwrap();
    grow.set(name("New"), big(32_000)).unwrap();
    assert_eq!(merged_by_entity(&bytes, &grow, timestamp()), None);
    assert_eq!(merged_from_bytes(&bytes, &grow, timestamp()), None);
    // Over the limit part way through, under it at the end: still rejected, as `set` is.
    let mut through = Entity::new(stored.partition_key().clone(), stored.row_key().clone());
    through.set(name("S0"), big(32_000)).unwrap();
    through.set(name("S1"), big(1)).unwrap();
    through.set(name("S2"), big(1)).unwrap();
    assert!(stored.size() + 2 * 6_000 > 1 << 20 && stored.size() < 1 << 20);
    assert_eq!(merged_by_entity(&bytes, &through, timestamp()), None);
    assert_eq!(merged_from_bytes(&bytes, &through, timestamp()), None);
}

#[test]
fn merge_from_stored_bytes_declines_bytes_the_decoder_rejects() {
    let mut stored = Entity::new(
        strata::model::PartitionKey::new("p").unwrap(),
        strata::model::RowKey::new("r").unwrap(),
    );
    stored
        .set(
            PropertyName::new("Text").unwrap(),
            Value::String("abc".to_owned()),
        )
        .unwrap();
    stored
        .set(PropertyName::new("Flag").unwrap(), Value::Boolean(true))
        .unwrap();
    let bytes = property::encode(&stored);
    let mut update = Entity::new(stored.partition_key().clone(), stored.row_key().clone());
    update
        .set(PropertyName::new("N").unwrap(), Value::Int32(1))
        .unwrap();
    assert!(merged_from_bytes(&bytes, &update, timestamp()).is_some());
    // Truncated, a trailing byte, a bad boolean byte, invalid UTF-8 in a value.
    let mut bad_boolean = bytes.clone();
    *bad_boolean.last_mut().unwrap() = 2;
    let mut bad_utf8 = bytes.clone();
    let at = bytes.windows(3).position(|w| w == b"abc").unwrap();
    bad_utf8[at] = 0xFF;
    for bad in [
        bytes[..bytes.len() - 1].to_vec(),
        [bytes.as_slice(), &[0]].concat(),
        bad_boolean,
        bad_utf8,
    ] {
        assert_eq!(merged_by_entity(&bad, &update, timestamp()), None);
        assert_eq!(
            merged_from_bytes(&bad, &update, timestamp()),
            None,
            "{bad:?}"
        );
    }
}
