//! Group commit under many writers: every member of a group is woken with its own outcome,
//! acknowledgements come only after the batch is readable, a failed sync fails every member
//! that was waiting for it (and everything after), no acknowledged write is lost, and no
//! write touches a page that another write still has in flight.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use strata::engine::file::{Fault, FaultyStorage, PAGE_SIZE, Storage};
use strata::engine::{Durability, Engine, Error, Options, WriteBatch};

/// A `FaultyStorage` whose durable writes and syncs take `delay`, so writers pile up behind a
/// leader's sync as they do on a real disk.
#[derive(Debug)]
struct SlowSync {
    inner: Arc<FaultyStorage>,
    delay: Duration,
    durable_writes: AtomicU64,
}

impl Storage for SlowSync {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.inner.write_all_at(buf, offset)
    }
    fn sync_data(&self) -> io::Result<()> {
        std::thread::sleep(self.delay);
        self.durable_writes.fetch_add(1, Ordering::Relaxed);
        self.inner.sync_data()
    }
    fn write_all_at_durable(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        std::thread::sleep(self.delay);
        self.durable_writes.fetch_add(1, Ordering::Relaxed);
        self.inner.write_all_at_durable(buf, offset)
    }
    fn write_pages_durable(&self, pages: &[u8], offset: u64) -> io::Result<()> {
        std::thread::sleep(self.delay);
        self.durable_writes.fetch_add(1, Ordering::Relaxed);
        self.inner.write_pages_durable(pages, offset)
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

/// A `FaultyStorage` that keeps the pages of every write while the write is in flight
/// (holding durable writes for `hold`, as a device does) and counts the writes that touched a
/// page another write still had in flight.
#[derive(Debug)]
struct PageWatch {
    inner: Arc<FaultyStorage>,
    hold: Duration,
    /// First and last page of each write in flight.
    in_flight: Mutex<Vec<(u64, u64)>>,
    overlaps: AtomicU64,
    durable_writes: AtomicU64,
}

impl PageWatch {
    fn new(inner: Arc<FaultyStorage>, hold: Duration) -> Self {
        Self {
            inner,
            hold,
            in_flight: Mutex::new(Vec::new()),
            overlaps: AtomicU64::new(0),
            durable_writes: AtomicU64::new(0),
        }
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

impl Storage for PageWatch {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.inner.read_exact_at(buf, offset)
    }
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.watched(offset, buf.len(), false, || {
            self.inner.write_all_at(buf, offset)
        })
    }
    fn sync_data(&self) -> io::Result<()> {
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

#[test]
fn group_commit_failed_sync_fails_every_waiting_member_and_keeps_every_acknowledged_write() {
    let disk = Arc::new(FaultyStorage::new());
    let slow = Arc::new(SlowSync {
        inner: Arc::clone(&disk),
        delay: Duration::from_millis(2),
        durable_writes: AtomicU64::new(0),
    });
    let engine = Arc::new(Engine::open_with_storage(slow.clone(), options()).unwrap());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let mut acked = Vec::new();
                let mut errors = Vec::new();
                for n in 0..400u32 {
                    match engine.write(&put(t, n), Durability::Sync) {
                        Ok(_) if errors.is_empty() => acked.push(n),
                        Ok(seq) => {
                            panic!("thread {t} write {n} acknowledged (seq {seq}) after a failure")
                        }
                        Err(err) => errors.push(err),
                    }
                    if errors.len() >= 3 {
                        break;
                    }
                }
                (t, acked, errors)
            })
        })
        .collect();
    // Let groups form behind the slow syncs, then fail one of them.
    while slow.durable_writes.load(Ordering::Relaxed) < 20 {
        std::thread::sleep(Duration::from_millis(1));
    }
    disk.inject(Fault::FailSync);
    let results: Vec<_> = threads.into_iter().map(|t| t.join().unwrap()).collect();
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
    let engine =
        Arc::new(Engine::open_with_storage(Arc::new(FaultyStorage::new()), options()).unwrap());
    let threads: Vec<_> = (0..40u32)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
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
            })
        })
        .collect();
    let mut seqs: Vec<u64> = threads
        .into_iter()
        .flat_map(|thread| thread.join().unwrap())
        .collect();
    seqs.sort_unstable();
    assert_eq!(seqs, (1..=40 * 60).collect::<Vec<u64>>());
}

#[test]
fn group_commit_gather_for_writers_that_stopped_times_out_and_commits_alone() {
    // Eight durable writers teach the leaders to gather eight batches; then seven stop. The
    // one left must still commit every write (each gather led by its gatherer at its bound).
    let engine =
        Arc::new(Engine::open_with_storage(Arc::new(FaultyStorage::new()), options()).unwrap());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                let writes = if t == 0 { 600 } else { 100 };
                for n in 0..writes {
                    engine.write(&put(t, n), Durability::Sync).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
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
    let watch = Arc::new(PageWatch::new(
        Arc::new(FaultyStorage::new()),
        Duration::from_micros(300),
    ));
    let engine = Arc::new(Engine::open_with_storage(watch.clone(), options()).unwrap());
    let threads: Vec<_> = (0..8u32)
        .map(|t| {
            let engine = Arc::clone(&engine);
            std::thread::spawn(move || {
                for n in 0..150u32 {
                    engine.write(&put(t, n), Durability::Sync).unwrap();
                }
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let durable = watch.durable_writes.load(Ordering::Relaxed);
    // Writers queued while writes were in flight (groups formed), so overlap had its chance.
    assert!(
        (1..8 * 150).contains(&durable),
        "{durable} durable writes for 1,200 batches"
    );
    assert_eq!(watch.overlaps.load(Ordering::Relaxed), 0);
}

#[test]
fn page_watch_counts_two_writes_of_one_page_in_flight() {
    // The check above can fire: two durable writes of one page at once are caught.
    let watch = Arc::new(PageWatch::new(
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
