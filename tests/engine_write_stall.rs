//! The write controller: option validation, the L0 and memory bounds under a sustained load,
//! stops that end (never a deadlock) with and without a background thread or a healthy disk.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use strata::engine::file::{FaultyStorage, Storage};
use strata::engine::{Compression, Durability, Engine, Error, Options, WriteBatch};

/// Memtables that may exist at once: the active one and `FROZEN_LIMIT` (2) frozen ones.
const MEMTABLES_AT_ONCE: usize = 3;

fn tiny(background: bool) -> Options {
    Options {
        memtable_bytes: 32 << 10,
        l0_compaction_trigger: 2,
        l0_slowdown_trigger: 3,
        l0_stop_trigger: 4,
        l1_target_bytes: 256 << 10,
        sst_target_bytes: 64 << 10,
        background_compaction: background,
        ..Options::default()
    }
}

fn batch(index: u64, entries: u64, value: &[u8]) -> WriteBatch {
    let mut batch = WriteBatch::new();
    for entry in 0..entries {
        // Spread keys so every L0 → L1 compaction overlaps what is there.
        let key = (index * entries + entry).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        batch.put(format!("{key:016x}").as_bytes(), value);
    }
    batch
}

fn open_err(options: Options) -> Error {
    let dir = tempfile::tempdir().expect("tempdir");
    match Engine::open(dir.path().join("db"), options) {
        Ok(_) => panic!("the options were accepted"),
        Err(err) => err,
    }
}

#[test]
fn zero_delayed_write_rate_is_rejected_naming_the_field() {
    let err = open_err(Options {
        delayed_write_rate: 0,
        ..Options::default()
    });
    assert!(
        matches!(
            err,
            Error::InvalidOption {
                name: "delayed_write_rate",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn stop_trigger_below_slowdown_trigger_is_rejected() {
    let err = open_err(Options {
        l0_slowdown_trigger: 10,
        l0_stop_trigger: 9,
        ..Options::default()
    });
    assert!(
        matches!(
            err,
            Error::InvalidOption {
                name: "l0_stop_trigger",
                ..
            }
        ),
        "{err}"
    );
    assert!(
        err.to_string()
            .contains("9 is below l0_slowdown_trigger 10"),
        "{err}"
    );
}

#[test]
fn zero_compaction_trigger_is_rejected() {
    let err = open_err(Options {
        l0_compaction_trigger: 0,
        ..Options::default()
    });
    assert!(
        matches!(
            err,
            Error::InvalidOption {
                name: "l0_compaction_trigger",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn stall_triggers_below_the_compaction_trigger_are_raised_not_rejected() {
    // An L0 that never compacts (tests, bulk loads) must not stop writers below its trigger.
    let dir = tempfile::tempdir().expect("tempdir");
    let options = Options {
        memtable_bytes: 16 << 10,
        l0_compaction_trigger: 64,
        background_compaction: false,
        ..Options::default()
    };
    let engine = Engine::open(dir.path().join("db"), options).expect("open");
    for index in 0..1_400 {
        engine
            .write(&batch(index, 4, &[7; 100]), Durability::Buffered)
            .expect("write");
    }
    let stats = engine.stats().expect("stats");
    let l0 = stats.levels.first().map_or(0, |level| level.files);
    assert!(
        l0 > 36,
        "L0 stayed at {l0}: the test did not pass the default stop"
    );
    assert_eq!(stats.stopped_waits, 0);
    engine.close().expect("close");
}

/// Writes `batches` Buffered batches from one thread and checks the bounds after each.
fn sustained_load_stays_bounded(
    options: Options,
    batches: u64,
    peak_l0: usize,
) -> strata::engine::Stats {
    sustained_load_stays_bounded_at(options, batches, peak_l0, Durability::Buffered)
}

fn sustained_load_stays_bounded_at(
    options: Options,
    batches: u64,
    peak_l0: usize,
    durability: Durability,
) -> strata::engine::Stats {
    let dir = tempfile::tempdir().expect("tempdir");
    let bound = options.memtable_bytes;
    let stop = options.l0_stop_trigger;
    let engine = Engine::open(dir.path().join("db"), options).expect("open");
    let value = [0x5a; 120];
    let batch_bytes = 8 * (16 + value.len());
    let mut max_l0 = 0;
    for index in 0..batches {
        engine
            .write(&batch(index, 8, &value), durability)
            .expect("write");
        let stats = engine.stats().expect("stats");
        let l0 = stats.levels.first().map_or(0, |level| level.files);
        max_l0 = max_l0.max(l0);
        assert!(
            l0 <= stop,
            "L0 reached {l0} SSTs, over the stop trigger {stop}"
        );
        // Each memtable may overshoot its budget by the batch that filled it (plus arena
        // slot rounding, charged in `approximate_bytes`).
        let limit = (MEMTABLES_AT_ONCE * (bound + 2 * batch_bytes)) as u64;
        assert!(
            stats.memtable_bytes <= limit,
            "memtables hold {} bytes, over {limit}",
            stats.memtable_bytes
        );
    }
    assert!(
        max_l0 >= peak_l0,
        "L0 peaked at {max_l0} SSTs: the load proves nothing"
    );
    let stats = engine.stats().expect("stats");
    for index in [0, batches / 2, batches - 1] {
        let key = (index * 8).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        assert_eq!(
            engine.get(format!("{key:016x}").as_bytes()).expect("get"),
            Some(value.to_vec())
        );
    }
    engine.close().expect("close");
    stats
}

#[test]
fn sustained_buffered_load_keeps_l0_under_the_stop_and_memtables_within_bound() {
    // Slow compactions (zstd at a high level) against fast flushes: L0 builds up to the stop
    // whatever the machine's load, so both the delay and the stop run.
    let options = Options {
        compression: Compression::Zstd(12),
        ..tiny(true)
    };
    let stats = sustained_load_stays_bounded(options, 1000, 2);
    assert!(
        stats.stopped_waits > 0 && stats.delayed_writes > 0,
        "the controller never held the writer back: {stats:?}"
    );
}

#[test]
fn merges_yielding_to_sync_writers_still_keep_l0_under_the_stop() {
    // Every write is `Sync`, so background merges that start below the slowdown drop to the
    // lowest CPU priority, and stop to be redone at normal priority once L0 reaches it: the
    // bound must hold and every entry must stay readable through those abandoned merges.
    let options = Options {
        compression: Compression::Zstd(12),
        ..tiny(true)
    };
    let stats = sustained_load_stays_bounded_at(options, 600, 2, Durability::Sync);
    assert!(
        stats.levels.iter().skip(1).any(|level| level.files > 0),
        "no merge ever finished: {stats:?}"
    );
}

#[test]
fn sustained_load_without_background_thread_never_deadlocks_and_stays_bounded() {
    // Each write flushes and compacts inline, so L0 never builds up; what matters is that
    // the stop path never waits for a thread that does not exist.
    let stats = sustained_load_stays_bounded(tiny(false), 1500, 1);
    assert_eq!(stats.stopped_waits, 0, "{stats:?}");
}

#[test]
fn stopped_writers_end_with_an_error_when_the_disk_fills() {
    let storage = Arc::new(FaultyStorage::new());
    let engine = Engine::open_with_storage(Arc::clone(&storage) as _, tiny(true)).expect("open");
    for index in 0..50 {
        engine
            .write(&batch(index, 8, &[1; 120]), Durability::Buffered)
            .expect("write");
    }
    let len = storage.live_image().len() as u64;
    storage.set_disk_limit(Some(len + (64 << 10)));
    let (done, finished) = mpsc::channel();
    let writer = thread::spawn(move || {
        let mut outcome = Ok(());
        for index in 50..100_000 {
            if let Err(err) = engine.write(&batch(index, 8, &[1; 120]), Durability::Buffered) {
                outcome = Err(err);
                break;
            }
        }
        let _ = done.send(outcome);
    });
    let outcome = finished
        .recv_timeout(Duration::from_secs(30))
        .expect("the writer hung on a full disk");
    let err = outcome.expect_err("100k batches fit in 64 KiB of free disk");
    assert!(
        matches!(err, Error::Poisoned { .. } | Error::Io { .. }),
        "{err}"
    );
    writer.join().expect("writer thread");
}

#[test]
fn concurrent_writers_all_finish_through_stops() {
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Arc::new(Engine::open(dir.path().join("db"), tiny(true)).expect("open"));
    let writers: Vec<_> = (0..4u64)
        .map(|thread| {
            let engine = Arc::clone(&engine);
            thread::spawn(move || {
                for index in 0..400 {
                    engine
                        .write(
                            &batch(thread * 1_000 + index, 8, &[3; 120]),
                            Durability::Buffered,
                        )
                        .expect("write");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().expect("writer thread");
    }
    let stats = engine.stats().expect("stats");
    let l0 = stats.levels.first().map_or(0, |level| level.files);
    // Writers admitted together may each freeze one memtable past the bound.
    assert!(l0 <= 4 + 4, "L0 reached {l0}");
}

/// A storage that counts writeback hints and passes everything else to a `FaultyStorage`.
#[derive(Debug, Default)]
struct CountingStorage {
    inner: FaultyStorage,
    writebacks: AtomicU64,
}

impl Storage for CountingStorage {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn start_writeback(&self, _offset: u64, _len: u64) -> io::Result<()> {
        self.writebacks.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

fn writebacks_after_load(bytes_per_sync: u64) -> (u64, u64) {
    let storage = Arc::new(CountingStorage::default());
    let options = Options {
        bytes_per_sync,
        background_compaction: false,
        ..tiny(false)
    };
    let engine = Engine::open_with_storage(Arc::clone(&storage) as _, options).expect("open");
    for index in 0..600 {
        engine
            .write(&batch(index, 8, &[9; 120]), Durability::Buffered)
            .expect("write");
    }
    let stats = engine.stats().expect("stats");
    engine.close().expect("close");
    let sst_and_manifest_bytes = stats.file_bytes_written;
    (
        storage.writebacks.load(Ordering::Relaxed),
        sst_and_manifest_bytes,
    )
}

#[test]
fn sst_output_starts_writeback_every_bytes_per_sync() {
    let every = 64 << 10;
    let (writebacks, written) = writebacks_after_load(every);
    // WAL appends do not count (they are synced by their own writers), so the hints number
    // at most one per `every` bytes written, and a load of several memtables needs some.
    assert!(
        writebacks >= 4,
        "{writebacks} writebacks for {written} bytes"
    );
    assert!(
        writebacks <= written / every,
        "{writebacks} writebacks for {written} bytes"
    );
    assert_eq!(
        writebacks_after_load(0).0,
        0,
        "bytes_per_sync 0 disables the hints"
    );
}

fn no_background() -> Options {
    Options {
        background_compaction: false,
        ..Options::default()
    }
}

#[test]
fn sync_write_after_buffered_writes_makes_both_durable() {
    let storage = Arc::new(FaultyStorage::new());
    let engine =
        Engine::open_with_storage(Arc::clone(&storage) as _, no_background()).expect("open");
    engine
        .write(&batch(0, 4, b"buffered"), Durability::Buffered)
        .expect("buffered write");
    engine
        .write(&batch(1, 4, b"synced"), Durability::Sync)
        .expect("sync write");
    // A durable write of the Sync batch alone would leave the Buffered one behind.
    storage.crash();
    drop(engine);
    let engine = Engine::open_with_storage(storage as _, no_background()).expect("reopen");
    for (index, value) in [(0u64, &b"buffered"[..]), (1, b"synced")] {
        for entry in 0..4 {
            let key = (index * 4 + entry).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let got = engine.get(format!("{key:016x}").as_bytes()).expect("get");
            assert_eq!(got.as_deref(), Some(value), "batch {index} entry {entry}");
        }
    }
}

#[test]
fn consecutive_sync_writes_each_survive_a_crash() {
    let storage = Arc::new(FaultyStorage::new());
    let engine =
        Engine::open_with_storage(Arc::clone(&storage) as _, no_background()).expect("open");
    let syncs_before = storage.sync_count();
    for index in 0..50 {
        engine
            .write(&batch(index, 1, b"v"), Durability::Sync)
            .expect("sync write");
    }
    assert!(
        storage.sync_count() >= syncs_before + 50,
        "a Sync write skipped its sync"
    );
    storage.crash();
    drop(engine);
    let engine = Engine::open_with_storage(storage as _, no_background()).expect("reopen");
    for index in 0..50u64 {
        let key = index.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        assert!(
            engine
                .get(format!("{key:016x}").as_bytes())
                .expect("get")
                .is_some(),
            "Sync batch {index} lost"
        );
    }
}

#[test]
fn faulty_durable_write_keeps_only_itself_and_newest_bytes() {
    let disk = FaultyStorage::new();
    disk.write_all_at(b"pending-old", 0).expect("write");
    disk.write_all_at(b"elsewhere", 100).expect("write");
    disk.write_all_at_durable(b"NEW", 8).expect("durable write");
    disk.crash();
    let image = disk.durable_image();
    assert_eq!(image.get(8..11), Some(&b"NEW"[..]));
    assert_eq!(
        image.get(..8),
        Some(&[0u8; 8][..]),
        "unsynced bytes became durable"
    );
    assert_eq!(image.len(), 11, "the unsynced write at 100 became durable");
}

#[test]
fn faulty_durable_write_never_lets_an_older_write_resurrect_its_bytes() {
    for seed in 0..32 {
        let disk = FaultyStorage::new();
        disk.set_crash_mode(strata::engine::file::CrashMode::KeepPrefix { seed });
        disk.write_all_at(b"old-old-old", 0).expect("write");
        disk.write_all_at_durable(b"NEW", 4).expect("durable write");
        disk.crash();
        let image = disk.durable_image();
        assert_eq!(image.get(4..7), Some(&b"NEW"[..]), "seed {seed}: {image:?}");
    }
}

#[test]
fn file_durable_write_lands_at_its_offset_and_extends_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = strata::engine::file::FileStorage::open(
        dir.path().join("f"),
        strata::engine::file::OpenMode::ReadWrite,
    )
    .expect("open");
    file.write_all_at(b"0123456789", 0).expect("write");
    let big = vec![0xab; 300 << 10];
    file.write_all_at_durable(&big, 5).expect("durable write");
    assert_eq!(file.len().expect("len"), 5 + big.len() as u64);
    let mut back = vec![0; 5 + big.len()];
    file.read_exact_at(&mut back, 0).expect("read");
    assert_eq!(back.get(..5), Some(&b"01234"[..]));
    assert!(back.get(5..).is_some_and(|rest| rest == big.as_slice()));
}

#[test]
fn writes_are_reported_held_back_exactly_while_l0_is_over_the_slowdown() {
    let dir = tempfile::tempdir().expect("tempdir");
    let options = Options {
        l0_stop_trigger: 100,
        ..tiny(false)
    };
    let engine = Engine::open(dir.path().join("db"), options).expect("open");
    assert!(
        !engine.writes_held_back(),
        "a fresh engine holds nothing back"
    );
    for index in 0..3 {
        engine
            .write(&batch(index, 10, b"value"), Durability::Buffered)
            .expect("write");
        engine.flush().expect("flush");
    }
    // Three L0 SSTs reach the slowdown trigger (3); the next write meters itself.
    engine
        .write(&batch(3, 1, b"value"), Durability::Buffered)
        .expect("write");
    assert!(
        engine.writes_held_back(),
        "L0 at the slowdown trigger delays writes"
    );
    engine.compact().expect("compact");
    engine
        .write(&batch(4, 1, b"value"), Durability::Buffered)
        .expect("write");
    assert!(
        !engine.writes_held_back(),
        "after compaction writes run freely"
    );
}

#[test]
fn merges_paced_for_a_lone_sync_writer_catch_up_once_it_leaves() {
    // A lone writer of small `Sync` batches, each after a Buffered batch that keeps merges
    // busy: merges are paced while it writes, L0 stays within its bound all the same (pacing
    // ends near the slowdown), and once the writer is gone the backlog is merged away.
    let dir = tempfile::tempdir().expect("tempdir");
    let options = Options {
        compression: Compression::Zstd(12),
        l0_slowdown_trigger: 12,
        l0_stop_trigger: 16,
        ..tiny(true)
    };
    let (trigger, stop) = (options.l0_compaction_trigger, options.l0_stop_trigger);
    let engine = Engine::open(dir.path().join("db"), options).expect("open");
    let value = [0x6b; 120];
    let started = std::time::Instant::now();
    let mut index = 0;
    let stats = loop {
        engine
            .write(&batch(index, 8, &value), Durability::Buffered)
            .expect("buffered write");
        engine
            .write(&batch(1 << 40 | index, 1, b"durable"), Durability::Sync)
            .expect("sync write");
        index += 1;
        let stats = engine.stats().expect("stats");
        let l0 = stats.levels.first().map_or(0, |level| level.files);
        assert!(l0 <= stop, "L0 reached {l0} SSTs, over the stop {stop}");
        if stats.paced_merge_micros > 0 && index >= 200 {
            break stats;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no merge was paced in {index} writes: {stats:?}"
        );
    };
    let waited = std::time::Instant::now();
    loop {
        let stats = engine.stats().expect("stats");
        let l0 = stats.levels.first().map_or(0, |level| level.files);
        if l0 < trigger {
            break;
        }
        assert!(
            waited.elapsed() < Duration::from_secs(20),
            "the backlog was not merged after the writer left: {stats:?}"
        );
        thread::sleep(Duration::from_millis(10));
    }
    for at in [0, index / 2, index - 1] {
        let key = (at * 8).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        assert_eq!(
            engine.get(format!("{key:016x}").as_bytes()).expect("get"),
            Some(value.to_vec()),
            "{stats:?}"
        );
    }
    engine.close().expect("close");
}

#[test]
fn inline_merges_of_a_lone_sync_writer_are_never_paced() {
    // Without a background thread the writer merges inline: pacing would only slow the very
    // writer it is meant to protect.
    let dir = tempfile::tempdir().expect("tempdir");
    let engine = Engine::open(dir.path().join("db"), tiny(false)).expect("open");
    for index in 0..300 {
        engine
            .write(&batch(index, 8, &[0x3c; 120]), Durability::Buffered)
            .expect("buffered write");
        engine
            .write(&batch(1 << 40 | index, 1, b"durable"), Durability::Sync)
            .expect("sync write");
    }
    let stats = engine.stats().expect("stats");
    assert!(
        stats.levels.iter().skip(1).any(|level| level.files > 0),
        "no merge ran: {stats:?}"
    );
    assert_eq!(stats.paced_merge_micros, 0, "{stats:?}");
    engine.close().expect("close");
}
