//! An in-memory [`Storage`](super::Storage) that injects faults: torn writes, failed writes
//! and syncs, a full disk, and crashes that drop everything not synced.

/// A fault to inject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {}

/// An in-memory file with a live image and a durable image.
#[derive(Debug, Default)]
pub struct FaultyStorage {}
