//! The shared state of an open engine and the commit steps every writer of the file uses:
//! allocation, superblock commits, version installation, extent reclamation and truncation.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use parking_lot::{Condvar, Mutex, RwLock};

use super::commit::{Pending, WriterState};
use super::file::{
    Extent, ExtentAllocator, ExtentRef, Storage, Superblock, WalSegmentRef, write_superblock,
};
use super::memtable::Memtable;
use super::sst::BlockCache;
use super::stall::WriteController;
use super::version::{Graveyard, ReadView, SstHandle, Version};
use super::{Error, Options, Result, Seq};

/// A frozen memtable waiting for its flush, with the first WAL segment that holds writes newer
/// than it (every older segment can be dropped once it is flushed).
#[derive(Debug, Clone)]
pub struct Frozen {
    /// The memtable.
    pub mem: Arc<Memtable>,
    /// Id of the WAL segment started when it was frozen.
    pub first_live_segment: u64,
}

/// Superblock state, guarded by one lock so superblock commits are serialised.
#[derive(Debug)]
pub struct MetaState {
    /// The superblock last made durable.
    pub sb: Superblock,
    /// Next SST id.
    pub next_sst_id: u64,
}

/// The WAL segment listed ahead of use, which lets a rotation skip both of its syncs.
///
/// A superblock the engine commits normally lists one unwritten segment after the current one.
/// A rotation seals the current segment with a plain write and moves into the spare: no
/// superblock to write, nothing to wait for. The seal is confirmed later, off the writer's
/// path, by a sync followed by a superblock that lists a fresh spare (`Inner::confirm_spare`,
/// or any version install). Until then the superblock on disk lists the old segment, whose
/// seal may not be durable, second to last: replay lets exactly that segment end without a
/// seal (see `docs/FORMAT.md`, "Replay and the torn-tail rule").
#[derive(Debug, Default)]
pub struct WalSpare {
    /// The spare: listed in the durable superblock after the current segment, never written.
    pub segment: Option<WalSegmentRef>,
    /// The writer moved into the last spare after a seal that no superblock has confirmed:
    /// no further rotation may skip its syncs until one does.
    pub unconfirmed: bool,
    /// Extent length the next spare gets (the size the writer's segments have grown to).
    pub len: u64,
}

/// Wakes the background thread.
#[derive(Debug, Default)]
pub struct BgSignal {
    /// (work pending, shutdown requested).
    pub flags: Mutex<(bool, bool)>,
    /// Signalled on new work or shutdown.
    pub cv: Condvar,
}

/// Byte counters behind the amplification figures.
#[derive(Debug, Default)]
pub struct Counters {
    /// Bytes of user batches accepted.
    pub user_bytes: AtomicU64,
    /// Bytes written to the file (WAL, SSTs, manifests, superblocks).
    pub file_bytes: AtomicU64,
    /// Writes the write controller delayed.
    pub delayed_writes: AtomicU64,
    /// Rounds stopped writers spent waiting for (or doing) flushes and compactions.
    pub stopped_waits: AtomicU64,
    /// Microseconds writers spent delayed.
    pub delayed_micros: AtomicU64,
    /// Microseconds writers spent stopped (waiting, or flushing and compacting themselves).
    pub stopped_micros: AtomicU64,
}

impl Counters {
    /// Counts one stall lasting `spent` in `events` and `micros` (a delay under the sleep
    /// threshold is none).
    pub fn note_stall(events: &AtomicU64, micros: &AtomicU64, spent: std::time::Duration) {
        if spent.is_zero() {
            return;
        }
        events.fetch_add(1, Ordering::Relaxed);
        let spent = u64::try_from(spent.as_micros()).unwrap_or(u64::MAX);
        micros.fetch_add(spent, Ordering::Relaxed);
    }
}

/// Everything an open engine shares between its handle, writers and the background thread.
/// Lock order: `compaction` → `flushing` → `writer` → `meta` → `spare` → `stall` → `view` →
/// `frozen` → `alloc`.
#[derive(Debug)]
pub struct Inner {
    /// The file.
    pub storage: Arc<dyn Storage>,
    /// The options it was opened with.
    pub options: Options,
    /// Opened read-only: no write of any kind reaches the file.
    pub read_only: bool,
    /// Shared block cache.
    pub cache: Arc<BlockCache>,
    /// What new readers pin.
    pub view: RwLock<Arc<ReadView>>,
    /// Last published sequence number: readers see exactly the batches at or below it.
    pub last_seq: AtomicU64,
    /// Batches waiting for a group-commit leader.
    pub queue: Mutex<Vec<Arc<Pending>>>,
    /// Queue length a gathering writer waits for (0: no one is gathering); the writer whose
    /// batch reaches it leads the group.
    pub gather_target: AtomicUsize,
    /// Where queued writers sleep until their leader wakes them.
    pub sleepers: super::wake::Sleepers,
    /// The WAL tail; held by the group-commit leader.
    pub writer: Mutex<WriterState>,
    /// Set after the first failed write or sync.
    pub poison: Mutex<Option<String>>,
    /// Superblock state.
    pub meta: Mutex<MetaState>,
    /// The WAL segment a rotation moves into without syncing.
    pub spare: Mutex<WalSpare>,
    /// Seals written by rotations that skipped their sync.
    pub seals_written: AtomicU64,
    /// How many of those seals a sync has covered (a `Sync` append first syncs the rest).
    pub seals_synced: AtomicU64,
    /// Free extents of the file.
    pub alloc: Mutex<ExtentAllocator>,
    /// Extents of dropped SSTs whose readers are gone.
    pub graveyard: Arc<Graveyard>,
    /// Frozen memtables, oldest first.
    pub frozen: Mutex<Vec<Frozen>>,
    /// Serialises compactions (and `compact()`); never held by a flush alone, so a long
    /// compaction does not delay flushes.
    pub compaction: Mutex<()>,
    /// Serialises flushes, so frozen memtables reach L0 oldest first.
    pub flushing: Mutex<()>,
    /// Set while `compact()` waits for `compaction`: background jobs stop early.
    pub preempt: super::compaction::Preempt,
    /// Background thread signal.
    pub bg: BgSignal,
    /// Amplification counters.
    pub counters: Counters,
    /// Set by `close`.
    pub closed: AtomicBool,
    /// Holds writers back while flushes and compactions are behind.
    pub stall: WriteController,
    /// Bytes written by `write_at` since the last writeback was started (`bytes_per_sync`).
    pub unsynced_bytes: AtomicU64,
}

/// An `Error::Io` constructor for `op`.
pub fn io(op: &'static str) -> impl FnOnce(std::io::Error) -> Error {
    move |source| Error::Io { op, source }
}

impl Inner {
    /// The last published sequence number.
    pub fn last_seq(&self) -> Seq {
        self.last_seq.load(Ordering::Acquire)
    }

    /// The current read view.
    pub fn view(&self) -> Arc<ReadView> {
        Arc::clone(&self.view.read())
    }

    /// Refuses writes on read-only, closed or poisoned engines.
    pub fn check_writable(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly);
        }
        if self.closed.load(Ordering::Acquire) {
            return Err(Error::Closed);
        }
        if let Some(cause) = self.poison.lock().clone() {
            return Err(Error::Poisoned { cause });
        }
        Ok(())
    }

    /// Records `err` as the cause that poisons every later write, and returns it.
    pub fn poisoned(&self, err: Error) -> Error {
        {
            let mut poison = self.poison.lock();
            if poison.is_none() {
                *poison = Some(err.to_string());
            }
        }
        // Stopped writers wait for progress that will not come now: let them see the poison.
        self.stall.wake();
        err
    }

    /// Writes `bytes` at `offset`, counting them for write amplification. Every
    /// `bytes_per_sync` bytes it starts the writeback of the file's dirty pages, so the next
    /// WAL sync does not have to write a whole compaction's output first.
    pub fn write_at(&self, bytes: &[u8], offset: u64, op: &'static str) -> Result<()> {
        self.storage.write_all_at(bytes, offset).map_err(io(op))?;
        let len = bytes.len() as u64;
        self.counters.file_bytes.fetch_add(len, Ordering::Relaxed);
        let every = self.options.bytes_per_sync;
        // Beside small `Sync` writes the (paced) output stays in the page cache: written back
        // now, each of their device flushes would have to persist it.
        if every > 0 && !self.stall.sync_writers_active() {
            let before = self.unsynced_bytes.fetch_add(len, Ordering::Relaxed);
            if before + len >= every {
                self.unsynced_bytes.store(0, Ordering::Relaxed);
                // Only a hint to the kernel: a failure loses nothing the next sync won't report.
                let _ = self.storage.start_writeback(0, 0);
            }
        }
        Ok(())
    }

    /// Syncs the file.
    pub fn sync(&self, op: &'static str) -> Result<()> {
        self.storage.sync_data().map_err(io(op))
    }

    /// A fresh extent of at least `len` bytes, first-fit from the lowest offset.
    pub fn allocate(&self, len: u64) -> Extent {
        let mut alloc = self.alloc.lock();
        for extent in self.graveyard.drain() {
            alloc.free(extent);
        }
        alloc.allocate(len)
    }

    /// Returns extents no durable superblock refers to any more.
    pub fn free(&self, extents: &[Extent]) {
        let mut alloc = self.alloc.lock();
        for &extent in extents {
            alloc.free(extent);
        }
    }

    /// Writes `meta.sb` with the next generation into the other slot and syncs it. Any failure
    /// poisons the engine: the durable state is then unknown.
    pub fn commit_superblock(&self, meta: &mut MetaState) -> Result<()> {
        meta.sb.generation += 1;
        let result =
            write_superblock(&*self.storage, &meta.sb).and_then(|()| self.sync("sync superblock"));
        self.counters
            .file_bytes
            .fetch_add(super::file::PAGE_SIZE, Ordering::Relaxed);
        result.map_err(|err| self.poisoned(err))
    }

    /// Makes a new version durable (SST images already written; manifest, sync, superblock, sync),
    /// then publishes it: `flushed` leaves the read view and its WAL segments are dropped,
    /// `obsolete` SSTs are released once no reader holds them, and free tail space is truncated.
    ///
    /// `edit` derives the new version from the current one under the superblock lock, so a
    /// flush and a compaction that run at once both land (each edits only its own SSTs).
    pub fn install(
        &self,
        edit: impl FnOnce(&Version) -> Version,
        obsolete: Vec<Arc<SstHandle>>,
        flushed: Option<&Frozen>,
    ) -> Result<()> {
        let mut meta = self.meta.lock();
        let mut version = edit(&self.view.read().version);
        prune_range_tombstones(&mut version);
        let image = version.manifest(meta.next_sst_id).encode();
        let extent = self.allocate(image.len() as u64);
        // Read before the sync: a seal the writer wrote before `unconfirmed` was set is
        // covered by it, so this superblock may list the next spare too.
        let confirm = self.spare.lock().unconfirmed;
        let seals = self.seals_written.load(Ordering::Acquire);
        let written = self
            .write_at(&image, extent.offset, "write manifest")
            .and_then(|()| self.sync("sync SSTs and manifest"));
        if let Err(err) = written {
            return Err(self.poisoned(err));
        }
        self.seals_synced.fetch_max(seals, Ordering::AcqRel);
        let spare = confirm.then(|| self.list_spare(&mut meta));
        let mut released: Vec<Extent> = meta.sb.manifest.iter().map(|m| m.extent).collect();
        meta.sb.manifest = Some(ExtentRef {
            extent,
            len: image.len() as u64,
            crc: crc32fast::hash(&image),
        });
        if let Some(frozen) = flushed {
            meta.sb.flushed_seq = meta.sb.flushed_seq.max(frozen.mem.max_seq());
            let (keep, drop): (Vec<WalSegmentRef>, Vec<WalSegmentRef>) = meta
                .sb
                .wal_segments
                .iter()
                .partition(|s| s.id >= frozen.first_live_segment);
            released.extend(drop.iter().map(|s| s.extent));
            meta.sb.wal_segments = keep;
        }
        self.commit_superblock(&mut meta)?;
        if let Some(spare) = spare {
            self.publish_spare(spare);
        }
        {
            let mut view = self.view.write();
            let imms = view
                .imms
                .iter()
                .filter(|mem| flushed.is_none_or(|f| !Arc::ptr_eq(mem, &f.mem)))
                .cloned()
                .collect();
            *view = Arc::new(ReadView {
                mem: Arc::clone(&view.mem),
                imms,
                version: Arc::new(version),
            });
        }
        drop(meta);
        if let Some(frozen) = flushed {
            self.frozen
                .lock()
                .retain(|f| !Arc::ptr_eq(&f.mem, &frozen.mem));
        }
        for sst in &obsolete {
            sst.mark_obsolete();
        }
        drop(obsolete);
        self.free(&released);
        let truncated = self.truncate_tail();
        self.refresh_stall();
        truncated
    }

    /// Confirms the writer's last sync-free rotation: syncs (making its seal durable) and
    /// commits a superblock listing a fresh spare, so the next rotation can skip its syncs too.
    /// Run by the flush thread as soon as a memtable is frozen, off the writer's path.
    pub fn confirm_spare(&self) -> Result<()> {
        if !self.spare.lock().unconfirmed {
            return Ok(());
        }
        let mut meta = self.meta.lock();
        if !self.spare.lock().unconfirmed {
            return Ok(());
        }
        let seals = self.seals_written.load(Ordering::Acquire);
        self.sync("sync sealed WAL segment")
            .map_err(|err| self.poisoned(err))?;
        self.seals_synced.fetch_max(seals, Ordering::AcqRel);
        let spare = self.list_spare(&mut meta);
        self.commit_superblock(&mut meta)?;
        self.publish_spare(spare);
        Ok(())
    }

    /// Allocates a spare WAL segment and appends it to `meta.sb`'s list (to be committed).
    pub fn list_spare(&self, meta: &mut MetaState) -> WalSegmentRef {
        let len = self
            .spare
            .lock()
            .len
            .max(super::limits::WAL_SEGMENT_MIN_BYTES);
        let segment = WalSegmentRef {
            extent: self.allocate(len),
            id: meta.sb.next_segment_id,
        };
        meta.sb.next_segment_id += 1;
        meta.sb.wal_segments.push(segment);
        segment
    }

    /// Makes `segment`, listed by the superblock just committed, the next rotation's spare.
    pub fn publish_spare(&self, segment: WalSegmentRef) {
        let mut spare = self.spare.lock();
        spare.segment = Some(segment);
        spare.unconfirmed = false;
    }

    /// Whether a rotation's seal may not be durable yet: a `Sync` append syncs first.
    pub fn seal_unsynced(&self) -> bool {
        self.seals_synced.load(Ordering::Acquire) < self.seals_written.load(Ordering::Acquire)
    }

    /// Syncs the file for `op` and records that every seal written so far is durable.
    pub fn sync_covering_seals(&self, op: &'static str) -> Result<()> {
        let seals = self.seals_written.load(Ordering::Acquire);
        self.sync(op)?;
        self.seals_synced.fetch_max(seals, Ordering::AcqRel);
        Ok(())
    }

    /// Shrinks the file to the end of the last allocated extent.
    pub fn truncate_tail(&self) -> Result<()> {
        let mut alloc = self.alloc.lock();
        for extent in self.graveyard.drain() {
            alloc.free(extent);
        }
        let end = alloc.end();
        let len = self.storage.len().map_err(io("read file length"))?;
        if len > end {
            let truncated = self.storage.set_len(end);
            // `poisoned` wakes stopped writers, which takes a lock ordered before `alloc`.
            drop(alloc);
            truncated.map_err(|e| self.poisoned(io("truncate free tail")(e)))?;
        }
        Ok(())
    }

    /// Asks the background thread (or the next writer, without one) to flush and compact.
    pub fn signal_work(&self) {
        let mut flags = self.bg.flags.lock();
        flags.0 = true;
        self.bg.cv.notify_all();
    }
}

/// Drops range tombstones that can no longer delete anything: no SST overlapping their range
/// holds an entry older than them (memtables only hold newer entries).
fn prune_range_tombstones(version: &mut Version) {
    let levels = &version.levels;
    version.range_tombstones.retain(|t| {
        levels.iter().flatten().any(|sst| {
            sst.meta.props.min_seq < t.seq
                && t.overlaps(&sst.meta.props.min_key, &sst.meta.props.max_key)
        })
    });
}
