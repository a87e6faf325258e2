//! Group commit under many writers: every member of a group is woken with its own outcome,
//! acknowledgements come only after the batch is readable, a failed sync fails every member
//! that was waiting for it (and everything after), no acknowledged write is lost, and no
//! write touches a page that another write still has in flight.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use strata::engine::file::{Fault, FaultyStorage, PAGE_SIZE, Storage};
use strata::engine::{Durability, Engine, Error, Options, WriteBatch};

/// A `FaultyStorage` whose durable writes (and, with `hold_syncs`, its syncs) take `hold`, as
/// a device's do, so writers pile up behind a leader; it counts them, and the writes that
/// touched a page another write still had in flight.
#[derive(Debug)]
struct SlowDisk {
    inner: Arc<FaultyStorage>,
    hold: Duration,
    hold_syncs: bool,
    /// First and last page of each write in flight.
    in_flight: Mutex<Vec<(u64, u64)>>,
    overlaps: AtomicU64,
    /// Durable writes, and syncs when they are held.
    durable_writes: AtomicU64,
}

impl SlowDisk {
    fn new(inner: Arc<FaultyStorage>, hold: Duration) -> Self {
        Self {
            inner,
            hold,
            hold_syncs: false,
            in_flight: Mutex::new(Vec::new()),
            overlaps: AtomicU64::new(0),
            durable_writes: AtomicU64::new(0),
        }
    }

    /// Syncs take `hold` too, and count as durable writes.
    fn holding_syncs(mut self) -> Self {
        self.hold_syncs = true;
        self
    }

    fn watched(
        &self,
        offset: u64,
        len: usize,
        durable: bool,
        write: impl FnOnce() -> io::Result<()>,
    ) -> io::Result<()> {
        let pages = (
            offset / PAGE_SIZE,
            (offset + len.max(1) as u64 - 1) / PAGE_SIZE,
        );
        {
            let mut in_flight = self.in_flight.lock().unwrap();
            if in_flight
                .iter()
                .any(|&(first, last)| first <= pages.1 && pages.0 <= last)
            {
                self.overlaps.fetch_add(1, Ordering::Relaxed);
            }
            in_flight.push(pages);
        }
        if durable {
            self.durable_writes.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(self.hold);
        }
        let written = write();
        let mut in_flight = self.in_flight.lock().unwrap();
        if let Some(at) = in_flight.iter().position(|&p| p == pages) {
            in_flight.swap_remove(at);
        }
        written
    }
}

impl Storage for SlowDisk {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.watched(offset, buf.len(), false, || {
            self.inner.write_all_at(buf, offset)
        })
    }
    fn sync_data(&self) -> io::Result<()> {
        if self.hold_syncs {
            std::thread::sleep(self.hold);
            self.durable_writes.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.sync_data()
    }
    fn write_all_at_durable(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.watched(offset, buf.len(), true, || {
            self.inner.write_all_at_durable(buf, offset)
        })
    }
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        self.watched(offset, pages.len(), true, || {
            self.inner.write_pages_durable(pages, offset)
        })
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
    fn punch_hole(&self, offset: u64, len: u64) -> io::Result<()> {
        self.inner.punch_hole(offset, len)
    }
    fn start_writeback(&self, offset: u64, len: u64) -> io::Result<()> {
        self.inner.start_writeback(offset, len)
    }
    fn path(&self) -> &Path {
        self.inner.path()
    }
}

fn options() -> Options {
    Options {
        memtable_bytes: 64 << 10,
        background_compaction: false,
        ..Options::default()
    }
}

fn key(thread: u32, n: u32) -> Vec<u8> {
    [thread.to_be_bytes(), n.to_be_bytes()].concat()
}

fn put(thread: u32, n: u32) -> WriteBatch {
    let mut batch = WriteBatch::new();
    batch.put(&key(thread, n), &[thread as u8; 50]);
    batch
}

/// An engine on a fresh fault-injecting disk.
fn engine_on_faulty_disk() -> Arc<Engine> {
    Arc::new(Engine::open_with_storage(Arc::new(FaultyStorage::new()), options()).unwrap())
}

/// Runs `write(engine, thread)` on `threads` threads at once; their handles, to join.
fn writers<T: Send + 'static>(
    engine: &Arc<Engine>,
    threads: u32,
    write: impl Fn(&Engine, u32) -> T + Send + Sync + 'static,
) -> Vec<JoinHandle<T>> {
    let write = Arc::new(write);
    (0..threads)
        .map(|t| {
            let (engine, write) = (Arc::clone(engine), Arc::clone(&write));
            std::thread::spawn(move || write(&engine, t))
        })
        .collect()
}

/// What each writer returned, in thread order.
fn joined<T>(threads: Vec<JoinHandle<T>>) -> Vec<T> {
    threads
        .into_iter()
        .map(|thread| thread.join().unwrap())
        .collect()
}

#[test]
fn group_commit_failed_sync_fails_every_waiting_member_and_keeps_every_acknowledged_write() {
    let disk = Arc::new(FaultyStorage::new());
    let slow = Arc::new(SlowDisk::new(Arc::clone(&disk), Duration::from_millis(2)).holding_syncs());
    let engine = Arc::new(Engine::open_with_storage(slow.clone(), options()).unwrap());
    let threads = writers(&engine, 8, |engine, t| {
        let mut acked = Vec::new();
        let mut errors = Vec::new();
        for n in 0..400u32 {
            match engine.write(&put(t, n), Durability::Sync) {
                Ok(_) if errors.is_empty() => acked.push(n),
                Ok(seq) => panic!("thread {t} write {n} acknowledged (seq {seq}) after a failure"),
                Err(err) => errors.push(err),
            }
            if errors.len() >= 3 {
                break;
            }
        }
        (t, acked, errors)
    });
    // Let groups form behind the slow syncs, then fail one of them.
    while slow.durable_writes.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(1));
    }
    disk.inject(Fault::FailSync);
    let results = joined(threads);
    let mut failed_at_once = 0;
    for (t, acked, errors) in &results {
        // Every writer saw the failure: none kept writing into a poisoned engine.
        assert!(!errors.is_empty(), "thread {t} never failed");
        for err in errors {
            assert!(matches!(err, Error::Poisoned { .. }), "thread {t}: {err}");
        }
        if acked.len() < 400 && errors.len() == 3 {
            failed_at_once += 1;
        }
    }
    assert_eq!(
        failed_at_once, 8,
        "every writer failed three times and stopped"
    );
    storage_crash_and_check(&disk, engine, &results);
}

fn storage_crash_and_check(
    disk: &Arc<FaultyStorage>,
    engine: Arc<Engine>,
    results: &[(u32, Vec<u32>, Vec<Error>)],
) {
    disk.clear_faults();
    disk.crash();
    drop(engine);
    let engine = Engine::open_with_storage(disk.clone(), options()).unwrap();
    for (t, acked, _) in results {
        for &n in acked {
            assert_eq!(
                engine.get(&key(*t, n)).unwrap(),
                Some(vec![*t as u8; 50]),
                "acknowledged write {n} of thread {t} lost"
            );
        }
    }
}

#[test]
fn group_commit_wakes_more_writers_than_wake_bits_each_with_its_own_readable_outcome() {
    // 40 writers share 32 wake bits: two writers on one bit get each other's wake-ups, never
    // each other's outcomes.
    let engine = engine_on_faulty_disk();
    let threads = writers(&engine, 40, |engine, t| {
        let mut seqs = Vec::new();
        for n in 0..60u32 {
            let durability = if (t + n) % 3 == 0 {
                Durability::Buffered
            } else {
                Durability::Sync
            };
            let seq = engine.write(&put(t, n), durability).unwrap();
            // Acknowledged means readable, at that sequence number and after.
            let seen = engine.snapshot().seq();
            assert!(seen >= seq, "seq {seq} acknowledged, snapshot at {seen}");
            assert_eq!(engine.get(&key(t, n)).unwrap(), Some(vec![t as u8; 50]));
            seqs.push(seq);
        }
        seqs
    });
    let mut seqs: Vec<u64> = joined(threads).into_iter().flatten().collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=40 * 60).collect::<Vec<u64>>());
}

#[test]
fn group_commit_gather_for_writers_that_stopped_times_out_and_commits_alone() {
    // Eight durable writers teach the leaders to gather eight batches; then seven stop. The
    // one left must still commit every write (each gather led by its gatherer at its bound).
    let engine = engine_on_faulty_disk();
    joined(writers(&engine, 8, |engine, t| {
        let writes = if t == 0 { 600 } else { 100 };
        for n in 0..writes {
            engine.write(&put(t, n), Durability::Sync).unwrap();
        }
    }));
    for n in 0..600 {
        assert_eq!(
            engine.get(&key(0, n)).unwrap(),
            Some(vec![0; 50]),
            "write {n}"
        );
    }
}

#[test]
fn group_commit_never_writes_a_page_another_write_still_has_in_flight() {
    // Two writes of one page in flight may reach the disk in either order. Consecutive groups
    // share the WAL tail page: were the next group written while the previous group's write
    // of that page was in flight, the older copy (zeroes past its own frames) could land last
    // and erase frames already acknowledged. A pipelined leader must start on a fresh page.
    let watch = Arc::new(SlowDisk::new(
        Arc::new(FaultyStorage::new()),
        Duration::from_micros(300),
    ));
    let engine = Arc::new(Engine::open_with_storage(watch.clone(), options()).unwrap());
    joined(writers(&engine, 8, |engine, t| {
        for n in 0..150u32 {
            engine.write(&put(t, n), Durability::Sync).unwrap();
        }
    }));
    let durable = watch.durable_writes.load(Ordering::Relaxed);
    // Writers queued while writes were in flight (groups formed), so overlap had its chance.
    assert!(
        (1..8 * 150).contains(&durable),
        "{durable} durable writes for 1,200 batches"
    );
    assert_eq!(watch.overlaps.load(Ordering::Relaxed), 0);
}

#[test]
fn slow_disk_counts_two_writes_of_one_page_in_flight() {
    // The check above can fire: two durable writes of one page at once are caught.
    let watch = Arc::new(SlowDisk::new(
        Arc::new(FaultyStorage::new()),
        Duration::from_millis(50),
    ));
    let page = vec![7u8; PAGE_SIZE as usize];
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| watch.write_pages_durable(&page, 2 * PAGE_SIZE).unwrap());
        }
    });
    assert_eq!(watch.overlaps.load(Ordering::Relaxed), 1);
}
