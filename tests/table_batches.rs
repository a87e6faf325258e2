//! SPEC §5: entity group transactions.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use strata::model::{RowKey, Value};
use strata::{IfMatch, Query, TableError};
use table_support::{Fixture, entity, s};

fn rk(text: &str) -> RowKey {
    RowKey::new(text).unwrap()
}

fn count(t: &strata::Table) -> usize {
    t.query(&Query::default()).unwrap().entities.len()
}

#[test]
fn batch_applies_a_mix_of_operations_atomically() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let e_replace = t
        .insert(&entity("p", "replace", &[("A", Value::Int32(1))]))
        .unwrap();
    t.insert(&entity("p", "merge", &[("A", Value::Int32(1))]))
        .unwrap();
    t.insert(&entity("p", "delete", &[])).unwrap();
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "insert", &[("A", Value::Int32(1))]))
        .replace(
            entity("p", "replace", &[("B", Value::Int32(2))]),
            IfMatch::Etag(e_replace),
        )
        .merge(
            entity("p", "merge", &[("B", Value::Int32(2))]),
            IfMatch::Any,
        )
        .delete(rk("delete"), IfMatch::Any)
        .insert_or_replace(entity("p", "upsert1", &[]))
        .insert_or_merge(entity("p", "upsert2", &[]));
    let etags = batch.submit().unwrap();
    assert_eq!(etags.len(), 6);
    assert!(etags[3].is_none());
    assert!(etags.iter().enumerate().all(|(i, e)| i == 3 || e.is_some()));
    let merged = t.get("p", "merge", None).unwrap().entity;
    assert_eq!(merged.get("A"), Some(&Value::Int32(1)));
    assert_eq!(merged.get("B"), Some(&Value::Int32(2)));
    assert_eq!(t.get("p", "replace", None).unwrap().entity.get("A"), None);
    assert_eq!(
        t.get("p", "delete", None).unwrap_err().azure_code(),
        "ResourceNotFound"
    );
    assert_eq!(count(&t), 5);
}

#[test]
fn failing_condition_writes_nothing_and_names_the_index() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    t.insert(&entity("p", "exists", &[])).unwrap();
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "a", &[]))
        .insert(entity("p", "b", &[]))
        .insert(entity("p", "exists", &[]))
        .insert(entity("p", "c", &[]));
    let err = batch.submit().unwrap_err();
    assert_eq!(err.batch_index(), Some(2));
    assert_eq!(err.azure_code(), "EntityAlreadyExists");
    assert_eq!(err.http_status(), 409);
    assert!(err.to_string().starts_with("2:"), "{err}");
    assert_eq!(count(&t), 1);
}

#[test]
fn stale_etag_in_batch_is_update_condition_not_satisfied_at_its_index() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let old = t.insert(&entity("p", "x", &[])).unwrap();
    t.replace(&entity("p", "x", &[]), IfMatch::Any).unwrap();
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "new", &[]))
        .replace(entity("p", "x", &[("A", s("v"))]), IfMatch::Etag(old));
    let err = batch.submit().unwrap_err();
    assert_eq!(err.batch_index(), Some(1));
    assert_eq!(err.azure_code(), "UpdateConditionNotSatisfied");
    assert_eq!(err.http_status(), 412);
    assert_eq!(count(&t), 1);
}

#[test]
fn missing_entity_in_batch_is_resource_not_found_at_its_index() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "a", &[]))
        .delete(rk("ghost"), IfMatch::Any);
    let err = batch.submit().unwrap_err();
    assert_eq!(err.batch_index(), Some(1));
    assert_eq!(err.azure_code(), "ResourceNotFound");
    assert_eq!(count(&t), 0);
}

#[test]
fn batch_on_different_partitions_is_rejected() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "a", &[]))
        .insert(entity("q", "b", &[]));
    let err = batch.submit().unwrap_err();
    assert!(
        matches!(
            err,
            TableError::CommandsInBatchActOnDifferentPartitions { index: 1, .. }
        ),
        "{err}"
    );
    assert_eq!(err.azure_code(), "CommandsInBatchActOnDifferentPartitions");
    assert_eq!(err.http_status(), 400);
    assert_eq!(count(&t), 0);
}

#[test]
fn batch_with_same_row_twice_is_invalid_duplicate_row() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "a", &[]))
        .insert(entity("p", "b", &[]))
        .merge(entity("p", "a", &[]), IfMatch::Any);
    let err = batch.submit().unwrap_err();
    assert!(
        matches!(
            err,
            TableError::InvalidDuplicateRow {
                index: 2,
                first: 0,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(err.azure_code(), "InvalidDuplicateRow");
    assert_eq!(err.http_status(), 400);
    assert_eq!(count(&t), 0);
}

#[test]
fn batch_of_100_operations_is_accepted_and_101_rejected() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let mut batch = t.batch("p").unwrap();
    for i in 0..100 {
        batch.insert(entity("p", &format!("{i:03}"), &[]));
    }
    assert_eq!(batch.submit().unwrap().len(), 100);
    let mut batch = t.batch("q").unwrap();
    for i in 0..101 {
        batch.insert(entity("q", &format!("{i:03}"), &[]));
    }
    let err = batch.submit().unwrap_err();
    assert_eq!(err.azure_code(), "InvalidInput");
    assert_eq!(err.http_status(), 400);
    assert!(err.to_string().contains("100"), "{err}");
    assert_eq!(count(&t), 100);
}

#[test]
fn empty_batch_is_invalid_input() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let err = t.batch("p").unwrap().submit().unwrap_err();
    assert_eq!(err.azure_code(), "InvalidInput");
}

#[test]
fn batch_payload_of_4_mib_is_request_body_too_large() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    // Each entity: 16 x 64 KiB binaries, about 1 MiB; four of them reach 4 MiB.
    let big = |r: &str| {
        let props: Vec<(String, Value)> = (0..15)
            .map(|i| (format!("B{i}"), Value::Binary(vec![1; 65_000])))
            .collect();
        let refs: Vec<(&str, Value)> = props.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        entity("p", r, &refs)
    };
    let mut batch = t.batch("p").unwrap();
    for r in ["a", "b", "c", "d", "e"] {
        batch.insert(big(r));
    }
    let err = batch.submit().unwrap_err();
    assert!(
        matches!(err, TableError::RequestBodyTooLarge { .. }),
        "{err}"
    );
    assert_eq!(err.azure_code(), "RequestBodyTooLarge");
    assert_eq!(err.http_status(), 413);
    assert_eq!(count(&t), 0);
    let mut batch = t.batch("p").unwrap();
    for r in ["a", "b", "c", "d"] {
        batch.insert(big(r));
    }
    assert_eq!(batch.submit().unwrap().len(), 4);
}

#[test]
fn batch_entities_share_one_timestamp() {
    let fx = Fixture::new();
    let t = fx.table("Batches");
    let mut batch = t.batch("p").unwrap();
    batch
        .insert(entity("p", "a", &[]))
        .insert(entity("p", "b", &[]));
    let etags = batch.submit().unwrap();
    assert_eq!(etags[0], etags[1]);
    assert_eq!(t.get("p", "a", None).unwrap().etag, etags[0].unwrap());
}

#[test]
fn batch_on_missing_table_is_table_not_found() {
    let fx = Fixture::new();
    let t = fx.account.table("Missing").unwrap();
    let mut batch = t.batch("p").unwrap();
    batch.insert(entity("p", "a", &[]));
    assert_eq!(batch.submit().unwrap_err().azure_code(), "TableNotFound");
}
