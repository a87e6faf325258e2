//! Property-based checks of the model: wire forms round-trip for every EDM type, and the name
//! and key validators agree with their rules on arbitrary input.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use proptest::prelude::*;
use strata::model::{
    DateTime, EdmType, Guid, KeyKind, ModelError, PartitionKey, PropertyName, RowKey, TableName,
    Value,
};

const MIN_TICKS: i64 = 504_911_232_000_000_000;
const MAX_TICKS: i64 = 3_155_378_975_999_999_999;

fn any_value() -> impl Strategy<Value = Value> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..300).prop_map(Value::Binary),
        any::<bool>().prop_map(Value::Boolean),
        (MIN_TICKS..=MAX_TICKS).prop_map(|t| Value::DateTime(DateTime::from_ticks(t).unwrap())),
        any::<f64>().prop_map(Value::Double),
        any::<[u8; 16]>().prop_map(|b| Value::Guid(Guid(b))),
        any::<i32>().prop_map(Value::Int32),
        any::<i64>().prop_map(Value::Int64),
        "\\PC{0,50}".prop_map(Value::String),
    ]
}

fn is_forbidden_key_char(c: char) -> bool {
    matches!(c, '/' | '\\' | '#' | '?') || c.is_control()
}

proptest! {
    #[test]
    fn value_wire_form_round_trips(value in any_value()) {
        let back = Value::from_wire(value.edm_type(), &value.to_wire()).unwrap();
        match (&value, &back) {
            // The wire form has one spelling for every NaN.
            (Value::Double(a), Value::Double(b)) if a.is_nan() => prop_assert!(b.is_nan()),
            _ => prop_assert_eq!(back, value),
        }
    }

    #[test]
    fn value_from_wire_never_panics(tag in 1_u8..=8, text in "\\PC{0,60}") {
        let edm = EdmType::from_tag(tag).unwrap();
        if let Ok(v) = Value::from_wire(edm, &text) {
            prop_assert_eq!(v.edm_type(), edm);
        }
    }

    #[test]
    fn key_is_accepted_iff_no_forbidden_char_and_within_1_kib(key in "\\PC{0,40}|[a/#?\\\\\u{1}\u{7f}\u{85}\u{a0}é€😀]{0,600}") {
        let units: usize = key.chars().map(char::len_utf16).sum();
        let forbidden = key.char_indices().find(|&(_, c)| is_forbidden_key_char(c));
        match (PartitionKey::new(key.clone()), forbidden) {
            (Err(ModelError::KeyInvalidChar { which, ch, index, .. }), Some((i, c))) => {
                prop_assert_eq!(which, KeyKind::PartitionKey);
                prop_assert_eq!((index, ch), (i, c));
            }
            (Err(ModelError::KeyTooLarge { len_bytes, .. }), None) => {
                prop_assert!(units * 2 > 1024);
                prop_assert_eq!(len_bytes, units * 2);
            }
            (Ok(pk), None) => {
                prop_assert!(units * 2 <= 1024);
                prop_assert_eq!(pk.as_str(), key.as_str());
                prop_assert!(RowKey::new(key.clone()).is_ok());
            }
            (other, forbidden) => prop_assert!(false, "{:?} for {:?} ({:?})", other, key, forbidden),
        }
    }

    #[test]
    fn ascii_identifier_property_names_are_accepted(name in "[A-Za-z_][A-Za-z0-9_]{0,254}") {
        prop_assume!(!PropertyName::is_reserved(&name));
        let accepted = PropertyName::new(name.clone()).unwrap();
        prop_assert_eq!(accepted.as_str(), name.as_str());
    }

    #[test]
    fn property_name_with_punctuation_is_rejected(
        head in "[A-Za-z_][A-Za-z0-9_]{0,20}",
        punct in "[-.$@ !+:/]",
        tail in "[A-Za-z0-9_]{0,20}",
    ) {
        let name = format!("{head}{punct}{tail}");
        let is_invalid = matches!(
            PropertyName::new(name),
            Err(ModelError::PropertyNameInvalid { .. })
        );
        prop_assert!(is_invalid);
    }

    #[test]
    fn table_name_is_accepted_iff_it_matches_the_pattern(name in "[A-Za-z0-9_-]{0,70}") {
        let bytes = name.as_bytes();
        let matches_pattern = (3..=63).contains(&bytes.len())
            && bytes[0].is_ascii_alphabetic()
            && bytes.iter().all(u8::is_ascii_alphanumeric);
        let reserved = name.eq_ignore_ascii_case("tables");
        prop_assert_eq!(TableName::new(name).is_ok(), matches_pattern && !reserved);
    }

    #[test]
    fn table_names_equal_iff_equal_ignoring_ascii_case(a in "[A-Za-z][A-Za-z0-9]{2,6}", b in "[A-Za-z][A-Za-z0-9]{2,6}") {
        prop_assume!(!a.eq_ignore_ascii_case("tables") && !b.eq_ignore_ascii_case("tables"));
        let (ta, tb) = (TableName::new(a.clone()).unwrap(), TableName::new(b.clone()).unwrap());
        prop_assert_eq!(ta == tb, a.eq_ignore_ascii_case(&b));
        prop_assert_eq!(ta.cmp(&tb), a.to_ascii_lowercase().cmp(&b.to_ascii_lowercase()));
    }
}
