//! SPEC §2 rules for table names, keys and property names.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::collections::HashSet;

use strata::model::{KeyKind, ModelError, PartitionKey, PropertyName, RowKey, TableName};

fn table_reason(name: &str) -> &'static str {
    match TableName::new(name) {
        Err(ModelError::TableNameInvalid { reason, .. }) => reason,
        other => panic!("{name:?}: expected TableNameInvalid, got {other:?}"),
    }
}

#[test]
fn table_name_length_3_and_63_is_accepted() {
    assert_eq!(TableName::new("abc").unwrap().as_str(), "abc");
    let long = format!("A{}", "b1".repeat(31));
    assert_eq!(long.len(), 63);
    assert_eq!(TableName::new(long.clone()).unwrap().as_str(), long);
}

#[test]
fn table_name_length_2_and_64_is_rejected_as_out_of_range() {
    for (name, len) in [("ab".to_owned(), 2), ("a".repeat(64), 64)] {
        let error = TableName::new(&name).unwrap_err();
        assert!(
            matches!(&error, ModelError::TableNameLength { len: l, .. } if *l == len),
            "{name:?}: {error:?}"
        );
        assert_eq!(error.azure_code(), "OutOfRangeInput");
    }
    assert_eq!(table_reason(""), "is empty");
}

#[test]
fn table_name_must_start_with_a_letter() {
    assert_eq!(table_reason("1abc"), "does not start with an ASCII letter");
    assert_eq!(table_reason("_abc"), "does not start with an ASCII letter");
}

#[test]
fn table_name_only_ascii_alphanumerics() {
    for bad in ["ab-c", "ab_c", "ab c", "abç", "abc.", "Tablé"] {
        assert_eq!(
            table_reason(bad),
            "contains a character other than ASCII letters and digits",
            "{bad:?}"
        );
    }
}

#[test]
fn table_name_reserved_tables_is_rejected_in_any_case() {
    for name in ["tables", "Tables", "TABLES", "tAbLeS"] {
        let err = TableName::new(name).unwrap_err();
        assert_eq!(
            err,
            ModelError::TableNameReserved {
                name: name.to_owned()
            }
        );
        assert_eq!(err.azure_code(), "InvalidResourceName");
    }
    assert!(TableName::new("tables1").is_ok());
    assert!(TableName::new("table").is_ok());
}

#[test]
fn table_name_equality_and_hash_are_case_insensitive_preserving_case() {
    let created = TableName::new("MyTable").unwrap();
    let lookup = TableName::new("mytable").unwrap();
    assert_eq!(created, lookup);
    assert_eq!(created.cmp(&lookup), std::cmp::Ordering::Equal);
    assert_eq!(created.as_str(), "MyTable");
    assert_eq!(created.to_string(), "MyTable");
    assert_eq!(created.to_folded(), "mytable");
    let mut set = HashSet::new();
    set.insert(created);
    assert!(!set.insert(TableName::new("MYTABLE").unwrap()));
    assert_eq!(set.iter().next().unwrap().as_str(), "MyTable");
    assert_ne!(
        TableName::new("MyTable").unwrap(),
        TableName::new("MyTable2").unwrap()
    );
}

#[test]
fn table_name_orders_case_insensitively() {
    let mut names: Vec<_> = ["beta", "Alpha", "ALPHA2", "Gamma", "alpha1"]
        .into_iter()
        .map(|n| TableName::new(n).unwrap())
        .collect();
    names.sort();
    let spelled: Vec<_> = names.iter().map(TableName::as_str).collect();
    assert_eq!(spelled, ["Alpha", "alpha1", "ALPHA2", "beta", "Gamma"]);
}

#[test]
fn key_empty_is_valid() {
    assert_eq!(PartitionKey::new("").unwrap().as_str(), "");
    assert_eq!(RowKey::new("").unwrap().as_str(), "");
}

#[test]
fn key_forbidden_characters_are_rejected_with_their_offset() {
    for (ch, len) in [('/', 1), ('\\', 1), ('#', 1), ('?', 1)] {
        let key = format!("ké{ch}x");
        let err = PartitionKey::new(key.clone()).unwrap_err();
        assert_eq!(
            err,
            ModelError::KeyInvalidChar {
                which: KeyKind::PartitionKey,
                key: key.clone(),
                ch,
                index: 3,
            }
        );
        assert_eq!(ch.len_utf8(), len);
        assert_eq!(err.azure_code(), "OutOfRangeInput");
    }
    let err = RowKey::new("a?b").unwrap_err();
    assert!(matches!(
        err,
        ModelError::KeyInvalidChar {
            which: KeyKind::RowKey,
            ch: '?',
            index: 1,
            ..
        }
    ));
}

#[test]
fn key_control_characters_c0_and_c1_are_rejected() {
    for c in (0x00..=0x1f_u32).chain(0x7f..=0x9f) {
        let ch = char::from_u32(c).unwrap();
        let err = RowKey::new(format!("a{ch}")).unwrap_err();
        assert!(
            matches!(err, ModelError::KeyInvalidChar { ch: got, index: 1, .. } if got == ch),
            "U+{c:04X}: {err:?}"
        );
    }
    // The neighbours of the forbidden ranges are allowed.
    for ok in ["\u{20}", "\u{7e}", "\u{a0}", "a b", "ü", "😀"] {
        assert!(RowKey::new(ok).is_ok(), "{ok:?}");
    }
}

#[test]
fn key_of_exactly_1_kib_is_accepted() {
    assert!(PartitionKey::new("a".repeat(512)).is_ok());
    // Two-byte UTF-8, one UTF-16 unit each: 512 units = 1024 bytes.
    assert!(RowKey::new("é".repeat(512)).is_ok());
    // A surrogate pair is two UTF-16 units: 256 of them = 1024 bytes.
    assert!(RowKey::new("😀".repeat(256)).is_ok());
}

#[test]
fn key_over_1_kib_is_rejected() {
    let err = PartitionKey::new("a".repeat(513)).unwrap_err();
    assert_eq!(
        err,
        ModelError::KeyTooLarge {
            which: KeyKind::PartitionKey,
            len_bytes: 1026
        }
    );
    assert_eq!(err.azure_code(), "KeyValueTooLarge");
    // 255 surrogate pairs + 1 BMP char = 511 units (1022 bytes), fine; one more pair makes
    // 513 units: a surrogate pair cannot fill the last 2 bytes, so the key goes 2 over.
    let fits = format!("{}x", "😀".repeat(255));
    assert!(RowKey::new(fits.clone()).is_ok());
    let over = format!("{fits}😀");
    assert_eq!(
        RowKey::new(over).unwrap_err(),
        ModelError::KeyTooLarge {
            which: KeyKind::RowKey,
            len_bytes: 1026
        }
    );
    assert_eq!(
        RowKey::new("é".repeat(513)).unwrap_err(),
        ModelError::KeyTooLarge {
            which: KeyKind::RowKey,
            len_bytes: 1026
        }
    );
}

#[test]
fn key_ordering_is_ordinal_with_prefix_first() {
    let mut keys: Vec<_> = ["b", "a", "ab", "", "B"]
        .into_iter()
        .map(|k| PartitionKey::new(k).unwrap())
        .collect();
    keys.sort();
    let got: Vec<_> = keys.iter().map(PartitionKey::as_str).collect();
    assert_eq!(got, ["", "B", "a", "ab", "b"]);
}

fn property_error(name: &str) -> ModelError {
    PropertyName::new(name).unwrap_err()
}

#[test]
fn property_name_csharp_identifier_is_accepted() {
    for ok in ["a", "_", "_a1", "Name", "Ünïcode", "名前", "x_9_y", "Δ2"] {
        assert_eq!(PropertyName::new(ok).unwrap().as_str(), ok);
    }
}

#[test]
fn property_name_not_an_identifier_is_rejected() {
    for bad in [
        "1a",
        "-a",
        "a-b",
        "a.b",
        "odata.etag",
        "a b",
        "a$",
        "a@odata.type",
    ] {
        let err = property_error(bad);
        assert!(
            matches!(err, ModelError::PropertyNameInvalid { .. }),
            "{bad:?}: {err:?}"
        );
        assert_eq!(err.azure_code(), "PropertyNameInvalid");
    }
    assert_eq!(
        property_error(""),
        ModelError::PropertyNameInvalid {
            name: String::new(),
            reason: "is empty"
        }
    );
}

#[test]
fn property_name_dash_is_rejected() {
    assert_eq!(
        property_error("first-name"),
        ModelError::PropertyNameInvalid {
            name: "first-name".to_owned(),
            reason: "contains a character other than letters, digits and '_'"
        }
    );
}

#[test]
fn property_name_of_255_chars_is_accepted_and_256_rejected() {
    assert!(PropertyName::new("p".repeat(255)).is_ok());
    let err = property_error(&"p".repeat(256));
    assert!(matches!(
        err,
        ModelError::PropertyNameTooLong { len: 256, .. }
    ));
    assert_eq!(err.azure_code(), "PropertyNameTooLong");
}

#[test]
fn property_name_system_names_are_reserved() {
    for name in ["PartitionKey", "RowKey", "Timestamp"] {
        assert!(PropertyName::is_reserved(name));
        assert_eq!(
            property_error(name),
            ModelError::PropertyNameReserved {
                name: name.to_owned()
            }
        );
    }
    // Property names are case-sensitive, so other spellings are ordinary names.
    assert!(!PropertyName::is_reserved("timestamp"));
    assert!(PropertyName::new("rowKey").is_ok());
}

#[test]
fn error_keeps_only_an_excerpt_of_a_huge_input() {
    let huge = format!("-{}", "x".repeat(10_000));
    match property_error(&huge) {
        ModelError::PropertyNameInvalid { name, .. } => assert_eq!(name.chars().count(), 128),
        other => panic!("{other:?}"),
    }
}
