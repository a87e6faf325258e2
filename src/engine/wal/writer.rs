//! Appends records to the current WAL segment.

use crate::engine::Result;
use crate::engine::file::{Storage, WalSegmentRef};

/// Appends framed records at the tail of one WAL segment.
#[derive(Debug)]
pub struct WalWriter {}

impl WalWriter {
    /// A writer that appends to `segment` from byte `pos` of the segment.
    pub fn new(segment: WalSegmentRef, pos: u64) -> Self {
        let _ = (segment, pos);
        todo!()
    }
    /// Writes the already-framed `frames` (see `encode_record`) at the tail in one write, or
    /// returns `Ok(false)` without writing when they do not fit in the segment.
    pub fn append(&mut self, storage: &dyn Storage, frames: &[u8]) -> Result<bool> {
        let _ = (storage, frames);
        todo!()
    }
    /// The segment written to.
    pub fn segment(&self) -> WalSegmentRef {
        todo!()
    }
}
