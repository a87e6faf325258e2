//! SPEC §3–4: entity operations, Timestamps, ETags and their error codes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use strata::model::{DateTime, Entity, PartitionKey, PropertyName, RowKey, Value};
use strata::{ETag, IfMatch, TableError};
use table_support::{Fixture, entity, s};

#[test]
fn insert_then_get_returns_properties_timestamp_and_etag() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let e = entity("p", "r", &[("Name", s("Ann")), ("Age", Value::Int32(41))]);
    let etag = t.insert(&e).unwrap();
    let got = t.get("p", "r", None).unwrap();
    assert_eq!(got.etag, etag);
    assert_eq!(got.entity.get("Name"), Some(&s("Ann")));
    assert_eq!(got.entity.get("Age"), Some(&Value::Int32(41)));
    assert_eq!(got.entity.timestamp(), Some(etag.timestamp()));
    assert_eq!(got.entity.properties().len(), 2);
}

#[test]
fn insert_existing_key_is_entity_already_exists() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity("p", "r", &[])).unwrap();
    let err = t.insert(&entity("p", "r", &[])).unwrap_err();
    assert!(
        matches!(err, TableError::EntityAlreadyExists { .. }),
        "{err}"
    );
    assert_eq!(err.azure_code(), "EntityAlreadyExists");
    assert_eq!(err.http_status(), 409);
}

#[test]
fn user_supplied_timestamp_is_ignored() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let mut e = entity("p", "r", &[]);
    let old = DateTime::parse("2001-01-01T00:00:00Z").unwrap();
    e.set_timestamp(old);
    let etag = t.insert(&e).unwrap();
    assert_ne!(etag.timestamp(), old);
    assert_eq!(t.get("p", "r", None).unwrap().timestamp(), etag.timestamp());
}

#[test]
fn timestamp_strictly_advances_on_every_write() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let mut last = t.insert(&entity("p", "r", &[])).unwrap();
    for i in 0..200 {
        let next = t
            .replace(&entity("p", "r", &[("N", Value::Int32(i))]), IfMatch::Any)
            .unwrap();
        assert!(next.timestamp() > last.timestamp());
        last = next;
    }
}

#[test]
fn etag_has_the_service_format() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let text = t.insert(&entity("p", "r", &[])).unwrap().to_string();
    assert!(text.starts_with("W/\"datetime'"), "{text}");
    assert!(text.ends_with("Z'\""), "{text}");
    assert_eq!(text.matches("%3A").count(), 2, "{text}");
    assert_eq!(
        text.len(),
        "W/\"datetime'2024-05-01T12%3A00%3A00.1234567Z'\"".len()
    );
    assert_eq!(text.parse::<ETag>().unwrap().to_string(), text);
}

#[test]
fn malformed_etag_is_invalid_input() {
    for bad in [
        "\"strong\"",
        "W/\"datetime'2024-13-01T00%3A00%3A00Z'\"",
        "*",
        "",
    ] {
        let err = ETag::parse(bad).unwrap_err();
        assert_eq!(err.azure_code(), "InvalidInput", "{bad}");
        assert_eq!(err.http_status(), 400);
    }
}

#[test]
fn replace_with_stale_etag_is_update_condition_not_satisfied() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let first = t.insert(&entity("p", "r", &[])).unwrap();
    let second = t
        .replace(
            &entity("p", "r", &[("A", Value::Int32(1))]),
            IfMatch::Etag(first),
        )
        .unwrap();
    let err = t
        .replace(
            &entity("p", "r", &[("A", Value::Int32(2))]),
            IfMatch::Etag(first),
        )
        .unwrap_err();
    assert!(
        matches!(err, TableError::UpdateConditionNotSatisfied { .. }),
        "{err}"
    );
    assert_eq!(err.azure_code(), "UpdateConditionNotSatisfied");
    assert_eq!(err.http_status(), 412);
    assert_eq!(t.get("p", "r", None).unwrap().etag, second);
    for op in [
        t.merge(&entity("p", "r", &[]), IfMatch::Etag(first))
            .map(|_| ()),
        t.delete("p", "r", IfMatch::Etag(first)),
    ] {
        assert_eq!(op.unwrap_err().azure_code(), "UpdateConditionNotSatisfied");
    }
}

#[test]
fn replace_removes_properties_not_given() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity(
        "p",
        "r",
        &[("A", Value::Int32(1)), ("B", Value::Int32(2))],
    ))
    .unwrap();
    t.replace(&entity("p", "r", &[("C", Value::Int32(3))]), IfMatch::Any)
        .unwrap();
    let got = t.get("p", "r", None).unwrap().entity;
    assert_eq!(got.properties().len(), 1);
    assert_eq!(got.get("C"), Some(&Value::Int32(3)));
}

#[test]
fn merge_keeps_properties_not_given() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity(
        "p",
        "r",
        &[("A", Value::Int32(1)), ("B", Value::Int32(2))],
    ))
    .unwrap();
    t.merge(
        &entity("p", "r", &[("B", s("two")), ("C", Value::Boolean(true))]),
        IfMatch::Any,
    )
    .unwrap();
    let got = t.get("p", "r", None).unwrap().entity;
    assert_eq!(got.get("A"), Some(&Value::Int32(1)));
    assert_eq!(got.get("B"), Some(&s("two")));
    assert_eq!(got.get("C"), Some(&Value::Boolean(true)));
}

#[test]
fn update_or_delete_of_missing_entity_is_resource_not_found() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let e = entity("p", "missing", &[]);
    let errors = [
        t.replace(&e, IfMatch::Any).unwrap_err(),
        t.merge(&e, IfMatch::Any).unwrap_err(),
        t.delete("p", "missing", IfMatch::Any).unwrap_err(),
        t.get("p", "missing", None).unwrap_err(),
    ];
    for err in errors {
        assert!(matches!(err, TableError::ResourceNotFound { .. }), "{err}");
        assert_eq!(err.azure_code(), "ResourceNotFound");
        assert_eq!(err.http_status(), 404);
    }
}

#[test]
fn upserts_insert_when_missing_and_update_when_present() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert_or_replace(&entity("p", "a", &[("X", Value::Int32(1))]))
        .unwrap();
    t.insert_or_replace(&entity("p", "a", &[("Y", Value::Int32(2))]))
        .unwrap();
    let a = t.get("p", "a", None).unwrap().entity;
    assert_eq!((a.get("X"), a.get("Y")), (None, Some(&Value::Int32(2))));
    t.insert_or_merge(&entity("p", "b", &[("X", Value::Int32(1))]))
        .unwrap();
    t.insert_or_merge(&entity("p", "b", &[("Y", Value::Int32(2))]))
        .unwrap();
    let b = t.get("p", "b", None).unwrap().entity;
    assert_eq!(
        (b.get("X"), b.get("Y")),
        (Some(&Value::Int32(1)), Some(&Value::Int32(2)))
    );
}

#[test]
fn delete_with_any_or_current_etag_removes_the_entity() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity("p", "a", &[])).unwrap();
    let etag = t.insert(&entity("p", "b", &[])).unwrap();
    t.delete("p", "a", IfMatch::Any).unwrap();
    t.delete("p", "b", IfMatch::Etag(etag)).unwrap();
    assert_eq!(
        t.get("p", "a", None).unwrap_err().azure_code(),
        "ResourceNotFound"
    );
    assert_eq!(
        t.get("p", "b", None).unwrap_err().azure_code(),
        "ResourceNotFound"
    );
}

#[test]
fn get_with_select_returns_only_selected_properties() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity(
        "p",
        "r",
        &[("A", Value::Int32(1)), ("B", Value::Int32(2))],
    ))
    .unwrap();
    let got = t.get("p", "r", Some(&["B", "Missing", "RowKey"])).unwrap();
    assert_eq!(got.entity.properties().len(), 1);
    assert_eq!(got.entity.get("B"), Some(&Value::Int32(2)));
    assert_eq!(got.entity.row_key().as_str(), "r");
    assert!(got.entity.timestamp().is_some());
}

#[test]
fn bad_key_characters_are_out_of_range_input() {
    let fx = Fixture::new();
    let t = fx.table("People");
    for bad in ["a/b", "a\\b", "a#b", "a?b", "a\u{1}b", "a\u{85}b"] {
        let err = t.get(bad, "r", None).unwrap_err();
        assert_eq!(err.azure_code(), "OutOfRangeInput", "{bad:?}");
        assert_eq!(err.http_status(), 400);
        let err = t.delete("p", bad, IfMatch::Any).unwrap_err();
        assert_eq!(err.azure_code(), "OutOfRangeInput", "{bad:?}");
    }
}

#[test]
fn key_over_one_kib_is_rejected() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let long = "k".repeat(513);
    let err = t.get(&long, "r", None).unwrap_err();
    assert_eq!(err.http_status(), 400);
    assert_eq!(err.azure_code(), "KeyValueTooLarge");
    let fits = "k".repeat(512);
    t.insert(&entity(&fits, &fits, &[])).unwrap();
    assert!(t.get(&fits, &fits, None).is_ok());
}

#[test]
fn empty_keys_are_valid() {
    let fx = Fixture::new();
    let t = fx.table("People");
    t.insert(&entity("", "", &[("A", Value::Int32(1))]))
        .unwrap();
    assert_eq!(
        t.get("", "", None).unwrap().entity.get("A"),
        Some(&Value::Int32(1))
    );
}

#[test]
fn merge_past_252_properties_is_too_many_properties() {
    let fx = Fixture::new();
    let t = fx.table("Wide");
    let first: Vec<(String, Value)> = (0..200)
        .map(|i| (format!("A{i}"), Value::Int32(i)))
        .collect();
    let second: Vec<(String, Value)> = (0..60)
        .map(|i| (format!("B{i}"), Value::Int32(i)))
        .collect();
    let build = |props: &[(String, Value)]| {
        let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
        for (name, value) in props {
            e.set(PropertyName::new(name.as_str()).unwrap(), value.clone())
                .unwrap();
        }
        e
    };
    t.insert(&build(&first)).unwrap();
    let err = t.merge(&build(&second), IfMatch::Any).unwrap_err();
    assert!(
        matches!(err, TableError::TooManyProperties { count: 253, .. }),
        "{err}"
    );
    assert_eq!(err.azure_code(), "TooManyProperties");
    assert_eq!(err.http_status(), 400);
    assert_eq!(
        t.get("p", "r", None).unwrap().entity.properties().len(),
        200
    );
}

#[test]
fn merge_past_one_mib_is_entity_too_large() {
    let fx = Fixture::new();
    let t = fx.table("Big");
    let chunk = Value::Binary(vec![7; 60 * 1024]);
    let a: Vec<(String, Value)> = (0..10).map(|i| (format!("A{i}"), chunk.clone())).collect();
    let b: Vec<(String, Value)> = (0..10).map(|i| (format!("B{i}"), chunk.clone())).collect();
    fn props(list: &[(String, Value)]) -> Vec<(&str, Value)> {
        list.iter().map(|(n, v)| (n.as_str(), v.clone())).collect()
    }
    t.insert(&entity("p", "r", &props(&a))).unwrap();
    let err = t
        .merge(&entity("p", "r", &props(&b)), IfMatch::Any)
        .unwrap_err();
    assert!(matches!(err, TableError::EntityTooLarge { .. }), "{err}");
    assert_eq!(err.azure_code(), "EntityTooLarge");
    assert_eq!(err.http_status(), 400);
}

#[test]
fn oversized_values_are_property_value_too_large() {
    let err: TableError = Value::string("x".repeat(32 * 1024 + 1)).unwrap_err().into();
    assert_eq!(err.azure_code(), "PropertyValueTooLarge");
    let err: TableError = Value::binary(vec![0; 64 * 1024 + 1]).unwrap_err().into();
    assert_eq!(err.azure_code(), "PropertyValueTooLarge");
    assert_eq!(err.http_status(), 400);
}

#[test]
fn operations_on_missing_table_are_table_not_found() {
    let fx = Fixture::new();
    let t = fx.account.table("Nowhere").unwrap();
    let errors = [
        t.insert(&entity("p", "r", &[])).unwrap_err(),
        t.get("p", "r", None).unwrap_err(),
        t.query(&strata::Query::default()).unwrap_err(),
    ];
    for err in errors {
        assert!(matches!(err, TableError::TableNotFound { .. }), "{err}");
        assert_eq!(err.azure_code(), "TableNotFound");
        assert_eq!(err.http_status(), 404);
    }
}

#[test]
fn entities_survive_reopen_with_the_same_etag() {
    let fx = Fixture::new();
    let t = fx.table("People");
    let etag = t.insert(&entity("p", "r", &[("A", s("x"))])).unwrap();
    let path = fx.path();
    drop(t);
    let Fixture { dir, account } = fx;
    drop(account);
    let account = strata::Account::open(&path).unwrap();
    let got = account
        .table("people")
        .unwrap()
        .get("p", "r", None)
        .unwrap();
    assert_eq!(got.etag, etag);
    assert_eq!(got.entity.get("A"), Some(&s("x")));
    drop(dir);
}

#[test]
fn get_finds_entities_whatever_the_engine_key_length() {
    // Engine key = 4-byte table id + PartitionKey + separator + RowKey; point gets build short
    // ones on the stack (128 bytes) and longer ones on the heap.
    let fx = Fixture::new();
    let t = fx.table("People");
    for rk_len in [0, 100, 121, 122, 123, 124, 512] {
        let rk = "r".repeat(rk_len);
        t.insert(&entity("pk", &rk, &[("Len", Value::Int32(rk_len as i32))]))
            .unwrap();
        let got = t.get("pk", &rk, None).unwrap();
        assert_eq!(got.entity.get("Len"), Some(&Value::Int32(rk_len as i32)));
        assert_eq!(got.entity.row_key().as_str(), rk);
    }
    assert_eq!(
        t.get("pk", &"r".repeat(125), None)
            .unwrap_err()
            .azure_code(),
        "ResourceNotFound"
    );
}
