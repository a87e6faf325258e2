//! Shared fixtures of the tests that count or crash the writes of flushes.
#![allow(dead_code)]

use strata::engine::Options;

/// Memtable size of [`inline_flush_options`]: a test fills so many bytes per flush.
pub const MEMTABLE_BYTES: usize = 256 << 10;

/// Small memtables and WAL segments whose flushes run in the writing (or flushing) thread,
/// with no compaction: the writes and syncs a flush issues are the same on every run.
pub fn inline_flush_options() -> Options {
    Options {
        memtable_bytes: MEMTABLE_BYTES,
        wal_segment_max_bytes: 1 << 20,
        background_compaction: false,
        l0_compaction_trigger: 64,
        ..Options::default()
    }
}

/// The key of entry `n`: four big-endian bytes, so keys sort as their numbers.
pub fn key(n: u32) -> [u8; 4] {
    n.to_be_bytes()
}
