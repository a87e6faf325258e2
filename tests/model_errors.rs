//! Every model error maps to one Table service error code and names its offending input.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::model::{
    DateTime, EdmType, Entity, Guid, ModelError, PartitionKey, PropertyName, RowKey, TableName,
    Value,
};

fn full_entity_error() -> ModelError {
    Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        (0..253).map(|i| (PropertyName::new(format!("P{i}")).unwrap(), Value::Int32(i))),
    )
    .unwrap_err()
}

fn oversized_entity_error() -> ModelError {
    Entity::with_properties(
        PartitionKey::new("p").unwrap(),
        RowKey::new("r").unwrap(),
        (0..17).map(|i| {
            (
                PropertyName::new(format!("B{i}")).unwrap(),
                Value::binary(vec![0; 65536]).unwrap(),
            )
        }),
    )
    .unwrap_err()
}

#[test]
fn every_model_error_maps_to_a_service_error_code() {
    let cases: Vec<(ModelError, &str)> = vec![
        (TableName::new("a_b").unwrap_err(), "InvalidResourceName"),
        (TableName::new("Tables").unwrap_err(), "InvalidResourceName"),
        (PartitionKey::new("a/b").unwrap_err(), "OutOfRangeInput"),
        (
            RowKey::new("r".repeat(513)).unwrap_err(),
            "KeyValueTooLarge",
        ),
        (PropertyName::new("a-b").unwrap_err(), "PropertyNameInvalid"),
        (
            PropertyName::new("RowKey").unwrap_err(),
            "PropertyNameInvalid",
        ),
        (
            PropertyName::new("p".repeat(256)).unwrap_err(),
            "PropertyNameTooLong",
        ),
        (
            Value::string("s".repeat(32 * 1024 + 1)).unwrap_err(),
            "PropertyValueTooLarge",
        ),
        (
            Value::binary(vec![0; 65537]).unwrap_err(),
            "PropertyValueTooLarge",
        ),
        (DateTime::from_ticks(0).unwrap_err(), "OutOfRangeInput"),
        (full_entity_error(), "TooManyProperties"),
        (oversized_entity_error(), "EntityTooLarge"),
        (
            EdmType::from_annotation(Some("Edm.Byte")).unwrap_err(),
            "InvalidValueType",
        ),
        (Guid::parse("nope").unwrap_err(), "InvalidInput"),
        (
            Value::from_wire(EdmType::Int64, "1.5").unwrap_err(),
            "InvalidInput",
        ),
    ];
    for (err, code) in cases {
        assert_eq!(err.azure_code(), code, "{err:?}");
    }
}

#[test]
fn error_messages_name_the_offending_input() {
    let msg = |e: ModelError| e.to_string();
    assert_eq!(
        msg(TableName::new("a_b").unwrap_err()),
        "table name \"a_b\" is invalid: contains a character other than ASCII letters and digits"
    );
    assert_eq!(
        msg(RowKey::new("x#").unwrap_err()),
        "RowKey \"x#\" contains forbidden character '#' at byte offset 1"
    );
    assert_eq!(
        msg(PropertyName::new("Timestamp").unwrap_err()),
        "property name \"Timestamp\" is reserved for a system property"
    );
    assert_eq!(
        msg(Value::from_wire(EdmType::Int32, "x").unwrap_err()),
        "\"x\" is not a valid Edm.Int32: not a decimal integer"
    );
    assert_eq!(
        msg(full_entity_error()),
        "entity would have 253 custom properties, over the limit of 252"
    );
}

#[test]
fn datetime_and_guid_parse_through_from_str() {
    let t: DateTime = "2001-02-03T04:05:06Z".parse().unwrap();
    assert_eq!(t.to_string(), "2001-02-03T04:05:06.0000000Z");
    let g: Guid = "00000000-0000-0000-0000-000000000001".parse().unwrap();
    assert_eq!(g.0[15], 1);
    assert!("x".parse::<Guid>().is_err());
}
