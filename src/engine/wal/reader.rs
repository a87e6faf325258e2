//! Replays WAL segments on open.

use crate::engine::file::{Storage, WalSegmentRef};
use crate::engine::{Result, Seq};

/// Where replay stopped: the writer continues here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalReplayEnd {
    /// Index into the segment list of the last segment with data.
    pub segment_index: usize,
    /// Byte offset inside that segment just after the last good record.
    pub pos: u64,
}

/// Calls `apply(seq, payload)` for every intact record of `segments` in order. A torn or
/// corrupt record at the tail of the last segment ends replay; one followed by more log
/// (in an earlier segment) is `Error::Corruption` with its file offset.
pub fn replay(
    storage: &dyn Storage,
    segments: &[WalSegmentRef],
    apply: &mut dyn FnMut(Seq, &[u8]) -> Result<()>,
) -> Result<WalReplayEnd> {
    let _ = (storage, segments, apply);
    todo!()
}
