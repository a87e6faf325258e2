//! The engine handle.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;

use parking_lot::Mutex;

use super::file::{FileStorage, OpenMode, Storage};
use super::inner::Inner;
use super::iter::RangeIter;
use super::stall::Mode;
use super::{Durability, Error, Options, Result, Seq, Snapshot, Stats, WriteBatch};

/// An open database file. `Send + Sync`: share it between threads behind an `Arc`.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use strata::engine::{Durability, Engine, Options, WriteBatch};
/// let dir = tempfile::tempdir()?;
/// let engine = Engine::open(dir.path().join("db"), Options::default())?;
/// let mut batch = WriteBatch::new();
/// batch.put(b"a", b"1").put(b"b", b"2");
/// engine.write(&batch, Durability::Sync)?;
/// assert_eq!(engine.get(b"a")?, Some(b"1".to_vec()));
/// let keys: Vec<_> = engine.range(b"a"..b"z")?.map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
/// assert_eq!(keys, vec![b"a".to_vec(), b"b".to_vec()]);
/// engine.close()?;
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Engine {
    inner: Arc<Inner>,
    /// The compaction thread and the flush thread, when background work is on.
    background: Mutex<Vec<JoinHandle<()>>>,
}

impl Engine {
    /// Opens (creating if absent) the database file at `path` for writing.
    pub fn open(path: impl AsRef<Path>, options: Options) -> Result<Self> {
        let storage = FileStorage::open(path, OpenMode::ReadWrite)?;
        Self::open_with_storage(Arc::new(storage), options)
    }

    /// Opens the database held by `storage` for writing (e.g. a `FaultyStorage` in tests).
    pub fn open_with_storage(storage: Arc<dyn Storage>, options: Options) -> Result<Self> {
        let inner = Arc::new(super::recovery::open(storage, options, false)?);
        let background = if inner.options.background_compaction {
            vec![
                spawn_background(Arc::clone(&inner)),
                spawn_flusher(Arc::clone(&inner)),
            ]
        } else {
            Vec::new()
        };
        Ok(Self {
            inner,
            background: Mutex::new(background),
        })
    }

    /// Opens an existing database file read-only (shared lock); the WAL is replayed in memory.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Self> {
        let storage = FileStorage::open(path, OpenMode::ReadOnly)?;
        Self::open_read_only_with_storage(Arc::new(storage))
    }

    /// Opens the database held by `storage` read-only.
    pub fn open_read_only_with_storage(storage: Arc<dyn Storage>) -> Result<Self> {
        let inner = Arc::new(super::recovery::open(storage, Options::default(), true)?);
        Ok(Self {
            inner,
            background: Mutex::new(Vec::new()),
        })
    }

    /// Applies `batch` atomically; returns the sequence number of its last operation once
    /// `durability` holds. After any failed write or sync every later write is `Error::Poisoned`.
    pub fn write(&self, batch: &WriteBatch, durability: Durability) -> Result<Seq> {
        let seq = self.inner.write(batch, durability);
        charge_memtables(&self.inner);
        seq
    }

    /// As [`Engine::write`], handing the batch over: its buffer becomes the WAL record's
    /// payload as it is, where `write` copies it.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// use strata::engine::{Durability, Engine, Options, WriteBatch};
    /// let dir = tempfile::tempdir()?;
    /// let engine = Engine::open(dir.path().join("db"), Options::default())?;
    /// let mut batch = WriteBatch::new();
    /// batch.put(b"k", b"v");
    /// engine.write_owned(batch, Durability::Sync)?;
    /// assert_eq!(engine.get(b"k")?, Some(b"v".to_vec()));
    /// # Ok(()) }
    /// ```
    pub fn write_owned(&self, batch: WriteBatch, durability: Durability) -> Result<Seq> {
        let seq = self.inner.write_owned(batch, durability);
        charge_memtables(&self.inner);
        seq
    }

    /// The current value of `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.get_into(key, &mut value)?.then_some(value))
    }

    /// The current value of `key` written into `value` (replacing its contents, so a caller
    /// can reuse one buffer); false when `key` has no live value.
    pub fn get_into(&self, key: &[u8], value: &mut Vec<u8>) -> Result<bool> {
        self.check_open()?;
        // As `snapshot()`: the sequence number first, then the view.
        let seq = self.inner.last_seq();
        self.inner.view().get_into(key, seq, value)
    }

    /// A consistent read view at the latest committed sequence number.
    pub fn snapshot(&self) -> Snapshot {
        // Read the sequence number first: everything at or below it is in this view's
        // memtables or SSTs, whatever flush happens in between.
        let seq = self.inner.last_seq();
        Snapshot::new(
            self.inner.view(),
            seq,
            self.inner.options.prefix_extractor.clone(),
        )
    }

    /// Iterates live keys in `range` in ascending order at the latest sequence number.
    pub fn range(&self, range: Range<&[u8]>) -> Result<RangeIter> {
        self.check_open()?;
        Ok(self.snapshot().range(range))
    }

    /// Writes the memtable to an SST and makes everything durable.
    pub fn flush(&self) -> Result<()> {
        self.inner.check_writable()?;
        let flushed = self.inner.flush(false);
        charge_memtables(&self.inner);
        flushed
    }

    /// Compacts everything into the last level, dropping overwritten and deleted data, then
    /// moves live data to the front of the file and truncates the free tail.
    pub fn compact(&self) -> Result<()> {
        self.inner.check_writable()?;
        let request = self.inner.preempt.request();
        let _guard = self.inner.compaction.lock();
        drop(request);
        let compacted = self.inner.compact_all();
        charge_memtables(&self.inner);
        compacted
    }

    /// Writes a consistent, fully compacted copy of the database to a new file at `path`
    /// while writes go on. The copy opens read-only or for writing anywhere.
    pub fn checkpoint(&self, path: impl AsRef<Path>) -> Result<()> {
        self.check_open()?;
        let storage = FileStorage::open(path, OpenMode::ReadWrite)?;
        let snapshot = self.snapshot();
        super::checkpoint::write_checkpoint(&self.inner, &snapshot, &storage)
    }

    /// Whether the write controller is delaying or stopping writes right now (flushes and
    /// compactions behind): a caller that must not block on a write can send it elsewhere.
    #[must_use]
    pub fn writes_held_back(&self) -> bool {
        matches!(self.inner.stall.mode(), Some(Mode::Delayed | Mode::Stopped))
    }

    /// Levels, files, live and total bytes, amplification.
    pub fn stats(&self) -> Result<Stats> {
        self.check_open()?;
        Stats::collect(&self.inner)
    }

    /// Flushes, waits for background work and releases the file.
    pub fn close(self) -> Result<()> {
        let flushed = if self.inner.read_only || self.inner.poison.lock().is_some() {
            Ok(())
        } else {
            // Rotating, unlike `flush()`: the next open then replays an empty segment instead
            // of reading past the flushed frames of the last one.
            self.inner.flush_rotating(false)
        };
        self.stop_background();
        self.inner.closed.store(true, Ordering::Release);
        flushed
    }

    /// Verifies every checksum and invariant of the database file at `path` (superblocks,
    /// manifest, every SST block, the WAL, extents); errors name the offset of the first fault.
    pub fn check(path: impl AsRef<Path>) -> Result<super::check::CheckReport> {
        let storage: Arc<dyn Storage> = Arc::new(FileStorage::open(path, OpenMode::ReadOnly)?);
        super::check::check_storage(&storage)
    }

    fn check_open(&self) -> Result<()> {
        if self.inner.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        Ok(())
    }

    fn stop_background(&self) {
        {
            let mut flags = self.inner.bg.flags.lock();
            flags.1 = true;
            self.inner.bg.cv.notify_all();
        }
        for handle in std::mem::take(&mut *self.background.lock()) {
            // A panic of a background thread already poisoned nothing we rely on; ignore it.
            let _ = handle.join();
        }
    }
}

impl Drop for Engine {
    fn drop(&mut self) {
        self.stop_background();
        if !self.inner.read_only && !self.inner.closed.load(Ordering::Acquire) {
            // Buffered writes become durable on a clean drop; a failure here has no one to tell.
            let _ = self.inner.storage.sync_data();
        }
    }
}

/// Runs flushes and compactions until shutdown.
fn spawn_background(inner: Arc<Inner>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            {
                let mut flags = inner.bg.flags.lock();
                while !flags.0 && !flags.1 {
                    inner.bg.cv.wait(&mut flags);
                }
                if flags.1 {
                    return;
                }
                flags.0 = false;
            }
            if inner.poison.lock().is_some() {
                continue;
            }
            if let Err(err) = inner.maintain() {
                // The failure is kept as the poison cause; writers report it.
                let _ = inner.poisoned(err);
            }
            charge_memtables(&inner);
            release_free_heap_pages();
        }
    })
}

/// Longest the flush thread sleeps without looking at the frozen memtables (a safety net:
/// every freeze wakes it). Each look is a wake-up of an otherwise idle thread, which costs
/// ~30 µs of CPU on a virtual machine: at 100 ms that was ~0.3 ms per second of a server's
/// CPU whatever the load, several per cent of a slow client's batch inserts.
const FLUSHER_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// Flushes frozen memtables as soon as they are frozen, until shutdown.
///
/// The compaction thread flushes only between jobs, and an L0 → L1 job during a bulk load
/// runs for hundreds of milliseconds: meanwhile the writer filled the frozen-memtable
/// allowance, stopped, and built and synced the SSTs itself, so inserting and flushing took
/// turns on one thread. On its own thread a flush (mostly waiting on its two syncs) overlaps
/// the writer filling the next memtable (RocksDB's separate high-priority flush pool).
fn spawn_flusher(inner: Arc<Inner>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        loop {
            {
                let mut flags = inner.bg.flags.lock();
                // A freeze pushes to `frozen` before it signals under `flags`, so looking
                // at `frozen` under `flags` loses no wake-up.
                while !flags.1 && inner.frozen.lock().is_empty() {
                    inner.bg.cv.wait_for(&mut flags, FLUSHER_RECHECK);
                }
                if flags.1 {
                    return;
                }
            }
            if inner.poison.lock().is_some() {
                // Nothing can be flushed any more; wait for shutdown.
                let mut flags = inner.bg.flags.lock();
                if !flags.1 {
                    inner.bg.cv.wait_for(&mut flags, FLUSHER_RECHECK);
                }
                continue;
            }
            // The freeze that woke this thread moved the writer into the spare WAL segment
            // without a sync: confirm it first, so the writer's next rotation finds a new
            // spare instead of syncing itself.
            let flushed = inner.confirm_spare().and_then(|()| {
                let _flushing = inner.flushing.lock();
                inner.flush_frozen()
            });
            if let Err(err) = flushed {
                let _ = inner.poisoned(err);
            }
            charge_memtables(&inner);
            release_free_heap_pages();
        }
    })
}

/// Charges the memtables' memory to the block cache's budget, so that blocks, SST metadata
/// and write buffers share one bound (see `BlockCache::charge_write_buffers`).
fn charge_memtables(inner: &Inner) {
    let view = inner.view();
    let bytes: usize = std::iter::once(&view.mem)
        .chain(&view.imms)
        .map(|mem| mem.approximate_bytes())
        .sum();
    inner.cache.charge_write_buffers(bytes as u64);
}

/// Hands the free pages inside the allocator's arenas back to the OS.
///
/// glibc gives each thread that allocates its own arena and returns memory to the OS only
/// from the top of an arena. A flush or compaction frees megabytes (a memtable, input blocks,
/// replaced SSTs' index and filters) below the long-lived index and filters of the SSTs it
/// just opened, so without this those pages stay resident in an arena that the writers and
/// readers, who allocate from other arenas, cannot reuse. Returning them costs a walk of the
/// free lists once per job (jobs run at most once per memtable of writes).
fn release_free_heap_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases memory the allocator holds free; it takes the
    // arenas' locks itself and is safe to call from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::{Duration, Instant};

    use super::*;

    /// Writes `count` 1 KiB entries, key prefix `tag`, in `Buffered` batches of ten.
    fn fill(engine: &Engine, tag: u8, count: u32) {
        for first in (0..count).step_by(10) {
            let mut batch = WriteBatch::new();
            for i in first..first + 10 {
                let mut key = vec![tag];
                key.extend_from_slice(&i.to_be_bytes());
                batch.put(&key, &[tag; 1024]);
            }
            engine.write(&batch, Durability::Buffered).unwrap();
        }
    }

    #[test]
    fn frozen_memtable_is_flushed_while_a_compaction_holds_the_background_thread() {
        let dir = tempfile::tempdir().unwrap();
        let options = Options {
            memtable_bytes: 64 << 10,
            l0_compaction_trigger: 100,
            l0_slowdown_trigger: 100,
            l0_stop_trigger: 100,
            ..Options::default()
        };
        let engine = Engine::open(dir.path().join("db"), options).unwrap();
        // A compaction "in progress": the compaction thread, once it has flushed what it
        // found frozen, waits for this lock and flushes nothing more meanwhile.
        let job = engine.inner.compaction.lock();
        let deadline = Instant::now() + Duration::from_secs(10);
        for (round, tag) in [b'a', b'b', b'c'].into_iter().enumerate() {
            // Each round freezes one memtable (one frozen is below the writers' stop).
            fill(&engine, tag, 100);
            loop {
                let l0 = engine
                    .stats()
                    .unwrap()
                    .levels
                    .first()
                    .map_or(0, |l| l.files);
                if l0 > round && engine.inner.frozen.lock().is_empty() {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "round {round}: frozen memtable not flushed during the compaction"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        drop(job);
        assert_eq!(
            engine.get(&[b'b', 0, 0, 0, 7]).unwrap(),
            Some(vec![b'b'; 1024])
        );
        engine.close().unwrap();
    }
}
