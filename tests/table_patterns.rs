//! SPEC §7: the design patterns of the Table service design guide, end to end.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod table_support;

use strata::model::{Entity, PartitionKey, PropertyName, RowKey, Value};
use strata::{IfMatch, Query, Table, TableError};
use table_support::{Fixture, entity, s};

#[test]
fn log_tail_top_10_reads_the_newest_via_inverted_ticks() {
    let fx = Fixture::new();
    let t = fx.table("Logs");
    let base: i64 = 638_500_000_000_000_000;
    for chunk in 0..5 {
        let mut batch = t.batch("server1").unwrap();
        for i in 0..100 {
            let ticks = base + (chunk * 100 + i) * 10_000;
            let inverted = format!("{:019}", i64::MAX - ticks);
            batch.insert(entity(
                "server1",
                &inverted,
                &[("Ticks", Value::Int64(ticks))],
            ));
        }
        batch.submit().unwrap();
    }
    let page = t
        .query(&Query {
            top: Some(10),
            ..Query::filter("PartitionKey eq 'server1'")
        })
        .unwrap();
    let ticks: Vec<i64> = page
        .entities
        .iter()
        .map(|e| match e.entity.get("Ticks") {
            Some(Value::Int64(t)) => *t,
            other => panic!("{other:?}"),
        })
        .collect();
    let newest: Vec<i64> = (490..500).rev().map(|i| base + i * 10_000).collect();
    assert_eq!(ticks, newest);
    assert!(page.continuation.is_some());
}

fn employee(rk: &str, email: &str, name: &str) -> Entity {
    entity("sales", rk, &[("Email", s(email)), ("Name", s(name))])
}

#[test]
fn intra_partition_secondary_index_stays_consistent_through_batches() {
    let fx = Fixture::new();
    let t = fx.table("Employees");
    let mut batch = t.batch("sales").unwrap();
    batch
        .insert(employee("empid_000042", "ann@contoso.com", "Ann"))
        .insert(employee("email_ann@contoso.com", "ann@contoso.com", "Ann"));
    batch.submit().unwrap();
    // Change the e-mail: the entity, the old index row and the new one in one transaction.
    let current = t.get("sales", "empid_000042", None).unwrap().etag;
    let mut batch = t.batch("sales").unwrap();
    batch
        .replace(
            employee("empid_000042", "ann@fabrikam.com", "Ann"),
            IfMatch::Etag(current),
        )
        .delete(RowKey::new("email_ann@contoso.com").unwrap(), IfMatch::Any)
        .insert(employee(
            "email_ann@fabrikam.com",
            "ann@fabrikam.com",
            "Ann",
        ));
    batch.submit().unwrap();
    let by_index = t.get("sales", "email_ann@fabrikam.com", None).unwrap();
    let by_id = t.get("sales", "empid_000042", None).unwrap();
    assert_eq!(by_index.entity.get("Email"), by_id.entity.get("Email"));
    assert_eq!(by_index.etag, by_id.etag, "one batch, one Timestamp");
    assert!(t.get("sales", "email_ann@contoso.com", None).is_err());
    // A stale retry of the same change fails as a whole and leaves every copy untouched.
    let mut batch = t.batch("sales").unwrap();
    batch
        .replace(
            employee("empid_000042", "x@y.z", "Ann"),
            IfMatch::Etag(current),
        )
        .insert(employee("email_x@y.z", "x@y.z", "Ann"));
    let err = batch.submit().unwrap_err();
    assert_eq!(err.batch_index(), Some(0));
    assert!(t.get("sales", "email_x@y.z", None).is_err());
    let range = t
        .query(&Query::filter(
            "PartitionKey eq 'sales' and RowKey ge 'email_' and RowKey lt 'email`'",
        ))
        .unwrap();
    assert_eq!(range.entities.len(), 1);
}

#[test]
fn index_entities_find_employees_by_last_name() {
    let fx = Fixture::new();
    let t = fx.table("Staff");
    let ids = ["000152", "000193", "000287"];
    for id in ids {
        t.insert(&entity("sales", id, &[("LastName", s("Jones"))]))
            .unwrap();
    }
    t.insert(&entity(
        "lastname",
        "Jones",
        &[("EmployeeIds", s(&ids.join(" ")))],
    ))
    .unwrap();
    // Add one more id with an optimistic (ETag) update of the index entity.
    let index = t.get("lastname", "Jones", None).unwrap();
    t.insert(&entity("sales", "000300", &[("LastName", s("Jones"))]))
        .unwrap();
    t.replace(
        &entity(
            "lastname",
            "Jones",
            &[("EmployeeIds", s(&format!("{} 000300", ids.join(" "))))],
        ),
        IfMatch::Etag(index.etag),
    )
    .unwrap();
    let index = t.get("lastname", "Jones", None).unwrap();
    let Some(Value::String(list)) = index.entity.get("EmployeeIds") else {
        panic!()
    };
    let found: Vec<_> = list
        .split(' ')
        .map(|id| t.get("sales", id, None).unwrap())
        .collect();
    assert_eq!(found.len(), 4);
    assert!(
        found
            .iter()
            .all(|e| e.entity.get("LastName") == Some(&s("Jones")))
    );
}

#[test]
fn heterogeneous_entity_types_share_one_partition() {
    let fx = Fixture::new();
    let t = fx.table("Mixed");
    t.insert(&entity(
        "dept1",
        "dept",
        &[
            ("EntityType", s("Department")),
            ("Budget", Value::Double(1e6)),
        ],
    ))
    .unwrap();
    t.insert(&entity(
        "dept1",
        "emp_1",
        &[("EntityType", s("Employee")), ("Age", Value::Int32(30))],
    ))
    .unwrap();
    t.insert(&entity(
        "dept1",
        "emp_2",
        &[("EntityType", s("Employee")), ("Age", s("unknown"))],
    ))
    .unwrap();
    let employees = t
        .query(&Query::filter(
            "PartitionKey eq 'dept1' and EntityType eq 'Employee'",
        ))
        .unwrap();
    assert_eq!(employees.entities.len(), 2);
    let typed = t
        .query(&Query::filter("PartitionKey eq 'dept1' and Age ge 18"))
        .unwrap();
    assert_eq!(
        typed.entities.len(),
        1,
        "the string Age does not match an Int32 comparison"
    );
    assert_eq!(
        t.query(&Query::filter("PartitionKey eq 'dept1'"))
            .unwrap()
            .entities
            .len(),
        3
    );
}

fn wide(count: usize) -> Result<Entity, strata::model::ModelError> {
    let mut e = Entity::new(PartitionKey::new("series")?, RowKey::new("2024-05")?);
    for i in 0..count {
        e.set(
            PropertyName::new(format!("Day{i:03}"))?,
            Value::Double(i as f64),
        )?;
    }
    Ok(e)
}

#[test]
fn wide_entity_with_252_properties_round_trips() {
    let fx = Fixture::new();
    let t = fx.table("Series");
    let e = wide(252).unwrap();
    t.insert(&e).unwrap();
    let got = t.get("series", "2024-05", None).unwrap().entity;
    assert_eq!(got.properties(), e.properties());
    let err: TableError = wide(253).unwrap_err().into();
    assert_eq!(err.azure_code(), "TooManyProperties");
}

#[test]
fn entity_of_one_mib_round_trips_and_larger_is_entity_too_large() {
    let fx = Fixture::new();
    let t = fx.table("Blobs");
    let mut e = Entity::new(PartitionKey::new("p").unwrap(), RowKey::new("r").unwrap());
    let mut i = 0;
    loop {
        let name = PropertyName::new(format!("Chunk{i:02}")).unwrap();
        let room = 1024 * 1024 - e.size() - 8 - 2 * name.as_str().len() - 4;
        let value = Value::Binary(vec![i as u8; room.min(64 * 1024)]);
        e.set(name, value).unwrap();
        i += 1;
        if room <= 64 * 1024 {
            break;
        }
    }
    assert_eq!(e.size(), 1024 * 1024);
    t.insert(&e).unwrap();
    assert_eq!(
        t.get("p", "r", None).unwrap().entity.properties(),
        e.properties()
    );
    let err = e
        .set(PropertyName::new("One").unwrap(), Value::Boolean(true))
        .unwrap_err();
    let err: TableError = err.into();
    assert_eq!(err.azure_code(), "EntityTooLarge");
}

fn fill(t: &Table, partitions: usize, per_partition: usize) {
    let value = s("the quick brown fox jumps over the lazy dog");
    for p in 0..partitions {
        let pk = format!("p{p:05}");
        for chunk in 0..per_partition.div_ceil(100) {
            let mut batch = t.batch(&pk).unwrap();
            for i in chunk * 100..((chunk + 1) * 100).min(per_partition) {
                batch.insert(entity(&pk, &format!("{i:06}"), &[("V", value.clone())]));
            }
            batch.submit().unwrap();
        }
    }
}

fn high_volume_delete(entities: usize) {
    let fx = Fixture::new();
    let t = fx.table("Doomed");
    fill(&t, entities / 1000, 1000);
    fx.account.create_table("Survivor").unwrap();
    let survivor = fx.account.table("Survivor").unwrap();
    survivor.insert(&entity("p", "r", &[])).unwrap();
    fx.account.engine().flush().unwrap();
    let before = fx.account.engine().stats().unwrap();
    fx.account.delete_table("Doomed").unwrap();
    let after_delete = fx.account.engine().stats().unwrap();
    // The delete writes one catalog delete and one range delete, nothing per entity.
    assert!(
        after_delete.user_bytes_written - before.user_bytes_written < 512,
        "{} bytes written by the delete",
        after_delete.user_bytes_written - before.user_bytes_written
    );
    assert!(t.query(&Query::default()).is_err());
    fx.account.create_table("Doomed").unwrap();
    assert!(
        t.query(&Query {
            top: Some(1),
            ..Query::default()
        })
        .unwrap()
        .entities
        .is_empty()
    );
    fx.account.compact().unwrap();
    let compacted = fx.account.engine().stats().unwrap();
    assert!(
        compacted.live_bytes * 20 < before.live_bytes,
        "live bytes {} -> {}",
        before.live_bytes,
        compacted.live_bytes
    );
    assert!(
        compacted.file_bytes - compacted.free_bytes < before.file_bytes - before.free_bytes,
        "used file bytes {} -> {}",
        before.file_bytes - before.free_bytes,
        compacted.file_bytes - compacted.free_bytes
    );
    assert!(survivor.get("p", "r", None).is_ok());
}

#[test]
fn dropping_a_table_of_100k_entities_is_one_range_delete_and_compaction_reclaims_it() {
    high_volume_delete(100_000);
}

/// The full-size variant of the issue: `cargo test --release --test table_patterns -- --ignored`.
#[test]
#[ignore = "takes a minute in debug builds; run with --release --ignored"]
fn dropping_a_table_of_1m_entities_is_one_range_delete_and_compaction_reclaims_it() {
    high_volume_delete(1_000_000);
}
