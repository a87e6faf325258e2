//! A crash at every write and every sync inside an explicit `flush()`: the SST, manifest and
//! superblock writes of the flush may stop anywhere, and the reopened file must hold every
//! flushed and every synced write, a prefix of the rest, and pass the integrity check.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_flush_support;

use std::sync::Arc;

use engine_flush_support::{inline_flush_options, key};
use strata::engine::file::{CrashMode, Fault, FaultyStorage};
use strata::engine::{Durability, Engine, WriteBatch};

fn value(n: u32) -> Vec<u8> {
    vec![n as u8 ^ 0x33; 120]
}

fn put_batch(engine: &Engine, from: u32, durability: Durability) -> u32 {
    let mut batch = WriteBatch::new();
    for n in from..from + 25 {
        batch.put(&key(n), &value(n));
    }
    engine.write(&batch, durability).unwrap();
    from + 25
}

/// What the engine acknowledged before the flush under test: keys below `flushed` went
/// through an earlier flush, keys below `synced` were in a `Sync` batch or before it, keys
/// below `written` were written at all.
struct Written {
    flushed: u32,
    synced: u32,
    written: u32,
}

/// One flushed memtable, then a part-filled one whose log holds a `Sync` batch between
/// buffered ones: the state the flush under test freezes.
fn prepare(storage: &Arc<FaultyStorage>) -> (Engine, Written) {
    let engine = Engine::open_with_storage(storage.clone(), inline_flush_options()).unwrap();
    let mut n = 0;
    while n < 200 {
        n = put_batch(&engine, n, Durability::Buffered);
    }
    engine.flush().unwrap();
    let flushed = n;
    while n < 400 {
        n = put_batch(&engine, n, Durability::Buffered);
    }
    n = put_batch(&engine, n, Durability::Sync);
    let synced = n;
    while n < 550 {
        n = put_batch(&engine, n, Durability::Buffered);
    }
    let written = Written {
        flushed,
        synced,
        written: n,
    };
    (engine, written)
}

/// Reopens after the crash and checks what survived, then closes and runs the integrity check
/// on the resulting image.
fn verify(storage: Arc<FaultyStorage>, written: &Written, context: &str) {
    let engine = Engine::open_with_storage(storage.clone(), inline_flush_options())
        .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
    let mut present = 0;
    for n in 0..written.written {
        match engine.get(&key(n)).unwrap() {
            Some(got) => {
                assert_eq!(got, value(n), "{context}: key {n} has a wrong value");
                assert_eq!(
                    present, n,
                    "{context}: key {n} present after a gap at {present}"
                );
                present = n + 1;
            }
            None => assert!(
                n >= written.synced,
                "{context}: key {n} lost (flushed below {}, synced below {})",
                written.flushed,
                written.synced
            ),
        }
    }
    // Batches are atomic: what survived ends on a batch boundary.
    assert_eq!(
        present % 25,
        0,
        "{context}: a batch survived in part ({present} keys)"
    );
    engine.close().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("image.strata");
    std::fs::write(&path, storage.live_image()).unwrap();
    Engine::check(&path).unwrap_or_else(|e| panic!("{context}: integrity check failed: {e}"));
}

/// Writes and syncs an uninterrupted flush issues in this state.
fn flush_operations() -> (u64, u64) {
    let storage = Arc::new(FaultyStorage::new());
    let (engine, _) = prepare(&storage);
    let (writes, syncs) = (storage.write_count(), storage.sync_count());
    engine.flush().unwrap();
    let counts = (storage.write_count() - writes, storage.sync_count() - syncs);
    std::mem::forget(engine);
    counts
}

#[test]
fn engine_flush_torn_at_any_write_keeps_every_flushed_and_synced_write() {
    let (writes, _) = flush_operations();
    assert!(writes >= 3, "a flush wrote only {writes} times");
    for skip in 0..writes {
        for (mode, keep) in [
            (CrashMode::DropUnsynced, 0),
            (CrashMode::KeepPrefix { seed: skip }, 1 << 20),
            (CrashMode::KeepRandomPages { seed: skip + 7 }, 4096),
        ] {
            let storage = Arc::new(FaultyStorage::new());
            let (engine, written) = prepare(&storage);
            storage.set_crash_mode(mode);
            storage.inject_after(skip, Fault::TornWrite { keep });
            assert!(
                engine.flush().is_err(),
                "write {skip} of the flush was torn, yet the flush succeeded"
            );
            std::mem::forget(engine);
            verify(storage, &written, &format!("write {skip} torn, {mode:?}"));
        }
    }
}

#[test]
fn engine_flush_failed_at_any_sync_keeps_every_flushed_and_synced_write() {
    let (_, syncs) = flush_operations();
    assert!(syncs >= 1, "a flush never synced");
    for skip in 0..syncs {
        for mode in [
            CrashMode::DropUnsynced,
            CrashMode::KeepRandomPages { seed: skip + 11 },
        ] {
            let storage = Arc::new(FaultyStorage::new());
            let (engine, written) = prepare(&storage);
            storage.set_crash_mode(mode);
            storage.inject_after(skip, Fault::FailSync);
            assert!(
                engine.flush().is_err(),
                "sync {skip} of the flush failed, yet the flush succeeded"
            );
            // A failed sync poisons the engine: no later write may be acknowledged.
            let mut batch = WriteBatch::new();
            batch.put(b"after", b"x");
            assert!(
                engine.write(&batch, Durability::Sync).is_err(),
                "sync {skip}: a write was accepted after a failed sync"
            );
            storage.crash();
            std::mem::forget(engine);
            verify(storage, &written, &format!("sync {skip} failed, {mode:?}"));
        }
    }
}
