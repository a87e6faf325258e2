//! The superblock pair at the start of the file.

use super::{Extent, Storage};
use crate::engine::{Result, Seq};

/// A pointer to a checksummed structure inside the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExtentRef {
    /// Where it lives.
    pub extent: Extent,
    /// Its exact length in bytes (≤ `extent.len`).
    pub len: u64,
    /// CRC32 of those bytes.
    pub crc: u32,
}

/// One WAL segment: an extent plus the unique id folded into the CRC of each of its records,
/// so records left in a reused extent by an earlier segment are never replayed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalSegmentRef {
    /// Where the segment lives.
    pub extent: Extent,
    /// The segment's unique id (strictly increasing over the file's life).
    pub id: u64,
}

/// The root of the file: which manifest and which WAL segments are live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Superblock {
    /// Incremented on every superblock write; the valid slot with the highest one wins.
    pub generation: u64,
    /// The current manifest, if any SST/range tombstone has ever been flushed.
    pub manifest: Option<ExtentRef>,
    /// Live WAL segments, oldest first; replay starts in the first.
    pub wal_segments: Vec<WalSegmentRef>,
    /// Records with `seq <= flushed_seq` are already in SSTs and skipped on replay.
    pub flushed_seq: Seq,
    /// The next WAL segment id to hand out.
    pub next_segment_id: u64,
}

/// Reads both slots and returns the valid one with the highest generation, or `Ok(None)` for
/// an empty file. Both slots invalid on a non-empty file is corruption.
pub fn read_superblock(storage: &dyn Storage) -> Result<Option<Superblock>> {
    let _ = storage;
    todo!()
}

/// Writes `sb` into slot `sb.generation % 2` (the caller syncs).
pub fn write_superblock(storage: &dyn Storage, sb: &Superblock) -> Result<()> {
    let _ = (storage, sb);
    todo!()
}
