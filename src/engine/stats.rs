//! Engine statistics.

use std::sync::atomic::Ordering;

use super::inner::{Inner, io};
use super::{Result, Seq};

/// Files and bytes of one level.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LevelStats {
    /// Number of SSTs.
    pub files: usize,
    /// Bytes of their images.
    pub bytes: u64,
}

/// Levels, files, live vs total bytes and amplification figures.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    /// Per level, L0 first.
    pub levels: Vec<LevelStats>,
    /// Estimate of live data: key and value bytes of every SST plus the memtables.
    pub live_bytes: u64,
    /// Length of the database file.
    pub file_bytes: u64,
    /// Free bytes inside the file (holes below its end).
    pub free_bytes: u64,
    /// Bytes held by memtables.
    pub memtable_bytes: u64,
    /// Bytes of decoded data blocks in the block cache (real allocation sizes).
    pub block_cache_bytes: u64,
    /// Bytes of index, filters and properties the open SSTs keep in memory, charged to the
    /// block cache's budget (so `block_cache_bytes + sst_pinned_bytes` stays within it).
    pub sst_pinned_bytes: u64,
    /// Bytes of user batches written since open.
    pub user_bytes_written: u64,
    /// Bytes written to the file since open.
    pub file_bytes_written: u64,
    /// `file_bytes_written / user_bytes_written` (0 before any write).
    pub write_amplification: f64,
    /// `file_bytes / live_bytes` (0 for an empty database).
    pub space_amplification: f64,
    /// Last committed sequence number.
    pub last_seq: Seq,
    /// Writes the write controller delayed (compaction debt over a slowdown trigger).
    pub delayed_writes: u64,
    /// Rounds writers spent stopped at a hard bound (L0 or frozen memtables).
    pub stopped_waits: u64,
    /// Microseconds writers spent delayed since open.
    pub delayed_micros: u64,
    /// Microseconds writers spent stopped since open (waiting, or flushing themselves).
    pub stopped_micros: u64,
    /// Microseconds background merges slept giving way to small `Sync` writes since open.
    pub paced_merge_micros: u64,
}

impl Stats {
    /// Collects the figures of an open engine.
    pub(crate) fn collect(inner: &Inner) -> Result<Self> {
        let view = inner.view();
        let levels: Vec<LevelStats> = view
            .version
            .levels
            .iter()
            .map(|ssts| LevelStats {
                files: ssts.len(),
                bytes: ssts.iter().map(|sst| sst.meta.len).sum(),
            })
            .collect();
        let memtable_bytes: u64 = std::iter::once(&view.mem)
            .chain(&view.imms)
            .map(|mem| mem.approximate_bytes() as u64)
            .sum();
        let sst_raw: u64 = view
            .version
            .ssts()
            .map(|sst| sst.meta.props.raw_bytes)
            .sum();
        let live_bytes = sst_raw + memtable_bytes;
        let file_bytes = inner.storage.len().map_err(io("read file length"))?;
        let user = inner.counters.user_bytes.load(Ordering::Relaxed);
        let written = inner.counters.file_bytes.load(Ordering::Relaxed);
        let ratio = |a: u64, b: u64| if b == 0 { 0.0 } else { a as f64 / b as f64 };
        Ok(Self {
            levels,
            live_bytes,
            file_bytes,
            free_bytes: inner.alloc.lock().free_bytes(),
            memtable_bytes,
            block_cache_bytes: inner.cache.used_bytes(),
            sst_pinned_bytes: inner.cache.pinned_bytes(),
            user_bytes_written: user,
            file_bytes_written: written,
            write_amplification: ratio(written, user),
            space_amplification: ratio(file_bytes, live_bytes),
            last_seq: inner.last_seq(),
            delayed_writes: inner.counters.delayed_writes.load(Ordering::Relaxed),
            stopped_waits: inner.counters.stopped_waits.load(Ordering::Relaxed),
            delayed_micros: inner.counters.delayed_micros.load(Ordering::Relaxed),
            stopped_micros: inner.counters.stopped_micros.load(Ordering::Relaxed),
            paced_merge_micros: u64::try_from(inner.stall.paced().as_micros()).unwrap_or(u64::MAX),
        })
    }
}
