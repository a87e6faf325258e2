//! Single-entity writes of different partitions committed together: one engine batch, so one
//! WAL sync, for writes that arrived at the same time. Each write keeps its own semantics
//! (conditions, merge, its own Timestamp and ETag) and its own outcome; only the sync is
//! shared, as the engine's group commit would share it.

use std::sync::Arc;

use parking_lot::{MutexGuard, RwLockReadGuard};

use super::account::Account;
use super::catalog::TableState;
use super::entities::{GET_BUFFER, MAX_REUSED_GET_BUFFER, Table, WRITE_BUFFERS};
use super::error::{Result, TableError};
use super::etag::ETag;
use super::ops::{self, OpKind, Operation, Outcome};
use crate::codec::key;
use crate::engine::{self, WriteBatch};
use crate::model::Entity;

/// Stored bytes one group writes at most; a member past it is committed alone after the group.
/// Entities are counted at their request size when the group forms, but a merge rewrites the
/// whole stored row (and UTF-8 text can outgrow its UTF-16 count), so the stored bytes are
/// capped again here, far below the engine's batch limit, lest one oversized group fail
/// writes that would each succeed alone.
const MAX_GROUP_STORED_BYTES: usize = 8 << 20;

/// One single-entity write of a group.
#[derive(Debug)]
pub(crate) struct GroupWrite {
    /// The table written.
    pub(crate) table: Table,
    /// What the write does.
    pub(crate) kind: OpKind,
    /// The entity (for a delete, only its keys matter).
    pub(crate) entity: Entity,
}

/// A write of the group that holds its table's gate and its partition's lock.
struct Locked<'a> {
    index: usize,
    state: &'a TableState,
    _gate: RwLockReadGuard<'a, bool>,
    _partition: MutexGuard<'a, ()>,
}

impl Account {
    /// Commits `writes` and returns each one's outcome, in order: the new ETag, or its own
    /// error. The writes whose table gate and partition lock are free right now are checked
    /// and written as one engine batch under those locks, acknowledged together once it is
    /// durable; the others (a second write to a partition already in the group, a table being
    /// deleted, a partition locked by another writer) are then committed one by one as
    /// [`Table`]'s own calls would. Only ever trying the locks means no lock order exists
    /// between a group and other writers, so a group cannot deadlock with them.
    pub(crate) fn commit_group(&self, writes: &[GroupWrite]) -> Vec<Result<ETag>> {
        let mut results: Vec<Option<Result<ETag>>> = writes.iter().map(|_| None).collect();
        let mut states: Vec<Option<Arc<TableState>>> = Vec::with_capacity(writes.len());
        for (write, result) in writes.iter().zip(results.iter_mut()) {
            match write.table.state() {
                Ok(state) => states.push(Some(state.into_owned())),
                Err(error) => {
                    *result = Some(Err(error));
                    states.push(None);
                }
            }
        }
        let mut locked = Vec::with_capacity(writes.len());
        for (index, (write, state)) in writes.iter().zip(&states).enumerate() {
            let Some(state) = state.as_deref() else {
                continue;
            };
            let Some(gate) = state.dropped.try_read() else {
                continue;
            };
            if *gate {
                continue;
            }
            let pk = write.entity.partition_key().as_str();
            let Some(partition) = self.inner.locks.try_lock(state.id, pk) else {
                continue;
            };
            locked.push(Locked {
                index,
                state,
                _gate: gate,
                _partition: partition,
            });
        }
        if let Err(error) = self.commit_locked(writes, &locked, &mut results) {
            for member in &locked {
                if let Some(slot) = results.get_mut(member.index)
                    && slot.as_ref().is_none_or(Result::is_ok)
                {
                    *slot = Some(Err(replicate(&error)));
                }
            }
        }
        drop(locked);
        writes
            .iter()
            .zip(results)
            .map(|(write, result)| {
                result.unwrap_or_else(|| write.table.write_one(write.kind, &write.entity))
            })
            .collect()
    }

    /// Checks the locked writes against their stored rows and writes those that pass as one
    /// batch; fills their slots of `results` (ETags only once the batch is durable).
    fn commit_locked(
        &self,
        writes: &[GroupWrite],
        locked: &[Locked<'_>],
        results: &mut [Option<Result<ETag>>],
    ) -> Result<()> {
        let inner = &*self.inner;
        let estimate: usize = locked
            .iter()
            .filter_map(|member| writes.get(member.index))
            .map(|write| write.entity.size())
            .sum();
        let mut batch = WriteBatch::with_capacity(locked.len(), estimate);
        let (mut engine_key, mut value) = WRITE_BUFFERS.take();
        let mut current = GET_BUFFER.take();
        let mut written = Vec::with_capacity(locked.len());
        for member in locked {
            let (Some(write), Some(slot)) =
                (writes.get(member.index), results.get_mut(member.index))
            else {
                continue;
            };
            let entity = &write.entity;
            engine_key.clear();
            key::encode_into(
                member.state.id,
                entity.partition_key(),
                entity.row_key(),
                &mut engine_key,
            );
            let checked = (|| -> Result<(Outcome, ETag)> {
                let timestamp = inner.clock.next(&inner.engine)?;
                let found = write.kind.reads_current()
                    && inner.engine.get_into(&engine_key, &mut current)?;
                let op = Operation {
                    kind: write.kind,
                    entity,
                    row: None,
                };
                let outcome = ops::apply(
                    member.state.name.as_str(),
                    member.state.id,
                    &engine_key,
                    &op,
                    found.then_some(current.as_slice()),
                    timestamp,
                    &mut value,
                )?;
                Ok((outcome, ETag::from_timestamp(timestamp)))
            })();
            match checked {
                Ok((Outcome::Put, _))
                    if !written.is_empty()
                        && batch.size() + engine_key.len() + value.len()
                            > MAX_GROUP_STORED_BYTES => {}
                Ok((Outcome::Put, etag)) => {
                    batch.put(&engine_key, &value);
                    written.push((member.index, etag));
                }
                Ok((Outcome::Delete, etag)) => {
                    batch.delete(&engine_key);
                    written.push((member.index, etag));
                }
                Err(error) => *slot = Some(Err(error)),
            }
        }
        if current.capacity() <= MAX_REUSED_GET_BUFFER {
            GET_BUFFER.replace(current);
        }
        if value.capacity() <= MAX_REUSED_GET_BUFFER
            && engine_key.capacity() <= MAX_REUSED_GET_BUFFER
        {
            WRITE_BUFFERS.replace((engine_key, value));
        }
        if written.is_empty() {
            return Ok(());
        }
        inner.engine.write_owned(batch, inner.options.durability)?;
        for (index, etag) in written {
            if let Some(slot) = results.get_mut(index) {
                *slot = Some(Ok(etag));
            }
        }
        Ok(())
    }
}

/// The error of a failed group write, once for every member: engine errors are not `Clone`,
/// and an I/O failure has already poisoned the engine, which is what each member is told.
fn replicate(error: &TableError) -> TableError {
    match error {
        TableError::Engine(engine::Error::ReadOnly) => TableError::Engine(engine::Error::ReadOnly),
        TableError::Engine(engine::Error::Closed) => TableError::Engine(engine::Error::Closed),
        TableError::Engine(engine::Error::InvalidArgument(reason)) => {
            TableError::Engine(engine::Error::InvalidArgument(reason.clone()))
        }
        other => TableError::Engine(engine::Error::Poisoned {
            cause: other.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use std::time::Duration;

    use super::*;
    use crate::model::{PartitionKey, PropertyName, RowKey, Value};
    use crate::table::IfMatch;

    fn account() -> (tempfile::TempDir, Account) {
        let dir = tempfile::tempdir().unwrap();
        let account = Account::open(dir.path().join("db.strata")).unwrap();
        account.create_table("ttt").unwrap();
        (dir, account)
    }

    fn entity(pk: &str, rk: &str, property: &str, n: i32) -> Entity {
        let mut entity = Entity::new(PartitionKey::new(pk).unwrap(), RowKey::new(rk).unwrap());
        entity
            .set(PropertyName::new(property).unwrap(), Value::Int32(n))
            .unwrap();
        entity
    }

    fn write(account: &Account, kind: OpKind, entity: Entity) -> GroupWrite {
        GroupWrite {
            table: account.table("ttt").unwrap(),
            kind,
            entity,
        }
    }

    #[test]
    fn writes_of_a_group_each_get_their_own_etag_and_are_stored() {
        let (_dir, account) = account();
        let writes: Vec<_> = (0..5)
            .map(|p| {
                write(
                    &account,
                    OpKind::InsertOrMerge,
                    entity(&format!("p{p}"), "r", "N", p),
                )
            })
            .collect();
        let etags = commit_each_stored(&account, &writes);
        for pair in etags.windows(2) {
            assert!(pair[0] != pair[1], "{pair:?}");
        }
    }

    /// Commits `writes` (to partitions `p0`, `p1`, ... with `N` = the index) as one group,
    /// asserts each succeeded and is stored with its own ETag, and returns the ETags.
    fn commit_each_stored(account: &Account, writes: &[GroupWrite]) -> Vec<ETag> {
        let etags: Vec<ETag> = account
            .commit_group(writes)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let table = account.table("ttt").unwrap();
        for (p, etag) in etags.iter().enumerate() {
            let stored = table.get(&format!("p{p}"), "r", None).unwrap();
            assert_eq!(stored.etag, *etag);
            assert_eq!(stored.entity.get("N"), Some(&Value::Int32(p as i32)));
        }
        etags
    }

    #[test]
    fn members_past_the_stored_byte_cap_are_committed_alone_after_the_group() {
        let (_dir, account) = account();
        // 15 strings of 30,000 '€' (UTF-16 counts 2 bytes each, UTF-8 stores 3): ~0.9 MB per
        // request entity, ~1.35 MB stored; eight of them pass the group's stored-byte cap.
        let big = |p: usize| {
            let mut entity = entity(&format!("p{p}"), "r", "N", p as i32);
            for i in 0..15 {
                entity
                    .set(
                        PropertyName::new(format!("S{i}")).unwrap(),
                        Value::String("€".repeat(30_000)),
                    )
                    .unwrap();
            }
            entity
        };
        let writes: Vec<_> = (0..8)
            .map(|p| write(&account, OpKind::InsertOrMerge, big(p)))
            .collect();
        commit_each_stored(&account, &writes);
    }

    #[test]
    fn a_failed_condition_fails_only_its_own_write() {
        let (_dir, account) = account();
        let table = account.table("ttt").unwrap();
        let old = table.insert(&entity("a", "r", "N", 1)).unwrap();
        table.insert_or_merge(&entity("a", "r", "N", 2)).unwrap();
        let writes = vec![
            write(&account, OpKind::InsertOrMerge, entity("b", "r", "N", 3)),
            write(
                &account,
                OpKind::Merge(IfMatch::Etag(old)),
                entity("a", "r", "N", 4),
            ),
            write(&account, OpKind::Insert, entity("c", "r", "N", 5)),
            write(
                &account,
                OpKind::Replace(IfMatch::Any),
                entity("missing", "r", "N", 6),
            ),
        ];
        let results = account.commit_group(&writes);
        assert!(results[0].is_ok());
        assert!(matches!(
            results[1],
            Err(TableError::UpdateConditionNotSatisfied { .. })
        ));
        assert!(results[2].is_ok());
        assert!(matches!(
            results[3],
            Err(TableError::ResourceNotFound { .. })
        ));
        let stored = table.get("a", "r", None).unwrap();
        assert_eq!(stored.entity.get("N"), Some(&Value::Int32(2)));
        assert!(table.get("missing", "r", None).is_err());
    }

    #[test]
    fn writes_to_one_entity_in_one_group_apply_in_order() {
        let (_dir, account) = account();
        let writes = vec![
            write(&account, OpKind::InsertOrMerge, entity("a", "r", "A", 1)),
            write(&account, OpKind::InsertOrMerge, entity("a", "r", "B", 2)),
            write(
                &account,
                OpKind::Delete(IfMatch::Any),
                entity("a", "gone", "A", 0),
            ),
            write(&account, OpKind::Insert, entity("a", "gone", "A", 0)),
        ];
        let results = account.commit_group(&writes);
        let first = results[0].as_ref().unwrap();
        let second = results[1].as_ref().unwrap();
        assert!(first.timestamp() < second.timestamp());
        assert!(matches!(
            results[2],
            Err(TableError::ResourceNotFound { .. })
        ));
        assert!(results[3].is_ok());
        let stored = account.table("ttt").unwrap().get("a", "r", None).unwrap();
        assert_eq!(stored.etag, *second);
        assert_eq!(stored.entity.get("A"), Some(&Value::Int32(1)));
        assert_eq!(stored.entity.get("B"), Some(&Value::Int32(2)));
    }

    #[test]
    fn a_write_to_a_deleted_table_fails_with_table_not_found() {
        let (_dir, account) = account();
        let writes = vec![
            write(&account, OpKind::InsertOrMerge, entity("a", "r", "N", 1)),
            write(&account, OpKind::InsertOrMerge, entity("b", "r", "N", 1)),
        ];
        account.delete_table("ttt").unwrap();
        account.create_table("uuu").unwrap();
        let results = account.commit_group(&writes);
        for result in results {
            assert!(
                matches!(result, Err(TableError::TableNotFound { .. })),
                "{result:?}"
            );
        }
    }

    #[test]
    fn a_write_whose_partition_is_locked_waits_for_the_lock_and_commits() {
        let (_dir, account) = account();
        let table_id = account.table("ttt").unwrap().state().unwrap().id;
        let (locked, release) = (
            std::sync::Barrier::new(2),
            std::sync::atomic::AtomicBool::new(false),
        );
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let _partition = account.inner.locks.lock(table_id, "busy");
                locked.wait();
                std::thread::sleep(Duration::from_millis(50));
                release.store(true, std::sync::atomic::Ordering::SeqCst);
            });
            locked.wait();
            let writes = vec![
                write(&account, OpKind::InsertOrMerge, entity("free", "r", "N", 1)),
                write(&account, OpKind::InsertOrMerge, entity("busy", "r", "N", 2)),
            ];
            let results = account.commit_group(&writes);
            assert!(release.load(std::sync::atomic::Ordering::SeqCst));
            assert!(results.iter().all(Result::is_ok), "{results:?}");
        });
        let table = account.table("ttt").unwrap();
        assert!(table.get("free", "r", None).is_ok());
        assert!(table.get("busy", "r", None).is_ok());
    }
}
