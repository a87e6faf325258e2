//! Versions: immutable, `Arc`-shared sets of live SSTs per level plus the flushed range
//! tombstones, and the read view (memtables + version) that readers and snapshots pin.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;

use super::file::Extent;
use super::limits::NUM_LEVELS;
use super::manifest::{Manifest, SstMeta};
use super::memtable::Memtable;
use super::sst::{SstEntry, SstReader};
use super::{RangeTombstone, Result, Seq, ValueKind};

/// Extents of dropped SSTs whose last reader is gone, waiting to go back to the allocator.
#[derive(Debug, Default)]
pub struct Graveyard {
    extents: Mutex<Vec<Extent>>,
}

impl Graveyard {
    /// Takes every extent that became free.
    pub fn drain(&self) -> Vec<Extent> {
        std::mem::take(&mut *self.extents.lock())
    }
}

/// A live SST: its manifest record and open reader. Its extent is returned to the allocator
/// when the last handle drops after [`SstHandle::mark_obsolete`], i.e. once a durable
/// superblock no longer refers to it and no version, snapshot or iterator can read it.
#[derive(Debug)]
pub struct SstHandle {
    /// What the manifest records.
    pub meta: SstMeta,
    /// The open reader.
    pub reader: Arc<SstReader>,
    obsolete: AtomicBool,
    graveyard: Arc<Graveyard>,
}

impl SstHandle {
    /// Wraps an open reader.
    pub fn new(meta: SstMeta, reader: SstReader, graveyard: Arc<Graveyard>) -> Self {
        Self {
            meta,
            reader: Arc::new(reader),
            obsolete: AtomicBool::new(false),
            graveyard,
        }
    }

    /// Marks the SST as no longer referenced by the durable superblock.
    pub fn mark_obsolete(&self) {
        self.obsolete.store(true, Ordering::Release);
    }

    /// True when `[min, max]` intersects the SST's key range.
    pub fn overlaps(&self, min: &[u8], max: &[u8]) -> bool {
        self.meta.props.min_key.as_slice() <= max && min <= self.meta.props.max_key.as_slice()
    }
}

impl Drop for SstHandle {
    fn drop(&mut self) {
        if self.obsolete.load(Ordering::Acquire) {
            self.graveyard.extents.lock().push(self.meta.extent);
        }
    }
}

/// An immutable set of live SSTs.
#[derive(Debug, Clone)]
pub struct Version {
    /// SSTs per level; L0 newest first, deeper levels sorted by min key and non-overlapping.
    pub levels: Vec<Vec<Arc<SstHandle>>>,
    /// Flushed range tombstones.
    pub range_tombstones: Vec<RangeTombstone>,
}

impl Default for Version {
    fn default() -> Self {
        Self {
            levels: vec![Vec::new(); NUM_LEVELS],
            range_tombstones: Vec::new(),
        }
    }
}

impl Version {
    /// The manifest describing this version.
    pub fn manifest(&self, next_sst_id: u64) -> Manifest {
        Manifest {
            next_sst_id,
            levels: self
                .levels
                .iter()
                .map(|level| level.iter().map(|sst| sst.meta.clone()).collect())
                .collect(),
            range_tombstones: self.range_tombstones.clone(),
        }
    }

    /// Every SST of every level.
    pub fn ssts(&self) -> impl Iterator<Item = &Arc<SstHandle>> {
        self.levels.iter().flatten()
    }

    /// The newest entry for `key` at or below `read_seq`: upper levels hold newer data.
    pub fn get(&self, key: &[u8], read_seq: Seq) -> Result<Option<SstEntry>> {
        let mut value = Vec::new();
        let found = self.get_into(key, read_seq, &mut value)?;
        Ok(found.map(|version| SstEntry::found(key, version, value)))
    }

    /// As [`Version::get`], copying the value into `value` (see [`SstReader::get_into`]).
    pub fn get_into(
        &self,
        key: &[u8],
        read_seq: Seq,
        value: &mut Vec<u8>,
    ) -> Result<Option<(Seq, ValueKind)>> {
        for (level, ssts) in self.levels.iter().enumerate() {
            if level == 0 {
                // L0 files overlap: newest first, each checked by its key range first.
                for sst in ssts.iter().filter(|sst| sst.overlaps(key, key)) {
                    if let Some(found) = sst.reader.get_into(key, read_seq, value)? {
                        return Ok(Some(found));
                    }
                }
            } else {
                let index = ssts.partition_point(|sst| sst.meta.props.max_key.as_slice() < key);
                if let Some(sst) = ssts.get(index).filter(|sst| sst.overlaps(key, key))
                    && let Some(found) = sst.reader.get_into(key, read_seq, value)?
                {
                    return Ok(Some(found));
                }
            }
        }
        Ok(None)
    }

    /// SSTs that may hold keys in `[start, end)` (`None`: unbounded), in newest-first order;
    /// with `prefix` (which every key of the range starts with), only those whose
    /// partition-prefix filter may hold it.
    pub fn ssts_in_range(
        &self,
        start: &[u8],
        end: Option<&[u8]>,
        prefix: Option<&[u8]>,
    ) -> Vec<Arc<SstHandle>> {
        self.ssts()
            .filter(|sst| {
                end.is_none_or(|end| sst.meta.props.min_key.as_slice() < end)
                    && start <= sst.meta.props.max_key.as_slice()
                    && prefix.is_none_or(|p| sst.reader.may_contain_prefix(p))
            })
            .cloned()
            .collect()
    }

    /// True when a flushed range tombstone visible at `read_seq` deletes `key`@`entry_seq`.
    pub fn range_deletes(&self, key: &[u8], entry_seq: Seq, read_seq: Seq) -> bool {
        self.range_tombstones
            .iter()
            .any(|t| t.deletes(key, entry_seq, read_seq))
    }

    /// Total bytes of SST images per level.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels
            .get(level)
            .map_or(0, |ssts| ssts.iter().map(|sst| sst.meta.len).sum())
    }
}

/// What a reader pins: the active memtable, the frozen ones (newest first) and a version.
#[derive(Debug, Clone)]
pub struct ReadView {
    /// The memtable receiving writes.
    pub mem: Arc<Memtable>,
    /// Frozen memtables waiting to be flushed, newest first.
    pub imms: Vec<Arc<Memtable>>,
    /// The SSTs.
    pub version: Arc<Version>,
}

impl ReadView {
    /// The value of `key` at `read_seq`, honouring point and range tombstones.
    pub fn get(&self, key: &[u8], read_seq: Seq) -> Result<Option<Vec<u8>>> {
        let mut value = Vec::new();
        Ok(self.get_into(key, read_seq, &mut value)?.then_some(value))
    }

    /// As [`ReadView::get`], but writing the value into `value` (replacing its contents);
    /// true when the key has a live value.
    pub fn get_into(&self, key: &[u8], read_seq: Seq, value: &mut Vec<u8>) -> Result<bool> {
        let mut found = None;
        for mem in self.memtables() {
            found = mem.get_into(key, read_seq, value);
            if found.is_some() {
                break;
            }
        }
        if found.is_none() {
            found = self.version.get_into(key, read_seq, value)?;
        }
        let Some((seq, kind)) = found else {
            return Ok(false);
        };
        Ok(kind != ValueKind::Delete && !self.range_deletes(key, seq, read_seq))
    }

    /// True when any range tombstone visible at `read_seq` deletes `key`@`entry_seq`.
    pub fn range_deletes(&self, key: &[u8], entry_seq: Seq, read_seq: Seq) -> bool {
        self.memtables()
            .any(|mem| mem.range_deletes(key, entry_seq, read_seq))
            || self.version.range_deletes(key, entry_seq, read_seq)
    }

    /// The memtables that hold anything, newest first. The active one is empty right after
    /// every flush, and point reads then skip its skip-list search and tombstone lock. A
    /// memtable charges its bytes before it inserts, and both happen before the write's
    /// sequence number is published, so a reader that could see an entry sees the charge.
    fn memtables(&self) -> impl Iterator<Item = &Arc<Memtable>> {
        std::iter::once(&self.mem)
            .chain(&self.imms)
            .filter(|mem| mem.approximate_bytes() > 0)
    }

    /// Every range tombstone visible at `read_seq` that intersects `[start, end)`.
    pub fn range_tombstones(&self, start: &[u8], end: &[u8], read_seq: Seq) -> Vec<RangeTombstone> {
        std::iter::once(&self.mem)
            .chain(&self.imms)
            .flat_map(|mem| mem.range_tombstones())
            .chain(self.version.range_tombstones.iter().cloned())
            .filter(|t| t.seq <= read_seq && t.start.as_slice() < end && start < t.end.as_slice())
            .collect()
    }
}
