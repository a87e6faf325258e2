//! WAL segment rotation under a busy writer: how many syncs a memtable switch costs, and that
//! every write survives the switches.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod engine_flush_support;

use std::sync::Arc;

use engine_flush_support::{MEMTABLE_BYTES, inline_flush_options, key};
use strata::engine::file::{CrashMode, Fault, FaultyStorage};
use strata::engine::{Durability, Engine, Options, WriteBatch};

/// Writes batches of 50 puts of 200-byte values from `from` until about `memtables` memtables
/// were filled; returns the next key number.
fn fill(engine: &Engine, from: u32, memtables: usize) -> u32 {
    let entries = u32::try_from(memtables * MEMTABLE_BYTES / 250).unwrap();
    let mut n = from;
    while n < from + entries {
        let mut batch = WriteBatch::new();
        for _ in 0..50 {
            batch.put(&key(n), &[n as u8; 200]);
            n += 1;
        }
        engine.write(&batch, Durability::Buffered).unwrap();
    }
    n
}

#[test]
fn engine_wal_busy_writer_rotates_about_once_per_memtable() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), inline_flush_options()).unwrap();
    // The first memtables grow the segment size from its minimum.
    let next = fill(&engine, 0, 4);
    let before = storage.sync_count();
    let end = fill(&engine, next, 8);
    let syncs = storage.sync_count() - before;
    // Per memtable: its flush (SST + manifest sync, superblock sync, which also confirms the
    // switch into the spare segment), plus an occasional rotation when a segment fills up.
    // A switch that synced its seal and a superblock itself took 40 syncs here; restarting
    // every memtable's WAL at the 64 KiB minimum took 64.
    assert!(syncs <= 8 * 3, "{syncs} syncs for 8 memtables");
    assert!(
        syncs >= 8 * 2,
        "{syncs} syncs for 8 memtables: were memtables switched?"
    );
    engine.close().unwrap();
    let engine = Engine::open_with_storage(storage, inline_flush_options()).unwrap();
    for n in (0..end).step_by(97) {
        assert_eq!(engine.get(&key(n)).unwrap().unwrap(), vec![n as u8; 200]);
    }
}

#[test]
fn engine_wal_crash_after_size_triggered_switches_keeps_every_synced_write() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), inline_flush_options()).unwrap();
    let end = fill(&engine, 0, 6);
    engine.write(&WriteBatch::new(), Durability::Sync).unwrap();
    storage.crash();
    // A crashed process runs no destructor: nothing may reach the disk after the crash.
    std::mem::forget(engine);
    let engine = Engine::open_with_storage(storage, inline_flush_options()).unwrap();
    for n in 0..end {
        assert_eq!(
            engine.get(&key(n)).unwrap().unwrap(),
            vec![n as u8; 200],
            "key {n}"
        );
    }
}

/// Segments of 64 KiB under a 1 MiB memtable: the log rotates several times between flushes,
/// the first time into the listed spare with an unsynced seal.
fn rotating_options() -> Options {
    Options {
        memtable_bytes: 1 << 20,
        wal_segment_max_bytes: 64 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

/// Writes through several sync-free rotations (one `Sync` batch among them), then crashes
/// keeping each unsynced page at random, so a seal may be lost while frames after it survive.
/// With `end_in_spare`, a flush confirms a spare before the last writes, so the crash comes
/// right after a sync-free rotation into it. Returns the crashed storage, the number of keys
/// written and how many of them were synced.
fn crash_after_sync_free_rotations(
    seed: u64,
    end_in_spare: bool,
) -> (Arc<FaultyStorage>, u32, u32) {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), rotating_options()).unwrap();
    // A flush lists a confirmed spare; the next rotations start from it.
    let mut n = fill(&engine, 0, 1);
    engine.flush().unwrap();
    let mut synced = 0;
    for round in 0..6u32 {
        let mut batch = WriteBatch::new();
        for _ in 0..50 {
            batch.put(&key(n), &[n as u8; 200]);
            n += 1;
        }
        let durability = if round == 3 {
            Durability::Sync
        } else {
            Durability::Buffered
        };
        engine.write(&batch, durability).unwrap();
        if durability == Durability::Sync {
            synced = n;
        }
        // About 1.3 segments of frames per round.
        let mut more = WriteBatch::new();
        for _ in 0..400 {
            more.put(&key(n), &[n as u8; 200]);
            n += 1;
        }
        engine.write(&more, Durability::Buffered).unwrap();
    }
    if end_in_spare {
        engine.flush().unwrap();
        synced = n;
        // About 1.4 segments of 64 KiB (the maximum here): the flush kept the log in its
        // segment and confirmed a spare, so at least one sync-free rotation into it follows.
        for _ in 0..8 {
            let mut batch = WriteBatch::new();
            for _ in 0..50 {
                batch.put(&key(n), &[n as u8; 200]);
                n += 1;
            }
            engine.write(&batch, Durability::Buffered).unwrap();
        }
    }
    storage.set_crash_mode(CrashMode::KeepRandomPages { seed });
    storage.crash();
    std::mem::forget(engine);
    (storage, n, synced)
}

/// Asserts the keys present are a prefix of the `n` written that holds the first `synced`.
fn assert_prefix(engine: &Engine, n: u32, synced: u32, context: &str) {
    let present: Vec<bool> = (0..n)
        .map(|k| engine.get(&key(k)).unwrap().is_some())
        .collect();
    let recovered = present.iter().take_while(|p| **p).count() as u32;
    assert!(
        present.iter().skip(recovered as usize).all(|p| !p),
        "{context}: recovered writes are not a prefix (first gap at {recovered})"
    );
    assert!(
        recovered >= synced,
        "{context}: {recovered} keys recovered, {synced} were synced"
    );
}

#[test]
fn engine_wal_crash_after_sync_free_rotations_recovers_a_prefix_with_every_synced_write() {
    for seed in 0..24 {
        let (storage, n, synced) = crash_after_sync_free_rotations(seed, false);
        let engine = Engine::open_with_storage(storage, rotating_options())
            .unwrap_or_else(|err| panic!("seed {seed}: reopen failed: {err}"));
        assert_prefix(&engine, n, synced, &format!("seed {seed}"));
    }
}

#[test]
fn engine_wal_crash_while_reopening_after_sync_free_rotations_still_recovers_a_prefix() {
    // The reopen seals the segment replay ended in and drops the segments after it; a second
    // crash at any write of that reopen must leave a file whose replay is still a prefix (it
    // must never follow the new seal into a dropped segment whose records were not replayed).
    for seed in 0..16 {
        let (crashed, n, synced) = crash_after_sync_free_rotations(seed, true);
        let image = crashed.durable_image();
        let probe = Arc::new(FaultyStorage::from_image(image.clone()));
        let before = probe.write_count();
        drop(Engine::open_with_storage(probe.clone(), rotating_options()).unwrap());
        let reopen_writes = probe.write_count() - before;
        for skip in 0..reopen_writes.min(48) {
            let storage = Arc::new(FaultyStorage::from_image(image.clone()));
            storage.inject_after(skip, Fault::TornWrite { keep: usize::MAX });
            if let Ok(engine) = Engine::open_with_storage(storage.clone(), rotating_options()) {
                std::mem::forget(engine);
            }
            storage.clear_faults();
            storage.crash();
            let engine = Engine::open_with_storage(storage, rotating_options())
                .unwrap_or_else(|err| panic!("seed {seed}, crash at write {skip}: {err}"));
            assert_prefix(
                &engine,
                n,
                synced,
                &format!("seed {seed}, crash at write {skip}"),
            );
        }
    }
}

#[test]
fn engine_wal_sync_write_after_a_sync_free_rotation_survives_losing_every_unsynced_write() {
    let options = Options {
        memtable_bytes: 1 << 20,
        background_compaction: false,
        ..Options::default()
    };
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), options.clone()).unwrap();
    let put_batches = |from: u32, batches: u32, entries: u32, durability: Durability| {
        let mut n = from;
        for _ in 0..batches {
            let mut batch = WriteBatch::new();
            for _ in 0..entries {
                batch.put(&key(n), &[n as u8; 200]);
                n += 1;
            }
            engine.write(&batch, durability).unwrap();
        }
        n
    };
    // About 31 KiB of frames in the first 64 KiB segment, then a `Sync` batch of about
    // 41 KiB that does not fit: the log moves into the spare with an unsynced seal, and the
    // batch is the spare's first frame (a durable write of its own pages alone). No flush
    // runs: the memtable is far from full.
    let n = put_batches(0, 3, 50, Durability::Buffered);
    let synced = put_batches(n, 1, 200, Durability::Sync);
    put_batches(synced, 2, 50, Durability::Buffered);
    // Every unsynced write is lost, the seal included unless the `Sync` write covered it.
    storage.crash();
    std::mem::forget(engine);
    let engine = Engine::open_with_storage(storage, options).unwrap();
    for k in 0..synced {
        assert_eq!(
            engine.get(&key(k)).unwrap(),
            Some(vec![k as u8; 200]),
            "key {k} was written before a Sync write returned"
        );
    }
}

#[test]
fn engine_wal_explicit_flush_keeps_the_log_in_its_segment_and_syncs_only_its_install() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(storage.clone(), inline_flush_options()).unwrap();
    let mut n = 0;
    for round in 0..3 {
        // A part-filled memtable, as at the end of a bulk load.
        let end = n + 300;
        while n < end {
            let mut batch = WriteBatch::new();
            for _ in 0..50 {
                batch.put(&key(n), &[n as u8; 200]);
                n += 1;
            }
            engine.write(&batch, Durability::Buffered).unwrap();
        }
        let before = storage.sync_count();
        engine.flush().unwrap();
        let syncs = storage.sync_count() - before;
        // The SST and manifest sync, then the superblock's (which also lists the next spare).
        // A rotation that synced its seal and a superblock of its own first took 4.
        assert_eq!(
            syncs, 2,
            "round {round}: {syncs} syncs for one explicit flush"
        );
    }
    // Frames after the flushed ones in the same segment: replay must skip the flushed ones
    // and keep these (the `Sync` batch makes them durable).
    let flushed = n;
    for durability in [Durability::Buffered, Durability::Sync] {
        let mut batch = WriteBatch::new();
        for _ in 0..50 {
            batch.put(&key(n), &[n as u8 ^ 0x5a; 200]);
            n += 1;
        }
        engine.write(&batch, durability).unwrap();
    }
    // Losing every unsynced write loses nothing flushed or synced.
    storage.set_crash_mode(CrashMode::DropUnsynced);
    storage.crash();
    std::mem::forget(engine);
    let engine = Engine::open_with_storage(storage, inline_flush_options()).unwrap();
    for k in 0..n {
        let byte = if k < flushed { k as u8 } else { k as u8 ^ 0x5a };
        assert_eq!(
            engine.get(&key(k)).unwrap().unwrap(),
            vec![byte; 200],
            "key {k}"
        );
    }
    // The three flushes, and the one the reopen makes of what replay recovered.
    assert_eq!(engine.stats().unwrap().levels[0].files, 4);
}
