//! Consistent read views.

/// A read view at one sequence number; keeps the data it sees alive.
#[derive(Debug)]
pub struct Snapshot {}
