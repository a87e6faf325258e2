//! SPEC §2 rules for entities: property count, 1 MiB size, null removes, ordered properties.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::model::{DateTime, Entity, ModelError, PartitionKey, PropertyName, RowKey, Value};

fn entity(pk: &str, rk: &str) -> Entity {
    Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap())
}

fn name(i: usize) -> PropertyName {
    PropertyName::new(format!("P{i:03}")).unwrap()
}

#[test]
fn entity_keys_and_timestamp_are_kept() {
    let mut e = entity("pk", "");
    assert_eq!(e.partition_key().as_str(), "pk");
    assert_eq!(e.row_key().as_str(), "");
    assert_eq!(e.timestamp(), None);
    e.set_timestamp(DateTime::MIN);
    assert_eq!(e.timestamp(), Some(DateTime::MIN));
}

#[test]
fn entity_252_properties_are_accepted_and_253_rejected() {
    let mut e = Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        (0..252).map(|i| (name(i), Value::Int32(0))),
    )
    .unwrap();
    assert_eq!(e.properties().len(), 252);
    let before = e.clone();
    let err = e.set(name(252), Value::Int32(0)).unwrap_err();
    assert_eq!(err, ModelError::TooManyProperties { count: 253 });
    assert_eq!(err.azure_code(), "TooManyProperties");
    assert_eq!(e, before);
    // Replacing an existing property at the limit is fine.
    e.set(name(0), Value::Boolean(true)).unwrap();
    assert_eq!(e.get("P000"), Some(&Value::Boolean(true)));
    let err = Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        (0..253).map(|i| (name(i), Value::Int32(0))),
    )
    .unwrap_err();
    assert_eq!(err, ModelError::TooManyProperties { count: 253 });
}

#[test]
fn entity_size_follows_service_estimate() {
    let mut e = entity("ab", "c");
    assert_eq!(e.size(), 4 + 3 * 2);
    e.set(
        PropertyName::new("Name").unwrap(),
        Value::string("héllo").unwrap(),
    )
    .unwrap();
    assert_eq!(e.size(), 10 + 8 + 4 * 2 + (5 * 2 + 4));
    e.set(PropertyName::new("Name").unwrap(), Value::Int64(1))
        .unwrap();
    assert_eq!(e.size(), 10 + 8 + 4 * 2 + 8);
    e.remove("Name");
    assert_eq!(e.size(), 10);
}

/// Properties named `Bnnn` holding `Binary` values: (name, value) whose sizes add to `total`
/// exactly, each ≤ 64 KiB.
fn binaries_totalling(total: usize) -> Vec<(PropertyName, Value)> {
    // Each property costs 8 + 4 * 2 (name) + 4 (length) + its bytes.
    const OVERHEAD: usize = 8 + 8 + 4;
    const CHUNK: usize = 65536;
    let mut left = total;
    let mut out = Vec::new();
    while left > 0 {
        let bytes = (left - OVERHEAD).min(CHUNK);
        out.push((
            PropertyName::new(format!("B{:03}", out.len())).unwrap(),
            Value::binary(vec![0xab; bytes]).unwrap(),
        ));
        left -= OVERHEAD + bytes;
        assert!(left == 0 || left > OVERHEAD + 1, "test arithmetic");
    }
    out
}

#[test]
fn entity_of_exactly_1_mib_is_accepted() {
    let keys = 4 + 2 * 2;
    let e = Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        binaries_totalling(1024 * 1024 - keys),
    )
    .unwrap();
    assert_eq!(e.size(), 1024 * 1024);
}

#[test]
fn entity_over_1_mib_is_rejected_and_left_unchanged() {
    let keys = 4 + 2 * 2;
    let mut e = Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        binaries_totalling(1024 * 1024 - keys),
    )
    .unwrap();
    let before = e.clone();
    let err = e
        .set(PropertyName::new("x").unwrap(), Value::Boolean(true))
        .unwrap_err();
    assert_eq!(
        err,
        ModelError::EntityTooLarge {
            size: 1024 * 1024 + 8 + 2 + 1
        }
    );
    assert_eq!(err.azure_code(), "EntityTooLarge");
    assert_eq!(e, before);
    // Growing an existing (the last, partly filled) property past the limit is refused too.
    let (last, value) = e.properties().last().cloned().unwrap();
    assert!(value.size() < 65536);
    let err = e.set(last, Value::Binary(vec![0; 65536])).unwrap_err();
    assert!(matches!(err, ModelError::EntityTooLarge { .. }));
    // Shrinking one is fine.
    e.set(PropertyName::new("B000").unwrap(), Value::Boolean(false))
        .unwrap();
    assert!(e.size() < 1024 * 1024);
}

#[test]
fn entity_rejects_oversized_values_built_from_variants() {
    let mut e = entity("p", "r");
    let err = e
        .set(
            PropertyName::new("s").unwrap(),
            Value::String("x".repeat(32 * 1024 + 1)),
        )
        .unwrap_err();
    assert!(matches!(err, ModelError::StringTooLarge { .. }));
    assert!(e.properties().is_empty());
}

#[test]
fn null_removes_the_property() {
    let mut e = entity("p", "r");
    e.set(PropertyName::new("a").unwrap(), Value::Int32(1))
        .unwrap();
    e.set(PropertyName::new("b").unwrap(), Value::Int32(2))
        .unwrap();
    e.set_or_remove(PropertyName::new("a").unwrap(), None)
        .unwrap();
    assert_eq!(e.get("a"), None);
    assert_eq!(e.properties().len(), 1);
    // Null on an absent property is not an error; nothing is stored for it.
    e.set_or_remove(PropertyName::new("zz").unwrap(), None)
        .unwrap();
    assert_eq!(e.properties().len(), 1);
    e.set_or_remove(PropertyName::new("c").unwrap(), Some(Value::Int32(3)))
        .unwrap();
    assert_eq!(e.get("c"), Some(&Value::Int32(3)));
    assert_eq!(e.remove("c"), Some(Value::Int32(3)));
    assert_eq!(e.remove("c"), None);
}

#[test]
fn properties_keep_insertion_order_and_replace_in_place() {
    let mut e = entity("p", "r");
    for n in ["z", "a", "m"] {
        e.set(PropertyName::new(n).unwrap(), Value::Int32(0))
            .unwrap();
    }
    e.set(PropertyName::new("a").unwrap(), Value::Int64(9))
        .unwrap();
    let order: Vec<_> = e.properties().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order, ["z", "a", "m"]);
    assert_eq!(e.get("a"), Some(&Value::Int64(9)));
    e.remove("z");
    let order: Vec<_> = e.properties().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(order, ["a", "m"]);
}

#[test]
fn duplicate_property_names_are_rejected() {
    let err = Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        [
            (PropertyName::new("a").unwrap(), Value::Int32(1)),
            (PropertyName::new("a").unwrap(), Value::Int32(2)),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err,
        ModelError::DuplicateProperty {
            name: "a".to_owned()
        }
    );
    assert_eq!(err.azure_code(), "DuplicatePropertiesSpecified");
}

#[test]
fn property_names_are_case_sensitive() {
    let mut e = entity("p", "r");
    e.set(PropertyName::new("a").unwrap(), Value::Int32(1))
        .unwrap();
    e.set(PropertyName::new("A").unwrap(), Value::Int32(2))
        .unwrap();
    assert_eq!(e.properties().len(), 2);
    assert_eq!(e.get("A"), Some(&Value::Int32(2)));
}

#[test]
fn schema_free_same_name_may_change_type() {
    let mut e = entity("p", "r");
    e.set(PropertyName::new("v").unwrap(), Value::Int32(1))
        .unwrap();
    e.set(
        PropertyName::new("v").unwrap(),
        Value::string("one").unwrap(),
    )
    .unwrap();
    assert_eq!(e.get("v"), Some(&Value::String("one".to_owned())));
}

#[test]
fn entity_equality_is_bit_exact_for_doubles() {
    let with = |d: f64| {
        let mut e = entity("p", "r");
        e.set(PropertyName::new("d").unwrap(), Value::Double(d))
            .unwrap();
        e
    };
    assert_eq!(with(f64::NAN), with(f64::NAN));
    assert_ne!(with(0.0), with(-0.0));
}
