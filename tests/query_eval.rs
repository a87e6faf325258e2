//! Typed evaluation with the service's rules, on decoded entities and on encoded rows read in
//! place (which must always agree).
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use strata::codec::CodecError;
use strata::codec::property::{self, PropertyReader};
use strata::model::{DateTime, Entity, Guid, PartitionKey, PropertyName, RowKey, Value};
use strata::query::{EncodedEntity, Filter, TableRow};

fn entity(pk: &str, rk: &str, properties: &[(&str, Value)]) -> Entity {
    let mut entity = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
    entity.set_timestamp(DateTime::parse("2024-05-01T12:00:00Z").unwrap());
    for (name, value) in properties {
        entity
            .set(PropertyName::new(*name).unwrap(), value.clone())
            .unwrap();
    }
    entity
}

/// Evaluates on the entity and on its encoding, asserting both agree.
fn matches(filter: &str, entity: &Entity) -> bool {
    let filter = Filter::parse(filter).unwrap();
    let decoded = filter.matches(entity).unwrap();
    let bytes = property::encode(entity);
    let row = EncodedEntity {
        partition_key: entity.partition_key().as_str(),
        row_key: entity.row_key().as_str(),
        reader: PropertyReader::new(&bytes).unwrap(),
    };
    assert_eq!(filter.matches(&row).unwrap(), decoded, "{filter}");
    decoded
}

fn one(name: &str, value: Value) -> Entity {
    entity("p", "r", &[(name, value)])
}

#[test]
fn missing_property_matches_no_operator_not_even_ne() {
    let e = one("Other", Value::Int32(1));
    for op in ["eq", "ne", "gt", "ge", "lt", "le"] {
        assert!(!matches(&format!("Age {op} 1"), &e), "{op}");
    }
    assert!(matches("not (Age eq 1)", &e));
}

#[test]
fn type_mismatch_matches_no_operator_not_even_ne() {
    let e = one("Age", Value::string("42").unwrap());
    for literal in ["42", "42L", "42.0", "true", "X'42'"] {
        for op in ["eq", "ne", "lt", "gt"] {
            assert!(
                !matches(&format!("Age {op} {literal}"), &e),
                "{op} {literal}"
            );
        }
    }
}

#[test]
fn int32_literal_does_not_match_int64_property_and_back() {
    let long = one("N", Value::Int64(5));
    assert!(!matches("N eq 5", &long));
    assert!(matches("N eq 5L", &long));
    assert!(matches("N gt 4L and N lt 6L", &long));
    let int = one("N", Value::Int32(5));
    assert!(matches("N eq 5", &int));
    assert!(!matches("N eq 5L", &int));
    assert!(!matches("N eq 5.0", &int));
}

#[test]
fn int64_compares_over_its_whole_range() {
    let e = one("N", Value::Int64(i64::MIN));
    assert!(matches("N lt -9223372036854775807L", &e));
    assert!(matches("N eq -9223372036854775808L", &e));
    let e = one("N", Value::Int64(120));
    assert!(
        !matches("N ge 12L and N lt 13L", &e),
        "numeric, not textual, order"
    );
}

#[test]
fn int32_ordering() {
    let e = one("N", Value::Int32(-7));
    assert!(matches("N lt 0", &e));
    assert!(matches("N le -7 and N ge -7", &e));
    assert!(matches("N gt -8", &e));
    assert!(!matches("N ne -7", &e));
}

#[test]
fn double_compares_as_ieee() {
    let e = one("D", Value::Double(1.5));
    assert!(matches("D eq 1.5", &e));
    assert!(matches("D gt 1.0 and D lt 2e0", &e));
    assert!(!matches("D eq 1.5D and D ne 1.5", &e));
    let zero = one("D", Value::Double(-0.0));
    assert!(matches("D eq 0.0", &zero));
    let inf = one("D", Value::Double(f64::INFINITY));
    assert!(matches("D eq INF and D gt 1e308", &inf));
}

#[test]
fn double_nan_matches_only_ne() {
    let nan = one("D", Value::Double(f64::NAN));
    assert!(matches("D ne 1.0", &nan));
    assert!(matches("D ne NaN", &nan));
    for op in ["eq", "gt", "ge", "lt", "le"] {
        assert!(!matches(&format!("D {op} 1.0"), &nan), "{op}");
        assert!(!matches(&format!("D {op} NaN"), &nan), "{op} NaN");
    }
    let one_value = one("D", Value::Double(1.0));
    assert!(!matches("D eq NaN", &one_value));
    assert!(matches("D ne NaN", &one_value));
}

#[test]
fn string_compares_ordinally_by_code_point() {
    let e = one("S", Value::string("Bob").unwrap());
    assert!(matches("S eq 'Bob'", &e));
    assert!(!matches("S eq 'bob'", &e), "case-sensitive");
    assert!(matches("S lt 'a'", &e), "uppercase sorts before lowercase");
    assert!(matches("S gt 'Bo' and S lt 'Boba'", &e));
    let e = one("S", Value::string("\u{E000}").unwrap());
    assert!(matches("S lt '😀'", &e), "code point order (UTF-8 bytes)");
    let quoted = one("S", Value::string("it's").unwrap());
    assert!(matches("S eq 'it''s'", &quoted));
}

#[test]
fn boolean_eq_ne_and_false_before_true() {
    let t = one("B", Value::Boolean(true));
    assert!(matches("B eq true", &t));
    assert!(matches("B ne false", &t));
    assert!(matches("B gt false", &t));
    assert!(!matches("B lt true", &t));
    assert!(!matches("B eq 1", &t));
}

#[test]
fn datetime_compares_by_ticks() {
    let at = DateTime::parse("2024-05-01T12:00:00.0000001Z").unwrap();
    let e = one("When", Value::DateTime(at));
    assert!(matches("When gt datetime'2024-05-01T12:00:00Z'", &e));
    assert!(matches(
        "When eq datetime'2024-05-01T12:00:00.0000001Z'",
        &e
    ));
    assert!(matches(
        "When lt datetime'2024-05-01T12:00:00.0000002+00:00'",
        &e
    ));
    assert!(
        !matches("When eq '2024-05-01T12:00:00.0000001Z'", &e),
        "a string is not a DateTime"
    );
}

#[test]
fn timestamp_is_a_datetime_field() {
    let e = entity("p", "r", &[]);
    assert!(matches("Timestamp eq datetime'2024-05-01T12:00:00Z'", &e));
    assert!(matches("Timestamp lt datetime'2025-01-01T00:00:00Z'", &e));
    assert!(!matches("Timestamp eq '2024-05-01T12:00:00Z'", &e));
    let unstamped = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    assert!(!matches(
        "Timestamp ne datetime'2024-05-01T12:00:00Z'",
        &unstamped
    ));
}

#[test]
fn guid_compares_in_textual_order() {
    let g = Guid::parse("00000000-0000-0000-0000-0000000000ff").unwrap();
    let e = one("G", Value::Guid(g));
    assert!(matches(
        "G eq guid'00000000-0000-0000-0000-0000000000FF'",
        &e
    ));
    assert!(matches(
        "G lt guid'00000000-0000-0000-0000-000000000100'",
        &e
    ));
    assert!(matches(
        "G gt guid'00000000-0000-0000-0000-0000000000fe'",
        &e
    ));
    assert!(matches(
        "G lt guid'10000000-0000-0000-0000-000000000000'",
        &e
    ));
    assert!(!matches("G eq '00000000-0000-0000-0000-0000000000ff'", &e));
}

#[test]
fn binary_compares_bytewise() {
    let e = one("Bin", Value::binary(vec![0x0A, 0x1B]).unwrap());
    assert!(matches("Bin eq X'0A1B'", &e));
    assert!(matches("Bin eq binary'0a1b'", &e));
    assert!(matches("Bin gt X'0A'", &e), "a proper prefix sorts first");
    assert!(matches("Bin lt X'0A1C'", &e));
    assert!(matches("Bin lt X'FF'", &e));
    assert!(!matches("Bin eq '0A1B'", &e));
}

#[test]
fn keys_compare_as_strings() {
    let e = entity("Sales", "0042", &[]);
    assert!(matches("PartitionKey eq 'Sales' and RowKey eq '0042'", &e));
    assert!(matches("RowKey ge '0040' and RowKey lt '0050'", &e));
    assert!(!matches("RowKey eq 42", &e), "a key is an Edm.String");
    assert!(!matches("RowKey ne 42", &e));
    assert!(!matches("PartitionKey eq 'sales'", &e));
}

#[test]
fn boolean_connectives_short_circuit_correctly() {
    let e = one("A", Value::Int32(1));
    assert!(matches("A eq 1 or Missing eq 1", &e));
    assert!(matches("Missing eq 1 or A eq 1", &e));
    assert!(!matches("A eq 1 and Missing eq 1", &e));
    assert!(matches("not (A eq 2) and not (Missing eq 1)", &e));
    assert!(matches("not not A eq 1", &e));
}

#[test]
fn heterogeneous_types_in_one_partition() {
    let a = entity(
        "p",
        "1",
        &[
            ("Kind", Value::string("order").unwrap()),
            ("Total", Value::Double(9.5)),
        ],
    );
    let b = entity(
        "p",
        "2",
        &[
            ("Kind", Value::string("customer").unwrap()),
            ("Total", Value::Int32(3)),
        ],
    );
    let filter = "Kind eq 'order' and Total gt 5.0";
    assert!(matches(filter, &a));
    assert!(!matches(filter, &b));
    assert!(matches("Total gt 1", &b));
    assert!(!matches("Total gt 1", &a));
}

#[test]
fn table_row_exposes_only_table_name() {
    let row = TableRow("Customers");
    let check = |text: &str| Filter::parse(text).unwrap().matches(&row).unwrap();
    assert!(check("TableName eq 'Customers'"));
    assert!(!check("TableName eq 'customers'"));
    assert!(check("TableName ge 'C' and TableName lt 'D'"));
    assert!(!check("PartitionKey eq ''"));
    assert!(!check("PartitionKey ne 'x'"));
    assert!(!check("RowKey ge ''"));
    assert!(!check("Timestamp gt datetime'1601-01-01T00:00:00Z'"));
}

#[test]
fn corrupt_property_is_an_error_not_a_match() {
    let e = one("B", Value::Boolean(true));
    let mut bytes = property::encode(&e);
    *bytes.last_mut().unwrap() = 7; // the boolean byte
    let row = EncodedEntity {
        partition_key: "p",
        row_key: "r",
        reader: PropertyReader::new(&bytes).unwrap(),
    };
    let result = Filter::parse("B eq true").unwrap().matches(&row);
    assert!(
        matches!(result, Err(CodecError::BadBoolean { byte: 7, .. })),
        "{result:?}"
    );
    // A filter on keys alone never reads the corrupt value.
    assert!(
        Filter::parse("PartitionKey eq 'p'")
            .unwrap()
            .matches(&row)
            .unwrap()
    );
}

#[test]
fn bare_boolean_property_matches_only_a_true_boolean() {
    let yes = one("IsActive", Value::Boolean(true));
    let no = one("IsActive", Value::Boolean(false));
    let text = one("IsActive", Value::string("true").unwrap());
    let missing = one("Other", Value::Boolean(true));
    assert!(matches("IsActive", &yes));
    for other in [&no, &text, &missing] {
        assert!(!matches("IsActive", other), "{other:?}");
        assert!(matches("not IsActive", other), "{other:?}");
    }
    assert!(!matches("not IsActive", &yes));
    let both = entity(
        "p",
        "r",
        &[
            ("IsActive", Value::Boolean(true)),
            ("Count", Value::Int32(6)),
        ],
    );
    assert!(matches("IsActive and Count gt 5", &both));
    assert!(!matches("IsActive and Count gt 6", &both));
}

#[test]
fn boolean_constant_matches_every_row_or_none() {
    let e = one("Flag", Value::Boolean(false));
    assert!(matches("true", &e));
    assert!(!matches("false", &e));
    assert!(matches("not false", &e));
    assert!(!matches("PartitionKey eq 'p' and false", &e));
    assert!(matches("PartitionKey eq 'p' and true", &e));
    assert!(matches("false or Flag eq false", &e));
    assert!(!matches("false or Flag eq true", &e));
    let table = TableRow("anything");
    assert!(Filter::parse("true").unwrap().matches(&table).unwrap());
    assert!(!Filter::parse("false").unwrap().matches(&table).unwrap());
}
